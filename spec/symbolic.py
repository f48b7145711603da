"""Symbolic transition relations: a spec's actions as guarded updates in Z3.

A `Relation` restates a spec's `init_states` and `next` over typed state
symbols, so that Z3 can reason about every state at the model's bounds at
once (`txncheck prove`, checker/symbolic/). Its state symbols are declared in
a `Schema`, like the properties' (spec/schema.py): for TwoPhase and TCommit
they are the properties' own schema, whose observation is the whole state;
a spec whose observation is derived (PIP-473) declares its state in a schema
of its own and says how each property symbol is computed from it
(`observation`).

A `Frame` is one copy of the state symbols: a Z3 constant per cell (a scalar,
or one point of a function's finite domain). An action is a guarded update:
given the current frame it returns a guard and the cells it changes, each
with its new value as a term over the current frame; every other cell keeps
its value. Actions with the same label are the disjuncts of one TLA+ action
(TCommit's Decide); the relation allows a step by any of them.

Nothing here says whether the relation is the spec's: the agreement test
(checker/symbolic/agreement.py) compares, state by state, the successors Z3
allows with those `next` yields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import z3

from .api import Action, Spec, SpecError
from .schema import Bool, Enum, Int, Schema, Str, Symbol

Key = tuple[str, tuple[str, ...]]      # (symbol, element names): one cell
Update = tuple[z3.BoolRef, Mapping]    # (guard, {cell: new value})


def domain_keys(schema: Schema, sym: Symbol) -> list[tuple[str, ...]]:
    """Every point of a symbol's domain, as tuples of element names."""
    out: list[tuple[str, ...]] = [()]
    for d in sym.domain:
        out = [k + (e,) for k in out for e in schema.elements(d)]
    return out


def literal(schema: Schema, typ, value) -> z3.ExprRef:
    """The Z3 value of a Python value of a declared type."""
    if isinstance(typ, Bool):
        return z3.BoolVal(bool(value))
    if isinstance(typ, Int):
        return z3.IntVal(int(value))
    if isinstance(typ, Str):
        return z3.StringVal(str(value))
    if isinstance(typ, Enum):
        return schema.const(typ.sort, value)
    raise TypeError(f"unknown type {typ!r}")


def python_value(typ, v: z3.ExprRef):
    """The Python value of a Z3 value of a declared type (from a model)."""
    if isinstance(typ, Bool):
        return z3.is_true(v)
    if isinstance(typ, Int):
        return v.as_long()
    if isinstance(typ, Str):
        return v.as_string()
    return str(v)


