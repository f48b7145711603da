"""The gate's result as SARIF 2.1.0 (the format code-scanning tools ingest).

- One rule per (spec, property) that a result refers to, plus two for the gate
  itself: `txncheck/model-error` (a model that cannot be checked) and
  `txncheck/expectation` (a known bug that is no longer found, or a witness
  that found nothing).
- One result per violation found. It points at the spec action that broke the
  property (the last action of the trace; its source line is found with
  `inspect` on the spec class) and at the model file. A code flow walks the
  whole trace, one location per step at that step's action. A violation the
  model expects (a known bug, `[expect] verdict = "violation"`) is kept as a
  suppressed note, so the corpus stays visible without failing a scan.

Paths are relative to the working directory (`%SRCROOT%`) when they lie
under it, so the report reads the same on every CI machine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ... import __version__
from ..action_source import action_source
from ..gate import ERROR, FAILED, PASSED, Case, GateResult, ModelResult
from .output import write_text_atomic

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"


# -- building the log ----------------------------------------------------------


def _uri(path: str | Path) -> dict:
    p = Path(path).resolve()
    try:
        return {"uri": p.relative_to(Path.cwd().resolve()).as_posix(), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": p.as_uri()}


def _line_of(path: Path, words: list[str]) -> int:
    """The first line of a model file that mentions one of `words` (1 when none does)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    for w in words:
        for k, t in enumerate(lines):
            if t.lstrip().startswith(("description", "#")):
                continue
            if w and re.search(rf"\b{re.escape(w)}\b", t):
                return k + 1
    return 1


def _location(path, line: int, message: str | None = None, loc_id: int | None = None) -> dict:
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": _uri(path), "region": {"startLine": line}}}
    if message:
        loc["message"] = {"text": message}
    if loc_id is not None:
        loc["id"] = loc_id
    return loc


def _action_label(action) -> str:
    if action is None:
        return "init"
    name, params = action
    return name + ("(" + ", ".join(f"{k}={v}" for k, v in params) + ")" if params else "")


class _Rules:
    def __init__(self) -> None:
        self.rules: list[dict] = []
        self.index: dict[str, int] = {}

    def ref(self, rule_id: str, text: str, help_text: str) -> tuple[str, int]:
        if rule_id not in self.index:
            self.index[rule_id] = len(self.rules)
            self.rules.append({
                "id": rule_id, "name": rule_id.split("/")[-1],
                "shortDescription": {"text": text}, "fullDescription": {"text": help_text},
                "defaultConfiguration": {"level": "error"},
            })
        return rule_id, self.index[rule_id]


def _source(spec, action: str) -> tuple[str, int] | None:
    """Where the spec implements an action; a spec checked in another process
    (checker/gate_wire.py) brought the answer along."""
    known = getattr(spec, "action_sources", None)
    return known.get(action) if known is not None else action_source(type(spec), action)


