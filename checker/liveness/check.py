"""Wiring: resolve a model's temporal properties against its spec, check
them on a complete bfs exploration, and turn each failure into a lasso
`Violation`. The algorithm and its limits are described in the package
docstring (`checker/liveness/__init__.py`)."""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

import z3

from ..invariants import PropertyError, check_sanity, compile_predicate
from ..job import Outcome, Verdict, Violation, ViolationKind
from ..model import Model, ModelError
from .fair_cycles import Constraint, StateGraph, find_fair_lasso
from .syntax import EVENTUALLY, Fairness, TemporalProperty, show

if TYPE_CHECKING:
    from ...spec.api import Spec


@dataclass
class LassoViolation(Violation):
    """A liveness violation; `trace_meta` goes into the ITF file's #meta."""

    trace_meta: dict[str, Any] = field(default_factory=dict)


def _to_z3(m: Model, spec: Spec, prop: TemporalProperty, f) -> z3.BoolRef:
    kind = f[0]
    if kind == "const":
        return z3.BoolVal(f[1])
    if kind == "name":
        for table in (spec.predicates, spec.invariants, spec.witnesses):
            if f[1] in table:
                return table[f[1]]
        known = sorted({*spec.predicates, *spec.invariants, *spec.witnesses})
        raise ModelError(
            f"{m.path}: temporal property {prop.name} uses {f[1]!r}, which spec {spec.name} does not define "
            f"(predicates, invariants and witnesses: {', '.join(known) or 'none'})")
    args = [_to_z3(m, spec, prop, g) for g in f[1:]]
    return {"not": z3.Not, "and": z3.And, "or": z3.Or}[kind](*args)


def resolve(m: Model, spec: Spec) -> dict[str, tuple[z3.BoolRef, z3.BoolRef]]:
    """Property name -> (trigger, goal) as Z3 formulas over the spec's schema.
    The goal must be satisfiable and not valid (else the property is vacuous)."""
    out = {}
    for name, prop in m.temporal.items():
        trigger = _to_z3(m, spec, prop, prop.trigger)
        goal = _to_z3(m, spec, prop, prop.goal)
        try:
            check_sanity(spec.schema, {f"{name} (goal {show(prop.goal)})": goal})
        except PropertyError as exc:
            raise ModelError(f"{m.path}: {exc}") from None
        out[name] = (trigger, goal)
    return out


def expand_fairness(m: Model, fairness: list[Fairness], actions: list,
                    unmatched: list[str] | None = None) -> list[Constraint]:
    """Fairness conditions -> constraints over the action ids the run met. A
    condition on an action no reachable state enables constrains nothing; its
    text is appended to `unmatched` (so one fairness list can serve several
    variants, and a misspelt action shows up in the report)."""
    out = []
    unmatched = [] if unmatched is None else unmatched
    for f in fairness:
        groups: dict[tuple, set[int]] = {}
        for aid, (name, params) in enumerate(actions):
            if f.action != "*" and name != f.action:
                continue
            pv = {p: str(v) for p, v in params}
            missing = [p for p, _ in f.params if p not in pv]
            if missing:
                raise ModelError(f"{m.path}: fairness {f.text}: action {name} has no parameter {missing[0]!r} "
                                 f"(parameters: {', '.join(pv) or 'none'})")
            if any(v is not None and pv[p] != v for p, v in f.params):
                continue
            key = tuple((p, pv[p]) for p, v in f.params if v is None)
            groups.setdefault(key, set()).add(aid)
        if not groups:
            unmatched.append(f.text)  # never enabled in a reachable state: vacuous, reported in the summary
        for key, aids in sorted(groups.items()):
            label = f.text
            if key:
                fixed = [f"{p}={v}" for p, v in f.params if v is not None] + [f"{p}={v}" for p, v in key]
                label = f"{f.kind}({f.action}({', '.join(fixed)}))"
            out.append(Constraint(f.kind, label, frozenset(aids)))
    return out