class Frame:
    """One copy of the state symbols, tagged (`@0`, `@1`, ...): a Z3 constant
    per cell. `f.rmState("r1")` is a cell of a function, `f.tmState` a
    scalar; `f.cell(name, *args)` is the same by name."""

    def __init__(self, schema: Schema, tag: str) -> None:
        self._schema = schema
        self._tag = tag
        self._cells: dict[Key, z3.ExprRef] = {}
        self._types: dict[Key, Any] = {}
        for sym in schema.symbols.values():
            for key in domain_keys(schema, sym):
                name = f"{sym.name}[{','.join(key)}]@{tag}" if key else f"{sym.name}@{tag}"
                self._cells[sym.name, key] = z3.Const(name, sym.type.z3sort(schema))
                self._types[sym.name, key] = sym.type
        self._by_id = {c.get_id(): k for k, c in self._cells.items()}
        self._eq: dict[tuple[Key, Any], z3.BoolRef] = {}

    # -- cells ------------------------------------------------------------------
    @property
    def tag(self) -> str:
        return self._tag

    @property
    def keys(self) -> list[Key]:
        return list(self._cells)

    def cell(self, name: str, *args) -> z3.ExprRef:
        return self._cells[name, tuple(str(a) for a in args)]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        sym = self._schema.symbols.get(name)
        if sym is None:
            raise AttributeError(f"no state symbol {name}")
        if not sym.domain:
            return self._cells[name, ()]
        return lambda *args: self.cell(name, *args)

    def key(self, term: z3.ExprRef) -> Key:
        """The cell a constant of this frame stands for."""
        return self._by_id[term.get_id()]

    def __getitem__(self, key: Key) -> z3.ExprRef:
        return self._cells[key]

    # -- formulas over the frame -------------------------------------------------
    def types(self) -> list[z3.BoolRef]:
        """The declared integer bounds of every cell."""
        out = []
        for k, t in self._types.items():
            if isinstance(t, Int):
                if t.lo is not None:
                    out.append(self._cells[k] >= t.lo)
                if t.hi is not None:
                    out.append(self._cells[k] <= t.hi)
        return out

    def substitution(self) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """Schema terms (`rmState(r1)`) -> this frame's cells."""
        terms = schema_terms(self._schema)
        return [(terms[k], c) for k, c in self._cells.items()]

    def over(self, formula: z3.BoolRef) -> z3.BoolRef:
        """A formula over the state schema, stated of this frame."""
        return z3.substitute(formula, *self.substitution())

    def is_value(self, key: Key, value) -> z3.BoolRef:
        """`cell == value`, made once per frame, cell and value."""
        hit = self._eq.get((key, value))
        if hit is None:
            c, t = self._cells[key], self._types[key]
            if isinstance(t, Bool):
                hit = c if value else z3.Not(c)
            else:
                hit = c == literal(self._schema, t, value)
            self._eq[key, value] = hit
        return hit

    def equals(self, cells: Mapping[Key, Any]) -> list[z3.BoolRef]:
        """The frame is this valuation (every cell given)."""
        return [self.is_value(k, v) for k, v in cells.items()]

    def read(self, model: z3.ModelRef, terms: Mapping[Key, z3.ExprRef] = {}) -> dict[Key, Any]:
        """The valuation a model gives this frame; with `terms`, those cells'
        values are those terms' (a step's updates: the next state)."""
        return {k: python_value(self._types[k], model.eval(terms.get(k, c), model_completion=True))
                for k, c in self._cells.items()}


def schema_terms(schema: Schema) -> dict[Key, z3.ExprRef]:
    """Each cell's term in the schema's own vocabulary (`rmState(r1)`): a
    lemma written over them is stated of any frame by `Frame.over`."""
    out = {}
    for sym in schema.symbols.values():
        for key in domain_keys(schema, sym):
            out[sym.name, key] = sym.ref if not key else sym.ref(
                *[schema.const(d, e) for d, e in zip(sym.domain, key)])
    return out


def valuation(schema: Schema, obs: Mapping[str, Any]) -> dict[Key, Any]:
    """Every cell's value from an observation-format dict (spec/schema.py):
    sets as sets of keys, functions as dicts with their defaults."""
    out: dict[Key, Any] = {}
    for sym in schema.symbols.values():
        v = obs[sym.name]
        if not sym.domain:
            out[sym.name, ()] = v
            continue
        for key in domain_keys(schema, sym):
            k = key[0] if len(key) == 1 else key
            if sym.is_set:
                out[sym.name, key] = k in v
            else:
                out[sym.name, key] = v[k] if sym.default is None else v.get(k, sym.default)
    return out


class Sym:
    """A state as terms, cell by cell: a frame's constants at first, new
    terms after each update. A relation whose actions read best as the
    spec's own code, step after step, threads one through that code:
    `updated` for an assignment, `Sym.ite` for an `if` whose condition is
    symbolic, `changes` for the update an `Act` returns. `ctx` is whatever
    the relation's code needs beside the cells (its constants)."""

    __slots__ = ("c", "ctx")

    def __init__(self, cells: dict[Key, z3.ExprRef], ctx=None) -> None:
        self.c = cells
        self.ctx = ctx

    @classmethod
    def of(cls, f: Frame, ctx=None) -> "Sym":
        return cls({k: f[k] for k in f.keys}, ctx)

    def __getitem__(self, key: Key) -> z3.ExprRef:
        return self.c[key]

    def updated(self, changes: Mapping[Key, z3.ExprRef]) -> "Sym":
        if not changes:
            return self
        cells = dict(self.c)
        cells.update(changes)
        return type(self)(cells, self.ctx)

    @staticmethod
    def ite(cond, a: "Sym", b: "Sym") -> "Sym":
        """`a` where `cond` holds, else `b`."""
        if cond is True or z3.is_true(cond):
            return a
        if cond is False or z3.is_false(cond):
            return b
        if a is b:
            return a
        cells = {}
        for k, x in a.c.items():
            y = b.c[k]
            cells[k] = x if x is y or x.eq(y) else z3.If(cond, x, y)
        return type(a)(cells, a.ctx)

    def changes(self, f: Frame) -> dict[Key, z3.ExprRef]:
        """The cells whose term is no longer the frame's own constant."""
        return {k: v for k, v in self.c.items() if not v.eq(f[k])}


