"""Proof by induction: the invariant (the model's properties and the lemmas
it names) holds in the initial states, and every step from a state where it
holds leads to a state where it holds. The base case is a Z3 query per
clause; the step a query per action and clause (or per clause over all
actions at once), so a failing step names the clause it breaks; its model
is a counterexample to induction (CTI): two states and the action between
them.

A CTI is not a violation: its first state need not be reachable. Either the
invariant is too weak (add a lemma that rules the first state out) or the
property fails for real, which bounded checking (`bounded.py`) can tell.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Mapping

import z3

from ...spec.api import Action
from ...spec.schema import Int
from ..failures import BudgetExpired
from .system import System, show_action, show_valuation

Cells = dict


@dataclass
class CTI:
    clause: str                 # the clause whose query failed
    before: Cells
    action: Action
    after: Cells
    failing: list[str]          # every clause false in `after`


@dataclass
class Proof:
    verdict: str                # "proved", "violation" (an initial state), "not inductive", "unknown"
    clauses: list[str]
    lemmas: list[str]
    initial: Cells | None = None        # the initial state that violates, with `failing`
    failing: list[str] = field(default_factory=list)
    cti: CTI | None = None
    unknown: str = ""
    queries: int = 0
    base_seconds: float = 0.0
    step_seconds: float = 0.0


TYPES = "DeclaredBounds"
PER_ACTION = True     # the inductive step asked per action (`prove --whole-step`: of all actions at once)


def prove(system: System, properties: Mapping[str, z3.BoolRef], lemmas: Mapping[str, z3.BoolRef],
          timeout_ms: int = 0, per_action: bool | None = None) -> Proof:
    """The state schema's integer bounds are a clause of the invariant too
    (TYPES), proved like the others, not assumed: a reachable cell outside
    its declared range would otherwise escape the proof."""
    f = system.frame("s")
    now_f = invariant(system, f, properties, lemmas)
    names = list(now_f)
    proof = Proof("proved", names, list(lemmas))
    # base case
    t0 = time.process_time()
    sv = solver(timeout_ms)
    sv.add(system.init(f))
    for name in names:
        proof.queries += 1
        r = sv.check(z3.Not(now_f[name]))
        if r == z3.sat:
            m = sv.model()
            proof.verdict, proof.initial = "violation", f.read(m)
            proof.failing = [n for n in names if z3.is_false(m.eval(now_f[n], model_completion=True))]
            proof.base_seconds = time.process_time() - t0
            return proof
        if r != z3.unsat:
            proof.verdict, proof.unknown = "unknown", f"base case of {name}: {sv.reason_unknown()}"
            return proof
    proof.base_seconds = time.process_time() - t0
    # inductive step
    t0 = time.process_time()
    split = PER_ACTION if per_action is None else per_action
    (_step_per_action if split else _step_whole)(system, f, now_f, properties, lemmas, proof, timeout_ms)
    proof.step_seconds = time.process_time() - t0
    return proof


def _step_whole(system: System, f, now_f, properties, lemmas, proof: Proof, timeout_ms: int) -> None:
    """One solver over the disjunction of every action, a query per clause."""
    g, act = system.frame("t"), system.act("s")
    next_g = invariant(system, g, properties, lemmas)
    sv = solver(timeout_ms)
    sv.add(*now_f.values(), system.step(f, g, act))
    for name in proof.clauses:
        proof.queries += 1
        r = sv.check(z3.Not(next_g[name]))
        if r == z3.sat:
            m = sv.model()
            failing = [n for n in proof.clauses if z3.is_false(m.eval(next_g[n], model_completion=True))]
            proof.verdict = "not inductive"
            proof.cti = CTI(name, f.read(m), system.label(m, act), g.read(m), failing)
            return
        if r != z3.unsat:
            proof.verdict, proof.unknown = "unknown", f"inductive step of {name}: {sv.reason_unknown()}"
            return


def _step_per_action(system: System, f, now_f, properties, lemmas, proof: Proof, timeout_ms: int) -> None:
    """A query per (action, clause), asked only where the action changes a
    cell the clause reads (elsewhere the clause is the same formula after
    as before, which holds): each query holds one action's guard and
    updates, where the whole step holds every action's. The same verdicts
    as `_step_whole`; a CTI may be another, as each names a first failure."""
    reads = {name: cells_read(f, c) for name, c in now_f.items()}
    sv = solver(timeout_ms)
    sv.add(*now_f.values())
    for i, (guard, changes) in enumerate(system.updates(f)):
        todo = [n for n in proof.clauses if not reads[n].isdisjoint(changes)]
        if not todo:
            continue
        pairs = [(f[k], v) for k, v in changes.items()]
        sv.push()
        sv.add(guard)
        try:
            for name in todo:
                proof.queries += 1
                r = sv.check(z3.Not(z3.substitute(now_f[name], *pairs)))
                if r == z3.sat:
                    m = sv.model()
                    failing = [n for n in proof.clauses if z3.is_false(m.eval(z3.substitute(now_f[n], *pairs),
                                                                                model_completion=True))]
                    proof.verdict = "not inductive"
                    proof.cti = CTI(name, f.read(m), system.labels[i], f.read(m, changes), failing)
                    return
                if r != z3.unsat:
                    proof.verdict = "unknown"
                    proof.unknown = (f"inductive step of {name} by {show_action(system.labels[i])}: "
                                     f"{sv.reason_unknown()}")
                    return
        finally:
            sv.pop()


def cells_read(f, formula: z3.ExprRef) -> set:
    """The cells of frame f a formula reads."""
    out, seen, todo = set(), set(), [formula]
    while todo:
        e = todo.pop()
        i = e.get_id()
        if i in seen:
            continue
        seen.add(i)
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            try:
                out.add(f.key(e))
            except KeyError:
                pass
        else:
            todo.extend(e.children())
    return out


def invariant(system: System, f, properties: Mapping[str, z3.BoolRef],
              lemmas: Mapping[str, z3.BoolRef]) -> dict[str, z3.BoolRef]:
    """The clauses of the inductive invariant, stated of frame f: the
    properties, the lemmas and the cells' declared bounds (TYPES)."""
    out = system.clauses(f, properties, lemmas)
    if f.types():
        out[TYPES] = z3.And(f.types())
    return out


