"""Comprehensions and sets over symbolic data, as the rewritten spec code
builds them (rewrite.py turns a comprehension with one `for` into
`t_comp`): each element present under a condition, so that a filter is a
condition, not a branch, and a fold (`any`, `sum`, `frozenset`) of it is
one formula (pyfuncs.py)."""

from __future__ import annotations

from typing import Any, Callable

from .containers import SetIter, SSeq, SSet, SUnion, sorted_elements
from .fresh import fresh
from .oracle import current, decide
from .values import SBool, Sym, conj, disj, has_sym, sbool, truth


class Comp:
    """A comprehension over symbolic data: (condition, value) entries, each
    value present where its condition holds, in iteration order. Builtins
    fold it into one formula; anything else iterates it (a branch each)."""

    __slots__ = ("kind", "items", "pos")

    def __init__(self, kind: str, items: list) -> None:
        self.kind, self.items, self.pos = kind, items, 0

    def entries(self) -> list:
        out = []
        for c, v, exc in self.items:
            if exc is not None:
                if c is True or (c is not False and decide(c.t)):
                    raise exc
                continue
            out.append((c, v))
        return out

    def materialize(self) -> list:
        return [v for c, v in self.entries() if c is True or (c is not False and decide(c.t))]

    def __iter__(self):
        return self

    def __next__(self):
        """The next value present (a branch on each condition passed)."""
        while self.pos < len(self.items):
            c, v, exc = self.items[self.pos]
            self.pos += 1
            if c is True or (c is not False and decide(c.t)):
                if exc is not None:
                    raise exc
                return v
        raise StopIteration

    def __len__(self):
        return len(self.materialize())

    def __bool__(self):
        return bool(disj(c for c, _ in self.entries()))


def _source(it) -> list:
    """(condition, item) for each item an iterable may hold."""
    if isinstance(it, SSet):
        return [(b if isinstance(b, bool) else sbool(b), e) for e, b in
                ((e, it.bits[e]) for e in sorted_elements(it.bits))]
    if isinstance(it, SortedSet):
        return _source(it.s)
    if isinstance(it, Comp):
        return it.entries()
    if isinstance(it, (SSeq, SUnion)):
        it = it._py()
    return [(True, x) for x in it]


def t_comp(kind: str, it, unpack: bool, cond: Callable | None, elt: Callable):
    """`[elt(x) for x in it if cond(x)]` (and the set, generator forms).
    A comprehension that decides nothing is a function of its inputs: its
    entries are kept for the run's exploration, by the inputs' merge-key
    values (canon.py), so a replayed run does not build them again."""
    run = current[0]
    key = None
    if run is not None:
        try:
            keep: list = []
            key = (elt.__code__, cond.__code__ if cond else None, kind, unpack, run.canon(it, keep),
                   run.canon(_cells(elt), keep), run.canon(_cells(cond), keep))
        except Exception:
            key = None
        hit = run.memo.get(key) if key is not None else None
        if hit is not None:
            return _result(kind, Comp(kind, [(c, fresh(x), e) for c, x, e in hit[0]]))   # (see fresh)
        before = run.asked
    items: list[tuple[Any, Any, Exception | None]] = []   # (condition, element, what raised)
    for c, x in _source(it):
        args = tuple(x) if unpack else (x,)
        try:
            if cond is not None:
                c = conj([c, truth(cond(*args))])
                if c is False:
                    continue
            items.append((c, elt(*args), None))
        except Exception as exc:
            items.append((c, None, exc))
    if key is not None and run.asked == before and not any(e is not None for _, _, e in items):
        run.memo[key] = (tuple(items), keep)
    return _result(kind, Comp(kind, items))


def _result(kind: str, comp: "Comp"):
    if kind == "list":
        return comp.materialize()
    if kind == "set":
        return s_set(comp)
    return comp


def _cells(fn) -> tuple:
    if fn is None:
        return ()
    return tuple(c.cell_contents for c in fn.__closure__ or ())

def _symbolic(it) -> bool:
    return isinstance(it, (Sym, Comp, SortedSet)) or (isinstance(it, (tuple, list)) and any(
        isinstance(v, Sym) for v in it))


class SortedSet:
    """`sorted(S)` of a symbolic set: iterated in the set's own order."""

    __slots__ = ("s",)

    def __init__(self, s: SSet) -> None:
        self.s = s

    def __iter__(self):
        return SetIter.made(self.s)


def s_set(it=(), cls=frozenset):
    if isinstance(it, SSet):
        return it
    if not _symbolic(it) and not isinstance(it, Comp):
        return cls(it)
    bits: dict = {}
    for c, v in _source(it):
        if isinstance(v, Sym) or has_sym(v):
            v = _concrete(v)
        old = bits.get(v, False)
        new = disj([old if isinstance(old, bool) else sbool(old), c])
        bits[v] = new.t if isinstance(new, SBool) else new
    return SSet({e: b for e, b in bits.items() if b is not False})


def _concrete(v):
    if isinstance(v, Sym):
        return v._py()
    if isinstance(v, tuple):
        return type(v)(*[_concrete(x) for x in v]) if hasattr(v, "_fields") else tuple(_concrete(x) for x in v)
    return v


MAX_CASES = 64


def t_set(*elems):
    """A set display `{a, b}`: a Python set, unless an element is symbolic;
    then a symbolic set, each element present where its parts take the
    values of one of the Python values it may be (at most MAX_CASES), so
    that adding a message whose fields are symbolic does not branch."""
    if not any(isinstance(e, Sym) or has_sym(e) for e in elems):
        return set(elems)
    bits: dict = {}
    run = current[0]
    for e in elems:
        cases = _cases(e)
        if cases is None:
            return set(elems)      # too many values: Python hashes (a branch per value)
        for cond, v in cases:
            if cond is not True and run is not None and not run.possible(_term(cond)):
                continue           # a value the path rules out: no element (nor a place for one)
            old = bits.get(v, False)
            new = disj([sbool(old) if not isinstance(old, bool) else old, cond])
            bits[v] = new.t if isinstance(new, SBool) else new
    return SSet({e: b for e, b in bits.items() if b is not False})


def _term(c):
    return c.t if isinstance(c, SBool) else c


def _cases(v) -> list | None:
    """[(condition, Python value)] for every value v may be."""
    if isinstance(v, SUnion):        # one of several shapes: each alternative's cases, under its tag
        out = []
        for k, alt in enumerate(v.alts):
            sub = _cases(alt)
            if sub is None:
                return None
            out += [(c, x) for d, x in sub if (c := conj([sbool(v.tag == k), d])) is not False]
        return out if len(out) <= MAX_CASES else None
    if isinstance(v, Sym):
        cases = v.cases() if hasattr(v, "cases") else None
        return cases if cases is None or len(cases) <= MAX_CASES else None
    if isinstance(v, tuple) and has_sym(v):
        out = [(True, ())]
        for x in v:
            sub = _cases(x)
            if sub is None or len(out) * len(sub) > MAX_CASES:
                return None
            out = [(conj([c, d]), t + (y,)) for c, t in out for d, y in sub]
        out = [(c, type(v)(*t) if hasattr(v, "_fields") else t) for c, t in out if c is not False]
        return out
    return [(True, v)]
