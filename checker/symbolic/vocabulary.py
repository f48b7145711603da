"""The vocabulary of candidate lemmas: which sorts are quantified, which
cells a lemma can name, and the atoms over them (`txncheck prove --infer`).

Sorts, by their elements' names (the schema has nothing else to go by):

* an **index** sort names things, each a word and a number (`r1`, `a2`,
  `t1`, `s3`): a lemma quantifies over it, with up to V variables per sort
  (`forall r, r2 in RM`). A model file can name them instead
  (`[prove.infer] sorts`).
* a **family** sort has elements named after elements of index sorts
  (`Prepared_r1`, `1b:r1:0:-1:none:a2`, the token convention of
  `Spec.permute`): its elements are grouped by shape, each shape an element
  with holes (`"Prepared_{r}"`), so that `msgs["Prepared_{r}"]` is a cell of
  r.
* any other sort is **ground**: a lemma names its elements one by one
  (`dlv[s, "2", COMMITTED]`), when it has at most GROUND_MAX of them; a
  symbol over a larger one is left out.

A cell template is a symbol with, per argument, a variable slot, a shape
with slots, or an element. Its atoms, for a cell c (grammar in
docs/guide.md, "Proofs without lemmas"):

    Bool c:         c
    string, enum c: c = v            for every value v the samples show (an enum: each element)
    (a cell whose symbol shows one value in every sample: only c = v)
    integer c:      c = k, c <= k    for every value k the samples show
    two integers:   c1 = c2, c1 < c2             two symbols over the same sorts, at the same arguments
    index-sorted c: c = x            for each variable x of its sort
    variables:      x = y            two variables of one sort ("at most one x with ...")
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from ...spec.schema import Bool, Enum, Int, Schema, Str

GROUND_MAX = 16
VALUES_MAX = 8          # string or integer values an atom may compare a cell with
_INDEX = re.compile(r"[A-Za-z]+[0-9]+\Z")
_TOKEN = re.compile(r"[0-9A-Za-z]+")     # the token convention of spec.api.Spec.permute

Slot = tuple            # (sort, i): the i-th variable of a sort


@dataclass(frozen=True)
class Shape:
    """A family element with holes: `parts` alternate text and slots."""
    parts: tuple        # str | Slot

    @property
    def slots(self) -> tuple:
        return tuple(p for p in self.parts if not isinstance(p, str))


@dataclass(frozen=True)
class CellT:
    """A symbol with an argument per domain position: Slot, Shape or element name."""
    symbol: str
    args: tuple

    @property
    def slots(self) -> frozenset:
        out = set()
        for a in self.args:
            if isinstance(a, Shape):
                out |= set(a.slots)
            elif isinstance(a, tuple):
                out.add(a)
        return frozenset(out)


@dataclass(frozen=True)
class Atom:
    """kind: "bool" (cell), "eq" (cell = value), "le" (cell <= value),
    "cmp" (cell op other cell; op "=" or "<"), "is" (cell = variable
    slot), "same" (slot = slot)."""
    kind: str
    # what these two hold depends on `kind` (above): a CellT, a slot (sort,
    # index) or a value; Any, since a type per kind would split the class
    cell: Any
    other: Any = None
    op: str = "="

    @property
    def slots(self) -> frozenset:
        out = set(self.cell.slots) if isinstance(self.cell, CellT) else {self.cell}
        if isinstance(self.other, CellT):
            out |= self.other.slots
        elif self.kind in ("is", "same"):
            out.add(self.other)
        return frozenset(out)

    def renamed(self, perm: dict) -> "Atom":
        """The atom with its slots renamed (a permutation of each sort's variables)."""
        return Atom(self.kind, _rename(self.cell, perm), _rename(self.other, perm), self.op)


def _rename(x, perm: dict):
    if isinstance(x, CellT):
        return CellT(x.symbol, tuple(_rename(a, perm) for a in x.args))
    if isinstance(x, Shape):
        return Shape(tuple(p if isinstance(p, str) else perm.get(p, p) for p in x.parts))
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], int):
        return perm.get(x, x)
    return x


