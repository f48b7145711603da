"""What the `spark` engine runs in Python workers: one BFS level's expansion.

A worker gets the job as plain values (`WorkerJob`: where the spec's code
comes from, variant, constants, property and witness names), rebuilds the
spec (`spark/ship.py`: by name, or from its shipped files) and compiles the
invariants once per worker process; the state classes arrive as names
(`revive.ClassNames`), which it resolves after loading the spec.

`Expansion` expands frontier states a chunk at a time: it rebuilds each
state (`spark.codec.FieldCodec.unpack`), judges it (`verdicts.Verdicts`: the
invariants and the pending witnesses), calls `next`, counts every successor
(duplicates included) and keeps, per distinct successor of the chunk that is
not itself in the chunk, the smallest (parent fingerprint, encoded action).
Those candidates leave as one Arrow table per owning partition
(`spark.level.owner`), with their fingerprint computed here, once; so
duplicates and self-loops inside a chunk never reach the shuffle. Its
`notes()` are the task's findings, plain values:

    generated   action name -> successors generated
    bad         property (None: deadlock) -> the smallest violating frontier fingerprint
    witnesses   the witnesses that hold in some frontier state
    shapes      [path, length, class name] learned from the candidates (revive)
    conflict    why the states cannot be rebuilt, or None
    cpu         phase -> CPU seconds: unpack, check, next, pack (fingerprint, encode, tables)

`expand_task` and `merge_task` are the two halves of a level on Spark (see
`spark.py`): tables cross the shuffle as Arrow IPC streams, never pickled
objects. Both run with the cyclic GC off, as bfs does (`gc_paused`: states
are acyclic, and a collection would rescan every live candidate).
"""

from __future__ import annotations

import copy
import os
import sys
import time
from dataclasses import dataclass

from ...encoding import EncodingError, encode
from ...errors import explained
from ...exploration import gc_paused
from . import level as spark_level
from .codec import FieldCodec
from ...revive import ClassNames, ShapeError, Shapes
from .ship import SpecSource, spec_class

CHUNK = 100_000   # frontier states per chunk: bounds a task's memory; the larger, the fewer duplicates leave it


@dataclass(frozen=True)
class WorkerJob:
    """Everything a worker needs to rebuild the job; plain values only."""

    spec: str         # the model's name for it (messages, a checkpoint's identity)
    variant: str
    constants: tuple  # sorted (name, value) pairs
    properties: tuple[str, ...]
    witnesses: tuple[str, ...]
    deadlock: bool
    z3_eval: bool
    source: SpecSource   # how a worker imports the spec class


_CACHE: dict = {}  # WorkerJob -> _Compiled, one per worker process


class _Compiled:
    def __init__(self, wj: WorkerJob) -> None:
        from ...job import Job

        from ...spec_errors import guard, own_failure, spec_code_error

        cls = spec_class(wj.source)
        user = not cls.__module__.startswith("txncheck.")
        try:
            spec = cls(wj.variant, **dict(wj.constants))
        except BaseException as exc:   # its setup, here (it ran in the driver): a file it reads is missing, say
            if not (user and own_failure(exc)):
                raise
            raise spec_code_error(cls, exc, "constructing the spec (setup) on a Spark executor") from exc
        if user:   # a user's spec: its bugs named in one line, as in bfs
            from ....spec.registry import Resolved

            spec = guard(spec, Resolved(cls, "shipped", False, getattr(sys.modules[cls.__module__], "__file__", "")))
        job = Job(
            spec=spec,
            properties={n: spec.invariants[n] for n in wj.properties},
            witnesses={n: spec.witnesses[n] for n in wj.witnesses},
            z3_eval=wj.z3_eval,
        )
        self.spec = spec
        self.names = ClassNames(cls)
        self.check = job.invariant_checker()
        self.witness_check = job.witness_checker(wj.witnesses) if wj.witnesses else None


def compiled(wj: WorkerJob) -> _Compiled:
    c = _CACHE.get(wj)
    if c is None:
        c = _CACHE[wj] = _Compiled(wj)
    return c


