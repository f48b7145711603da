"""The shape of a spec's state: which Z3 cells stand for it at the model's
bounds, inferred from states of the model.

A state is a NamedTuple of tuples, frozensets and atoms (ints, strings,
bools, None). Its shape says, position by position, what it may hold:

    Leaf       an atom: a Bool cell (bools), an Int cell with a range (ints),
               or a cell of the Atom sort with the atoms it may be (others)
    Record     a NamedTuple or a tuple of fixed length: its items' shapes
    Seq        a tuple whose length varies: a length cell (0..cap) and cap slots
    Set        a frozenset: one Bool cell per element of a finite universe
    Union      one of several shapes (a header or "NONE"): a tag cell and
               each alternative's cells

The shape is a guess from states of the model (relation.py), widened while
a successor the spec yields does not fit it; what it claims (an Int's
range, the atoms a cell may hold, a length's cap) is a clause of the
inductive invariant (`Types`), proved like the others, never assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .oracle import OutsideSubset
from .atom import SAtom
from .values import SBool, SInt

_ATOM_TYPES = (bool, int, str, float, type(None), bytes)


def kind(v) -> Any:
    """What a value is, as shapes group values: 'atom', 'set', 'tuple' (a
    plain one) or a NamedTuple class."""
    from .containers import SSeq, SSet, SUnion

    if isinstance(v, _ATOM_TYPES) or isinstance(v, (SBool, SInt, SAtom)):
        return "atom"
    if isinstance(v, (frozenset, SSet)):
        return "set"
    if isinstance(v, SSeq):
        return "tuple"
    if isinstance(v, SUnion):
        return "union"
    if isinstance(v, tuple):
        return type(v) if hasattr(v, "_fields") else "tuple"
    raise OutsideSubset(f"a state holds a {type(v).__name__} ({v!r:.60}): states are made of tuples, "
                        "NamedTuples, frozensets, ints, strs, bools and None")


def _order(values) -> tuple:
    values = set(values)      # once: `values` may be a generator
    try:
        return tuple(sorted(values))
    except TypeError:
        return tuple(sorted(values, key=repr))


@dataclass(frozen=True)
class Leaf:
    kind_: str               # "bool", "int", "atom"
    lo: int = 0
    hi: int = 0
    values: tuple = ()       # "atom": the atoms it may hold

    @property
    def kind(self):
        return "atom"

    def atoms(self) -> tuple:
        if self.kind_ == "bool":
            return (False, True)
        if self.kind_ == "int":
            return tuple(range(self.lo, self.hi + 1))
        return self.values


@dataclass(frozen=True)
class Record:
    cls: type
    items: tuple

    @property
    def kind(self):
        return self.cls if self.cls is not tuple else "tuple"


@dataclass(frozen=True)
class Seq:
    cap: int
    elem: Any

    @property
    def kind(self):
        return "tuple"


@dataclass(frozen=True)
class Set:
    universe: tuple

    @property
    def kind(self):
        return "set"


@dataclass(frozen=True)
class Union:
    alts: tuple

    @property
    def kind(self):
        return "union"


def random_value(shape, rng) -> Any:
    """A value of the shape, each place drawn at random (`rng` a
    random.Random): a state the types allow, reachable or not, which is
    what an inductive step ranges over (agreement.shape_states)."""
    if isinstance(shape, Leaf):
        if shape.kind_ == "int":
            return rng.randint(shape.lo, shape.hi)
        return rng.choice(shape.atoms())
    if isinstance(shape, Record):
        items = [random_value(s, rng) for s in shape.items]
        return shape.cls(*items) if shape.cls is not tuple else tuple(items)
    if isinstance(shape, Seq):
        return tuple(random_value(shape.elem, rng) for _ in range(rng.randint(0, shape.cap)))
    if isinstance(shape, Set):
        p = rng.random()
        return frozenset(e for e in shape.universe if rng.random() < p)
    return random_value(rng.choice(shape.alts), rng)


def leaf(values) -> Leaf:
    vals = set(values)
    if vals and all(isinstance(v, bool) for v in vals):
        return Leaf("bool")
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return Leaf("int", min(vals), max(vals))
    return Leaf("atom", values=_order(vals))


def infer(values: list) -> Any:
    """The least shape of these values (concrete ones)."""
    groups: dict = {}
    for v in values:
        groups.setdefault(kind(v), []).append(v)
    shapes = [_infer_group(k, vs) for k, vs in groups.items()]
    if len(shapes) == 1:
        return shapes[0]
    return Union(tuple(sorted(shapes, key=lambda s: _kind_order(s.kind))))


def pool_ints(shape) -> Any:
    """The shape with each int of a homogeneous array (a plain tuple of
    ints, or each int field of a plain tuple of records of one class) given
    one range in every slot, the hull of the slots' ranges. The samples set an int's range as they set a
    sequence's capacity, and a bound one slot's samples leave short is
    often another's: a PIP-473 send lands at any position its ledger
    reaches, whichever send the samples showed there. Wider is sound
    (DeclaredBounds proves the range; one too narrow fails the proof at a
    reachable step); the derivation's switch `pool_ints` turns it off."""
    def fix(items: list) -> list:
        first = items[0]
        if all(isinstance(it, Leaf) and it.kind_ == "int" for it in items):     # a plain array of ints
            return [Leaf("int", min(it.lo for it in items), max(it.hi for it in items))] * len(items)
        if not (isinstance(first, Record) and first.cls is not tuple
                and all(isinstance(it, Record) and it.cls is first.cls for it in items)):
            return items
        for f in range(len(first.items)):
            col = [it.items[f] for it in items]
            if all(isinstance(c, Leaf) and c.kind_ == "int" for c in col):
                hull = Leaf("int", min(c.lo for c in col), max(c.hi for c in col))
                items = [Record(it.cls, it.items[:f] + (hull,) + it.items[f + 1:]) for it in items]
        return items

    return _arrays(shape, fix)