class Sorts:
    """Each sort's role in a schema: index, family (with its shapes) or ground."""

    def __init__(self, schema: Schema, index: tuple[str, ...] | None = None) -> None:
        sorts = schema.sorts
        if index is None:
            index = tuple(s for s, els in sorts.items() if els and all(_INDEX.match(e) for e in els))
        self.index = tuple(index)
        owner = {e: s for s in self.index for e in sorts[s]}
        self.shapes: dict[str, dict[Shape, None]] = {}
        self.ground: dict[str, tuple[str, ...]] = {}
        for s, els in sorts.items():
            if s in self.index:
                continue
            shapes = {_shape(e, owner): None for e in els}
            if any(sh.slots for sh in shapes):
                self.shapes[s] = shapes
            elif len(els) <= GROUND_MAX:
                self.ground[s] = els

    def arg_options(self, sort: str, pool: int) -> list:
        """What a cell template may put at an argument of this sort."""
        if sort in self.index:
            return [(sort, i) for i in range(pool)]
        if sort in self.shapes:
            out = []
            for sh in self.shapes[sort]:
                out += _fill(sh, pool)
            return out
        return list(self.ground.get(sort, ()))

    def skipped(self, schema: Schema) -> list[str]:
        """Symbols left out: an argument of a sort too large to name element by element."""
        known = set(self.index) | set(self.shapes) | set(self.ground)
        return [n for n, sym in schema.symbols.items() if any(d not in known for d in sym.domain)]


def _shape(element: str, owner: dict) -> Shape:
    """`Prepared_r1` -> ("Prepared_", (RM, 0)): each distinct index token a
    slot of its sort, numbered in order of appearance per sort."""
    parts: list = []
    seen: dict[str, tuple] = {}
    count: dict[str, int] = {}
    pos = 0
    for m in _TOKEN.finditer(element):
        sort = owner.get(m.group())
        if sort is None:
            continue
        parts.append(element[pos:m.start()])
        slot = seen.get(m.group())
        if slot is None:
            slot = seen[m.group()] = (sort, count.get(sort, 0))
            count[sort] = count.get(sort, 0) + 1
        parts.append(slot)
        pos = m.end()
    parts.append(element[pos:])
    return Shape(tuple(p for p in parts if p != ""))


def _fill(shape: Shape, pool: int) -> list[Shape]:
    """The shape with its slots mapped onto the variable pool, every way
    (distinct slots of one sort to distinct variables only when the pool
    has room; equal variables give the elements whose tokens repeat)."""
    slots = list(dict.fromkeys(shape.slots))
    out = []
    for choice in itertools.product(range(pool), repeat=len(slots)):
        perm = {s: (s[0], c) for s, c in zip(slots, choice)}
        if len(set(perm.values())) < len(slots):
            continue
        out.append(_rename(shape, perm))
    return out


def cell_templates(schema: Schema, sorts: Sorts, pool: int) -> list[CellT]:
    out = []
    skipped = set(sorts.skipped(schema))
    for name, sym in schema.symbols.items():
        if name in skipped:
            continue
        for args in itertools.product(*[sorts.arg_options(d, pool) for d in sym.domain]):
            out.append(CellT(name, tuple(args)))
    return out


def atoms(schema: Schema, sorts: Sorts, pool: int, values: dict[str, list]) -> list[Atom]:
    """Every atom over the cell templates; `values` gives, per symbol, the
    values its cells take in the samples (sorted)."""
    cells = cell_templates(schema, sorts, pool)
    out: list[Atom] = []
    ints = []
    for c in cells:
        typ = schema.symbols[c.symbol].type
        seen = values.get(c.symbol, [])
        if len(seen) == 1 and isinstance(typ, (Int, Str)):
            out.append(Atom("eq", c, seen[0]))      # a cell the samples never change: that fact alone
        elif isinstance(typ, Bool):
            out.append(Atom("bool", c))
        elif isinstance(typ, Int):
            ints.append(c)
            ks = seen if len(seen) <= VALUES_MAX else []
            out += [Atom("eq", c, k) for k in ks]
            # c <= k, but for the largest value (and for the smallest, which is c = k)
            out += [Atom("le", c, k) for k in ks[1:-1]]
        elif isinstance(typ, Enum) and typ.sort in sorts.index:
            out += [Atom("is", c, (typ.sort, i)) for i in range(pool)]
        elif isinstance(typ, Enum):
            els = schema.elements(typ.sort)
            out += [Atom("eq", c, e) for e in (els if len(els) <= VALUES_MAX else [])]
        elif isinstance(typ, Str):
            out += [Atom("eq", c, v) for v in (seen if len(seen) <= VALUES_MAX else [])]
    # order between counters of one index: two symbols over the same sorts, at the same arguments
    ints = [c for c in ints if len(values.get(c.symbol, [])) > 1]
    for a, b in itertools.permutations(ints, 2):
        if a.symbol != b.symbol and a.args == b.args \
                and schema.symbols[a.symbol].domain == schema.symbols[b.symbol].domain:
            out.append(Atom("cmp", a, b, "<"))      # with its negation, a >= b
            if a.symbol < b.symbol:
                out.append(Atom("cmp", a, b, "="))
    for s in sorts.index:
        for i, j in itertools.combinations(range(pool), 2):
            out.append(Atom("same", (s, i), (s, j)))
    return out
