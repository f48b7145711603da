"""Rebuild a spec's state types from a decoded state.

The canonical encoding (`checker/encoding.py`) keeps values, not classes: a
NamedTuple decodes as a plain tuple. Specs may read fields by name
(`s.tmState`, `s._replace(...)`), so a worker rebuilds the classes before it
calls `next` or `observe`. The shape comes from the state class's type
hints: NamedTuple fields, `frozenset[X]`, `tuple[X, ...]`, `tuple[A, B]` and
`X | None` are followed; anything else is kept as decoded.

`check_revival` runs a spec's first states through encode/decode/revive and
compares what `next` and `observe` give on both; a spec whose states cannot
be rebuilt is rejected in one line before any Spark job starts.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Callable

from ..encoding import decode, encode

Reviver = Callable[[Any], Any] | None  # None: the decoded value is already right


def _is_namedtuple(t) -> bool:
    return isinstance(t, type) and issubclass(t, tuple) and hasattr(t, "_fields")


def reviver_for(t, _seen: frozenset = frozenset()) -> Reviver:
    if _is_namedtuple(t):
        if t in _seen:
            return None
        try:
            hints = typing.get_type_hints(t)
        except Exception:  # unresolvable annotations: rebuild the top level only
            hints = {}
        fields = [reviver_for(hints.get(f), _seen | {t}) for f in t._fields]
        make = t._make
        if not any(fields):
            return make
        return lambda v: make([x if f is None else f(x) for f, x in zip(fields, v)])
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin in (frozenset, set) or origin is typing.AbstractSet:
        elem = reviver_for(args[0], _seen) if args else None
        return None if elem is None else (lambda v: frozenset(map(elem, v)))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            elem = reviver_for(args[0], _seen)
            return None if elem is None else (lambda v: tuple(map(elem, v)))
        parts = [reviver_for(a, _seen) for a in args]
        if not any(parts):
            return None
        return lambda v: tuple(x if f is None else f(x) for f, x in zip(parts, v))
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            inner = reviver_for(options[0], _seen)
            return None if inner is None else (lambda v: None if v is None else inner(v))
    return None


def state_reviver(example) -> Callable[[bytes], Any]:
    """bytes -> state, rebuilding the classes of `example`'s type."""
    r = reviver_for(type(example))
    if r is None:
        return decode
    return lambda data: r(decode(data))


def check_revival(spec, states, limit: int = 200) -> str | None:
    """None if `next` and `observe` agree on original and rebuilt states for
    the first `limit` states reached from `states`; else the first difference."""
    states = list(states)
    if not states:
        return None
    revive = state_reviver(states[0])
    seen, queue = set(), list(states)
    while queue and len(seen) < limit:
        s = queue.pop(0)
        if s in seen:
            continue
        seen.add(s)
        t = revive(encode(s))
        try:
            got = [(encode(a), encode(x)) for a, x in spec.next(t)]
            obs = spec.observe(t)
        except Exception as exc:
            return f"a state rebuilt from its encoding fails in the spec ({type(exc).__name__}: {exc})"
        want = list(spec.next(s))
        if got != [(encode(a), encode(x)) for a, x in want]:
            return "a state rebuilt from its encoding has different successors"
        if obs != spec.observe(s):
            return "a state rebuilt from its encoding observes differently"
        queue.extend(x for _, x in want)
    return None