class Expansion:
    def __init__(self, wj: WorkerJob, pending: tuple[str, ...], shapes: Shapes, partitions: int) -> None:
        from ...verdicts import Verdicts

        c = compiled(wj)
        self.spec, self.deadlock, self.partitions, self.names = c.spec, wj.deadlock, partitions, c.names
        self.pending = set(pending)
        self.verdicts = Verdicts(c.spec, c.check, c.witness_check if self.pending else None, self.pending)
        self.learner = copy.deepcopy(shapes)
        self.codec = FieldCodec(shapes, self.learner)
        self.actions: dict = {}   # action -> [encoded, name, generated]
        self.bad: dict = {}
        self.found: list[str] = []
        self.conflict: str | None = None
        self.cpu = {"unpack": 0.0, "check": 0.0, "next": 0.0, "pack": 0.0}

    def unpack(self, states: list[bytes]) -> list:
        """Frontier states from their packed bytes (EncodingError: damaged)."""
        t0 = time.thread_time()
        unpack = self.codec.unpack
        frontier = [unpack(b) for b in states]
        self.cpu["unpack"] += time.thread_time() - t0
        return frontier

    def chunk(self, fps: list[int], frontier: list) -> list[tuple[int, object]]:
        """Expand one chunk of frontier states (`unpack`ed); (owner,
        candidates table) for each partition that gets some."""
        clock = time.thread_time
        cpu = self.cpu
        t1 = clock()
        verdicts, bad, pending = self.verdicts, self.bad, self.pending
        for fp, s in zip(fps, frontier):
            prop, holds = verdicts(s)
            if prop is not None and (prop not in bad or fp < bad[prop]):
                bad[prop] = fp
            if holds and pending:
                for w in holds:
                    if w in pending:
                        pending.discard(w)
                        self.found.append(w)
        t2 = clock()
        try:
            best = self._successors(fps, frontier)
        except Exception as exc:   # a user spec's bug: its guard names it (spec_errors), else as it is
            why = explained(self.spec, exc)
            if why is exc:
                raise
            raise why from exc
        t3 = clock()
        out = self._tables(best)
        t4 = clock()
        cpu["check"] += t2 - t1
        cpu["next"] += t3 - t2
        cpu["pack"] += t4 - t3
        return out

    def _successors(self, fps: list[int], frontier: list) -> dict:
        """Successor -> (smallest parent fp, encoded action, name), the chunk's own states left out."""
        bad, nxt, actions, deadlock = self.bad, self.spec.next, self.actions, self.deadlock
        best: dict = {}
        for fp, s in zip(fps, frontier):
            n = 0
            for a, t in nxt(s):
                n += 1
                ab = actions.get(a)
                if ab is None:
                    ab = actions[a] = [encode(a), a[0], 0]
                ab[2] += 1
                cur = best.get(t)
                if cur is None or (cur[0] >= fp and (cur[0] > fp or ab[0] < cur[1])):
                    best[t] = (fp, ab[0], ab[1])
            if n == 0 and deadlock and (None not in bad or fp < bad[None]):
                bad[None] = fp
        for s in frontier:   # a successor in the chunk itself is never new
            best.pop(s, None)
        return best

    def _tables(self, best: dict) -> list[tuple[int, object]]:
        P = self.partitions
        cols: list[list[list]] = [[[], [], [], [], []] for _ in range(P)]
        pack = self.codec.pack
        try:
            for t, (pfp, act, name) in best.items():
                fp, data = pack(t)
                c = cols[fp % P]
                c[0].append(fp)
                c[1].append(data)
                c[2].append(pfp)
                c[3].append(act)
                c[4].append(name)
        except ShapeError as exc:
            self.conflict = str(exc)
            return []
        return [(j, spark_level.table(c)) for j, c in enumerate(cols) if c[0]]

    def notes(self) -> dict:
        return {
            "generated": _by_name(self.actions),
            "bad": dict(self.bad),
            "witnesses": list(self.found),
            "shapes": [[list(p), n, self.names.name(c)] for p, n, c in self.learner.new],
            "conflict": self.conflict,
            "cpu": dict(self.cpu),
        }


