"""States moved from one worker to another at a level's end, through a file
in the search's folder.

A worker's rows are numbers of its own field values (`records.Fields`), so
a moved state travels as values: each distinct field value among the moved
rows once, in the canonical encoding (`encoding.encode`), the rows as
indexes into those values, and the classes that the encoding drops
(`revive.Shapes`), named `module:qualname`. The receiver decodes the
values (`encoding.decode` checks the bytes), finds the classes among the
modules already loaded (the workers are forks of one process; nothing is
imported), rebuilds each state, numbers it into its own `Fields` and checks
that its fingerprint is the one sent. Anything else is a damaged file, one
line. Nothing is pickled.

    magic | u32 header length | JSON header | u32 × row cells | u64 fingerprints | values

The header holds the counts and the classes; a row is its field count then
its value indexes; a value is u32 field position, u32 length, its bytes.
"""

from __future__ import annotations

import json
import os
import sys
import time
from array import array

import numpy as np

from ...encoding import EncodingError, decode, encode
from ...revive import STAR, ShapeError, Shapes, class_name
from .disk import write_file
from .records import Level, rows_of
from .wire import Given, Taken

MAGIC = b"txncheck-moved-states 1\n"
MOVE_AT = 0.02  # states move when the next level's parts cost this much apart (a fraction of the largest)
MOVE_MIN = 256  # and at least this many would move
MOVE_MAX = 1 << 17  # at most this many a level: they pass through memory as lists, about 0.5 KiB each


class MoveError(OSError):
    pass


def plan(sizes: list[int], costs: list[float], take_cost: float) -> tuple[int, int, int] | None:
    """(giver, taker, how many) to even out the next level's parts, or None:
    the worker whose part costs most gives to the one whose part costs
    least (`costs`: CPU seconds per state in the level just expanded), as
    many as make them cost the same counting `take_cost`, what the taker
    pays per state it takes, and at most `MOVE_MAX`."""
    load = [n * c for n, c in zip(sizes, costs)]
    h, lo = max(range(len(load)), key=load.__getitem__), min(range(len(load)), key=load.__getitem__)
    count = int((load[h] - load[lo]) / (costs[h] + costs[lo] + take_cost))
    if load[h] - load[lo] < MOVE_AT * load[h] or count < MOVE_MIN:
        return None
    return h, lo, min(count, MOVE_MAX)


def give(part, count: int, path: str) -> Given:
    """Move the last `count` states of a worker's next level (`part.level`:
    a run of its order, so families stay together) to the file `path`, for
    another worker's `take`. Nothing moves if a value cannot be written
    (two classes of one length at one position, or a value the encoding
    does not carry)."""
    keep = len(part.level) - count
    if count <= 0 or keep < 0:
        return {"given": 0}
    widths = part.fields.widths
    rest = Level(part.folder, f"w{part.worker}-l{part.depth}k", part.keep)
    out_rows, out_fps = [], []
    at = 0
    for chunk in part.level:
        n = len(chunk.fps)
        if at + n <= keep:
            rest.extend(type(chunk)(chunk.rows, chunk.fps))
        else:
            for i, row in enumerate(rows_of(chunk, widths)):
                if at + i < keep:
                    rest.append(row, chunk.fps[i])
                else:
                    out_rows.append(row)
                    out_fps.append(chunk.fps[i])
        at += n
    part.level = rest
    try:
        write(path, part.fields, out_rows, out_fps)
        out_rows = []
    except (ShapeError, EncodingError):
        pass
    for row, f in zip(out_rows, out_fps):  # they stay
        rest.append(row, f)
    rest.close()
    part.level_disk = rest.disk_bytes
    return {"given": len(out_fps) - len(out_rows)}


def take(part, path: str) -> Taken:
    """Add the states another worker gave (`give`) to this worker's next level."""
    cpu0 = time.process_time()
    rows, fps = read(path, part.fields)
    os.unlink(path)
    for row, f in zip(rows, fps.tolist()):
        part.level.append(row, f)
    part.level.close()
    part.level_disk = part.level.disk_bytes
    return {"taken": len(rows), "cpu": time.process_time() - cpu0, "fields": part.fields.size()}


