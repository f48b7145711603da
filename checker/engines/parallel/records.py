"""States as rows of small integers, and levels of them kept in chunks that
go to disk when they are large.

A state is a tuple (a NamedTuple, usually) of fields, and a state space is
the combinations of few distinct field values: the standard PIP-473 model's
first 1.7 million states take at most 12,105 values per field, most fields
under 100. So a process numbers the values of each field as it meets them
(`Fields`), and a state is its row of numbers: 4 bytes a field instead of
the several hundred bytes of the objects, or of the canonical encoding.

A successor shares most fields with its parent as the very same objects
(specs build it with `_replace`), so only the fields that are not the
parent's are looked up. Its fingerprint is `encoding.field_fingerprint` of
the state, the same in every process: the XOR of its fields' keys, each
remembered with the value's number, so a successor's is its parent's with
the changed fields' keys swapped.

The numbers are this process's own: rows never leave it, except to its own
spill files, which it alone reads back; a state moved to another worker
leaves as its values (`moves.py`). Nothing is pickled.

A state that is not a tuple is a row of one field.
"""

from __future__ import annotations

import os
import zlib
from array import array
from itertools import compress, islice
from operator import is_not

import numpy as np

from ...encoding import _fcode, field_key, shape_key
from .disk import write_file

CHUNK = 4096  # rows per chunk


class Fields:
    """The values of each field position met so far, numbered, with their
    keys; and the shapes (state class, number of fields)."""

    def __init__(self) -> None:
        self.values: list[list] = []
        self.ids: list[dict] = []
        self.keys: list[array] = []  # per field: each value's key (encoding.field_key)
        self.cache: dict = {}  # _fcode's memory of nested parts
        self.shapes: list[tuple[type | None, int]] = []   # (class, length); (None, 1): not a tuple
        self.shape_keys: list[int] = []
        self.widths: list[int] = []  # per shape: numbers in its rows
        self.shape_ids: dict[tuple[type | None, int], int] = {}

    def _widen(self, n: int) -> None:
        while len(self.values) < n:
            self.values.append([])
            self.ids.append({})
            self.keys.append(array("Q"))

    def number(self, i: int, v) -> int:
        """The number of value `v` at field position `i` (new ones are added)."""
        ids = self.ids[i]
        k = ids.get(v)
        if k is None:
            k = ids[v] = len(self.values[i])
            self.values[i].append(v)
            if len(self.cache) > 1 << 16:
                self.cache = {}
            # the cache keeps the codes of v's parts only, so that a field with as many
            # values as states (a growing set of messages) cannot flush them
            self.keys[i].append(field_key(i, _fcode(v, self.cache, remember=False)))
        return k

    def shape(self, s) -> int:
        key = (type(s), len(s)) if isinstance(s, tuple) else (None, 1)
        k = self.shape_ids.get(key)
        if k is None:
            k = self.shape_ids[key] = len(self.shapes)
            self.shapes.append(key)
            self.shape_keys.append(shape_key(key[1] if key[0] is not None else None))
            self.widths.append(key[1] + 1)
            self._widen(key[1])
        return k

    def row(self, s, parent=None, prow=None) -> list[int]:
        """[shape, number of each field]. With the parent `parent` and its
        row, only the fields that are not the parent's objects are looked up."""
        if prow is not None and type(s) is type(parent) and len(s) == len(parent):
            row = prow.copy()
            ids = self.ids
            for i in compress(range(len(s)), map(is_not, s, parent)):
                k = ids[i].get(s[i])
                row[i + 1] = k if k is not None else self.number(i, s[i])
            return row
        sh = self.shape(s)
        if not isinstance(s, tuple):
            return [sh, self.number(0, s)]
        return [sh] + [self.number(i, v) for i, v in enumerate(s)]

    def fingerprint(self, row) -> int:
        """`encoding.field_fingerprint` of the state of `row`."""
        f = self.shape_keys[row[0]]
        for k in map(array.__getitem__, self.keys, islice(row, 1, None)):
            f ^= k
        return f

    def state(self, row):
        """The state of `row`."""
        cls, n = self.shapes[row[0]]
        values = self.values
        if cls is None:
            return values[0][row[1]]
        items = [values[i][row[i + 1]] for i in range(n)]
        return tuple.__new__(cls, items) if cls is not tuple else tuple(items)

    def size(self) -> int:
        """Field values held."""
        return sum(len(v) for v in self.values)