def pool_caps(shape) -> Any:
    """The shape with each array of sequences (a plain tuple of them: a
    ledger per segment) given one capacity in every slot, the largest of
    the slots'. As `pool_ints`: a segment the samples reach late (PIP-473's
    merged one) holds as many entries as the others do; too small a
    capacity fails DeclaredBounds at a reachable step. Switch: `pool_caps`."""
    def fix(items: list) -> list:
        if not all(isinstance(it, Seq) for it in items):
            return items
        cap = max(it.cap for it in items)
        return [Seq(cap, it.elem) for it in items]

    return _arrays(shape, fix)


def _arrays(shape, fix) -> Any:
    """The shape with `fix` applied to the items of each plain tuple of two
    or more (innermost first)."""
    if isinstance(shape, Seq):
        return Seq(shape.cap, _arrays(shape.elem, fix))
    if isinstance(shape, Union):
        return Union(tuple(_arrays(a, fix) for a in shape.alts))
    if not isinstance(shape, Record):
        return shape
    items = [_arrays(it, fix) for it in shape.items]
    if shape.cls is tuple and len(items) > 1:
        items = fix(items)
    return Record(shape.cls, tuple(items))


def _kind_order(k) -> str:
    return k if isinstance(k, str) else f"~{k.__module__}.{k.__qualname__}"


def _infer_group(k, vs: list):
    if k == "atom":
        return leaf(vs)
    if k == "set":
        return Set(_order(e for v in vs for e in v))
    lengths = {len(v) for v in vs}
    if k == "tuple" and len(lengths) > 1:
        return Seq(max(lengths), infer([x for v in vs for x in v]))
    n = lengths.pop()
    return Record(k if k != "tuple" else tuple, tuple(infer([v[i] for v in vs]) for i in range(n)))


