"""The binary codec of bfs checkpoint segments (`store.py` writes and reads them).

A segment holds, in order: new nodes of a value table (strings, tuples,
NamedTuples and frozensets, each written once and referred to by number
afterwards, so the parts states share are stored once), the new actions and
states as node numbers, their parent pointers, and the new edges, the last
three as little-endian int64 columns.

Segments are untrusted input. Node children are inline scalars, with the tags
of `checker.encoding` (`INT`, `TRUE`, `FALSE`, `NONE`), or references (`REF`)
to earlier nodes only; a node is a string (`STR`), a tuple (`TUPLE`), a
frozenset (`FROZENSET`) or a record (`RECORD`), which names its NamedTuple
class by an index into the manifest's `types`; those classes must live in the
spec's own package. Every length and reference is checked on load; nothing is
ever unpickled.
"""

from __future__ import annotations

import importlib
import sys
from array import array
from typing import Any, TYPE_CHECKING

from ...encoding import FALSE, FROZENSET, INT, NONE, STR, TRUE, TUPLE, _varint
from ...errors import EngineError, EnvironmentFault

if TYPE_CHECKING:
    from ....spec.api import Spec


SEGMENT_MAGIC = b"TXCKSEG2"


class CheckpointError(EngineError):
    """A checkpoint that cannot be written or resumed; one line naming the folder."""


class CheckpointWriteError(CheckpointError, EnvironmentFault):
    """The disk refused a checkpoint (read-only, full): an environment fault,
    exit 3, not bad input."""


class _Types:
    """NamedTuple classes seen in states, numbered for the `R` tag."""

    def __init__(self, names: list[str] | None = None) -> None:
        self.names: list[str] = list(names or [])
        self.ids: dict[type, int] = {}
        self.classes: list[type[Any]] = []   # NamedTuple classes among them (_fields, _make)

    def id_of(self, cls: type) -> int:
        i = self.ids.get(cls)
        if i is None:
            i = self.ids[cls] = len(self.names)
            self.names.append(f"{cls.__module__}:{cls.__qualname__}")
            self.classes.append(cls)
        return i


RECORD = ord("R")  # a NamedTuple: its class's index in the manifest's `types`, then its fields
REF = ord("r")  # a reference to an earlier node of the table


class _Nodes:
    """The table of strings and container values (tuples, NamedTuples, frozensets) written so far.

    States share most of their parts with their parents (a successor reuses
    the unchanged fields as the same objects), so each container is written
    once, as a node whose children are inline scalars or references to
    earlier nodes, and a state is one node id. Nodes are keyed by object
    identity; `objects` keeps every one alive so that an id is never reused.
    """

    def __init__(self, types: _Types) -> None:
        self.types = types
        self.ids: dict[int, int] = {}
        self.objects: list = []

    def node(self, v, out: bytearray) -> int:
        """The node id of container `v`, writing it (and new children) to `out` first."""
        nid = self.ids.get(id(v))
        if nid is not None:
            return nid
        t = type(v)
        if t is str:  # strings are nodes too: states repeat a few names (states, kinds) endlessly
            b = v.encode()
            out.append(STR)
            _varint(len(b), out)
            out += b
            nid = self.ids[id(v)] = len(self.objects)
            self.objects.append(v)
            return nid
        if t is tuple or t is frozenset:
            head: tuple[int, ...] = (TUPLE if t is tuple else FROZENSET,)
        elif isinstance(v, tuple) and hasattr(t, "_fields"):
            head = (RECORD, self.types.id_of(t))
        else:
            raise CheckpointError(f"cannot checkpoint a {t.__name__} in a state")
        children = bytearray()
        for x in v:
            self.child(x, children, out)
        out.append(head[0])
        if len(head) > 1:
            _varint(head[1], out)
        _varint(len(v), out)
        out += children
        nid = self.ids[id(v)] = len(self.objects)
        self.objects.append(v)
        return nid

    def child(self, x, into: bytearray, out: bytearray) -> None:
        t = type(x)
        if t is int:
            into.append(INT)
            _varint((x << 1) if x >= 0 else ((-x << 1) - 1), into)
        elif t is bool:
            into.append(TRUE if x else FALSE)
        elif x is None:
            into.append(NONE)
        else:
            nid = self.node(x, out)
            into.append(REF)
            _varint(nid, into)


