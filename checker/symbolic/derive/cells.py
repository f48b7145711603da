"""A shape (shapes.py) as cells: their names and types, a state's values
for them (`encode`, `decode`), the symbolic state over them (`symbolic`)
and a successor the spec built, as a term per cell (`fit`).

Cells appear in the order a walk of the shape meets them: a record's items
in order; a Seq's length, then its slots; a Set's elements in universe
order; a Union's tag, then each alternative's cells. Cells that a value
does not use (slots past a Seq's length, a Union's other alternatives)
hold their defaults in `encode` and whatever they held in `fit`: they are
never read, and `canonical` blanks them for comparisons.
"""

from __future__ import annotations

from typing import Any, Callable

import z3

from ....spec.schema import Bool, Enum, Int
from .containers import SSeq, SSet, SUnion
from .oracle import OutsideSubset
from .shapes import Atoms, Leaf, Record, Seq, Set, Union, kind
from .atom import SAtom
from .values import SBool, SInt, as_int


def ncells(shape) -> int:
    if isinstance(shape, Leaf):
        return 1
    if isinstance(shape, Record):
        return sum(ncells(s) for s in shape.items)
    if isinstance(shape, Seq):
        return 1 + shape.cap * ncells(shape.elem)
    if isinstance(shape, Set):
        return len(shape.universe)
    return 1 + sum(ncells(a) for a in shape.alts)


def declare(shape, name: str, out: list) -> None:
    """(cell name, schema type) of every cell."""
    if isinstance(shape, Leaf):
        typ = Bool() if shape.kind_ == "bool" else Int(shape.lo, shape.hi) if shape.kind_ == "int" else Enum("Atom")
        out.append((name, typ))
    elif isinstance(shape, Record):
        fields = getattr(shape.cls, "_fields", None)
        for k, s in enumerate(shape.items):
            declare(s, f"{name}.{fields[k]}" if fields else f"{name}[{k}]", out)
    elif isinstance(shape, Seq):
        out.append((f"{name}#len", Int(0, shape.cap)))
        for k in range(shape.cap):
            declare(shape.elem, f"{name}[{k}]", out)
    elif isinstance(shape, Set):
        for e in shape.universe:
            out.append((f"{name}{{{e!r}}}", Bool()))
    else:
        out.append((f"{name}?", Int(0, len(shape.alts) - 1)))
        for k, a in enumerate(shape.alts):
            declare(a, f"{name}<{_alt_name(a)}>", out)


def _alt_name(a) -> str:
    k = a.kind
    return k if isinstance(k, str) else k.__name__


# -- concrete values ------------------------------------------------------------------

def encode(shape, v, atoms: Atoms, out: list) -> None:
    if isinstance(shape, Leaf):
        if shape.kind_ == "atom":
            out.append(_atom_name(atoms, v))
        else:
            out.append(v)
    elif isinstance(shape, Record):
        if len(v) != len(shape.items):
            raise OutsideSubset(f"{v!r:.80} does not fit the state's shape")
        for s, x in zip(shape.items, v):
            encode(s, x, atoms, out)
    elif isinstance(shape, Seq):
        if len(v) > shape.cap:
            raise OutsideSubset(f"{v!r:.80} is longer than the {shape.cap} the state's shape holds")
        out.append(len(v))
        for k in range(shape.cap):
            encode(shape.elem, v[k], atoms, out) if k < len(v) else default(shape.elem, atoms, out)
    elif isinstance(shape, Set):
        extra = set(v) - set(shape.universe)
        if extra:
            raise OutsideSubset(f"{sorted(map(repr, extra))[0]} is not in the universe of its set")
        out.extend(e in v for e in shape.universe)
    else:
        alt = alt_of(shape, v)
        if alt is None:
            raise OutsideSubset(f"{v!r:.80} fits no shape of its place in the state")
        out.append(alt)
        for j, a in enumerate(shape.alts):
            encode(a, v, atoms, out) if j == alt else default(a, atoms, out)


def _atom_name(atoms: Atoms, v) -> str:
    from .shapes import _key, _name

    if _key(v) not in atoms.consts:
        raise OutsideSubset(f"{v!r} is not an atom of the state's shape")
    return _name(v)


def default(shape, atoms: Atoms, out: list) -> None:
    if isinstance(shape, Leaf):
        out.append(False if shape.kind_ == "bool" else shape.lo if shape.kind_ == "int"
                   else _atom_name(atoms, shape.values[0]))
    elif isinstance(shape, Record):
        for s in shape.items:
            default(s, atoms, out)
    elif isinstance(shape, Seq):
        out.append(0)
        for _ in range(shape.cap):
            default(shape.elem, atoms, out)
    elif isinstance(shape, Set):
        out.extend(False for _ in shape.universe)
    else:
        out.append(0)
        for a in shape.alts:
            default(a, atoms, out)


