"""Symbolic scalars: the leaves of a state while the deriver runs the spec.

A symbolic value wraps a Z3 term and behaves, to the spec's code, like the
Python value it stands for. An operation that can stay symbolic does (`==`,
`<`, `+`, `and` of two conditions made with `&`): its result is another
symbolic value. Where Python insists on a concrete answer (`bool()` in an
`if`, `hash()` for a dict key or a set element, `index()` for a subscript,
`str()` in a label), the value asks the oracle to branch (oracle.py): each
possible answer is explored under its condition. That is exact, only
slower: nothing the spec's code can do to a value is guessed.

* `SBool`: a condition (Z3 Bool);
* `SInt`: an integer (Z3 Int) with an interval it is known to lie in and,
  for a join of a few values (`If(c, 99, pos)`), the set of values it may
  take, which bound the cases when it must become a Python int;
* `SAtom` (atom.py): one of a finite set of atoms (strings, None, ...), a
  term of the derivation's Atom sort (shapes.py).
"""

from __future__ import annotations

import operator
from typing import Any

import z3

from ....spec.symbolic import conj as _conj, disj as _disj
from .ops import ARITH, ORDER, SEQUENCE, concrete_ops, ordered
from .oracle import OutsideSubset, choose, decide


class Sym:
    """Base of every symbolic value (containers.py has the collections)."""

    __slots__ = ()

    def _py(self):
        raise NotImplementedError

    def __repr__(self):   # the spec's code printing a value makes it concrete
        return repr(self._py())

    def __str__(self):
        return str(self._py())

    def __format__(self, spec):
        return format(self._py(), spec)

    def __hash__(self):
        return hash(self._py())

    def _eq(self, o):
        """The symbolic truth of `self == o`, or NotImplemented."""
        return NotImplemented

    def __eq__(self, o):   # a symbolic truth, which `if` decides (the deriver's branching)
        return self._eq(o)

    def __ne__(self, o):
        r = self._eq(o)
        return r if r is NotImplemented else negate(r)

    def __index__(self):
        return operator.index(self._py())

    def __int__(self):
        return int(self._py())


def is_sym(x) -> bool:
    return isinstance(x, Sym)


def has_sym(x) -> bool:
    """Does a value hold a symbolic part (so hashing it would branch)?"""
    if isinstance(x, Sym):
        return True
    if isinstance(x, tuple):
        return any(has_sym(y) for y in x)
    return False


def bool_term(x) -> z3.BoolRef:
    if isinstance(x, SBool):
        return x.t
    if isinstance(x, bool):
        return z3.BoolVal(x)
    raise TypeError(f"not a condition: {x!r}")


_TRUE, _FALSE = z3.BoolVal(True), z3.BoolVal(False)
TRUE_ID, FALSE_ID = _TRUE.get_id(), _FALSE.get_id()


def sbool(t: z3.BoolRef):
    """A condition: a Python bool when it is a constant."""
    i = t.get_id()
    if i == TRUE_ID:
        return True
    if i == FALSE_ID:
        return False
    return SBool(t)


def numeral(t) -> int | None:
    return t.as_long() if z3.is_int_value(t) else None


def conj(parts) -> Any:
    terms = []
    for p in parts:
        if p is False:
            return False
        if p is not True:
            terms.append(p.t if isinstance(p, SBool) else bool_term(p))
    return True if not terms else SBool(terms[0]) if len(terms) == 1 else SBool(_conj(terms))


def disj(parts) -> Any:
    terms = []
    for p in parts:
        if p is True:
            return True
        if p is not False:
            terms.append(p.t if isinstance(p, SBool) else bool_term(p))
    return False if not terms else SBool(terms[0]) if len(terms) == 1 else SBool(_disj(terms))


def truth(x):
    """`bool(x)` without branching: a Python bool or an SBool."""
    if isinstance(x, SBool):
        return x
    if isinstance(x, Sym):
        return x._truth()
    return bool(x)


