"""Symbolic collections: the frozensets, variable-length tuples and
alternatives (a header or "NONE", a participant or None) of a state.

* `SSet`: a frozenset over a finite universe of concrete elements, one
  condition per element (is it in the set?). Union, difference, membership,
  equality and size stay symbolic; iterating it branches on each element in
  a fixed order (`SetIter`, whose position the merge key reads).
* `SSeq`: a tuple whose length varies (a ledger): a length and slots. What
  needs positions (indexing, slicing, appending) makes the length concrete.
* `SUnion`: a value of one of several shapes, with a tag saying which. `==`
  stays symbolic; anything else picks the alternative (a branch per shape)
  and applies to it, so `h.state` on a header-or-"NONE" reads the header's
  state under the condition that it is a header.
"""

from __future__ import annotations

from typing import Any

import z3

from .oracle import OutsideSubset, choose, current, decide
from .values import (
    ARITH, ORDER, SBool, SInt, Sym, bool_term, concrete_ops, conj, disj, has_sym, negate, sbool, sym_eq,
)


def _bit(b) -> z3.BoolRef:
    return b if z3.is_expr(b) else z3.BoolVal(bool(b))


class SSet(Sym):
    """`bits`: element -> Z3 condition (or a Python bool)."""

    __slots__ = ("bits",)

    def __init__(self, bits: dict) -> None:
        self.bits = bits

    def _py(self):
        if len(self.bits) > 12:
            raise OutsideSubset(f"a set over {len(self.bits)} possible elements must become a Python frozenset")
        out = frozenset()
        for e, b in self.bits.items():
            if decide(_bit(b)):
                out |= {e}
        return out

    def _truth(self):
        return disj(_cond(b) for b in self.bits.values())

    def __bool__(self):
        return bool(self._truth())

    def size(self) -> SInt:
        terms = [z3.If(_bit(b), z3.IntVal(1), z3.IntVal(0)) for b in self.bits.values()]
        return SInt(z3.simplify(z3.Sum(terms)) if terms else z3.IntVal(0), 0, len(terms))

    def __len__(self):
        return self.size()._py()

    def __iter__(self):
        return SetIter.made(self)

    def __contains__(self, x):
        return self.has(x)

    def has(self, x):
        if not has_sym(x):
            try:
                return _cond(self.bits.get(x, False))
            except TypeError:
                return False
        return disj(conj([sym_eq(x, e), _cond(b)]) for e, b in self.bits.items())

    def _other(self, o) -> dict | None:
        if isinstance(o, SSet):
            return o.bits
        if isinstance(o, (set, frozenset)):
            # a Python set keeps the objects it hashed: a symbolic item made concrete by its hash
            # is still symbolic in the set, so take its value (decided already on this path)
            return {concrete(e): True for e in o}
        return None

    def _combine(self, o, fn):
        ob = self._other(o)
        if ob is None:
            return NotImplemented
        if not isinstance(o, SSet) and fn is _OR:       # adding Python elements: the others keep their terms
            out = dict(self.bits)
            out.update((e, True) for e in ob)
            return SSet(out)
        if not isinstance(o, SSet) and fn is _MINUS:
            out = dict(self.bits)
            for e in ob:
                out.pop(e, None)
            return SSet(out)
        out = {}
        for e in list(self.bits) + [e for e in ob if e not in self.bits]:
            b = fn(_cond(self.bits.get(e, False)), _cond(ob.get(e, False)))
            if b is not False:
                out[e] = b.t if isinstance(b, SBool) else b
        return SSet(out)

    def __or__(self, o):
        return self._combine(o, _OR)

    __ror__ = __or__
    union = __or__

    def __and__(self, o):
        return self._combine(o, lambda a, b: conj([a, b]))

    __rand__ = __and__
    intersection = __and__

    def __sub__(self, o):
        return self._combine(o, _MINUS)

    def __rsub__(self, o):
        return self._combine(o, lambda a, b: conj([b, negate(a)]))

    difference = __sub__

    def __xor__(self, o):
        return self._combine(o, lambda a, b: disj([conj([a, negate(b)]), conj([b, negate(a)])]))

    __rxor__ = __xor__

    def _eq(self, o):
        ob = self._other(o)
        if ob is None:
            return NotImplemented
        keys = set(self.bits) | set(ob)
        return conj(sym_eq(_cond(self.bits.get(e, False)), _cond(ob.get(e, False))) for e in keys)

    def __le__(self, o):
        ob = self._other(o)
        if ob is None:
            return NotImplemented
        return conj(disj([negate(_cond(b)), _cond(ob.get(e, False))]) for e, b in self.bits.items())

    issubset = __le__

    def __ge__(self, o):
        ob = self._other(o)
        if ob is None:
            return NotImplemented
        return SSet(dict(ob)).__le__(self)

    issuperset = __ge__

    def __lt__(self, o):
        return conj([self.__le__(o), self.__ne__(o)])

    def __gt__(self, o):
        return conj([self.__ge__(o), self.__ne__(o)])

    def isdisjoint(self, o):
        r = self.__and__(o)
        return negate(r._truth())

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._py(), name)


