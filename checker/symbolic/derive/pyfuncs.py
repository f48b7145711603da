"""What the spec's code calls while it is derived: Python's operators and
builtins, made to keep symbolic values symbolic.

rewrite.py compiles a twin of the spec's functions in which `a in b`,
`a is b`, `a == b`, `not a`, an `and`/`or` in a condition and a
comprehension with one `for` call the functions below, and installs `len`,
`any`, `all`, `sum`, `max`, `min`, `sorted`, `isinstance`, `frozenset` and
`set` in the spec's modules. On Python values each does exactly what
Python does; on symbolic ones it returns a condition (an SBool) or a
symbolic value instead of branching, so `all(x in S for x in T)` is one
formula, not one branch per element. Nothing here runs outside a
derivation: the explicit engines run the spec's own code.
"""

from __future__ import annotations

import builtins
from typing import Any, Callable

import z3

from .comp import Comp, SortedSet, _source, _symbolic, s_set, t_comp, t_set
from .containers import SSeq, SSet, SUnion
from .oracle import decide
from .summary import t_call
from .atom import SAtom
from .intjoin import joined_ints
from .values import SBool, SInt, Sym, as_int, conj, disj, has_sym, negate, sbool, sym_eq, truth


# -- operators ---------------------------------------------------------------------

def t_in(a, b):
    if isinstance(b, SSet):
        return b.has(a)
    if isinstance(b, Comp):
        return disj(conj([c, sym_eq(a, v)]) for c, v in b.entries())
    if isinstance(b, (SSeq, SUnion)):
        b = b._py()
    if isinstance(b, (tuple, list)) and (has_sym(a) or any(isinstance(y, Sym) or has_sym(y) for y in b)):
        return disj(sym_eq(a, y) for y in b)
    if isinstance(b, (set, frozenset, dict)) and has_sym(a):
        return disj(sym_eq(a, y) for y in b)
    if isinstance(a, Sym):
        a = a._py()
    return a in b


def t_not_in(a, b):
    return negate(t_in(a, b))


def t_is(a, b):
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return a is b
    if isinstance(b, Sym) and not isinstance(a, Sym):
        a, b = b, a
    if isinstance(b, Sym):
        return a is b
    if isinstance(a, SAtom):
        return a.is_(b)
    if isinstance(a, SUnion):
        return a.when(lambda alt: t_is(alt, b))
    if isinstance(a, SBool) and isinstance(b, bool):
        return sbool(a.t == b)
    return False


def t_is_not(a, b):
    return negate(t_is(a, b))


def t_eq(a, b):
    return sym_eq(a, b)


def t_ne(a, b):
    return negate(sym_eq(a, b))


def t_not(a):
    return negate(truth(a))


def t_and(a, *rest: Callable[[], Any]):
    """`a and b and ...` where only its truth matters (a condition)."""
    out = truth(a)
    for thunk in rest:
        if out is False:
            return False
        out = conj([out, _guarded(thunk, out)])
    return out


def t_or(a, *rest: Callable[[], Any]):
    out = truth(a)
    for thunk in rest:
        if out is True:
            return True
        out = disj([out, _guarded(thunk, negate(out))])
    return out


def _guarded(thunk, reached):
    """The truth of `thunk()`, which Python evaluates only where `reached`
    holds: an exception it raises is raised only there."""
    try:
        return truth(thunk())
    except Exception:
        if reached is True or decide(reached.t):
            raise
        return False


# -- builtins ----------------------------------------------------------------------

def s_len(x):
    if isinstance(x, (SSet, SSeq)):
        return x.size()
    if isinstance(x, SUnion):
        return s_len(x.pick())
    if isinstance(x, Comp):
        return _count(x.entries())
    return builtins.len(x)


def _count(entries) -> Any:
    terms = [z3.If(c.t, z3.IntVal(1), z3.IntVal(0)) for c, _ in entries if isinstance(c, SBool)]
    fixed = sum(1 for c, _ in entries if c is True)
    if not terms:
        return fixed
    return SInt(z3.simplify(z3.Sum(terms) + fixed), fixed, fixed + len(terms))


def s_any(it):
    out = False
    for c, v in _source(it):
        out = disj([out, conj([c, truth(v)])])
        if out is True:
            return True
    return out


