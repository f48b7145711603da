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
from ...spec.symbolic import Frame, Relation, conj, domain_keys, literal, python_value, valuation
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


class Substitution:
    """z3.substitute with the `from` terms fixed once: the agreement test
    substitutes a state into the same formulas hundreds of thousands of
    times, and z3.substitute's checks of every pair cost more than Z3's work."""

    def __init__(self, terms: list[z3.ExprRef]) -> None:
        self.n = len(terms)
        self.ctx = terms[0].ctx
        self.frm = (z3.Ast * self.n)(*[t.as_ast() for t in terms])

    def __call__(self, expr: z3.ExprRef, values: list[z3.ExprRef]) -> z3.ExprRef:
        to = (z3.Ast * self.n)(*[v.as_ast() for v in values])
        r = z3.Z3_substitute(self.ctx.ref(), expr.as_ast(), self.n, self.frm, to)
        return z3.simplify(z3.z3._to_expr_ref(r, self.ctx))


class Agreement:
    """Compares a relation with its spec, one state at a time.

    Per state, Z3 substitutes the state's cells into the step formula and
    simplifies it: the guards become true or false and the updates values,
    which leaves a small formula over the action number and the next frame.
    Each successor the spec yields, with an action number of its label,
    must make it true (a substitution that simplifies to true or false);
    with those action numbers excluded it must be unsatisfiable (one query).
    The step formula fixes every cell of the next frame for a given action
    (`System.step`), so an action number has one successor. (Asserting the
    state and searching the whole step formula instead costs 20 times more
    on PIP-473.)"""

    def __init__(self, relation: Relation) -> None:
        self.relation = relation
        self.spec: Spec = relation.spec
        self.system = System(relation)
        self.f, self.g, self.act = self.system.frame("s"), self.system.frame("t"), self.system.act("s")
        self.guards, self.frame = self.system.step_parts(self.f, self.g, self.act)
        self.keys = self.f.keys
        self._sub_f = Substitution([self.f[k] for k in self.keys])
        self._sub_g = Substitution([self.g[k] for k in self.keys] + [self.act])
        self._by_label: dict = {}
        for i, label in enumerate(self.system.labels):
            self._by_label.setdefault(label, []).append(i)
        # the observation: each property symbol's term over f equals a constant o[key]
        self._obs = _observation_cells(relation, self.f)
        sc = self.spec.schema
        self._o = [(key, z3.Const(f"o:{key[0]}{list(key[1])}", sc.symbols[key[0]].type.z3sort(sc)))
                   for key, _ in self._obs]
        self._obs_formula = conj([term == o for (_, term), (_, o) in zip(self._obs, self._o)])
        self._sub_obs = Substitution([self.f[k] for k in self.keys] + [o for _, o in self._o])
        self._lit: dict = {}
        self._solver = z3.Solver()   # one, with push and pop: a new solver costs 2 ms
        self.states = 0

    def _literal(self, schema, name: str, value):
        key = (schema is self.relation.schema, name, value)
        hit = self._lit.get(key)
        if hit is None:
            hit = self._lit[key] = literal(schema, schema.symbols[name].type, value)
        return hit

    def _values(self, cells) -> list[z3.ExprRef]:
        sc = self.relation.schema
        return [self._literal(sc, k[0], cells[k]) for k in self.keys]

    def check(self, s) -> list[Disagreement]:
        """Every way the relation and the spec disagree at state `s`."""
        self.states += 1
        rel, spec = self.relation, self.spec
        out: list[Disagreement] = []
        here = rel.cells(s)
        out += self._types(s, here)
        now = self._values(here)
        out += self._observation(s, here, now)
        succ: dict = {}
        for label, t in spec.next(s):
            cells = rel.cells(t)
            succ.setdefault((label, tuple(cells.items())), (label, cells, t))
        guards = self._sub_f(self.guards, now)
        step = z3.And(guards, self._sub_f(self.frame, now))
        labels = self.system.labels
        matched = set()
        for (label, cells, t) in succ.values():
            nxt = self._values(cells)
            hit = [i for i in self._by_label.get(label, ())
                   if z3.is_true(self._sub_g(step, nxt + [z3.IntVal(i)]))]
            matched.update(hit)
            if not hit:
                out.append(Disagreement("spec-only", label, s, self._why_refused(step, label, cells)))
        sv = self._solver    # the guards alone: g is a function of the action (System.step)
        sv.push()
        sv.add(guards, *[self.act != i for i in matched])
        r = sv.check()
        if r == z3.sat:
            i = sv.model().eval(self.act, model_completion=True).as_long()
            extra = self._successor(step, i)
            out.append(Disagreement("z3-only", labels[i], s, "Z3 allows a successor the spec does not yield: "
                                    + "; ".join(_diff(rel, here, extra))))
        elif r != z3.unsat:
            out.append(Disagreement("z3-only", None, s, f"Z3 answered {r} ({sv.reason_unknown()})"))
        sv.pop()
        return out

    def _successor(self, step, i: int) -> dict | None:
        sv = self._solver
        sv.push()
        sv.add(step, self.act == i)
        found = sv.check() == z3.sat
        cells = self.g.read(sv.model()) if found else None
        sv.pop()
        return cells

    def _why_refused(self, step, label, cells) -> str:
        if label not in self._by_label:
            return "the relation has no action of this label"
        found = [c for c in (self._successor(step, i) for i in self._by_label[label]) if c is not None]
        if not found:
            return "the spec yields a successor, but the relation's guard is false"
        z3_cells = found[0]
        return ("the relation's update differs from the spec's: "
                + "; ".join(f"{n}{list(k) if k else ''}: spec {cells[n, k]!r}, relation {z3_cells[n, k]!r}"
                            for (n, k) in cells if cells[n, k] != z3_cells[n, k]))

    def _observation(self, s, here, now) -> list[Disagreement]:
        sc = self.spec.schema
        want = valuation(sc, self.spec.observe(s))
        wanted = [self._literal(sc, key[0], want[key]) for key, _ in self._o]
        if z3.is_true(self._sub_obs(self._obs_formula, now + wanted)):
            return []
        bad = []
        for key, term in self._obs:
            v = python_value(sc.symbols[key[0]].type, self._sub_f(term, now))
            if v != want[key]:
                bad.append(f"{key[0]}{list(key[1]) if key[1] else ''}: observe {want[key]!r}, relation {v!r}")
        return [Disagreement("observation", None, s, "; ".join(bad) or "the observation formula fails")]

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


def disagreements(relation: Relation, states: Iterable, stop_after: int = 1,
                  most: int | None = None) -> tuple[int, list[Disagreement]]:
    """Check the states, each distinct one once, at most `most` of them; stop
    after `stop_after` disagreements. Returns (distinct states checked,
    disagreements)."""
    ag = Agreement(relation)
    seen = set()
    out: list[Disagreement] = []
    for s in states:
        if s in seen:
            continue
        if most is not None and len(seen) >= most:
            break
        seen.add(s)
        out += ag.check(s)
        if len(out) >= stop_after:
            break
    return len(seen), out