def concrete(v):
    """A value with its symbolic parts made Python values (a branch each)."""
    if isinstance(v, Sym):
        return v._py()
    if isinstance(v, tuple) and has_sym(v):
        items = [concrete(x) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v


def _OR(a, b):
    return disj([a, b])


def _MINUS(a, b):
    return conj([a, negate(b)])


def _cond(b):
    if isinstance(b, bool):
        return b
    if isinstance(b, SBool):
        return b
    return sbool(b)


def sorted_elements(bits: dict) -> list:
    try:
        return sorted(bits)
    except TypeError:
        return sorted(bits, key=repr)


class SetIter:
    """Iterating an SSet: each element in turn, if the oracle finds it in
    the set. `pos` (the elements passed) is its whole state."""

    __slots__ = ("s", "order", "pos", "loop")

    def __init__(self, s: SSet, order: list) -> None:
        self.s, self.order, self.pos, self.loop = s, order, 0, False

    @classmethod
    def made(cls, s: SSet) -> "SetIter":
        """An iterator of `s` for the caller's caller (a `for` statement)."""
        it = cls(s, sorted_elements(s.bits))
        run = current[0]
        it.loop = run is not None and run.register_iter(it)
        return it

    def __iter__(self):
        return self

    def __next__(self):
        while self.pos < len(self.order):
            e = self.order[self.pos]
            self.pos += 1
            b = _cond(self.s.bits[e])
            if b is True or (b is not False and decide(b.t, iterating=self.loop)):
                return e
        raise StopIteration


class SSeq(Sym):
    """A tuple of symbolic length `n` (an SInt); `slots[i]` is item i when
    i < n. Anything positional makes the length concrete first. `shape` is
    the state's place it came from (cells.Seq), if any."""

    __slots__ = ("n", "slots", "shape")

    def __init__(self, n: SInt, slots: list, shape=None) -> None:
        self.n, self.slots, self.shape = n, slots, shape

    def items(self) -> tuple:
        return tuple(self.slots[: self.n._py()])

    def _py(self):
        return self.items()

    def size(self) -> SInt:
        return self.n

    def __len__(self):
        return self.n._py()

    def _truth(self):
        return sbool(self.n.t > 0)

    def __bool__(self):
        return decide(self.n.t > 0)

    def __iter__(self):
        return iter(self.items())

    def __getitem__(self, i):
        if isinstance(i, int) and i >= 0:
            if i >= len(self.slots) or not decide(self.n.t > i):
                raise IndexError("tuple index out of range")
            return self.slots[i]
        return self.items()[i]

    def __contains__(self, x):
        return bool(disj(sym_eq(x, y) for y in self.items()))

    def __add__(self, o):
        if isinstance(o, tuple):
            return self.items() + o
        return NotImplemented

    def __radd__(self, o):
        if isinstance(o, tuple):
            return o + self.items()
        return NotImplemented

    def _eq(self, o):
        if isinstance(o, SSeq):
            o = o.items()
        if not isinstance(o, tuple):
            return NotImplemented
        if not (self.n.lo is not None and self.n.lo <= len(o) <= self.n.hi) or len(o) > len(self.slots):
            return False
        return conj([sbool(self.n.t == len(o))] + [sym_eq(self.slots[i], o[i]) for i in range(len(o))])

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.items(), name)


class SUnion(Sym):
    """One of `alts` (the values of the shape's alternatives), as `tag` (a
    Z3 Int) says. `shape` is the state's place it came from (cells.Union),
    if any."""

    __slots__ = ("tag", "alts", "shape")

    def __init__(self, tag: z3.ArithRef, alts: list, shape=None) -> None:
        self.tag, self.alts, self.shape = tag, alts, shape

    def _py(self):
        return choose([(self.tag == k, a) for k, a in enumerate(self.alts)], "a value of several shapes")

    pick = _py

    def when(self, test) -> Any:
        """`test(alternative)` for each alternative, joined by the tag: a
        bool or an SBool, with no branch on which it is."""
        return disj(conj([sbool(self.tag == k), test(a)]) for k, a in enumerate(self.alts))

    def _truth(self):
        return self.when(lambda a: a._truth() if isinstance(a, Sym) else bool(a))

    def __bool__(self):
        return bool(self._truth())

    def _eq(self, o):
        return self.when(lambda a: sym_eq(a, o))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._py(), name)

    def __len__(self):
        return len(self._py())


concrete_ops(SUnion, ARITH + ORDER + ("__getitem__", "__iter__", "__contains__", "__call__", "__float__"))
concrete_ops(SSeq, ("__mul__", "__rmul__") + ORDER)
_ = bool_term
