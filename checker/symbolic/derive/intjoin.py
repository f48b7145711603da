"""An integer joined from several values (`If(c, 99, pos)`: a sentinel or
a position): its interval is the values' hull and, while they are few, it
keeps the set of values it may take (`SInt.vals`). Where the spec's code
needs a Python int (a set element's hash), the deriver then asks about
those values only, not every value of the interval (values.py)."""

from __future__ import annotations

import z3

from .values import SInt

# A join's value set is kept while it has at most this many values (and is smaller than its
# interval); False: intervals only, every value of the interval a case (the audit's switch)
VALUE_SETS: int | bool = 64


def joined_ints(t: z3.ArithRef, members: list) -> SInt:
    """The SInt of `t`, an If-chain over `members` (ints and SInts): its
    interval the members' hull and, while few, the union of their values."""
    lo = [m.lo if isinstance(m, SInt) else int(m) for m in members]
    hi = [m.hi if isinstance(m, SInt) else int(m) for m in members]
    lo_ = None if None in lo else min(x for x in lo if x is not None)
    hi_ = None if None in hi else max(x for x in hi if x is not None)
    vals: set | None = set() if VALUE_SETS else None
    for m in members:
        if vals is None:
            break
        if not isinstance(m, SInt):
            vals.add(int(m))
        elif m.vals is not None:
            vals |= m.vals
        elif m.lo is not None and m.hi is not None and m.hi - m.lo < VALUE_SETS:
            vals.update(range(m.lo, m.hi + 1))
        else:
            vals = None
    if vals is not None and (len(vals) > VALUE_SETS or lo_ is None or hi_ is None or len(vals) > hi_ - lo_):
        vals = None
    return SInt(t, lo_, hi_, frozenset(vals) if vals is not None else None)


def copied(t) -> bool:
    """A term that only moves values: a cell, a numeral, an If of them. It
    has no arithmetic, so a place widened to its range gets no new bound
    (cells.fit widens the int place it is written to: that settles)."""
    if z3.is_int_value(t) or (z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED):
        return True
    return z3.is_app_of(t, z3.Z3_OP_ITE) and copied(t.arg(1)) and copied(t.arg(2))