def write(path: str, fields, rows: list[list[int]], fps) -> None:
    """Write `rows` (the giver's, numbered by `fields`) and their fingerprints."""
    shapes = Shapes()
    index: dict = {}  # (position, number) -> value index
    values = bytearray()
    cells = array("I")
    tops: set = set()
    for row in rows:
        cls, n = fields.shapes[row[0]]
        if cls is None:
            raise ShapeError("a state that is not a tuple is not moved")
        if row[0] not in tops:
            tops.add(row[0])
            shapes.learn_top(fields.state(row))
        cells.append(n)
        for i in range(n):
            k = index.get((i, row[i + 1]))
            if k is None:
                v = fields.values[i][row[i + 1]]
                shapes.learn_field(i, v)
                code = encode(v)
                k = index[(i, row[i + 1])] = len(index)
                values += i.to_bytes(4, "little") + len(code).to_bytes(4, "little") + code
            cells.append(k)
    head = json.dumps({"rows": len(rows), "cells": len(cells), "values": len(index),
                       "classes": [[list(p), n, class_name(c)] for p, n, c in shapes.records()]}).encode()
    write_file(path, [MAGIC + len(head).to_bytes(4, "little") + head, cells.tobytes(),
                      np.asarray(fps, dtype=np.uint64).tobytes(), values])


def read(path: str, fields) -> tuple[list[list[int]], np.ndarray]:
    """The moved states as rows numbered by this process's `fields`, and
    their fingerprints; `MoveError` if the file is not what `write` wrote."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return _read(data, fields)
    except (MoveError, EncodingError, ShapeError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise MoveError(f"{path}: a file of states moved between workers is damaged ({exc})") from None


def _read(data: bytes, fields):
    if not data.startswith(MAGIC):
        raise MoveError("no header")
    at = len(MAGIC)
    size = int.from_bytes(data[at:at + 4], "little")
    head = json.loads(data[at + 4:at + 4 + size])
    at += 4 + size
    n_rows, n_cells, n_values = int(head["rows"]), int(head["cells"]), int(head["values"])
    if min(n_rows, n_cells, n_values) < 0 or at + 4 * n_cells + 8 * n_rows > len(data):
        raise MoveError("counts past the end")
    cells = np.frombuffer(data, dtype="<u4", count=n_cells, offset=at).tolist()
    at += 4 * n_cells
    fps = np.frombuffer(data, dtype="<u8", count=n_rows, offset=at).astype(np.uint64)
    at += 8 * n_rows
    shapes = Shapes()
    for path, n, name in head["classes"]:
        shapes.add(tuple(STAR if p == STAR else int(p) for p in path), int(n), _loaded_class(name))
    shapes.freeze()
    values = []
    for _ in range(n_values):
        i = int.from_bytes(data[at:at + 4], "little")
        size = int.from_bytes(data[at + 4:at + 8], "little")
        if at + 8 + size > len(data):
            raise MoveError("a value past the end")
        values.append(shapes.revive_field(i, decode(data[at + 8:at + 8 + size])))
        at += 8 + size
    if at != len(data):
        raise MoveError("bytes after the values")
    rows, k = [], 0
    for fp in fps.tolist():
        n = cells[k]
        ids = cells[k + 1:k + 1 + n]
        if len(ids) != n:
            raise MoveError("a row past the end")
        k += 1 + n
        s = shapes.make_top([values[x] for x in ids])
        row = fields.row(s)
        if fields.fingerprint(row) != fp:
            raise MoveError("a state does not have its fingerprint")
        rows.append(row)
    if k != n_cells:
        raise MoveError("cells after the rows")
    return rows, fps


def _loaded_class(name: str) -> type:
    """A NamedTuple class of a module this process has loaded (`module:qualname`)."""
    if name == "builtins:tuple":
        return tuple
    mod, _, qual = str(name).partition(":")
    obj = sys.modules.get(mod)
    for part in qual.split(".") if obj is not None and qual else ():
        obj = getattr(obj, part, None)
    if not (isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_make")):
        raise MoveError(f"state class {name!r} is not a NamedTuple loaded here")
    return obj
