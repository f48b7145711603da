"""How the CI gate judges one model's run against its `[expect]` table
(checker/model.py), one test case per property of the model, plus one for
the figures when [expect] records them; checker/gate.py runs the models.

Case statuses: passed, failed (the expectation does not hold), error (the
model could not be checked: bad file, bad spec, engine error) and skipped
(the search stopped at another property's violation before it could settle
this one, or a heavy model the gate was not asked to run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .api import Report
from .model import FIGURES, Model

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


@dataclass
class Case:
    """One test case: a property of a model (or the model itself, when it cannot load)."""

    name: str
    status: str
    message: str = ""
    kind: str = "invariant"  # invariant | witness | deadlock | liveness | proof | model
    violation: Any = None    # the job.Violation behind the case, if any
    detail: str = ""         # the trace table of a violation


def property_names(m: Model, report: Report) -> list[tuple[str, str]]:
    """(name, kind) of everything the model checks, in the order reports show them."""
    names = [(n, "invariant") for n in m.selected_properties(report.spec)]
    names += [(w, "witness") for w in m.witnesses]
    if m.deadlock:
        names.append(("Deadlock", "deadlock"))
    names += [(t, "liveness") for t in getattr(m, "temporal", {}) or {}]
    known = {n for n, _ in names}
    names += [(v.property, v.kind) for v in report.outcome.violations if v.property not in known]
    return names


def judge(m: Model, report: Report) -> list[Case]:
    o = report.outcome
    expect = m.expect
    want = expect.get("verdict", "ok")
    want_prop = expect.get("property")
    want_len = expect.get("length")
    violated = {v.property: v for v in o.violations}
    names = property_names(m, report)
    stopped_at = next((v.property for v in o.violations if v.kind != "witness"), None)
    bound = m.raw.get("max_depth") if want == "incomplete" else None  # "no violation to depth D"
    short = bound is not None and o.verdict == "incomplete" and (o.checked_depth or 0) < bound
    cases = []
    if want_prop is not None and want_prop not in {n for n, _ in names}:
        cases.append(Case("expect", ERROR, f"{m.path}: [expect] property {want_prop!r} is not checked by this model",
                          kind="model"))
    for name, kind in names:
        v = violated.get(name)
        expected_here = want == "violation" and (want_prop == name or (want_prop is None and v is not None))
        if v is not None:
            if expected_here:
                if want_len is not None and v.length != want_len:
                    c = Case(name, FAILED, f"expected a shortest counterexample of {want_len} states, "
                                           f"found one of {v.length}", kind, v)
                else:
                    c = Case(name, PASSED, f"violated as expected, in {v.length} states", kind, v)
            elif kind == "witness":
                c = Case(name, FAILED, "no reachable state satisfies this witness", kind, v)
            else:
                c = Case(name, FAILED, f"{kind} {name} violated; shortest counterexample has {v.length} states",
                         kind, v)
            c.detail = trace_table(report, v)
        elif expected_here:
            if o.verdict == "incomplete":
                c = Case(name, FAILED, f"incomplete ({o.incomplete_reason}): the expected violation of {name} "
                                       "was not found in the explored part", kind)
            elif stopped_at is not None:
                c = Case(name, FAILED, f"expected a violation of {name}; the search stopped at a violation of "
                                       f"{stopped_at} first", kind)
            else:
                c = Case(name, FAILED, f"expected a violation of {name}; it holds in all "
                                       f"{o.distinct_states:,} reachable states", kind)
        elif o.verdict == "ok" or (kind == "witness" and o.witnesses_found.get(name)):
            c = Case(name, PASSED, _held(kind, o), kind)
        elif o.verdict == "violation":
            c = Case(name, SKIPPED, f"not settled: the search stopped at the violation of {stopped_at}", kind)
        elif short:
            c = Case(name, FAILED, f"incomplete ({o.incomplete_reason}): checked to depth {o.checked_depth or 0} "
                                   f"only; [expect] wants no violation to depth {bound} (max_depth)", kind)
        elif bound is not None and kind == "witness":
            c = Case(name, SKIPPED, f"not reached within depth {o.checked_depth} (max_depth): a bounded run "
                                    "cannot settle a witness", kind)
        elif bound is not None:
            c = Case(name, PASSED, f"no violation to depth {o.checked_depth} (every state to depth "
                                   f"{o.checked_depth} checked; max_depth {bound}), as expected", kind)
        elif want == "incomplete":
            c = Case(name, PASSED, f"no violation in the explored part ({o.incomplete_reason}), as expected", kind)
        else:
            c = Case(name, FAILED, f"incomplete ({o.incomplete_reason}): not settled", kind)
        cases.append(c)
    if want == "violation" and want_prop is None and not o.violations:
        cases.append(Case("expect", FAILED, "expected a violation; every property holds" if o.verdict == "ok"
                          else f"incomplete ({o.incomplete_reason}): the expected violation was not found", "model"))
    if want == "incomplete" and o.verdict == "ok":
        cases.append(Case("expect", FAILED, "expected the run to stop at a limit, but it completed", "model"))
    if want == "ok" and o.verdict == "incomplete" and not names:
        cases.append(Case("expect", FAILED, f"incomplete ({o.incomplete_reason})", "model"))
    figures = judge_figures(m, report)
    return cases + ([figures] if figures else [])


def judge_figures(m: Model, report: Report) -> Case | None:
    """The [expect] figures (distinct, generated, depth) against the run's. A
    violation's figures depend on where an engine stops, so they are judged
    only for the in-process bfs, which the figures are recorded with
    (scripts/record_figures.py); a run stopped by a budget other than the
    model's max_depth has none to judge."""
    want = {k: m.expect[k] for k in FIGURES if k in m.expect}
    if not want:
        return None
    o = report.outcome
    got = {"distinct": o.distinct_states, "generated": o.states_generated, "depth": o.depth}
    if o.verdict == "incomplete" and not (m.raw.get("max_depth") and o.incomplete_reason
                                          == f"max-depth {m.raw['max_depth']} reached"):
        return Case("figures", SKIPPED, f"not judged: the run stopped early ({o.incomplete_reason})", "model")
    if o.verdict == "violation" and (o.engine != "bfs" or "workers" in o.extra):
        return Case("figures", SKIPPED, "not judged: a violation's figures are recorded with the "
                                        "in-process bfs", "model")
    shown = ", ".join(f"{k} {got[k]:,}" for k in want)
    if all(got[k] == v for k, v in want.items()):
        return Case("figures", PASSED, f"{shown}, as recorded", "model")
    return Case("figures", FAILED, f"{shown}; [expect] records " + ", ".join(f"{k} {v:,}" for k, v in want.items())
                + " (if the change is meant, re-record: python scripts/record_figures.py MODEL)", "model")


def _held(kind: str, o) -> str:
    if kind == "witness":
        return "some reachable state satisfies it"
    if kind == "liveness":
        return "holds on every behaviour"
    return f"holds in all {o.distinct_states:,} reachable states"


def trace_table(report: Report, v) -> str:
    """The violation's trace as the step table of `txncheck show`."""
    if not v.path:
        return ""
    from .itf import parse_trace, read_trace, trace_document
    from .render.table import render_table

    try:
        trace = read_trace(v.trace_file) if v.trace_file else parse_trace(trace_document(
            report.spec, v.path, loop=v.loop, meta={"property": v.property, "kind": v.kind,
                                                    "model": str(report.model.path)}))
        return render_table(trace)
    except Exception as exc:  # the table is a courtesy; the verdict stands without it
        return f"(trace table unavailable: {exc})"