def s_all(it):
    out = True
    for c, v in _source(it):
        out = conj([out, disj([negate(c), truth(v)])])
        if out is False:
            return False
    return out


def s_sum(it, start=0):
    total = start
    for c, v in _source(it):
        if c is True:
            total = total + v
        elif c is not False:
            total = total + SInt(z3.If(c.t, as_int(v).t if isinstance(v, Sym) else z3.IntVal(int(v)),
                                       z3.IntVal(0)), *_hull(v))
    return total


def _hull(v):
    lo, hi = (v.lo, v.hi) if isinstance(v, SInt) else (0, 1) if isinstance(v, SBool) else (int(v), int(v))
    return (None if lo is None else min(lo, 0), None if hi is None else max(hi, 0))


def _extreme(pick_first, args, kw):
    key = kw.get("key")
    if len(args) > 1:
        it = [(True, a) for a in args]
    else:
        it = _source(args[0])
    if key is None and all(isinstance(v, (int, SInt)) and not isinstance(v, bool) for _, v in it):
        best, have = None, False
        for c, v in it:
            if best is None:
                best = v
            else:
                better = v > best if pick_first else v < best
                best = _ite(conj([c, disj([negate(have), better])]), v, best)
            have = disj([have, c])
        if have is True or (have is not False and decide(have.t)):
            return best
        if "default" in kw:
            return kw["default"]
        raise ValueError("max() arg is an empty sequence")
    values = [v for c, v in it if c is True or (c is not False and decide(c.t))]
    values = [v._py() if isinstance(v, Sym) else v for v in values]
    fn = builtins.max if pick_first else builtins.min
    return fn(values, **kw) if values or "default" in kw else fn(values)


def _ite(c, a, b):
    if c is True:
        return a
    if c is False:
        return b
    ta = a.t if isinstance(a, SInt) else z3.IntVal(a)
    tb = b.t if isinstance(b, SInt) else z3.IntVal(b)
    return joined_ints(z3.If(c.t, ta, tb), [a, b])


def s_max(*args, **kw):
    if len(args) == 1 and not _symbolic(args[0]):
        return builtins.max(*args, **kw)
    return _extreme(True, args, kw)


def s_min(*args, **kw):
    if len(args) == 1 and not _symbolic(args[0]):
        return builtins.min(*args, **kw)
    return _extreme(False, args, kw)


def s_sorted(it, **kw):
    if isinstance(it, SSet) and not kw:
        return SortedSet(it)
    if isinstance(it, Comp):
        it = it.materialize()
    if isinstance(it, (SSet, SSeq, SUnion)):
        it = it._py()
    return builtins.sorted(it, **kw)


def s_frozenset(it=()):
    return s_set(it, frozenset)


def s_mutable_set(it=()):
    """`set(...)`: a Python set unless its items are symbolic."""
    if not _symbolic(it) and not isinstance(it, Comp):
        return builtins.set(it)
    return s_set(it)


def s_isinstance(x, cls):
    if not isinstance(x, Sym):
        return builtins.isinstance(x, cls)
    if isinstance(x, SUnion):
        return x.when(lambda alt: s_isinstance(alt, cls))
    if isinstance(x, SAtom):
        return disj(sbool(x.t == x.reg.const(v)) for v in x.values if builtins.isinstance(v, cls))
    stands_for = {SBool: bool, SInt: int, SSet: frozenset, SSeq: tuple}
    return builtins.issubclass(stands_for.get(type(x), object), cls)


def s_tuple(it=()):
    if isinstance(it, Comp):
        return tuple(it.materialize())
    return builtins.tuple(it)


def s_list(it=()):
    if isinstance(it, Comp):
        return it.materialize()
    return builtins.list(it)


HELPERS = {"_txn_call": t_call, "_txn_set": t_set, "_txn_in": t_in, "_txn_not_in": t_not_in, "_txn_is": t_is, "_txn_is_not": t_is_not,
           "_txn_eq": t_eq, "_txn_ne": t_ne, "_txn_not": t_not, "_txn_and": t_and, "_txn_or": t_or,
           "_txn_comp": t_comp}
BUILTINS = {"len": s_len, "any": s_any, "all": s_all, "sum": s_sum, "max": s_max, "min": s_min,
            "sorted": s_sorted, "frozenset": s_frozenset, "set": s_mutable_set, "isinstance": s_isinstance,
            "tuple": s_tuple, "list": s_list}
