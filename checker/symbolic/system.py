"""A relation made ready for Z3: frames, and one step as a formula.

A step from frame f to frame g by action number `act` is

    0 <= act < n  /\\  (act = i => guard_i(f))  /\\  for each cell c:
        g.c = If(act = i1, new_i1(c), If(act = i2, new_i2(c), ..., f.c))

where i1, i2, ... are the actions that change c: the formula grows with the
updates, not with actions x cells, which keeps a 12-step unrolling of
PIP-473 small.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping

import z3

from ...spec.api import Action, SpecError
from ...spec.symbolic import Frame, Key, Relation, literal


class SymbolicError(SpecError):
    """A relation that cannot be used as written, or that disagrees with its
    spec on a path Z3 found (one line, exit 2, as a spec's error)."""


class System:
    def __init__(self, relation: Relation) -> None:
        self.relation = relation
        self.acts = relation.actions()
        if not self.acts:
            raise SymbolicError(f"the relation of {relation.spec.name} has no action")
        self.labels: list[Action] = [a.label for a in self.acts]
        self._frames: dict[str, Frame] = {}

    def frame(self, tag: str | int) -> Frame:
        tag = str(tag)
        f = self._frames.get(tag)
        if f is None:
            f = self._frames[tag] = self.relation.frame(tag)
        return f

    def act(self, tag: str | int) -> z3.ArithRef:
        return z3.Int(f"act@{tag}")

    def updates(self, f: Frame) -> list[tuple[z3.BoolRef, dict[Key, z3.ExprRef]]]:
        out = []
        for a in self.acts:
            guard, changes = a.step(f)
            out.append((guard, {self._key(f, c): self._value(f, self._key(f, c), v) for c, v in changes.items()}))
        return out

    @staticmethod
    def _key(f: Frame, c) -> Key:
        return c if isinstance(c, tuple) else f.key(c)

    def _value(self, f: Frame, key: Key, v) -> z3.ExprRef:
        if z3.is_expr(v):
            return v
        sym = self.relation.schema.symbols[key[0]]
        return literal(self.relation.schema, sym.type, v)

    def step(self, f: Frame, g: Frame, act: z3.ArithRef) -> z3.BoolRef:
        return z3.And(*self.step_parts(f, g, act))

    def step_parts(self, f: Frame, g: Frame, act: z3.ArithRef) -> tuple[z3.BoolRef, z3.BoolRef]:
        """(which actions may be taken: a formula over f and act; what they
        do: g as a function of f and act)."""
        ups = self.updates(f)
        guards = [act >= 0, act < len(ups)]
        by_cell: dict[Key, list[tuple[int, z3.ExprRef]]] = defaultdict(list)
        for i, (guard, changes) in enumerate(ups):
            guards.append(z3.Implies(act == i, guard))
            for key, v in changes.items():
                by_cell[key].append((i, v))
        frame = []
        for key in f.keys:
            term = f[key]
            for i, v in reversed(by_cell.get(key, ())):
                term = z3.If(act == i, v, term)
            frame.append(g[key] == term)
        return z3.And(guards), z3.And(frame)

    def enabled(self, f: Frame) -> z3.BoolRef:
        return z3.Or([guard for guard, _ in self.updates(f)])

    def init(self, f: Frame) -> z3.BoolRef:
        return self.relation.init(f)

    def clauses(self, f: Frame, properties: Mapping[str, z3.BoolRef],
                lemmas: Mapping[str, z3.BoolRef] = {}) -> dict[str, z3.BoolRef]:
        """Properties (over the spec's schema) and lemmas (over the state
        schema), stated of a frame."""
        out = {n: self.relation.property(f, p) for n, p in properties.items()}
        out.update({n: self.relation.lemma(f, p) for n, p in lemmas.items()})
        return out

    def label(self, model: z3.ModelRef, act: z3.ArithRef) -> Action:
        return self.labels[model.eval(act, model_completion=True).as_long()]


def show_action(label: Action) -> str:
    name, params = label
    return f"{name}({', '.join(f'{k}={v}' for k, v in params)})" if params else name


def show_valuation(schema, cells: Mapping[Key, Any], only: set[str] | None = None,
                   before: Mapping[Key, Any] | None = None) -> list[str]:
    """One line per symbol: `tmState = init`, `rmState = {r1: working, ...}`,
    a set as its members, a function's default values left out. A derived
    relation's cells are shown as the spec's state (cti.py): with `before`,
    what changed from it."""
    render = getattr(schema, "render", None)
    if render is not None:
        return render(cells, only, before)
    lines = []
    for sym in schema.symbols.values():
        if only is not None and sym.name not in only:
            continue
        vals = {k: v for (n, k), v in cells.items() if n == sym.name}
        if not sym.domain:
            lines.append(f"{sym.name} = {vals[()]}")
            continue
        show = (lambda k: k[0] if len(k) == 1 else "(" + ", ".join(k) + ")")
        if sym.is_set:
            lines.append(f"{sym.name} = {{{', '.join(show(k) for k, v in vals.items() if v)}}}")
        else:
            shown = [f"{show(k)}: {v}" for k, v in vals.items() if sym.default is None or v != sym.default]
            lines.append(f"{sym.name} = {{{', '.join(shown)}}}")
    return lines
