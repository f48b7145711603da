"""A symbolic atom: one of finitely many strings, Nones, ints... (the
values a state's enum cell may hold), a term of the derivation's Atom sort
(shapes.py)."""

from __future__ import annotations

import z3

from .ops import ARITH, ORDER, SEQUENCE, concrete_ops, ordered
from .oracle import choose
from .values import SBool, SInt, Sym, as_int, conj, disj, sbool, sym_eq


@ordered
class SAtom(Sym):
    """One of `values` (a tuple of atoms): a term of the Atom sort."""

    __slots__ = ("t", "values", "reg")

    def __init__(self, t: z3.ExprRef, values: tuple, reg) -> None:
        self.t, self.values, self.reg = t, values, reg

    def _py(self):
        if len(self.values) == 1:
            return self.values[0]
        return choose([(self.t == self.reg.const(v), v) for v in self.values], "a value")

    def __bool__(self):
        return bool(self._truth())

    def _truth(self):
        return disj(sbool(self.t == self.reg.const(v)) for v in self.values if v)

    def is_(self, v):
        return disj(sbool(self.t == self.reg.const(a)) for a in self.values if a is v or a == v and type(a) is type(v))

    def _eq(self, o):
        if isinstance(o, SAtom):
            return sbool(self.t == o.t)
        if isinstance(o, Sym):
            if isinstance(o, (SInt, SBool)):
                return disj(conj([sbool(self.t == self.reg.const(a)), sym_eq(o, a)]) for a in self.values)
            return NotImplemented
        try:
            return disj(sbool(self.t == self.reg.const(a)) for a in self.values if a == o)
        except TypeError:
            return NotImplemented

    def cases(self) -> list:
        return [(sbool(self.t == self.reg.const(v)), v) for v in self.values]

    def as_int(self) -> SInt:
        if not all(isinstance(v, int) for v in self.values):
            return as_int(self._py())
        term: z3.ArithRef = z3.IntVal(int(self.values[-1]))
        for v in reversed(self.values[:-1]):
            term = z3.If(self.t == self.reg.const(v), z3.IntVal(int(v)), term)
        return SInt(term, int(min(self.values)), int(max(self.values)))

    def _compare(self, o, op):
        if isinstance(o, Sym):
            return op(self._py(), o)
        try:
            return disj(sbool(self.t == self.reg.const(a)) for a in self.values if op(a, o))
        except TypeError:
            return op(self._py(), o)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._py(), name)




concrete_ops(SAtom, ARITH + SEQUENCE + ORDER)