def sym_eq(a, b):
    """`a == b` as Python means it (a tuple equals a NamedTuple with the
    same items), without branching: a Python bool or an SBool."""
    if a is b:
        return True
    if isinstance(a, Sym):
        r = a._eq(b)
        return r if r is not NotImplemented else (b._eq(a) if isinstance(b, Sym) else False)
    if isinstance(b, Sym):
        r = b._eq(a)
        return False if r is NotImplemented else r
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return False
        return conj(sym_eq(x, y) for x, y in zip(a, b))
    return a == b


class SBool(Sym):
    __slots__ = ("t",)

    def __init__(self, t: z3.BoolRef) -> None:
        self.t = t

    def _py(self):
        return decide(self.t)

    def __bool__(self):
        return decide(self.t)

    def _truth(self):
        return self

    def cases(self) -> list:
        return [(self, True), (negate(self), False)]

    def _eq(self, o):
        if isinstance(o, (bool, SBool)):
            return sbool(self.t == bool_term(o))
        if isinstance(o, (int, SInt)):
            return as_int(self)._eq(o)
        return NotImplemented

    def __and__(self, o):
        if isinstance(o, (bool, SBool)):
            return conj([self, o])
        return as_int(self) & o

    __rand__ = __and__

    def __or__(self, o):
        if isinstance(o, (bool, SBool)):
            return disj([self, o])
        return as_int(self) | o

    __ror__ = __or__

    def __xor__(self, o):
        if isinstance(o, (bool, SBool)):
            return sbool(z3.Xor(self.t, bool_term(o)))
        return NotImplemented

    __rxor__ = __xor__

    def __invert__(self):
        return ~as_int(self)

    def __add__(self, o):
        return as_int(self) + o

    def __radd__(self, o):
        return o + as_int(self)

    def __sub__(self, o):
        return as_int(self) - o

    def __rsub__(self, o):
        return o - as_int(self)

    def __mul__(self, o):
        return as_int(self) * o

    __rmul__ = __mul__


def negate(x):
    if isinstance(x, SBool):
        t = x.t
        return SBool(t.arg(0)) if z3.is_not(t) else SBool(z3.Not(t))
    return not x


