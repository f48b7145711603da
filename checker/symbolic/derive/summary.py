"""A call of one of the spec's functions on symbolic data, explored on its
own and returned as one value: a summary.

Path merging (explore.py) joins paths whose frames hold equal values. A
helper that builds a value by branching (a participant with a position
tracked or not, a hold kept or released) returns different values on its
paths, which no merge joins: each path would run the rest of `next` again.
So the rewritten code calls a function of the spec's through `t_call`,
which explores the call in an exploration of its own (its paths merged as
`next`'s are) and joins what it returns into one value: a condition per
path, If-chains of their terms, a set's elements present under the
disjunction of theirs. A place that holds the state's own union or
sequence on one path and a plain value on another (a header or GONE, a
ledger one entry longer) is joined into the container (`_join_container`).
Values of different kinds (a state or None) stay apart: the caller
branches once per kind. A path that raises raises in the
caller, under its condition. Summaries are kept by their arguments' merge
keys, so the caller's replayed runs reuse them.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import z3

from ....spec.symbolic import disj
from .atom import SAtom
from .cells import default_terms, symbolic
from .containers import SSeq, SSet, SUnion, concrete
from .explore import Exploration
from .join import Reach
from .oracle import current
from .shapes import kind as shape_kind
from .intjoin import joined_ints
from .fresh import fresh
from .values import SBool, SInt, Sym, has_sym

_NO_SUMMARY = {"next"}


def t_call(f, *args, **kw):
    run = current[0]
    fn = f.__func__ if isinstance(f, types.MethodType) else f
    if (run is None or run.stopped or not isinstance(fn, types.FunctionType) or fn.__code__.co_filename not in run.files
            or fn.__code__.co_flags & (0x20 | 0x200) or fn.__name__ in _NO_SUMMARY or not run.merge
            or not (any(_symbolic(a) for a in args) or any(_symbolic(v) for v in kw.values()))
            or any(_mutable(a, run.canon.stable) for a in (*args, *kw.values()))):
        # (a function given a dict, list or set may change it: a summary would do so once, on the
        # first run's object and once per path of its own exploration, and never for a later run)
        return f(*args, **kw)
    keep: list = []
    try:
        key = (fn.__code__, run.canon(args, keep), run.canon(tuple(sorted(kw.items())), keep),
               run.canon(tuple(c.cell_contents for c in fn.__closure__ or ()), keep),
               run.canon(getattr(f, "__self__", None), keep))
    except Exception:
        return f(*args, **kw)
    hit = run.summaries.get(key)
    if hit is None:
        hit = run.summaries[key] = (_summarize(run, f, args, kw), keep)
    raises, groups = hit[0]
    for cond, exc in raises:
        if run.decide(cond):
            raise exc
    if len(groups) == 1:
        return fresh(groups[0][1])
    for cond, value in groups[:-1]:
        if run.decide(cond.t):
            return fresh(value)
    return fresh(groups[-1][1])


def _symbolic(v) -> bool:
    return isinstance(v, Sym) or has_sym(v)


def _mutable(v, pinned: dict) -> bool:
    """Does `v` hold a dict, list or set? (The symbolic state, pinned, holds none.)"""
    if isinstance(v, (dict, list, set)):
        return True
    return isinstance(v, tuple) and id(v) not in pinned and any(_mutable(x, pinned) for x in v)


def _summarize(run: Exploration, f, args, kw):
    inner = Exploration(run.files, run.background, merge=run.merge, budget=run.budget, solver=run.solver)
    inner.canon = run.canon
    inner.sides = run.sides
    inner.summaries = run.summaries
    inner.atoms = run.atoms
    outer_trace = sys.gettrace()
    try:
        inner.explore(lambda ex: ex.event("return", settled(f(*args, **kw))))
        current[0] = run
        sys.settrace(None)   # the join runs no spec code: the outer run's tracer would see each of Z3's calls
        run.runs_inner += inner.runs
        reach = Reach(inner)
        raises = [(reach.guard(e), e.value) for e in inner.events if e.kind == "raise"]
        returns = [(reach.guard(e), e.value) for e in inner.events if e.kind == "return"]
        return raises, join_groups(returns, run.atoms)
    finally:
        current[0] = run
        sys.settrace(outer_trace)


def settled(v):
    """`v` with every Python set's symbolic elements made the Python values
    its path decided when it hashed them (containers.concrete): joined
    after the path, outside it, they would be decided again."""
    if isinstance(v, (set, frozenset)) and any(isinstance(e, Sym) or has_sym(e) for e in v):
        return frozenset(concrete(e) for e in v)
    if isinstance(v, tuple):
        items = [settled(x) for x in v]
        if all(a is b for a, b in zip(items, v)):
            return v
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v


def join_groups(entries: list, atoms=None) -> list[tuple[Any, Any]]:
    """[(condition, value)] from [(condition, value)] whose conditions exclude
    each other: one entry per kind of value, each kind's values joined.
    `atoms` (the layout's) lets plain atoms join into one: a function that
    returns "OPEN" on one path and "" on another returns one symbolic atom,
    where the caller would otherwise branch on which."""
    groups: dict = {}
    for cond, v in entries:
        groups.setdefault(_kind(v), []).append((cond, v))
    if JOIN_CONTAINERS:
        groups = _absorbed(groups)
    out = []
    for members in groups.values():
        cond = disj([c for c, _ in members])
        value = join_value(members, atoms)
        if value is _APART:
            out += [(SBool(c), v) for c, v in members]
        else:
            out.append((SBool(cond), value))
    return out


_APART = object()


def _kind(v) -> Any:
    if isinstance(v, (bool, SBool)):
        return "bool"
    if isinstance(v, (int, SInt)) and not isinstance(v, bool):
        return "int"
    if isinstance(v, (str, SAtom)) or v is None:
        return "atom"
    if isinstance(v, (frozenset, SSet)):
        return "set"
    if isinstance(v, tuple):
        return (type(v), len(v))
    return ("object", id(v))


def join_value(members: list, atoms=None) -> Any:
    """One value for [(condition, value)] of one kind: `If(c1, v1, If(c2, v2, ...))`."""
    first = members[0][1]
    if all(v is first for _, v in members):
        return first
    if all(not isinstance(v, Sym) and not has_sym(v) for _, v in members):
        try:
            if all(v == first for _, v in members):
                return first
        except Exception:
            return _APART
    k = _kind(first)
    if k == "bool":
        return SBool(_chain([(c, v.t if isinstance(v, SBool) else z3.BoolVal(v)) for c, v in members]))
    if k == "int":
        return joined_ints(_chain([(c, v.t if isinstance(v, SInt) else z3.IntVal(v)) for c, v in members]),
                           [v for _, v in members])
    if k == "atom":
        return _join_atoms(members, atoms)
    if k == "set":
        bits = [v.bits if isinstance(v, SSet) else dict.fromkeys(v, True) for _, v in members]
        out = {}
        for e in dict.fromkeys(e for b in bits for e in b):
            terms = [(c, _bit(b.get(e, False))) for (c, _), b in zip(members, bits)]
            out[e] = _chain(terms)
        return SSet(out)
    if isinstance(first, (SUnion, SSeq)) and JOIN_CONTAINERS:
        return _join_container(members, atoms)
    if isinstance(k, tuple) and k[0] != "object" and isinstance(first, tuple):
        items = []
        for i in range(len(first)):
            sub = [(c, v[i]) for c, v in members]
            x = _join_any(sub, atoms)
            if x is _APART:
                return _APART
            items.append(x)
        return type(first)(*items) if hasattr(first, "_fields") else tuple(items)
    return _APART


# A value of several shapes (SUnion) or a tuple of varying length (SSeq) on one
# path and a concrete value it can hold on another are joined into one value
# of the container (a tag or a length under the paths' conditions, each
# alternative or slot joined over the paths that give it). Off: they stay
# apart, and the caller runs once per path (ADR 0011). The switch exists to
# test that joining changes no relation.
JOIN_CONTAINERS = True


def _absorbed(groups: dict) -> dict:
    """`groups` with each group of concrete values that a container of
    another group can hold moved into that group (joined with it later)."""
    for key in [k for k, ms in groups.items() if isinstance(ms[0][1], (SUnion, SSeq))]:
        box = groups.get(key)
        if box is None:
            continue
        for other in [k for k in groups if k != key]:
            ms = groups[other]
            if all(not isinstance(v, (SUnion, SSeq)) and _holds(box[0][1], v) for _, v in ms):
                box.extend(groups.pop(other))
    return groups


def _holds(box, v) -> bool:
    """Can the container `box` hold the plain value v in one of its places?"""
    if box.shape is None:
        return False
    if isinstance(box, SSeq):
        return type(v) is tuple
    return len(_alts_for(box, v)) == 1


def _alts_for(u: SUnion, v) -> list[int]:
    try:
        k = shape_kind(v)
        return [j for j, a in enumerate(u.alts) if shape_kind(a) == k]
    except Exception:
        return []


def _join_container(members: list, atoms) -> Any:
    """One SUnion or SSeq for [(condition, value)] where some values are one
    and the others are values it can hold, or `_APART`. Under a member's
    condition the joined value's cells are the member's: the places a plain
    value leaves unused (the other alternatives, the slots past its length)
    hold their defaults, as `cells.fit` writes them."""
    boxes = [v for _, v in members if isinstance(v, (SUnion, SSeq))]
    if not boxes or boxes[0].shape is None or atoms is None:
        return _APART
    box = boxes[0]
    if isinstance(box, SUnion):
        shape = box.shape
        tags: list[tuple[Any, Any]] = []
        per_alt: list[list[tuple[Any, Any]]] = [[] for _ in shape.alts]
        for c, v in members:
            if isinstance(v, SUnion):
                if v.shape != shape:
                    return _APART
                tags.append((c, v.tag))
                for j, a in enumerate(v.alts):
                    per_alt[j].append((c, a))
                continue
            js = _alts_for(box, v)
            if len(js) != 1:
                return _APART
            tags.append((c, z3.IntVal(js[0])))
            for j, a in enumerate(shape.alts):
                per_alt[j].append((c, v if j == js[0] else default_value(a, atoms)))
        alts = [_join_any(ms, atoms) for ms in per_alt]
        if any(a is _APART for a in alts):
            return _APART
        return SUnion(_chain(tags), alts, shape)
    shape = box.shape
    # a tuple longer than the place's capacity keeps its slots: `fit` widens the place (or the
    # length cell overflows the capacity, which the types forbid), as for the tuple alone
    cap = max(len(v.slots) if isinstance(v, SSeq) else len(v) if type(v) is tuple else 0 for _, v in members)
    lengths: list[tuple[Any, Any]] = []
    per_slot: list[list[tuple[Any, Any]]] = [[] for _ in range(max(cap, shape.cap))]
    items: Any
    for c, v in members:
        if isinstance(v, SSeq):
            if v.shape != shape:
                return _APART
            lengths.append((c, v.n))
            items = v.slots
        elif type(v) is tuple:
            lengths.append((c, len(v)))
            items = v
        else:
            return _APART
        for i in range(len(per_slot)):
            per_slot[i].append((c, items[i] if i < len(items) else default_value(shape.elem, atoms)))
    slots = [_join_any(ms, atoms) for ms in per_slot]
    if any(x is _APART for x in slots):
        return _APART
    n = join_value(lengths, atoms)
    return SSeq(n if isinstance(n, SInt) else SInt(z3.IntVal(n), n, n), slots, shape)


def default_value(shape, atoms) -> Any:
    """The symbolic value over the cells' defaults: what `cells.fit` writes
    where a value leaves a place unused (a union's other alternatives, a
    sequence's slots past its length)."""
    return symbolic(shape, default_terms(shape, atoms), 0, atoms)[0]


def _join_any(members: list, atoms) -> Any:
    """join_value for members of one kind; else one atom (an atom cell holds
    ints too: a ledger's '-' or a position), or a container and what it holds."""
    kinds = {_kind(v) for _, v in members}
    if len(kinds) == 1:
        return join_value(members, atoms)
    if not JOIN_CONTAINERS:
        return _APART
    if kinds == {"atom", "int"} and not any(isinstance(v, SInt) for _, v in members):
        return _join_atoms(members, atoms)
    return _join_container(members, atoms)


def _join_atoms(members: list, atoms) -> Any:
    """One SAtom for atoms (and ints) that the layout's atoms all name."""
    reg = next((v.reg for _, v in members if isinstance(v, SAtom)), atoms)
    if reg is None or any(not isinstance(v, SAtom) and (type(v), v) not in reg.consts for _, v in members):
        return _APART
    values = tuple(dict.fromkeys(x for _, v in members for x in (v.values if isinstance(v, SAtom) else (v,))))
    return SAtom(_chain([(c, v.t if isinstance(v, SAtom) else reg.const(v)) for c, v in members]), values, reg)


def _bit(b):
    if isinstance(b, bool):
        return z3.BoolVal(b)
    return b


def _chain(terms: list) -> z3.ExprRef:
    out = terms[-1][1]
    for c, t in reversed(terms[:-1]):
        out = t if t.eq(out) else z3.If(c, t, out)
    return out