def alt_of(shape: Union, v) -> int | None:
    k = kind(v)
    for j, a in enumerate(shape.alts):
        if a.kind == k:
            return j
    return None


def decode(shape, vals: list, i: int, atoms: Atoms) -> tuple[Any, int]:
    if isinstance(shape, Leaf):
        v = vals[i]
        return (atoms.by_name.get(v, v) if shape.kind_ == "atom" else v), i + 1
    if isinstance(shape, Record):
        items = []
        for s in shape.items:
            x, i = decode(s, vals, i, atoms)
            items.append(x)
        return (shape.cls(*items) if shape.cls is not tuple else tuple(items)), i
    if isinstance(shape, Seq):
        n = max(0, min(shape.cap, vals[i]))
        i += 1
        items = []
        for _ in range(shape.cap):
            x, i = decode(shape.elem, vals, i, atoms)
            items.append(x)
        return tuple(items[:n]), i
    if isinstance(shape, Set):
        n = len(shape.universe)
        return frozenset(e for e, b in zip(shape.universe, vals[i:i + n]) if b), i + n
    tag = max(0, min(len(shape.alts) - 1, vals[i]))
    i += 1
    out = None
    for j, a in enumerate(shape.alts):
        x, i = decode(a, vals, i, atoms)
        if j == tag:
            out = x
    return out, i


# -- symbolic values ------------------------------------------------------------------

def symbolic(shape, terms: list, i: int, atoms: Atoms) -> tuple[Any, int]:
    if isinstance(shape, Leaf):
        t = terms[i]
        if shape.kind_ == "bool":
            return SBool(t), i + 1
        if shape.kind_ == "int":
            return SInt(t, shape.lo, shape.hi), i + 1
        return SAtom(t, shape.values, atoms), i + 1
    if isinstance(shape, Record):
        items = []
        for s in shape.items:
            x, i = symbolic(s, terms, i, atoms)
            items.append(x)
        return (shape.cls(*items) if shape.cls is not tuple else tuple(items)), i
    if isinstance(shape, Seq):
        n = SInt(terms[i], 0, shape.cap)
        i += 1
        slots = []
        for _ in range(shape.cap):
            x, i = symbolic(shape.elem, terms, i, atoms)
            slots.append(x)
        return SSeq(n, slots, shape), i
    if isinstance(shape, Set):
        size = len(shape.universe)
        return SSet(dict(zip(shape.universe, terms[i:i + size]))), i + size
    tag = terms[i]
    i += 1
    alts = []
    for a in shape.alts:
        x, i = symbolic(a, terms, i, atoms)
        alts.append(x)
    return SUnion(tag, alts, shape), i


def constraints(shape, terms: list, i: int, atoms: Atoms, out: list) -> int:
    """The types' claims about the cells: ranges, the atoms a cell may hold."""
    if isinstance(shape, Leaf):
        t = terms[i]
        if shape.kind_ == "int":
            out += [t >= shape.lo, t <= shape.hi]
        elif shape.kind_ == "atom" and len(shape.values) < len(atoms.values):
            out.append(z3.Or([t == atoms.const(v) for v in shape.values]))
        return i + 1
    if isinstance(shape, Record):
        for s in shape.items:
            i = constraints(s, terms, i, atoms, out)
        return i
    if isinstance(shape, Seq):
        out += [terms[i] >= 0, terms[i] <= shape.cap]
        i += 1
        for _ in range(shape.cap):
            i = constraints(shape.elem, terms, i, atoms, out)
        return i
    if isinstance(shape, Set):
        return i + len(shape.universe)
    out += [terms[i] >= 0, terms[i] <= len(shape.alts) - 1]
    i += 1
    for a in shape.alts:
        i = constraints(a, terms, i, atoms, out)
    return i


Widen = Callable[[tuple, Any], None]


