"""A state's fields, named from its own structure, and how much of the
state space each one carries.

A state is split into components: the fields of a NamedTuple (at any
depth: PIP-473's `part[0].cache` is field `cache` of the `Part` at index 0
of field `part`), and the items of a fixed-length tuple directly below a
named field (per txn, per segment: `client[1]`). Everything else (a
frozenset, a tuple whose length varies, a slot that holds an atom in one
state and a NamedTuple in another) is one component. The layout is read off
a sample of the states; a state that does not fit it gives the component
the value `MISFIT`.

How much of the growth a component carries: the number of distinct states
over the number of distinct states with that component left out (1.0: it
never tells two states apart that the rest does not). Each (component,
value) gets a random 64-bit word, and a state's key is the XOR of its
components' words, so leaving a component out is one XOR and one set
insertion per state; two different projections share a key with
probability 2^-64 per pair.
"""

from __future__ import annotations

import random
from array import array
from collections import defaultdict
from dataclasses import dataclass

MISFIT = ("<misfit>",)
_MAX_SPLIT = 16  # a longer tuple is one component


@dataclass
class Node:
    """A node of the layout: a NamedTuple type to split by field position,
    a tuple length to split by index, or a leaf (component `leaf`)."""

    kind: str                 # "named", "indexed" or "leaf"
    shape: object = None      # the NamedTuple type, or the tuple length
    children: tuple = ()      # (position, Node) pairs
    leaf: int = -1


class Layout:
    """The components of the states, read off `sample`."""

    def __init__(self, sample: list) -> None:
        self.paths: list[tuple] = []
        self.root = self._discover(list(sample), (), 0)
        self.names = [_name(p) for p in self.paths]
        groups: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(self.paths):
            groups[_name(p[:1]) if p else "state"].append(i)
        self.groups = dict(groups)  # top-level field -> its components

    def _discover(self, values: list, path: tuple, splits: int) -> Node:
        present = [v for v in values if v is not None]
        if present:
            t = type(present[0])
            if hasattr(t, "_fields") and all(type(v) is t for v in present):
                kids = tuple((k, self._discover([None if v is None else v[k] for v in values], path + (f,), splits))
                             for k, f in enumerate(t._fields))
                return Node("named", t, kids)
            n = len(present[0]) if t is tuple else -1
            if (splits < 2 and (path or splits == 0) and 1 < n <= _MAX_SPLIT
                    and all(type(v) is tuple and len(v) == n for v in present)):
                kids = tuple((k, self._discover([None if v is None else v[k] for v in values], path + (k,), splits + 1))
                             for k in range(n))
                return Node("indexed", n, kids)
        self.paths.append(path)
        return Node("leaf", leaf=len(self.paths) - 1)

    def values(self, s) -> list:
        """The value of each component in `s` (None below a None)."""
        out = [None] * len(self.paths)
        _fill(self.root, s, out)
        return out

    def get(self, s, i: int):
        v = s
        for step in self.paths[i]:
            if v is None:
                return None
            v = getattr(v, step) if isinstance(step, str) else v[step]
        return v

    def put(self, s, i: int, value):
        """`s` with component `i` set to `value`; None where a container on
        its path is None (the component does not exist in `s`)."""
        return _put(s, self.paths[i], value)


def _fill(node: Node, v, out: list) -> None:
    if node.kind == "leaf":
        out[node.leaf] = v
        return
    if v is None:
        for _, child in node.children:
            _fill(child, None, out)
        return
    if (type(v) is not node.shape) if node.kind == "named" else (type(v) is not tuple or len(v) != node.shape):
        for _, child in node.children:
            _fill(child, MISFIT, out)
        return
    for k, child in node.children:
        _fill(child, v[k], out)


def _put(v, path: tuple, value):
    if not path:
        return value
    if v is None:
        return None
    step = path[0]
    k = type(v)._fields.index(step) if isinstance(step, str) else step
    inner = _put(v[k], path[1:], value)
    if inner is None and len(path) > 1:
        return None
    items = list(v)
    items[k] = inner
    return type(v)._make(items) if isinstance(step, str) else tuple(items)


def _name(path: tuple) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out or "state"


@dataclass
class Growth:
    """Per component and per top-level field: distinct values, and the
    factor it carries (distinct states / distinct states without it)."""

    states: int
    distinct: list[int]          # per component
    factor: list[float]          # per component
    group_factor: dict[str, float]
    keys: array                  # per state: the XOR of its components' words
    words: list                  # per component: its words, by value id
    ids: list                    # per component: array of value ids, per state


def growth(layout: Layout, states: list, seed: int = 0) -> Growth:
    rng = random.Random(seed)
    n = len(layout.paths)
    table: list[dict[object, int]] = [{} for _ in range(n)]  # value -> id
    words: list[list[int]] = [[] for _ in range(n)]
    ids = [array("I") for _ in range(n)]
    keys = array("Q")
    for s in states:
        key = 0
        for c, v in enumerate(layout.values(s)):
            d = table[c]
            j = d.get(v)
            if j is None:
                j = d[v] = len(d)
                words[c].append(rng.getrandbits(64))
            ids[c].append(j)
            key ^= words[c][j]
        keys.append(key)
    total = len(set(keys))
    factor = []
    for c in range(n):
        w, col = words[c], ids[c]
        factor.append(total / len({k ^ w[j] for k, j in zip(keys, col)}))
    group_factor = {}
    for g, members in layout.groups.items():
        if len(members) == 1:
            group_factor[g] = factor[members[0]]
            continue
        cols = [(words[c], ids[c]) for c in members]
        without = set()
        for i, k in enumerate(keys):
            for w, col in cols:
                k ^= w[col[i]]
            without.add(k)
        group_factor[g] = total / len(without)
    return Growth(total, [len(t) for t in table], factor, group_factor, keys, words, ids)