def _by_name(actions: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, name, n in actions.values():
        out[name] = out.get(name, 0) + n
    return out


# -- the two halves of a level on Spark ----------------------------------------------------

def to_ipc(t) -> bytes:
    """An Arrow IPC stream of `t`, its buffers LZ4-compressed: a chunk's
    candidates share most of their fields, so the shuffle moves and stores a
    fifth of their size (PIP-473 at the standard bounds, level 10: 95 bytes
    a candidate, 514 uncompressed)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes):
    import pyarrow as pa

    t = pa.ipc.open_stream(data).read_all()
    if not t.schema.equals(spark_level.schema()):
        raise ValueError("a candidates table of another layout")
    return t


def failure(exc: BaseException, k: int) -> dict | None:
    """A failed read or write of the level files, as a note the driver turns
    into one line: a disk that refuses a write is an environment fault, a
    file that does not read as a level is a damaged checkpoint; None for
    anything else (a spec's error goes up as it is)."""
    import pyarrow as pa

    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    if isinstance(exc, OSError) and exc.errno is not None and not isinstance(exc, FileNotFoundError):
        return {"fault": os.strerror(exc.errno)}
    if isinstance(exc, (OSError, ValueError, EncodingError, pa.ArrowException)):
        return {"damaged": f"level {k}: {first}"}
    return None


def _chunks(batches):
    """The frontier rows of `batches`, CHUNK at a time (the more a chunk
    holds, the fewer duplicate candidates leave it)."""
    fps: list[int] = []
    states: list[bytes] = []
    for f, s in batches:
        fps += f
        states += s
        while len(fps) >= CHUNK:
            yield fps[:CHUNK], states[:CHUNK]
            fps, states = fps[CHUNK:], states[CHUNK:]
    if fps:
        yield fps, states


def expand_rows(e: Expansion, batches, k: int):
    """Expand the frontier rows of `batches` (of level k) with `e`; yields
    (owner, table). Returns None, or a `failure` if a read failed."""
    chunks = _chunks(batches)
    while True:
        try:
            fps, states = next(chunks)
            frontier = e.unpack(states)
        except StopIteration:
            break
        except Exception as exc:
            bad = failure(exc, k)
            if bad is None:
                raise
            return bad
        yield from e.chunk(fps, frontier)
    return None


def expand_task(wj: WorkerJob, pending: tuple[str, ...], records: list, root: str, k: int, partitions: int,
                ranges: list):
    """mapPartitions over the task numbers: task i expands the states of
    level k in `ranges[i]` (`spark.level.ranges`); yields (owner, ("c", IPC
    table)) and, once, (i mod partitions, ("n", notes)). `records` are the
    classes learned so far, by name (`ClassNames.records`): a class object
    of a spec loaded from a file would not unpickle on an executor."""

    def run(numbers):
        with gc_paused():
            yield from _expand(numbers)

    def _expand(numbers):
        shapes = compiled(wj).names.shapes(records)
        for i in numbers:
            e = Expansion(wj, pending, shapes, partitions)
            lo, hi = ranges[i]
            it = expand_rows(e, spark_level.range_batches(root, k, partitions, lo, hi, CHUNK), k)
            while True:
                try:
                    o, t = next(it)
                except StopIteration as stop:
                    yield i % partitions, ("n", {**e.notes(), **(stop.value or {})})
                    break
                yield o, ("c", to_ipc(t))

    return run


def merge_task(root: str, k: int):
    """mapPartitionsWithIndex after the shuffle: write part j of level k+1
    (`spark.level.merge`); yields the notes that came with it, then
    ("merged", {"new": {action name: new states}, "cpu": seconds, "failure":
    a `failure` or None, "candidates": rows received, "bytes": their size})."""

    def run(j, pairs):
        with gc_paused():
            yield from _merge(j, pairs)

    def _merge(j, pairs):
        tables, notes, size = [], [], 0
        for _, (kind, payload) in pairs:
            if kind == "c":
                tables.append(from_ipc(payload))
                size += len(payload)
            else:
                notes.append(payload)
        t0 = time.thread_time()
        try:
            counts, bad = spark_level.merge(root, k, j, tables), None
        except Exception as exc:
            bad = failure(exc, k)
            if bad is None:
                raise
            counts = {}
        yield from (("notes", n) for n in notes)
        yield "merged", {"new": counts, "cpu": time.thread_time() - t0, "failure": bad,
                         "candidates": sum(t.num_rows for t in tables), "bytes": size}

    return run