def fit(shape, v, base, terms: list, i: int, atoms: Atoms, out: list, widen: Widen, path: tuple) -> int:
    """Append a term per cell of `shape` for the value v (the code's
    successor at this place); `base` is the current state's value there,
    over `terms[i:]`. A value the shape cannot hold calls `widen`."""
    n = ncells(shape)
    if v is base:
        out.extend(terms[i:i + n])
        return i + n
    if isinstance(shape, Leaf):
        out.append(_leaf_term(shape, v, atoms, terms[i], widen, path))
        return i + 1
    if isinstance(shape, Record):
        if not isinstance(v, tuple) or type(v) is not shape.cls or len(v) != len(shape.items):
            widen(path, v)
            out.extend(terms[i:i + n])
            return i + n
        for k, (s, x) in enumerate(zip(shape.items, v)):
            i = fit(s, x, base[k], terms, i, atoms, out, widen, path + (k,))
        return i
    if isinstance(shape, Seq):
        slots = v.slots if isinstance(v, SSeq) else v if type(v) is tuple else None
        if slots is None or (len(slots) > shape.cap and getattr(widen, "grow_seqs", True)):
            widen(path, v)
            out.extend(terms[i:i + n])
            return i + n
        out.append(v.n.t if isinstance(v, SSeq) else z3.IntVal(len(v)))     # past the cap: Types fails
        i += 1
        m = ncells(shape.elem)
        for k in range(shape.cap):
            if k < len(slots):
                i = fit(shape.elem, slots[k], base.slots[k], terms, i, atoms, out, widen, path + ("elem",))
            else:
                out.extend(default_terms(shape.elem, atoms))
                i += m
        return i
    if isinstance(shape, Set):
        bits = v.bits if isinstance(v, SSet) else {e: True for e in v} if isinstance(v, frozenset) else None
        if bits is None or any(e not in shape.universe and b is not False for e, b in bits.items()):
            widen(path, v)
            out.extend(terms[i:i + n])
            return i + n
        out.extend(_bit(bits.get(e, False)) for e in shape.universe)
        return i + n
    if isinstance(v, SUnion):
        if len(v.alts) != len(shape.alts):
            raise OutsideSubset("a value of several shapes moved to a place of other shapes")
        out.append(v.tag)
        i += 1
        for k, a in enumerate(shape.alts):
            i = fit(a, v.alts[k], base.alts[k], terms, i, atoms, out, widen, path + (k,))
        return i
    alt = alt_of(shape, v)
    if alt is None:
        widen(path, v)
        out.extend(terms[i:i + n])
        return i + n
    out.append(z3.IntVal(alt))
    i += 1
    for j, a in enumerate(shape.alts):
        if j == alt:
            i = fit(a, v, base.alts[j], terms, i, atoms, out, widen, path + (j,))
        else:
            out.extend(default_terms(a, atoms))
            i += ncells(a)
    return i


def default_terms(shape, atoms: Atoms) -> list:
    """The cells' defaults as Z3 values (what `encode` writes where a value
    leaves cells unused), so that a new value's cells are those of its
    encoding."""
    vals: list = []
    default(shape, atoms, vals)
    types: list = []
    declare(shape, "", types)
    return [z3.BoolVal(v) if isinstance(t, Bool) else z3.IntVal(v) if isinstance(t, Int)
            else atoms.consts[_lookup(atoms, v)] for v, (_, t) in zip(vals, types)]


def _lookup(atoms: Atoms, name: str):
    from .shapes import _key

    return _key(atoms.by_name[name])


def _bit(b):
    return z3.BoolVal(b) if isinstance(b, bool) else b


def _leaf_term(shape: Leaf, v, atoms: Atoms, old, widen: Widen, path: tuple):
    if shape.kind_ == "bool":
        if isinstance(v, bool):
            return z3.BoolVal(v)
        if isinstance(v, SBool):
            return v.t
    elif shape.kind_ == "int":
        if isinstance(v, int) and not isinstance(v, bool):
            if not shape.lo <= v <= shape.hi:
                widen(path, v)
            return z3.IntVal(v)
        if isinstance(v, SInt):
            check = getattr(widen, "symbolic", None)      # misfits.Misfits' rules for symbolic ints
            if check is not None and (v.lo is None or v.hi is None or not shape.lo <= v.lo <= v.hi <= shape.hi):
                check(path, shape, v)
            return v.t
        if isinstance(v, SAtom) and all(isinstance(a, int) and not isinstance(a, bool) for a in v.values):
            return as_int(v).t
    else:
        if isinstance(v, SAtom):
            if set(map(_k, v.values)) <= set(map(_k, shape.values)):
                return v.t
        elif not isinstance(v, (SBool, SInt)) and any(v == a and type(v) is type(a) for a in shape.values):
            return atoms.const(v)
    widen(path, v)
    return old


def _k(v):
    return (type(v), v)


def widen_all(shape, places):
    """The shape with each (path, value) of one round's misfits widened in.
    Deepest first: widening a place into a union (by a None) moves the
    places below it, whose paths were found in the shape before."""
    for path, v in sorted(places, key=lambda w: -len(w[0])):
        shape = widen_at(shape, path, v)
    return shape


def widen_at(shape, path: tuple, v):
    """The shape with the place `path` widened to hold v."""
    from .shapes import widen

    return change_at(shape, path, lambda s: widen(s, v))


def change_at(shape, path: tuple, f):
    """The shape with f(the shape at `path`) in its place."""
    if not path:
        return f(shape)
    step, rest = path[0], path[1:]
    if isinstance(shape, Record):
        items = list(shape.items)
        items[step] = change_at(items[step], rest, f)
        return Record(shape.cls, tuple(items))
    if isinstance(shape, Seq):
        return Seq(shape.cap, change_at(shape.elem, rest, f))
    if isinstance(shape, Union):
        alts = list(shape.alts)
        alts[step] = change_at(alts[step], rest, f)
        return Union(tuple(alts))
    raise AssertionError(f"no place {path} in {shape}")