def widen(shape, v) -> Any:
    """A shape that also holds the value v (concrete, or symbolic: then
    every value it may be)."""
    return infer(_examples(shape) + _concretes(v))


def _concretes(v) -> list:
    from .containers import SSeq, SSet

    if isinstance(v, SAtom):
        return list(v.values)
    if isinstance(v, SBool):
        return [False, True]
    if isinstance(v, SInt):
        if v.lo is None or v.hi is None:
            raise OutsideSubset("an integer without known bounds is written into the state")
        return list(range(v.lo, v.hi + 1))
    if isinstance(v, SSet):
        return [frozenset(v.bits)]
    if isinstance(v, SSeq):
        v = tuple(v.slots)
    if isinstance(v, tuple):
        cols = [_concretes(x) for x in v]
        n = max((len(c) for c in cols), default=1)
        rows = [tuple(c[min(i, len(c) - 1)] for c in cols) for i in range(n)]
        return [type(v)(*r) if hasattr(v, "_fields") else r for r in rows]
    return [v]


def _examples(s) -> list:
    """Values of shape s, enough that a shape holding them holds s."""
    if isinstance(s, Leaf):
        return list(s.atoms())
    if isinstance(s, Set):
        return [frozenset(s.universe)] if s.universe else [frozenset()]
    if isinstance(s, Seq):
        ex = _examples(s.elem)
        return [tuple(ex[:1]) * s.cap] + [tuple([e]) for e in ex] + [()]
    if isinstance(s, Union):
        return [v for a in s.alts for v in _examples(a)]
    cols = [_examples(it) for it in s.items]
    n = max((len(c) for c in cols), default=1)
    rows = [tuple(c[min(i, len(c) - 1)] for c in cols) for i in range(n)]
    return [s.cls(*r) if s.cls is not tuple else r for r in rows]


def fits(shape, v) -> bool:
    """Does a concrete value fit the shape?"""
    try:
        k = kind(v)
    except OutsideSubset:
        return False
    if isinstance(shape, Union):
        return any(fits(a, v) for a in shape.alts)
    if isinstance(shape, Leaf):
        if k != "atom":
            return False
        if shape.kind_ == "bool":
            return isinstance(v, bool)
        if shape.kind_ == "int":
            return isinstance(v, int) and not isinstance(v, bool) and shape.lo <= v <= shape.hi
        return any(v == a and type(v) is type(a) for a in shape.values)
    if isinstance(shape, Set):
        return k == "set" and all(e in shape.universe for e in v)
    if isinstance(shape, Seq):
        return k == "tuple" and len(v) <= shape.cap and all(fits(shape.elem, x) for x in v)
    if shape.kind != k or len(v) != len(shape.items):
        return False
    return all(fits(s, x) for s, x in zip(shape.items, v))


@dataclass
class Atoms:
    """Every atom some Atom cell may hold; a Z3 enum sort of them."""

    values: tuple = ()
    consts: dict = field(default_factory=dict)
    by_name: dict = field(default_factory=dict)

    def declare(self, schema) -> None:
        if not self.values:
            return
        names = [_name(v) for v in self.values]
        schema.enum("Atom", names)
        for v, n in zip(self.values, names):
            self.consts[_key(v)] = schema.const("Atom", n)
            self.by_name[n] = v

    def const(self, v):
        return self.consts[_key(v)]


def _key(v):
    return (type(v), v)


def _name(v) -> str:
    return v if isinstance(v, str) and not v.startswith("'") else repr(v)


def atoms_of(shape, out: set) -> None:
    if isinstance(shape, Leaf):
        if shape.kind_ == "atom":
            out.update(_key(v) for v in shape.values)
    elif isinstance(shape, (Record,)):
        for it in shape.items:
            atoms_of(it, out)
    elif isinstance(shape, Seq):
        atoms_of(shape.elem, out)
    elif isinstance(shape, Union):
        for a in shape.alts:
            atoms_of(a, out)