def check_temporal(m: Model, spec: Spec, outcome: Outcome) -> None:
    """Check the model's temporal properties on the bfs exploration in
    `outcome`; add a LassoViolation per failing property and record a summary
    in outcome.extra["liveness"]."""
    if not m.temporal:
        return
    resolved = resolve(m, spec)
    summary: dict[str, Any] = {"fairness": [f.text for f in m.fairness], "properties": {}}
    outcome.extra["liveness"] = summary
    if outcome.incomplete_reason or any(v.kind != "witness" for v in outcome.violations):
        summary["skipped"] = "the search stopped early (a limit, or a safety violation), so the state graph is partial"
        for name in m.temporal:
            summary["properties"][name] = {"verdict": "unchecked"}
        return
    if outcome.exploration is None or not getattr(outcome.exploration, "edges_kept", False):
        summary["skipped"] = "the state graph was not kept"
        for name in m.temporal:
            summary["properties"][name] = {"verdict": "unchecked"}
        outcome.verdict = Verdict.INCOMPLETE
        outcome.incomplete_reason = "the state graph was not kept, so the temporal properties are unchecked"
        return
    t0 = time.monotonic()
    paused = gc.isenabled()
    gc.disable()  # millions of small long-lived objects: the cyclic GC would rescan them for nothing
    try:
        _check_all(m, spec, outcome, resolved, summary)
    finally:
        if paused:
            gc.enable()
    summary["seconds"] = round(time.monotonic() - t0, 3)
    if outcome.violations:
        outcome.verdict = Verdict.VIOLATION


def _check_all(m: Model, spec: Spec, outcome: Outcome, resolved, summary) -> None:
    ex = outcome.exploration
    n = len(ex.states)
    g = StateGraph(n, ex.src, ex.dst, ex.act, (i for i in range(n) if ex.parent[i] < 0))
    unmatched: list[str] = []
    constraints = expand_fairness(m, m.fairness, ex.actions, unmatched)
    if unmatched:
        summary["unmatched_fairness"] = unmatched
    g.bind(constraints)
    truth = _evaluate(spec, ex.states, [f for pair in resolved.values() for f in pair])
    for name, prop in m.temporal.items():
        trigger, goal = resolved[name]
        keep = [not x for x in truth[goal.get_id()]]
        if prop.kind == EVENTUALLY:
            sources = [i for i in g.initial if keep[i]]
        else:
            fires = truth[trigger.get_id()]
            sources = [i for i in range(n) if fires[i] and keep[i]]
        lasso = find_fair_lasso(g, constraints, keep, sources)
        if lasso is None:
            summary["properties"][name] = {"verdict": "ok", "formula": prop.text}
            continue
        path = [(ex.actions[a] if a is not None else None, ex.states[s]) for a, s in lasso.steps]
        closing = ex.actions[lasso.closing] if lasso.closing is not None else None
        outcome.violations.append(LassoViolation(
            name, ViolationKind.LIVENESS, path, lasso.loop,
            trace_meta={
                "temporal": prop.text,
                "fairness": [f.text for f in m.fairness],
                "unmatched_fairness": unmatched,
                "loop_action": "stutter" if closing is None else
                {"action": closing[0], "params": {p: v for p, v in closing[1]}},
            }))
        summary["properties"][name] = {"verdict": "violation", "formula": prop.text,
                                       "stem": lasso.loop + 1, "cycle": len(path) - lasso.loop}


def _evaluate(spec: Spec, states: list, formulas: list[z3.BoolRef]) -> dict[int, bytearray]:
    """Formula id -> truth value per state, observing each state once."""
    uniq = {f.get_id(): f for f in formulas}
    preds = [(k, compile_predicate(spec.schema, f)) for k, f in uniq.items()]
    out = {k: bytearray(len(states)) for k in uniq}
    observe = spec.observe
    for i, s in enumerate(states):
        o = observe(s)
        for k, p in preds:
            out[k][i] = bool(p(o))
    return out