@ordered
class SInt(Sym):
    __slots__ = ("t", "lo", "hi", "vals")

    def __init__(self, t: z3.ArithRef, lo: int | None, hi: int | None, vals: frozenset | None = None) -> None:
        self.t, self.lo, self.hi, self.vals = t, lo, hi, vals

    def _py(self):
        values = self._values()
        if values is None:
            raise OutsideSubset("an integer without known bounds must become a Python int "
                                f"(bounds {self.lo}..{self.hi})")
        return choose([(self.t == v, v) for v in values], "an integer")

    def _values(self):
        """Every value it may take, in order, or None (unbounded)."""
        if self.vals is not None:
            return sorted(self.vals)
        if self.lo is None or self.hi is None or self.hi - self.lo > 4096:
            return None
        return range(self.lo, self.hi + 1)

    def __bool__(self):
        return decide(self.t != 0)

    def cases(self) -> list | None:
        """[(condition, value)] for every value it may be (None: unbounded)."""
        values = self._values()
        if values is None:
            return None
        return [(c, v) for v in values if (c := self._eq(v)) is not False]

    def _truth(self):
        return sbool(self.t != 0)

    def _eq(self, o):
        if isinstance(o, bool) or isinstance(o, SBool):
            return self._eq(as_int(o))
        if isinstance(o, int):
            if (self.lo is not None and o < self.lo) or (self.hi is not None and o > self.hi) or (
                    self.vals is not None and o not in self.vals):
                return False
            a = numeral(self.t)
            return a == o if a is not None else sbool(self.t == o)
        if isinstance(o, SInt):
            a, b = numeral(self.t), numeral(o.t)
            return a == b if a is not None and b is not None else sbool(self.t == o.t)
        return NotImplemented

    def _compare(self, o, op):
        o = int_operand(o)
        if o is NotImplemented:
            return NotImplemented
        a, b = numeral(self.t), numeral(o.t) if isinstance(o, SInt) else o
        if a is not None and b is not None:
            return op(a, b)
        return sbool(op(self.t, o.t if isinstance(o, SInt) else o))

    def _arith(self, o, op, bounds, swap=False):
        o = int_operand(o)
        if o is NotImplemented:
            return NotImplemented
        a, b = (o, self) if swap else (self, o)
        ta = a.t if isinstance(a, SInt) else a
        tb = b.t if isinstance(b, SInt) else b
        lo, hi = bounds(interval(a), interval(b))
        t = op(ta, tb)
        if numeral(ta if z3.is_expr(ta) else z3.IntVal(ta)) is not None and (
                numeral(tb if z3.is_expr(tb) else z3.IntVal(tb)) is not None):
            t = z3.simplify(t)
        return SInt(t, lo, hi)

    def __add__(self, o):
        return self._arith(o, operator.add, _add)

    def __radd__(self, o):
        return self._arith(o, operator.add, _add, swap=True)

    def __sub__(self, o):
        return self._arith(o, operator.sub, _sub)

    def __rsub__(self, o):
        return self._arith(o, operator.sub, _sub, swap=True)

    def __mul__(self, o):
        if isinstance(o, SInt):
            # a product of two unknowns is nonlinear, where Z3 is weak: make the factor with the
            # fewer values concrete (a branch per value), so the product is linear
            a, b = (self, o) if _span(self) <= _span(o) else (o, self)
            return a._py() * b
        if isinstance(o, SBool):
            return self * as_int(o)
        if isinstance(o, (int, bool)):
            lo, hi = interval(self)
            ends = [x * int(o) for x in (lo, hi)] if lo is not None and hi is not None else [None, None]
            return SInt(z3.simplify(self.t * int(o)), min(ends) if None not in ends else None,
                        max(ends) if None not in ends else None)
        return int(self) * o

    __rmul__ = __mul__

    def __floordiv__(self, o):
        if isinstance(o, int) and o > 0:
            lo, hi = interval(self)
            return SInt(self.t / o, None if lo is None else lo // o, None if hi is None else hi // o)
        return int(self) // o

    def __mod__(self, o):
        if isinstance(o, int) and o > 0:
            return SInt(self.t % o, 0, o - 1)
        return int(self) % o

    def __neg__(self):
        lo, hi = interval(self)
        return SInt(-self.t, None if hi is None else -hi, None if lo is None else -lo)

    def __pos__(self):
        return self


def _span(x) -> float:
    lo, hi = interval(x)
    return float("inf") if lo is None or hi is None else hi - lo


def _add(a, b):
    return (None if None in (a[0], b[0]) else a[0] + b[0], None if None in (a[1], b[1]) else a[1] + b[1])


def _sub(a, b):
    return (None if None in (a[0], b[1]) else a[0] - b[1], None if None in (a[1], b[0]) else a[1] - b[0])


def interval(x) -> tuple[int | None, int | None]:
    if isinstance(x, SInt):
        return x.lo, x.hi
    return int(x), int(x)


def int_operand(o):
    """An operand of integer arithmetic: an int, or an SInt."""
    if isinstance(o, bool):
        return int(o)
    if isinstance(o, (int, SInt)):
        return o
    if isinstance(o, Sym) and hasattr(o, "as_int"):
        return o.as_int()
    return NotImplemented


def as_int(x) -> SInt:
    if isinstance(x, SInt):
        return x
    if isinstance(x, SBool):
        return SInt(z3.If(x.t, z3.IntVal(1), z3.IntVal(0)), 0, 1)
    if isinstance(x, Sym) and hasattr(x, "as_int"):
        return x.as_int()
    if isinstance(x, int):
        return SInt(z3.IntVal(int(x)), int(x), int(x))
    raise TypeError(f"not an integer: {x!r}")


for _cls in (SBool, SInt):
    concrete_ops(_cls, ARITH + SEQUENCE + ORDER)