@dataclass(frozen=True)
class Act:
    """One guarded update: `step(f)` -> (guard, {cell of f: new value})."""

    label: Action
    step: Callable[[Frame], Update]


@dataclass
class Relation:
    """The base class of a spec's relation; see the module docstring.
    Subclasses implement `actions`, and, when the state is not the
    properties' schema, `state_schema`, `cells` and `observation`."""

    spec: Spec
    # Named strengthening invariants, formulas over the state schema; a model
    # file names those its proof assumes (`[prove] lemmas`).
    lemmas: dict[str, z3.BoolRef] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.schema = self.state_schema()
        self.setup()

    # -- to implement --------------------------------------------------------------
    def setup(self) -> None:
        """Check the spec's variant and bounds are ones this relation states;
        declare the lemmas (named strengthening invariants)."""

    def actions(self) -> list[Act]:
        raise NotImplementedError

    def state_schema(self) -> Schema:
        return self.spec.schema

    def cells(self, s) -> dict[Key, Any]:
        """The valuation that stands for the spec's state `s`."""
        return valuation(self.schema, self.spec.observe(s))

    def observation(self, f: Frame) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """Each property-schema term -> its value over the frame."""
        return f.substitution()

    # -- provided ---------------------------------------------------------------------
    def init(self, f: Frame) -> z3.BoolRef:
        """The initial states, as the spec enumerates them."""
        return z3.Or([z3.And(f.equals(self.cells(s))) for s in self.spec.init_states()])

    def property(self, f: Frame, formula: z3.BoolRef) -> z3.BoolRef:
        """A property (over the spec's schema) stated of a frame."""
        return z3.substitute(formula, *self.observation(f))

    def frame(self, tag: str) -> Frame:
        """One copy of the state symbols (System makes one per tag)."""
        return Frame(self.schema, tag)

    def lemma(self, f: Frame, formula: z3.BoolRef) -> z3.BoolRef:
        """A lemma (over the state schema) stated of a frame."""
        return f.over(formula)

    def unsupported(self, what: str) -> SpecError:
        return SpecError(f"the symbolic relation of {self.spec.name} does not state {what}")


def unchanged_except(f: Frame, changes: Mapping) -> dict[Key, z3.ExprRef]:
    """`changes` keyed by cell (accepts the frame's constants or keys)."""
    out = {}
    for c, v in changes.items():
        out[c if isinstance(c, tuple) else f.key(c)] = v
    return out


def conj(terms: list) -> z3.BoolRef:
    """z3.And of many terms without its per-argument coercion (the agreement
    test builds one per state and successor)."""
    return _nary(z3.Z3_mk_and, terms, True)


def disj(terms: list) -> z3.BoolRef:
    return _nary(z3.Z3_mk_or, terms, False)


def _nary(mk, terms: list, empty: bool) -> z3.BoolRef:
    if not terms:
        return z3.BoolVal(empty)
    if len(terms) == 1:
        return terms[0]
    ctx = terms[0].ctx
    arr = (z3.Ast * len(terms))(*[t.as_ast() for t in terms])
    return z3.BoolRef(mk(ctx.ref(), len(terms), arr), ctx)


def one_of(term: z3.ExprRef, values: Iterable[str]) -> z3.BoolRef:
    return z3.Or([term == z3.StringVal(v) for v in values])
