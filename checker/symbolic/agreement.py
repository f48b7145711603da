"""Does the relation say what the spec says? State by state, with Z3.

For a state s of the spec, with the current frame fixed to s's cells:

* every successor the spec's `next` yields, under its action's label, is one
  Z3 allows under that label (one satisfiability query each);
* Z3 allows no other: with each of those successors ruled out under its
  label, the step is unsatisfiable (one query);
* the properties' symbols, computed from the cells by the relation's
  `observation`, equal what `spec.observe(s)` gives, and every cell is
  within its declared type.

A disagreement names the action and the state. The states are every
reachable state of a small model (`reachable`) or those random walks visit
(`walk`); tests/test_symbolic_agreement.py runs both for every spec with a
relation.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import z3

from ...spec.api import Spec
from ...spec.symbolic import Frame, Relation, conj, domain_keys, python_value, valuation
from .system import System, show_action, show_valuation


@dataclass
class Disagreement:
    what: str          # "spec-only" (Z3 refuses it), "z3-only" (the spec never yields it), "observation", "type"
    action: Any        # the label, or None
    state: Any         # the spec's state
    detail: str

    def __str__(self) -> str:
        act = f" by {show_action(self.action)}" if self.action else ""
        return f"{self.what}{act}: {self.detail}\n  in state {self.state!r}"


class Agreement:
    """Compares a relation with its spec, one state at a time."""

    def __init__(self, relation: Relation) -> None:
        self.relation = relation
        self.spec: Spec = relation.spec
        self.system = System(relation)
        self.f, self.g, self.act = self.system.frame("s"), self.system.frame("t"), self.system.act("s")
        self.solver = z3.Solver()
        self.solver.add(self.system.step(self.f, self.g, self.act))
        by_label: dict = {}
        for i, label in enumerate(self.system.labels):
            by_label.setdefault(label, []).append(i)
        self._label = {}
        for label, idx in by_label.items():
            lit = z3.Bool(f"label{len(self._label)}")
            self.solver.add(lit == z3.Or([self.act == i for i in idx]))
            self._label[label] = lit
        self._obs = _observation_cells(relation, self.f)
        self._obs_solver = z3.Solver()
        self.states = 0

    def check(self, s) -> list[Disagreement]:
        """Every way the relation and the spec disagree at state `s`."""
        self.states += 1
        rel, spec = self.relation, self.spec
        out: list[Disagreement] = []
        here = rel.cells(s)
        out += self._types(s, here)
        succ: dict = {}
        for label, t in spec.next(s):
            cells = rel.cells(t)
            succ.setdefault((label, tuple(cells.items())), (label, cells, t))
        sv = self.solver
        sv.push()
        sv.add(conj(self.f.equals(here)))
        for (label, cells, t) in succ.values():
            lit = self._label.get(label)
            if lit is None:
                out.append(Disagreement("spec-only", label, s, "the relation has no action of this label"))
                continue
            r = sv.check(lit, conj(self.g.equals(cells)))
            if r != z3.sat:
                out.append(Disagreement("spec-only", label, s, self._why_refused(label, cells, r)))
        out += self._observation(s, here)
        for (label, cells, _) in succ.values():
            lit = self._label.get(label)
            if lit is not None:
                sv.add(z3.Or(z3.Not(lit), z3.Not(conj(self.g.equals(cells)))))
        r = sv.check()
        if r == z3.sat:
            m = sv.model()
            label = self.system.label(m, self.act)
            extra = self.g.read(m)
            out.append(Disagreement("z3-only", label, s, "Z3 allows a successor the spec does not yield: "
                                    + "; ".join(_diff(rel, here, extra))))
        elif r != z3.unsat:
            out.append(Disagreement("z3-only", None, s, f"Z3 answered {r} ({sv.reason_unknown()})"))
        sv.pop()
        return out

    def _why_refused(self, label, cells, r) -> str:
        if r != z3.unsat:
            return f"Z3 answered {r} ({self.solver.reason_unknown()})"
        if self.solver.check(self._label[label]) != z3.sat:
            return "the spec yields a successor, but the relation's guard is false"
        z3_cells = self.g.read(self.solver.model())
        rel = self.relation
        return ("the relation's update differs from the spec's: "
                + "; ".join(f"{n}{list(k) if k else ''}: spec {cells[n, k]!r}, relation {z3_cells[n, k]!r}"
                            for (n, k) in cells if cells[n, k] != z3_cells[n, k]) or str(rel))

    def _observation(self, s, here) -> list[Disagreement]:
        want = valuation(self.spec.schema, self.spec.observe(s))
        sv = self._obs_solver
        sv.push()
        sv.add(conj(self.f.equals(here)))
        assert sv.check() == z3.sat
        model = sv.model()
        sv.pop()
        bad = []
        for key, term in self._obs:
            got = model.eval(term, model_completion=True)
            v = python_value(self.spec.schema.symbols[key[0]].type, z3.simplify(got))
            if v != want[key]:
                bad.append(f"{key[0]}{list(key[1]) if key[1] else ''}: observe {want[key]!r}, relation {v!r}")
        return [Disagreement("observation", None, s, "; ".join(bad))] if bad else []

    def _types(self, s, cells) -> list[Disagreement]:
        sc = self.relation.schema
        bad = []
        for (name, key), v in cells.items():
            t = sc.symbols[name].type
            lo, hi = getattr(t, "lo", None), getattr(t, "hi", None)
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                bad.append(f"{name}{list(key) if key else ''} = {v} is outside [{lo}, {hi}]")
        return [Disagreement("type", None, s, "; ".join(bad))] if bad else []


def _observation_cells(relation: Relation, f: Frame):
    """(spec-schema cell, its term over the frame) for every property symbol."""
    sc = relation.spec.schema
    pairs = dict((t.get_id(), v) for t, v in relation.observation(f))
    out = []
    for sym in sc.symbols.values():
        for key in domain_keys(sc, sym):
            term = sym.ref if not key else sym.ref(*[sc.const(d, e) for d, e in zip(sym.domain, key)])
            out.append(((sym.name, key), pairs.get(term.get_id(), term)))
    return out


def _diff(rel: Relation, before, after) -> list[str]:
    changed = {n for (n, k) in before if before[n, k] != after[n, k]}
    return show_valuation(rel.schema, after, only=changed) or ["(no cell changes)"]


def reachable(spec: Spec, limit: int | None = None) -> Iterator:
    """Every reachable state, breadth first (a small model's)."""
    seen = set()
    todo = deque()
    for s in spec.init_states():
        if s not in seen:
            seen.add(s)
            todo.append(s)
    while todo:
        s = todo.popleft()
        yield s
        if limit is not None and len(seen) >= limit:
            continue
        for _, t in spec.next(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)


def walk(spec: Spec, states: int, seed: int = 0, depth: int = 100) -> Iterator:
    """`states` states from random walks of at most `depth` steps (with
    repeats: a walk that can go no further starts again)."""
    rng = random.Random(seed)
    inits = list(spec.init_states())
    n = 0
    while n < states:
        s = rng.choice(inits)
        for _ in range(depth):
            yield s
            n += 1
            if n >= states:
                return
            succ = list(spec.next(s))
            if not succ:
                break
            s = rng.choice(succ)[1]


def disagreements(relation: Relation, states: Iterable, stop_after: int = 1) -> tuple[int, list[Disagreement]]:
    """Check the states (each distinct one once); stop after `stop_after`
    disagreements. Returns (distinct states checked, disagreements)."""
    ag = Agreement(relation)
    seen = set()
    out: list[Disagreement] = []
    for s in states:
        if s in seen:
            continue
        seen.add(s)
        out += ag.check(s)
        if len(out) >= stop_after:
            break
    return len(seen), out