def _violation_result(r: ModelResult, c: Case, rules: _Rules) -> dict:
    v = c.violation
    model, report = r.ran()
    spec = report.spec
    rule_id, idx = rules.ref(
        f"{spec.name}/{c.name}", f"{c.kind} {c.name} of spec {spec.name}",
        f"The {c.kind} {c.name} of the {spec.name} spec must hold in every reachable state; "
        "the result's code flow is a shortest trace that breaks it.")
    model_loc = _location(r.path, _line_of(r.path, [c.name]),
                          f"model {r.shown} ({spec.describe()}) checks {c.name}")
    locations = []
    steps = []
    last_action = v.path[-1][0] if v.path else None
    if last_action is not None:
        src = _source(spec, last_action[0])
        if src:
            locations.append(_location(src[0], src[1], f"action {_action_label(last_action)} breaks {c.name}"))
    locations.append(model_loc)
    for k, (action, _state) in enumerate(v.path or []):
        src = _source(spec, action[0]) if action is not None else None
        loc = (_location(src[0], src[1], f"step {k}: {_action_label(action)}") if src
               else _location(r.path, 1, f"step {k}: {_action_label(action)}"))
        steps.append({"location": loc, "executionOrder": k, "kinds": ["call"] if action is not None else []})
    expected = c.status == PASSED
    text = (f"{c.kind} {c.name} is violated in model {r.shown}: a shortest counterexample has {v.length} states"
            + (f", ending with {_action_label(last_action)}" if last_action else "")
            + (f"; trace {v.trace_file}" if v.trace_file else "")
            + (" (a known bug this model expects)" if expected else "")
            + (f"; {r.label}" if r.label else ""))
    result: dict[str, Any] = {
        "ruleId": rule_id, "ruleIndex": idx, "kind": "fail", "level": "note" if expected else "error",
        "message": {"text": text}, "locations": locations,
        "properties": {"model": r.shown, "spec": spec.name, "variant": spec.variant,
                       "bounds": dict(spec.constants), "length": v.length, "expected": expected},
    }
    if model.label:
        result["properties"]["label"] = {**model.label, "text": r.label}
    if steps:
        result["codeFlows"] = [{"message": {"text": f"shortest trace to the violation of {c.name}"},
                                "threadFlows": [{"locations": steps}]}]
    if v.trace_file:
        result["relatedLocations"] = [{"id": 1, "physicalLocation": {"artifactLocation": _uri(v.trace_file)},
                                       "message": {"text": "the counterexample as an ITF trace"}}]
    if expected:
        result["suppressions"] = [{"kind": "inSource", "status": "accepted",
                                   "justification": f"{r.shown} expects this violation ([expect] table)"
                                   + (f"; it {r.label}" if r.label else "")}]
    return result


def _bounded_result(r: ModelResult, rules: _Rules) -> dict:
    """What a run that stopped early established: no violation to the depth it
    checked completely (a pass when the model expects that, as its max_depth says)."""
    o = r.ran()[1].outcome
    rid, idx = rules.ref("txncheck/bounded", "no violation to a depth",
                         "The run stopped before it had every reachable state; every state up to the "
                         "depth given was checked, and none violates a property.")
    return {"ruleId": rid, "ruleIndex": idx, "kind": "pass" if r.passed else "informational", "level": "none",
            "message": {"text": f"{r.shown}: {o.checked_depth_text()} ({o.incomplete_reason})"},
            "locations": [_location(r.path, _line_of(r.path, ["max_depth", "expect"]))],
            "properties": {"model": r.shown, "checked_depth": o.checked_depth, "incomplete_reason": o.incomplete_reason}}


def sarif_log(result: GateResult) -> dict:
    rules = _Rules()
    results = []
    for r in result.results:
        for c in r.cases:
            if c.violation is not None and c.violation.path:
                results.append(_violation_result(r, c, rules))
            elif c.status == ERROR:
                rid, idx = rules.ref("txncheck/model-error", "model cannot be checked",
                                     "The model file, its spec or its engine options are invalid.")
                results.append({"ruleId": rid, "ruleIndex": idx, "kind": "fail", "level": "error",
                                "message": {"text": c.message}, "locations": [_location(r.path, 1)]})
            elif c.status == FAILED:
                rid, idx = rules.ref("txncheck/expectation", "model does not meet its [expect] table",
                                     "A known bug is no longer found, a witness found nothing, or a run "
                                     "stopped at a limit: the model's [expect] table does not hold.")
                results.append({"ruleId": rid, "ruleIndex": idx, "kind": "fail", "level": "error",
                                "message": {"text": f"{r.shown}: {c.name}: {c.message}"},
                                "locations": [_location(r.path, _line_of(r.path, [c.name, "expect"]))]})
        if r.report is not None and r.report.outcome.verdict == "incomplete" and r.report.outcome.checked_depth:
            results.append(_bounded_result(r, rules))
    root = Path.cwd().resolve().as_uri() + "/"
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "txncheck", "version": __version__, "semanticVersion": __version__,
                                "rules": rules.rules}},
            "originalUriBaseIds": {"SRCROOT": {"uri": root}},
            "results": results,
            "invocations": [{"executionSuccessful": result.exit_code in (0, 1),
                             "exitCode": result.exit_code,
                             "commandLine": "txncheck check --all " + " ".join(str(p) for p in result.roots)}],
            "properties": {"models": len(result.results), **result.counts()},
        }],
    }


def write_sarif(result: GateResult, path: str | Path) -> Path:
    return write_text_atomic(path, json.dumps(sarif_log(result), indent=1) + "\n")
