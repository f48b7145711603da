"""Rebuild a spec's state classes from a decoded state.

The canonical encoding (`checker/encoding.py`) keeps values, not classes: a
NamedTuple decodes as a plain tuple. Specs read fields by name (`s.hdr`,
`p.stage`, `s._replace(...)`), so a worker must rebuild the classes before
it calls `next` or `observe`.

`Shapes` learns them from real states: a tree that follows tuple positions
and frozenset members (`*`) and records, per position and tuple length, the
class seen there (`Header` at `hdr[0]`, `Op` among the members of `ops`,
...). Every state enters the search as a real object (an initial state on
the driver, a successor in a worker), so learning from each new state before
it is encoded covers every state that is later decoded: workers report the
positions they learned, the driver merges them and ships the tree with the
next level. Two classes of one length at one position cannot be told apart
from the encoding; that is reported as a `ShapeError`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

STAR = "*"


class ShapeError(ValueError):
    pass


class _Node:
    __slots__ = ("classes", "kids", "deep")

    def __init__(self) -> None:
        self.classes: dict[int, type[Any]] = {}  # tuple length -> class (a NamedTuple's: _make)
        self.kids: dict = {}                # position (int or STAR) -> _Node
        self.deep = True                    # some NamedTuple at or below here


def class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def resolve_class(name: str, allowed_prefix: str = "txncheck.") -> type:
    """A tuple class from its `module:qualname` (only under `allowed_prefix`)."""
    if name == "builtins:tuple":
        return tuple
    mod, _, qual = name.partition(":")
    if not mod.startswith(allowed_prefix) or not qual:
        raise ShapeError(f"state class {name!r} is not a spec class")
    try:
        obj = importlib.import_module(mod)
    except ImportError:
        raise ShapeError(f"state class {name!r} does not exist") from None
    return _tuple_class(obj, qual, name)


def _tuple_class(module, qual: str, name: str) -> type:
    obj = module
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    if obj is None:
        raise ShapeError(f"state class {name!r} does not exist")
    if not (isinstance(obj, type) and issubclass(obj, tuple)):
        raise ShapeError(f"{name!r} is not a tuple class")
    return obj


SPEC = "<spec>"   # the spec class's own module, wherever this process loaded it from


class ClassNames:
    """Names of a spec's state classes that mean the same class in the driver
    and in every worker: `module:qualname`, with the spec class's own module
    named SPEC (a spec file is imported under a name that depends on its
    folder, which differs between the driver and an executor's copy;
    spark_ship). A name resolves only to a tuple class of txncheck's (by
    import), of the spec's module, or of a module already loaded from the
    spec's folders or below (never imported here): a checkpoint's manifest
    is untrusted."""

    def __init__(self, spec_cls: type) -> None:
        from ..spec.source import code_files

        self.home = spec_cls.__module__
        self.folders = {p.parent for p in code_files(spec_cls)}

    def name(self, cls: type) -> str:
        mod = cls.__module__
        return f"{SPEC if mod == self.home else mod}:{cls.__qualname__}"

    def resolve(self, name: str) -> type:
        mod, _, qual = str(name).partition(":")
        if mod == SPEC and qual:
            return _tuple_class(sys.modules[self.home], qual, name)
        if name == "builtins:tuple" or mod.startswith("txncheck."):
            return resolve_class(name)
        module = sys.modules.get(mod)
        file = getattr(module, "__file__", None)
        if not qual or not file or not any(Path(file).resolve().is_relative_to(f) for f in self.folders):
            raise ShapeError(f"state class {name!r} is not a spec class")
        return _tuple_class(module, qual, name)

    def records(self, shapes: "Shapes") -> list:
        return [[list(p), n, self.name(c)] for p, n, c in shapes.records()]

    def shapes(self, records) -> "Shapes":
        """A frozen tree from `records` (ShapeError, or TypeError/ValueError if malformed)."""
        out = Shapes()
        for path, length, name in records:
            out.add(tuple(path), length, self.resolve(name))
        return out.freeze()


class Shapes:
    def __init__(self) -> None:
        self.root = _Node()
        self.new: list[tuple] = []  # (path, length, class) learned since the last reset

    # -- learning -------------------------------------------------------------
    def learn(self, v) -> None:
        self._learn(v, self.root, [])

    def _learn(self, v, node: _Node, path: list) -> None:
        t = type(v)
        if t is frozenset:
            if v:
                kid = node.kids.get(STAR)
                if kid is None:
                    kid = node.kids[STAR] = _Node()
                path.append(STAR)
                for x in v:
                    if type(x) not in _LEAVES:
                        self._learn(x, kid, path)
                path.pop()
        elif isinstance(v, tuple):
            self._learn_class(v, node, path)
            kids = node.kids
            for i, x in enumerate(v):
                if type(x) in _LEAVES:
                    continue
                kid = kids.get(i)
                if kid is None:
                    kid = kids[i] = _Node()
                path.append(i)
                self._learn(x, kid, path)
                path.pop()

    def learn_top(self, s: tuple) -> None:
        """The class of a state of len(s) fields (not its fields: `learn_field`)."""
        self._learn_class(s, self.root, [])

    def learn_field(self, i: int, v) -> None:
        """Field i of a state (the codec meets each distinct value once)."""
        if type(v) in _LEAVES:
            return
        kid = self.root.kids.get(i)
        if kid is None:
            kid = self.root.kids[i] = _Node()
        self._learn(v, kid, [i])

    def _learn_class(self, v: tuple, node: _Node, path: list) -> None:
        n, t = len(v), type(v)
        c = node.classes.get(n)
        if c is None:
            self.add(tuple(path), n, t, node)
        elif c is not t:
            raise ShapeError(
                f"at {_show(path)} both {c.__qualname__} and {t.__qualname__} hold {n} items; "
                "the encoding cannot tell them apart"
            )

    def add(self, path: tuple, length: int, cls: type, node: _Node | None = None) -> None:
        if node is None:
            node = self.root
            for step in path:
                node = node.kids.setdefault(step, _Node())
        c = node.classes.get(length)
        if c is None:
            node.classes[length] = cls
            self.new.append((path, length, cls))
        elif c is not cls:
            raise ShapeError(
                f"at {_show(path)} both {c.__qualname__} and {cls.__qualname__} hold {length} items; "
                "the encoding cannot tell them apart"
            )

    def records(self) -> list[tuple]:
        out: list[tuple] = []

        def walk(node: _Node, path: tuple) -> None:
            for n, c in sorted(node.classes.items()):
                out.append((path, n, c))
            for step, kid in node.kids.items():
                walk(kid, path + (step,))

        walk(self.root, ())
        return out

    def freeze(self) -> "Shapes":
        """Mark the subtrees without any NamedTuple, which `revive` skips."""

        def mark(node: _Node) -> bool:
            deep = any(c is not tuple for c in node.classes.values())
            for kid in node.kids.values():
                deep = mark(kid) or deep
            node.deep = deep
            return deep

        mark(self.root)
        self.new = []
        return self

    # -- rebuilding -----------------------------------------------------------
    def revive(self, v):
        return _revive(v, self.root) if self.root.deep else v

    def revive_field(self, i: int, v):
        """Field i of a decoded state, rebuilt (`make_top` then builds the state)."""
        kid = self.root.kids.get(i)
        return _revive(v, kid) if kid is not None and kid.deep else v

    def make_top(self, fields: list):
        c = self.root.classes.get(len(fields))
        return tuple(fields) if c is None or c is tuple else c._make(fields)


_LEAVES = {int, str, bool, type(None)}


def _revive(v, node: _Node):
    if type(v) is tuple:
        kids = node.kids
        items = [x if (k := kids.get(i)) is None or not k.deep else _revive(x, k) for i, x in enumerate(v)] \
            if kids else v
        c = node.classes.get(len(v))
        if c is None or c is tuple:
            return tuple(items) if items is not v else v
        return c._make(items)
    if type(v) is frozenset:
        kid = node.kids.get(STAR)
        if kid is not None and kid.deep:
            return frozenset(_revive(x, kid) for x in v)
    return v


def _show(path) -> str:
    return "state" + "".join("[*]" if s == STAR else f"[{s}]" for s in path)