class _Reader:
    """Decodes a segment; every failure is a CheckpointError naming the file."""

    def __init__(self, data: bytes, where: str, classes: list[type[Any]], table: list) -> None:
        self.data, self.pos, self.where, self.classes, self.table = data, 0, where, classes, table

    def fail(self, msg: str):
        raise CheckpointError(f"{self.where}: {msg} at byte {self.pos}")

    def varint(self) -> int:
        data, pos = self.data, self.pos
        if pos < len(data) and data[pos] < 0x80:  # the common one-byte case
            self.pos = pos + 1
            return data[pos]
        n = shift = 0
        while True:
            if pos >= len(data):
                self.pos = pos
                self.fail("truncated segment")
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                self.pos = pos
                return n
            shift += 7
            if shift > 630:
                self.pos = pos
                self.fail("varint too long")

    def count(self) -> int:
        n = self.varint()
        if n > len(self.data) - self.pos:
            self.fail("count larger than the segment")
        return n

    def child(self):
        if self.pos >= len(self.data):
            self.fail("truncated segment")
        tag = self.data[self.pos]
        self.pos += 1
        if tag == REF:
            k = self.varint()
            if k >= len(self.table):
                self.fail(f"reference to node {k}, which is not defined yet")
            return self.table[k]
        if tag == INT:
            z = self.varint()
            return (z >> 1) if not z & 1 else -((z + 1) >> 1)
        if tag == TRUE:
            return True
        if tag == FALSE:
            return False
        if tag == NONE:
            return None
        self.fail(f"unknown value tag {tag}")

    def node(self) -> None:
        """Read one node and append it to the table."""
        if self.pos >= len(self.data):
            self.fail("truncated segment")
        tag = self.data[self.pos]
        self.pos += 1
        if tag == RECORD:
            k = self.varint()
            if k >= len(self.classes):
                self.fail(f"record type {k} is not in the manifest")
            cls = self.classes[k]
            n = self.count()
            if n != len(cls._fields):
                self.fail(f"{cls.__name__} has {len(cls._fields)} fields, segment has {n}")
            self.table.append(cls._make([self.child() for _ in range(n)]))
        elif tag == STR:
            n = self.count()
            raw = self.data[self.pos:self.pos + n]
            self.pos += n
            try:
                self.table.append(raw.decode())
            except UnicodeDecodeError:
                self.fail("invalid UTF-8")
        elif tag in (TUPLE, FROZENSET):
            n = self.count()
            items = [self.child() for _ in range(n)]
            if tag == TUPLE:
                self.table.append(tuple(items))
            else:
                try:
                    self.table.append(frozenset(items))
                except TypeError:
                    self.fail("unhashable set member")
        else:
            self.fail(f"unknown node tag {tag}")

    def ints(self, n: int) -> array:
        """n little-endian int64 values."""
        size = 8 * n
        if self.pos + size > len(self.data):
            self.fail("truncated integer array")
        a = array("q")
        a.frombytes(self.data[self.pos:self.pos + size])
        if sys.byteorder != "little":
            a.byteswap()
        self.pos += size
        return a


def _ints(values, out: bytearray) -> None:
    a = array("q", values)
    if sys.byteorder != "little":
        a.byteswap()
    out += a.tobytes()


def _resolve_types(names: list[str], spec: Spec, where: str) -> list[type]:
    """NamedTuple classes named in a manifest; only the spec's own package may supply them."""
    package = type(spec).__module__.rpartition(".")[0] or type(spec).__module__
    classes = []
    for name in names:
        module, _, qual = name.partition(":")
        if not (module == package or module.startswith(package + ".")) or not qual.isidentifier():
            raise CheckpointError(f"{where}: state type {name!r} is not a type of spec {spec.name}")
        try:
            cls = getattr(importlib.import_module(module), qual)
        except (ImportError, AttributeError):
            raise CheckpointError(f"{where}: state type {name!r} no longer exists") from None
        if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
            raise CheckpointError(f"{where}: {name!r} is not a NamedTuple")
        classes.append(cls)
    return classes
