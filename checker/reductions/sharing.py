"""Compact stored states by sharing equal parts (hash-consing).

Successor states are built fresh, so two stored states that agree on a
field hold two equal but separate tuples or frozensets. `Sharer` maps every
stored tuple and frozenset to one canonical copy: a part already seen costs
a pointer; a new part is shared below first. Values and their equality are
unchanged, so fingerprints and counts are too. The bfs engine shares by
default (`--no-compact` turns it off); bench/memory.py measures the bytes
per state it saves. Fewer live objects also means less work for Python's
garbage collector, so it tends to save time as well.
"""

from __future__ import annotations

_ATOMS = frozenset({int, str, bool, type(None), float})


class Sharer:
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
        if type(v) in _ATOMS:
            return v
        memo = self.memo
        hit = memo.get(v)
        if hit is None:
            t = type(v)
            part = self.part
            if t is frozenset:
                hit = frozenset([part(x) for x in v])
            elif t is tuple:
                hit = tuple([part(x) for x in v])
            elif isinstance(v, tuple):  # a NamedTuple
                hit = t._make([part(x) for x in v])
            else:
                return v
            memo[hit] = hit
        return hit
