"""One model's gate result as JSON, so that it can be computed in a child
process (checker/isolation.py) and reported by the gate's parent.

The child sends what the summary, the JSON report, JUnit and SARIF use:
the cases (a violation's path as its actions, the states left out: the
trace table is already in the case's detail), the run's figures, the spec's
name, variant, bounds and description, and where each action of a
violation path is implemented (SARIF's code flow). The parent loads the
model file again (a model file is read without running its spec) and never
imports the spec.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .action_source import action_source
from .api import Report
from .expectations import Case
from .job import Outcome, Verdict, Violation, ViolationKind


class DetachedSpec:
    """What the reports know of a spec that ran in another process."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.name, self.variant = d["name"], d["variant"]
        self.constants = dict(d["constants"])
        self._describe = d["describe"]
        self.action_sources = {k: tuple(v) if v else None for k, v in d["sources"].items()}

    def describe(self) -> str:
        return self._describe


def _action(a):
    return None if a is None else (a[0], tuple(tuple(p) for p in a[1]))


def _violation_to(v: Violation) -> dict[str, Any]:
    return {"property": v.property, "kind": str(v.kind), "loop": v.loop, "trace_file": v.trace_file,
            "actions": None if v.path is None else [a for a, _ in v.path]}


def _violation_from(d: dict[str, Any]) -> Violation:
    path = None if d["actions"] is None else [(_action(a), None) for a in d["actions"]]
    return Violation(d["property"], ViolationKind(d["kind"]), path, d["loop"], d["trace_file"])


def to_wire(r) -> dict[str, Any]:
    """A ModelResult (checker/gate.py) as JSON-able data."""
    out: dict[str, Any] = {k: getattr(r, k) for k in ("error", "seconds", "interrupted", "note", "not_run",
                                                      "fault", "prove_seconds")}
    out["cases"] = [{"name": c.name, "status": c.status, "message": c.message, "kind": c.kind,
                     "detail": c.detail, "violation": None if c.violation is None else _violation_to(c.violation)}
                    for c in r.cases]
    if r.report is not None:
        spec, o = r.report.spec, r.report.outcome
        names = {a[0] for c in r.cases if c.violation is not None and c.violation.path
                 for a, _ in c.violation.path if a is not None}
        out["spec"] = {"name": spec.name, "variant": spec.variant, "constants": dict(spec.constants),
                       "describe": spec.describe(),
                       "sources": {n: action_source(type(spec), n) for n in sorted(names)}}
        out["outcome"] = {f.name: getattr(o, f.name) for f in fields(o) if f.name not in ("violations", "exploration")}
        out["outcome"]["violations"] = [_violation_to(v) for v in o.violations]
    return out


def from_wire(r, d: dict[str, Any]) -> None:
    """Fill a parent's ModelResult (its path, shown and model already set) from `to_wire`'s data."""
    for k in ("error", "seconds", "interrupted", "note", "not_run", "fault", "prove_seconds"):
        setattr(r, k, d[k])
    r.cases = [Case(c["name"], c["status"], c["message"], c["kind"],
                    None if c["violation"] is None else _violation_from(c["violation"]), c["detail"])
               for c in d["cases"]]
    if "outcome" in d and r.model is not None:
        o = dict(d["outcome"])
        o["verdict"] = Verdict(o["verdict"])
        o["violations"] = [_violation_from(v) for v in o["violations"]]
        # a stand-in with what the reports read of a spec (name, variant, constants, describe, sources)
        r.report = Report(r.model, DetachedSpec(d["spec"]), Outcome(**o))  # type: ignore[arg-type]