_deadline: list[float] = []   # time.monotonic() when `prove --max-seconds` runs out


@contextmanager
def z3_deadline(seconds: float | None):
    """While it holds, every query of a `solver()` stops when the budget
    runs out and raises BudgetExpired: a Z3 call is C code, which the
    budget's timer signal cannot interrupt (checker/failures.py)."""
    _deadline[:] = [time.monotonic() + seconds] if seconds else []
    try:
        yield
    finally:
        _deadline.clear()


class _Solver(z3.Solver):
    def __init__(self, timeout_ms: int) -> None:
        super().__init__()
        self._timeout = timeout_ms

    def check(self, *assumptions):
        if _deadline:
            left = _deadline[0] - time.monotonic()
            if left <= 0:
                raise BudgetExpired("max-seconds reached")
            ms = int(left * 1000) + 1
            self.set("timeout", min(ms, self._timeout) if self._timeout else ms)
        r = super().check(*assumptions)
        if r == z3.unknown and _deadline and time.monotonic() >= _deadline[0]:
            raise BudgetExpired("max-seconds reached")
        return r


def solver(timeout_ms: int) -> z3.Solver:
    """A solver whose queries each give up after `timeout_ms` (0: never), and
    all of them when `z3_deadline` runs out."""
    sv = _Solver(timeout_ms)
    if timeout_ms:
        sv.set("timeout", timeout_ms)
    return sv


def show_cti(schema, cti: CTI, glossary: str = "", names: str = "cells") -> list[str]:
    """The CTI as a two-state trace: the first state in full, the action, the
    second state's changes, and the clauses it breaks; then where the names
    it prints (a hand-written relation's cells, or the spec's fields) are
    explained, if somewhere."""
    changed = {n for (n, k) in cti.before if cti.before[n, k] != cti.after[n, k]}
    lines = ["counterexample to induction:",
             "  state 1 (every clause of the invariant holds):"]
    lines += [f"    {x}" for x in show_valuation(schema, cti.before)]
    lines.append(f"  action {show_action(cti.action)}")
    lines.append("  state 2 (what changed):")
    lines += [f"    {x}" for x in show_valuation(schema, cti.after, only=changed, before=cti.before)] or ["    (nothing)"]
    lines.append(f"  clauses that fail in state 2: {', '.join(cti.failing)}")
    if TYPES in cti.failing:
        lines += [f"    {x}" for x in outside_types(schema, cti.after)]
    if glossary:
        lines.append(f"  the {names}' names: {glossary}")
    return lines


def outside_types(schema, cells: Mapping) -> list[str]:
    """The cells outside their declared ranges (what breaks TYPES). A
    derived sequence's `#len` past its capacity is a tuple longer than any
    of the states its shape was taken from (derive/cells.py)."""
    out = []
    for (name, key), v in cells.items():
        t = getattr(schema.symbols.get(name), "type", None)
        if not isinstance(t, Int) or isinstance(v, bool) or not isinstance(v, int):
            continue
        if (t.lo is not None and v < t.lo) or (t.hi is not None and v > t.hi):
            cell = name + (f"[{', '.join(map(str, key))}]" if key else "")
            note = ", a tuple longer than the derived shape holds" if name.endswith("#len") else ""
            out.append(f"{cell} = {v}: outside its declared {_range(t)}{note}")
    return out


def _range(t: Int) -> str:
    return f"{'' if t.lo is None else t.lo}..{'' if t.hi is None else t.hi}"


def show_initial(schema, cells: Any, failing: list[str]) -> list[str]:
    lines = ["an initial state violates the invariant:"]
    lines += [f"    {x}" for x in show_valuation(schema, cells)]
    lines.append(f"  clauses that fail: {', '.join(failing)}")
    return lines