class Level:
    """The rows of one BFS level in a process, in order, each with its
    fingerprint and, for proposals (`trail=True`), its parent's fingerprint
    and an action id. Rows go into chunks of `CHUNK`; a sealed chunk stays
    in memory until the level holds `keep` rows in memory, then chunks go to
    files in `folder`, the rows zlib-compressed."""

    def __init__(self, folder: str | None, name: str, keep: int, trail: bool = False) -> None:
        self.folder, self.name, self.keep, self.trail = folder, name, keep, trail
        self.chunks: list = []  # Chunk, or (path, n) on disk
        self._open()
        self.n = 0
        self.in_memory = 0
        self.files = 0
        self.disk_bytes = 0

    def _open(self) -> None:
        self.rows, self.fps = array("I"), array("Q")
        self.pfps, self.aids = array("Q"), array("I")

    def append(self, row: list[int], fp: int, pfp: int = 0, aid: int = 0) -> None:
        self.rows.extend(row)
        self.fps.append(fp)
        if self.trail:
            self.pfps.append(pfp)
            self.aids.append(aid)
        self.n += 1
        if len(self.fps) >= CHUNK:
            self._seal()

    def extend(self, chunk: "Chunk") -> None:
        """Add a whole chunk."""
        self._seal()
        if len(chunk.fps):
            self.n += len(chunk.fps)
            self._store(chunk)

    def _seal(self) -> None:
        if self.fps:
            chunk = Chunk(self.rows, self.fps, self.pfps if self.trail else None, self.aids if self.trail else None)
            self._open()
            self._store(chunk)

    def _store(self, chunk: "Chunk") -> None:
        n = len(chunk.fps)
        if self.folder is None or self.in_memory + n <= self.keep:
            self.chunks.append(chunk)
            self.in_memory += n
            return
        path = os.path.join(self.folder, f"{self.name}-{self.files:06d}.rows")
        self.files += 1
        body = zlib.compress(chunk.rows, 1)
        parts = [chunk.fps.tobytes()]
        if chunk.pfps is not None and chunk.aids is not None:   # a proposal has both
            parts += [chunk.pfps.tobytes(), chunk.aids.tobytes()]
        write_file(path, [n.to_bytes(4, "little") + len(body).to_bytes(8, "little"), body, *parts])
        self.disk_bytes += 12 + len(body) + sum(map(len, parts))
        self.chunks.append((path, n))

    def close(self) -> "Level":
        self._seal()
        return self

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        """Each chunk in turn; a file is read, checked and removed. A level
        is read once."""
        chunks, self.chunks = self.chunks, []
        for chunk in chunks:
            if isinstance(chunk, Chunk):
                yield chunk
            else:
                path, n = chunk
                yield _read_chunk(path, n, self.trail)
                os.unlink(path)

    def split(self, parts: int, widths: list[int]) -> list["Level"]:
        """The rows dealt into `parts` levels of about equal size, in order
        (contiguous runs keep siblings together)."""
        self._seal()
        out = [Level(self.folder, f"{self.name}.{k}", self.keep, self.trail) for k in range(parts)]
        per = -(-self.n // parts) if parts else 0
        k = 0
        for chunk in self:
            for i, row in enumerate(rows_of(chunk, widths)):
                if out[k].n >= per and k < parts - 1:
                    k += 1
                if self.trail:
                    out[k].append(row, chunk.fps[i], chunk.pfps[i], chunk.aids[i])
                else:
                    out[k].append(row, chunk.fps[i])
        self.n = 0
        return [level.close() for level in out]

    def discard(self) -> None:
        for chunk in self.chunks:
            if not isinstance(chunk, Chunk):
                try:
                    os.unlink(chunk[0])
                except FileNotFoundError:
                    pass
        self.chunks = []


class Chunk:
    """Up to CHUNK rows, one after the other in `rows` (a row's length is
    its shape's: `Fields.widths`), with `fps`, and for proposals `pfps` and
    `aids`."""

    __slots__ = ("rows", "fps", "pfps", "aids")

    def __init__(self, rows: array, fps: array, pfps: array | None = None, aids: array | None = None) -> None:
        self.rows, self.fps, self.pfps, self.aids = rows, fps, pfps, aids


def _read_chunk(path: str, n: int, trail: bool) -> Chunk:
    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) != 12 or int.from_bytes(head[:4], "little") != n:
            raise OSError(f"{path}: a spilled chunk of the search is damaged")
        body = f.read(int.from_bytes(head[4:], "little"))
        rest = f.read()
    rows = array("I")
    rows.frombytes(zlib.decompress(body))
    cols = [array("Q"), array("Q"), array("I")] if trail else [array("Q")]
    sizes = [8 * n, 8 * n, 4 * n][:len(cols)]
    if len(rows) < n or len(rest) != sum(sizes):
        raise OSError(f"{path}: a spilled chunk of the search is damaged")
    at = 0
    for col, size in zip(cols, sizes):
        col.frombytes(rest[at:at + size])
        at += size
    return Chunk(rows, *cols)


def rows_of(chunk: Chunk, widths: list[int]):
    """The rows of a chunk, as lists."""
    rows = chunk.rows
    at, end = 0, len(rows)
    for _ in range(len(chunk.fps)):
        w = widths[rows[at]] if at < end else 0
        if not w or at + w > end:
            raise OSError("a chunk of the search holds a row of an unknown shape")
        yield rows[at:at + w].tolist()
        at += w


def kept_rows(chunk: Chunk, keep, idx, widths: list[int]) -> Chunk:
    """The rows of `chunk` that `keep` (a mask; `idx`, its positions) marks,
    with their fingerprints, copied as arrays rather than row by row."""
    rows = np.frombuffer(chunk.rows, dtype=np.uint32)
    if len(set(widths)) == 1:  # one shape: rows of one width
        lens = np.full(len(chunk.fps), widths[0], dtype=np.int64)
    else:
        each, at, end = [], 0, len(chunk.rows)
        while at < end:
            w = widths[chunk.rows[at]]
            each.append(w)
            at += w
        lens = np.array(each, dtype=np.int64)
    out_rows, out_fps = array("I"), array("Q")
    out_rows.frombytes(rows[np.repeat(keep, lens)].tobytes())
    out_fps.frombytes(np.frombuffer(chunk.fps, dtype=np.uint64)[idx].tobytes())
    return Chunk(out_rows, out_fps)
