"""Values as merge keys: two runs whose frames hold the same canonical
values do the same from there on (explore.py).

A Python value compares by its contents, a symbolic one by its Z3 terms
(Z3 shares equal terms, so a term's id is its value while the term lives:
the key keeps every term it names alive). An object whose contents cannot
be read (an iterator, an instance of a class of the spec's) compares by
identity, which no other run's object shares, so a frame that holds one
merges with nothing: safe, only slower.
"""

from __future__ import annotations

import types

from .containers import SetIter, SSeq, SSet, SUnion
from .atom import SAtom
from .values import SBool, SInt

_ATOMS = (int, str, float, bytes, bool, type(None))


class Unmergeable(Exception):
    pass


class Canon:
    Unmergeable = Unmergeable

    def __init__(self) -> None:
        self.stable: dict[int, object] = {}    # id -> object: values built once, keyed by identity

    def pin(self, value) -> None:
        """`value` and what it holds are built once for every run (the
        symbolic state): key them by identity."""
        stack = [value]
        while stack:
            v = stack.pop()
            if id(v) in self.stable:
                continue
            self.stable[id(v)] = v
            if isinstance(v, tuple):
                stack.extend(v)

    def __call__(self, v, keep: list):
        if isinstance(v, _ATOMS):
            return (type(v), v)
        if id(v) in self.stable:
            return ("pin", id(v))
        if isinstance(v, tuple):
            return (type(v), tuple(self(x, keep) for x in v))
        if isinstance(v, (SBool, SInt, SAtom)):
            keep.append(v.t)
            return ("sym", v.t.get_id())
        if isinstance(v, SSet):
            keep.extend(b for b in v.bits.values() if not isinstance(b, bool))
            return ("set", tuple((self(e, keep), b if isinstance(b, bool) else b.get_id()) for e, b in v.bits.items()))
        if isinstance(v, SSeq):
            return ("seq", self(v.n, keep), tuple(self(x, keep) for x in v.slots))
        if isinstance(v, SUnion):
            keep.append(v.tag)
            return ("union", v.tag.get_id(), tuple(self(x, keep) for x in v.alts))
        if isinstance(v, list):
            return ("list", tuple(self(x, keep) for x in v))
        if isinstance(v, dict):
            return ("dict", tuple((self(k, keep), self(x, keep)) for k, x in v.items()))
        if isinstance(v, (set, frozenset)):
            return (type(v), frozenset(self(x, keep) for x in v))
        if isinstance(v, types.FunctionType):
            cells = tuple(self(c.cell_contents, keep) if _filled(c) else ("empty",) for c in v.__closure__ or ())
            return ("fn", v.__code__, self(v.__defaults__ or (), keep), cells)
        if isinstance(v, types.MethodType):
            return ("method", v.__func__, self(v.__self__, keep))
        if isinstance(v, SetIter):
            return ("iter", id(v.s), v.pos, self(v.s, keep))
        keep.append(v)
        return ("id", id(v))


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
