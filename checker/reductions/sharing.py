"""Compact stored states by sharing equal parts (hash-consing).

Successor states are built fresh, so two stored states that agree on a
field hold two equal but separate tuples or frozensets. `Sharer` maps every
stored tuple and frozenset to one canonical copy: a part already seen costs
a pointer; a new part is shared below first. Values and their equality are
unchanged, so fingerprints and counts are too. The bfs engine shares with
`--compact`: it halves the memory of PIP-473 `fixed` and costs 70-90% more
time, because exact-type keys need a walk over every new state.
bench/memory.py measures the bytes per state it saves.
"""

from __future__ import annotations

_ATOMS = frozenset({int, str, bool, type(None), float})


class Sharer:
    """Hash-consing keyed on exact types: `(True,)` and `(1,)` are equal in
    Python but encode (and fingerprint) differently, and a NamedTuple equals a
    plain tuple of its values, so a part is shared only with a part of the
    same type whose children are the same shared objects (or equal atoms of
    the same type)."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        self.memo: dict = {}

    def __call__(self, state):
        """The state rebuilt from shared parts (the state itself is new)."""
        if not isinstance(state, tuple):
            return self.part(state)
        part = self.part
        t = type(state)
        items = [part(x) for x in state]
        return tuple(items) if t is tuple else t._make(items)

    def part(self, v):
        t = type(v)
        if t in _ATOMS:
            return v
        if t is frozenset:
            kids = [self.part(x) for x in v]
            key = (t, frozenset([(type(k), k) if type(k) in _ATOMS else id(k) for k in kids]))
        elif isinstance(v, tuple):
            kids = [self.part(x) for x in v]
            key = (t, tuple([(type(k), k) if type(k) in _ATOMS else id(k) for k in kids]))
        else:
            return v
        memo = self.memo
        hit = memo.get(key)
        if hit is None:
            hit = frozenset(kids) if t is frozenset else (tuple(kids) if t is tuple else t._make(kids))
            memo[key] = hit  # the key's ids stay valid: the memo keeps every shared part alive
        return hit
