"""The finite vocabulary that invariants are written in.

A `Schema` declares finite enum sorts (RM ids, txn ids, segments, ...) and
typed symbols: scalars, and functions over finite domains (sets are functions
to Bool). Invariants are ordinary Z3 formulas over those symbols.

Quantifiers over a finite sort are expanded when the formula is built
(`forall`, `exists`, `count`), so every invariant is a quantifier-free Z3
term. That keeps the three consumers simple: the compiler (fast Python
predicate), the Z3 evaluator (`--z3-eval`) and the load-time satisfiability
and vacuity checks all see the same formula.

Observation values, as returned by `Spec.observe`:

    Bool -> bool, Int -> int, Str -> str, Enum -> the element's name (str)
    function of one argument  -> dict  {element name: value}
    function of n arguments   -> dict  {(name, ..., name): value}

A function may leave elements out of its dict; `default` says what a
missing key means (False for sets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import z3

# -- value types ---------------------------------------------------------------


@dataclass(frozen=True)
class Bool:
    def z3sort(self, schema: "Schema") -> z3.SortRef:
        return z3.BoolSort()


@dataclass(frozen=True)
class Int:
    """An integer, optionally bounded. Bounds are part of the type: an
    invariant implied by them alone is vacuous."""

    lo: int | None = None
    hi: int | None = None

    def z3sort(self, schema: "Schema") -> z3.SortRef:
        return z3.IntSort()


@dataclass(frozen=True)
class Str:
    def z3sort(self, schema: "Schema") -> z3.SortRef:
        return z3.StringSort()


@dataclass(frozen=True)
class Enum:
    sort: str

    def z3sort(self, schema: "Schema") -> z3.SortRef:
        return schema.sort(self.sort)


Type = Bool | Int | Str | Enum

# Z3 sort names are global to its context; two schemas may both call a sort
# "RM" with different elements. Keep one Z3 sort per (name, elements).
_SORT_CACHE: dict[tuple[str, tuple[str, ...]], tuple[z3.DatatypeSortRef, tuple[z3.ExprRef, ...]]] = {}


def _enum_sort(name: str, elements: tuple[str, ...]):
    key = (name, elements)
    hit = _SORT_CACHE.get(key)
    if hit is None:
        n = sum(1 for k in _SORT_CACHE if k[0] == name)
        z3name = name if n == 0 else f"{name}#{n}"
        srt, consts = z3.EnumSort(z3name, list(elements))
        hit = _SORT_CACHE[key] = (srt, tuple(consts))
    return hit


@dataclass(frozen=True)
class Symbol:
    """A declared symbol: a scalar (`domain == ()`) or a function."""

    name: str
    domain: tuple[str, ...]
    type: Type
    default: object
    ref: Any  # z3 constant or z3 FuncDeclRef (z3 has no type hints: its values are Any)

    def __call__(self, *args):
        if not self.domain:
            raise TypeError(f"{self.name} is a scalar, not a function")
        return self.ref(*args)

    @property
    def is_set(self) -> bool:
        return bool(self.domain) and isinstance(self.type, Bool)


class Schema:
    """Finite sorts and typed symbols; see the module docstring."""

    def __init__(self) -> None:
        self._sorts: dict[str, tuple[z3.DatatypeSortRef, tuple[str, ...], tuple[z3.ExprRef, ...]]] = {}
        self.symbols: dict[str, Symbol] = {}

    # -- sorts ---------------------------------------------------------------
    def enum(self, name: str, elements: Sequence[str]) -> z3.DatatypeSortRef:
        elements = tuple(str(e) for e in elements)
        if not elements:
            raise ValueError(f"enum sort {name} needs at least one element")
        if len(set(elements)) != len(elements):
            raise ValueError(f"enum sort {name} repeats an element")
        srt, consts = _enum_sort(name, elements)
        self._sorts[name] = (srt, elements, consts)
        return srt

    def int_sort(self, name: str, lo: int, hi: int) -> z3.DatatypeSortRef:
        """A finite sort of the integers lo..hi (process ids, ballots). Its
        elements are named by their decimal form ("0", "1", ...), which is how
        observations spell them; `as_int` turns an element back into a Z3
        integer, so formulas can compare and add them."""
        if hi < lo:
            raise ValueError(f"int sort {name}: empty range {lo}..{hi}")
        return self.enum(name, [str(i) for i in range(lo, hi + 1)])

    def as_int(self, sort: str, term: z3.ExprRef) -> z3.ArithRef:
        """The integer that an element of an int_sort stands for."""
        names, consts = self.elements(sort), self.consts(sort)
        out: z3.ArithRef = z3.IntVal(int(names[-1]))
        for n, c in zip(reversed(names[:-1]), reversed(consts[:-1])):
            out = z3.If(term == c, z3.IntVal(int(n)), out)
        return out

    def sort(self, name: str) -> z3.DatatypeSortRef:
        return self._sorts[name][0]

    def elements(self, name: str) -> tuple[str, ...]:
        return self._sorts[name][1]

    def consts(self, name: str) -> tuple[z3.ExprRef, ...]:
        return self._sorts[name][2]

    def const(self, sort: str, element: str) -> z3.ExprRef:
        _, names, consts = self._sorts[sort]
        return consts[names.index(str(element))]

    @property
    def sorts(self) -> dict[str, tuple[str, ...]]:
        return {n: v[1] for n, v in self._sorts.items()}

    # -- symbols -------------------------------------------------------------
    def _add(self, name: str, domain: tuple[str, ...], typ: Type, default: object) -> Symbol:
        if name in self.symbols:
            raise ValueError(f"symbol {name} declared twice")
        for d in domain:
            if d not in self._sorts:
                raise ValueError(f"symbol {name}: unknown sort {d}")
        if isinstance(typ, Enum) and typ.sort not in self._sorts:
            raise ValueError(f"symbol {name}: unknown sort {typ.sort}")
        if domain:
            ref = z3.Function(name, *[self.sort(d) for d in domain], typ.z3sort(self))
        else:
            ref = z3.Const(name, typ.z3sort(self))
        sym = Symbol(name, domain, typ, default, ref)
        self.symbols[name] = sym
        return sym

    def var(self, name: str, typ: Type) -> z3.ExprRef:
        """A scalar symbol; returns the Z3 constant."""
        return self._add(name, (), typ, None).ref

    def fun(self, name: str, domain: str | Sequence[str], typ: Type, default: object = None) -> Symbol:
        """A function over finite sorts; call the result to apply it."""
        dom = (domain,) if isinstance(domain, str) else tuple(domain)
        return self._add(name, dom, typ, default)

    def set(self, name: str, elem: str | Sequence[str]) -> Symbol:
        """A subset of a finite sort (or of a product of sorts)."""
        return self.fun(name, elem, Bool(), default=False)

    # -- finite quantifiers --------------------------------------------------
    def forall(self, sort: str | Sequence[str], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        return z3.And([body(*args) for args in self._tuples(sort)] or [z3.BoolVal(True)])

    def exists(self, sort: str | Sequence[str], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        return z3.Or([body(*args) for args in self._tuples(sort)] or [z3.BoolVal(False)])

    def count(self, sort: str | Sequence[str], body: Callable[..., z3.BoolRef]) -> z3.ArithRef:
        terms = [z3.If(body(*args), z3.IntVal(1), z3.IntVal(0)) for args in self._tuples(sort)]
        return z3.Sum(terms) if terms else z3.IntVal(0)

    def subset(self, sub: "Symbol", sup: "Symbol | Iterable") -> z3.BoolRef:
        """`sub` \\subseteq `sup`: `sub` is a set; `sup` is a set over the same
        sorts or a collection of elements (element names, or name tuples for a
        product). States the TLA+ "x \\subseteq S" without counting elements."""
        if not sub.is_set:
            raise ValueError(f"subset: {sub.name} is not a set")
        names = self._names(sub.domain)
        if isinstance(sup, Symbol):
            if not sup.is_set or sup.domain != sub.domain:
                raise ValueError(f"subset: {sup.name} is not a set over {', '.join(sub.domain)}")
            return self.forall(sub.domain, lambda *x: z3.Implies(sub(*x), sup(*x)))
        allowed = {e if isinstance(e, tuple) else (str(e),) if len(sub.domain) == 1 else e for e in sup}
        allowed = {a[0] if len(sub.domain) == 1 and isinstance(a, tuple) else a for a in allowed}
        unknown = sorted(map(str, allowed - set(names)))
        if unknown:
            raise ValueError(f"subset: {unknown[0]} is not an element of {', '.join(sub.domain)}")
        outside = [n for n in names if n not in allowed]
        consts = lambda n: [self.const(d, e) for d, e in zip(sub.domain, (n,) if len(sub.domain) == 1 else n)]
        return z3.And([z3.Not(sub(*consts(n))) for n in outside] or [z3.BoolVal(True)])

    def _tuples(self, sort: str | Sequence[str]) -> Iterable[tuple[z3.ExprRef, ...]]:
        sorts = (sort,) if isinstance(sort, str) else tuple(sort)
        out: list[tuple[z3.ExprRef, ...]] = [()]
        for s in sorts:
            out = [t + (c,) for t in out for c in self.consts(s)]
        return out

    # -- the types as constraints -------------------------------------------
    def type_constraints(self) -> list[z3.BoolRef]:
        """What the declared types alone say (integer bounds)."""
        out: list[z3.BoolRef] = []
        for sym in self.symbols.values():
            t = sym.type
            if not isinstance(t, Int) or (t.lo is None and t.hi is None):
                continue
            terms = [sym.ref] if not sym.domain else [sym.ref(*a) for a in self._tuples(sym.domain)]
            for term in terms:
                if t.lo is not None:
                    out.append(term >= t.lo)
                if t.hi is not None:
                    out.append(term <= t.hi)
        return out

    # -- observations against the declared types ----------------------------
    def mismatch(self, obs: object) -> str | None:
        """The first way `obs` (what `Spec.observe` returned) disagrees with
        the declarations, naming the symbol; None when it agrees."""
        if not isinstance(obs, dict):
            return f"observe returned {type(obs).__name__}, not a dict of symbols"
        for name, sym in self.symbols.items():
            if name not in obs:
                return f"symbol {name} is declared but missing from the observation"
            v = obs[name]
            if not sym.domain:
                bad = self._value_mismatch(sym.type, v)
                if bad:
                    return f"symbol {name}: {bad}"
                continue
            keys = v if sym.is_set else None
            if sym.is_set and not isinstance(v, (set, frozenset)):
                return (f"symbol {name} is a set (a Bool-valued function) and must be observed as a set "
                        f"or frozenset of its elements, got {type(v).__name__}")
            if not sym.is_set:
                if not isinstance(v, dict):
                    return f"symbol {name} is a function and must be observed as a dict, got {type(v).__name__}"
                keys = v.keys()
            for k in keys:
                bad = self._key_mismatch(sym, k)
                if bad:
                    return f"symbol {name}: {bad}"
            if not sym.is_set:
                for k, x in v.items():
                    bad = self._value_mismatch(sym.type, x)
                    if bad:
                        return f"symbol {name}[{k!r}]: {bad}"
                if sym.default is None:
                    missing = next((t for t in self._names(sym.domain) if t not in v), None)
                    if missing is not None:
                        return f"symbol {name} has no value at {missing!r} and declares no default"
        extra = sorted(set(obs) - set(self.symbols))
        if extra:
            return f"observation has {extra[0]!r}, which the schema does not declare"
        return None

    def _names(self, domain: tuple[str, ...]) -> list:
        out: list = [()]
        for d in domain:
            out = [t + (e,) for t in out for e in self.elements(d)]
        return [t[0] for t in out] if len(domain) == 1 else out

    def _key_mismatch(self, sym: Symbol, k: object) -> str | None:
        if len(sym.domain) == 1:
            if k not in self.elements(sym.domain[0]):
                return f"{k!r} is not an element of sort {sym.domain[0]}"
            return None
        if not isinstance(k, tuple) or len(k) != len(sym.domain):
            return f"key {k!r} must be a tuple of {len(sym.domain)} element names"
        for d, e in zip(sym.domain, k):
            if e not in self.elements(d):
                return f"key {k!r}: {e!r} is not an element of sort {d}"
        return None

    def _value_mismatch(self, typ: Type, v: object) -> str | None:
        if isinstance(typ, Bool):
            return None if isinstance(v, bool) else f"expected a bool, got {v!r}"
        if isinstance(typ, Int):
            if isinstance(v, bool) or not isinstance(v, int):
                return f"expected an int, got {v!r}"
            if (typ.lo is not None and v < typ.lo) or (typ.hi is not None and v > typ.hi):
                return f"{v} is outside its declared range [{typ.lo}, {typ.hi}]"
            return None
        if isinstance(typ, Str):
            return None if isinstance(v, str) else f"expected a str, got {v!r}"
        if isinstance(typ, Enum):
            return None if v in self.elements(typ.sort) else f"{v!r} is not an element of sort {typ.sort}"
        return None
