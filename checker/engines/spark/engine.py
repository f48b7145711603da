"""The `spark` engine: level-synchronous breadth-first search on PySpark.

The run's states are owned by P partitions (`fp mod P`, P fixed for the
run: the session's cores, or TXNCHECK_SPARK_PARTITIONS), and level k is one
Parquet file per partition (`spark/level.py`). Each level is one Spark job of
two stages:
  1. one task per core, each expanding a range of the frontier's packed
     states (level k; `spark.level.ranges`) in chunks (`spark.worker.Expansion`):
     it checks the invariants and pending witnesses on each frontier state, calls `next`,
     counts every successor and keeps one candidate per distinct successor
     per chunk, fingerprinted once and packed a field at a time
     (`spark/codec.py`), and sends each partition its candidates as Arrow
     tables (`partitionBy`, the only shuffle), its findings (`notes`) along;
  2. P tasks, one per partition: keep the smallest (parent fingerprint,
     action) per fingerprint, drop those the partition's part of levels 1..k
     holds (a hash lookup in its fingerprints: never a join over Parquet
     rows, never in the driver), write part j of level k+1.
The driver then reads the notes and updates the manifest (`spark/checkpoint.py`).
So every state is checked exactly once, when its level is expanded, and a
violation found at level k is reported after the whole level is expanded,
for the smallest fingerprint violating the first property (model order);
`spark.trace.rebuild` gives its shortest trace. A frontier below a threshold
is expanded in the driver by the same code (`spark/driver.py`).

Statistics match `bfs`: distinct states, states generated (initial states
plus every successor, duplicates included) and depth. States cross process
boundaries only as `encoding.encode` bytes (field by field) with blake2b
fingerprints.

Options: `master` (default local[*]), `checkpoint` DIR (keep the run
directory; required on a cluster, where it must be shared storage),
`resume` DIR, and for the Python API `stop_after_level` (stop, incomplete,
once that many levels are complete: a kill at a known point).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from ... import failures
from ...errors import EngineError, EnvironmentFault
from ...exploration import gc_paused, peak_memory_mb
from ...job import Job, Outcome, Verdict, Violation, ViolationKind
from ...revive import ClassNames, ShapeError, Shapes
from . import driver as spark_driver, level as spark_level
from .checkpoint import Manifest, check_identity, check_writable, identity, is_remote, read_manifest, write_manifest
from .codec import FieldCodec
from .job import worker_job
from .session import check_master, is_local, spark_session
from .ship import from_executor
from .trace import ArrowError, rebuild
from .worker import WorkerJob, expand_task, merge_task


def run(job: Job) -> Outcome:
    job.validate("spark")  # --checkpoint and --resume name one directory
    wj = worker_job(job)
    ckpt, resume = job.options.checkpoint, job.options.resume
    for d in (ckpt, resume):
        if d and is_remote(d):
            raise EngineError(f"{d}: checkpoints on remote storage are not supported; use a path every executor mounts")
    manifest = None
    if resume:
        manifest = read_manifest(resume)  # fail on a bad checkpoint before starting Spark
        check_identity(resume, manifest, identity(wj))
    below, asked = spark_driver.threshold(), spark_driver.asked_partitions()
    root = resume or ckpt
    check_master(job.options.master, root)   # before Spark starts, in seconds
    if root:
        check_writable(root)
    session = spark_session(job.options.master)
    temporary = root is None
    if root is None:
        if not is_local(session):
            raise EngineError("engine 'spark' on a cluster needs --checkpoint DIR on storage every executor shares")
        root = tempfile.mkdtemp(prefix="txncheck-spark-")
    try:
        return _Search(job, wj, session, root, manifest, below, asked).run()
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)


class _Search:
    def __init__(self, job: Job, wj: WorkerJob, session, root: str, manifest: Manifest | None,
                 below: int = spark_driver.DEFAULT_THRESHOLD, partitions: int | None = None) -> None:
        self.job, self.wj, self.session, self.root = job, wj, session, root
        self.m = manifest
        self.names = ClassNames(type(job.spec))
        self.shapes = Shapes().freeze()
        if manifest is not None:
            try:
                self.shapes = self.names.shapes(manifest.shapes)
            except (ShapeError, TypeError, ValueError) as exc:
                raise EngineError(f"{root}: corrupt checkpoint manifest (shapes: {exc})") from None
        if manifest is not None:
            self.partitions = manifest.partitions   # a resumed run keeps its owners
        else:
            self.partitions = partitions or max(2, session.sparkContext.defaultParallelism)
        # Wall seconds per driver phase; CPU seconds of the expansion by part, on Spark's Python
        # workers (summed over tasks) and in the driver (small levels).
        self.phases = {"driver": 0.0, "spark": 0.0, "trace": 0.0}
        self.worker: dict[str, float] = {}
        self.in_driver: dict[str, float] = {}
        self.threshold = below   # a frontier below this many states is expanded in the driver
        self.per_level: list[dict] = []   # this run's levels: depth, frontier, new, seconds, where, ...
        self.shuffled: dict = {}          # the last level's candidates (and bytes shuffled, on Spark)

    # -- level 1 ------------------------------------------------------------
    def start(self) -> None:
        learner = Shapes()
        codec = FieldCodec(self.shapes, learner)
        P = self.partitions
        cols: list[list[list]] = [[[], [], [], [], []] for _ in range(P)]
        seen: set[int] = set()
        generated = 0
        for s0 in self.job.spec.init_states():
            generated += 1
            try:
                fp, data = codec.pack(s0)
            except ShapeError as exc:
                raise EngineError(f"engine 'spark' cannot rebuild the states of spec {self.wj.spec}: {exc}") from None
            if fp not in seen:
                seen.add(fp)
                c = cols[spark_level.owner(fp, P)]
                for col, v in zip(c, (fp, data, None, None, None)):
                    col.append(v)
        self.learn_records([[list(p), n, self.names.name(c)] for p, n, c in learner.new])
        self.write(lambda: self._write_first(cols))
        m = self.m = Manifest(job=identity(self.wj), levels=[len(seen)] if seen else [], generated=generated,
                              witnesses={w: False for w in self.wj.witnesses}, done=not seen,
                              shapes=self.shape_records(), partitions=P)
        if seen:
            self.write(lambda: write_manifest(self.root, m))

    def _write_first(self, cols) -> None:
        spark_level.new_level(self.root, 1)
        for j, c in enumerate(cols):
            spark_level.write_part(self.root, 1, j, spark_level.by_state(spark_level.table(c)))

    def write(self, do):
        """A write of the checkpoint: a disk that refuses it is an environment fault (exit 3)."""
        try:
            return do()
        except OSError as exc:   # pyarrow's IOError is one
            raise EnvironmentFault(f"{self.root}: cannot write checkpoint ({_why(exc)})") from None

    # -- one level ----------------------------------------------------------
    def expand(self, k: int, m: Manifest):
        """Expand level k, in the driver when its frontier is below the
        threshold (`spark/driver.py`), else on Spark. Returns a violation or
        None; on None, level k+1 is written and the manifest `m` updated."""
        pending = tuple(w for w, found in m.witnesses.items() if not found)
        t = time.monotonic()
        where = "driver" if m.levels[k - 1] < self.threshold else "spark"
        self.write(lambda: spark_level.new_level(self.root, k + 1))
        self.shuffled = {}
        if where == "driver":
            with gc_paused():
                notes, per_action = self.expand_in_driver(k, pending)
            cpu = self.in_driver
        else:
            notes, per_action = self.expand_on_spark(k, pending)
            cpu = self.worker
        self._lap(where, t)
        gen, violation = self.read_notes(notes, k, cpu, m)
        if violation is not None:
            self.per_level.append({"depth": k, "frontier": m.levels[k - 1], "new": None,
                                   "seconds": round(time.monotonic() - t, 3), "where": where})
            return violation
        m.expanded = k
        m.generated += sum(gen.values())
        for name in sorted(set(gen) | set(per_action)):
            c = m.coverage.setdefault(name, {"generated": 0, "distinct": 0})
            c["generated"] += gen.get(name, 0)
            c["distinct"] += per_action.get(name, 0)
        n_new = sum(per_action.values())
        if n_new:
            m.levels.append(n_new)
        else:
            m.done = True
        m.shapes = self.shape_records()
        self.write(lambda: write_manifest(self.root, m))
        self.per_level.append({"depth": k, "frontier": m.levels[k - 1], "new": n_new,
                               "generated": sum(gen.values()), **self.shuffled,
                               "seconds": round(time.monotonic() - t, 3), "where": where})
        return None

    def read_notes(self, notes: list[dict], k: int, cpu: dict, m: Manifest):
        """The tasks' findings (`spark.worker.Expansion.notes`): successors
        generated per action, witnesses, classes learned, CPU seconds; and
        the level's violation, if any. Returns (generated, violation)."""
        gen: dict[str, int] = {}
        bad: dict[str | None, int] = {}
        for n in notes:   # the failures first: they void the rest
            if "fault" in n:
                raise EnvironmentFault(f"{self.root}: cannot write checkpoint ({n['fault']})")
            if "damaged" in n:
                raise EngineError(f"{self.root}: cannot read the checkpoint at {n['damaged']}")
        for n in notes:
            for name, x in n["generated"].items():
                gen[name] = gen.get(name, 0) + x
            for prop, fp in n["bad"].items():
                if prop not in bad or fp < bad[prop]:
                    bad[prop] = fp
            for w in n["witnesses"]:
                m.witnesses[w] = True
            for phase, x in n["cpu"].items():
                cpu[phase] = cpu.get(phase, 0.0) + x
            if n["conflict"] is not None:
                raise EngineError(f"engine 'spark' cannot rebuild the states of spec {self.wj.spec}: {n['conflict']}")
            self.learn_records(n["shapes"])
        if bad:
            t = time.monotonic()
            try:
                return gen, self.violation(k, bad)
            finally:
                self._lap("trace", t)
        return gen, None

    def expand_in_driver(self, k: int, pending):
        """The whole (small) frontier in this process, by the executors' code."""
        notes, tables = spark_driver.expand(self.wj, pending, self.shapes, self.root, k, self.partitions)
        if notes["bad"] or notes["conflict"] or "damaged" in notes:
            return [notes], {}
        counts, failed = spark_driver.merge(self.root, k, tables)
        self.shuffled = {"candidates": sum(t.num_rows for ts in tables for t in ts)}
        return [notes, *([failed] if failed else [])], counts

    def expand_on_spark(self, k: int, pending):
        """One Spark job: expand the frontier's parts, shuffle the candidates
        to their owners, merge each partition (see the module doc)."""
        P, root = self.partitions, self.root
        sc = self.session.sparkContext
        E = max(1, sc.defaultParallelism)
        try:
            split = spark_level.ranges(root, k, P, E)
        except (ValueError, OSError, ArrowError()) as exc:
            raise self.damaged(k, exc) from None
        rows = (sc.parallelize(range(E), E)
                .mapPartitions(expand_task(self.wj, pending, self.shape_records(), root, k, P, split))
                .partitionBy(P, _identity)
                .mapPartitionsWithIndex(merge_task(root, k))
                .collect())
        notes, counts = [], dict[str, int]()
        shuffled = self.shuffled = {"candidates": 0, "shuffle_bytes": 0}
        for kind, r in rows:
            if kind == "notes":
                notes.append(r)
                continue
            for name, n in r["new"].items():
                counts[name] = counts.get(name, 0) + n
            self.worker["merge"] = self.worker.get("merge", 0.0) + r["cpu"]
            shuffled["candidates"] += r["candidates"]
            shuffled["shuffle_bytes"] += r["bytes"]
            if r["failure"]:
                notes.append(r["failure"])
        return notes, counts

    def damaged(self, k: int, exc: Exception) -> Exception:
        """The error for level k's files, unreadable while a trace is rebuilt."""
        if isinstance(exc, OSError) and not isinstance(exc, (FileNotFoundError, NotADirectoryError)) \
                and exc.errno is not None:
            return EnvironmentFault(f"{self.root}: cannot read the checkpoint ({_why(exc)})")
        return EngineError(f"{self.root}: cannot read the checkpoint at level {k} ({_first_line(exc)[:200]})")

    # -- state classes (revive) -----------------------------------------
    def learn_records(self, records: list) -> None:
        """Classes a task (or level 1) met, into the tree the next level's tasks get."""
        try:
            for path, length, name in records:
                self.shapes.add(tuple(path), length, self.names.resolve(name))
        except ShapeError as exc:
            raise EngineError(f"engine 'spark' cannot rebuild the states of spec {self.wj.spec}: {exc}") from None
        self.shapes.freeze()

    def shape_records(self) -> list:
        return self.names.records(self.shapes)

    def unreadable(self, exc: BaseException, k: int) -> BaseException:
        """A failed Spark job: a damaged checkpoint (resume) is bad input, one
        line; anything else, including an exception in the spec, goes up as is."""
        from pyspark.errors import PythonException

        if isinstance(exc, PythonException):
            return from_executor(exc, self.wj.source)
        if isinstance(exc, (EngineError, KeyboardInterrupt)) or not self.job.options.resume:
            return exc
        return EngineError(f"{self.root}: cannot read the checkpoint at level {k} ({_first_line(exc)[:200]})")

    def _lap(self, phase: str, since: float) -> float:
        now = time.monotonic()
        self.phases[phase] += now - since
        return now

    def violation(self, k: int, bad: dict) -> Violation:
        for prop in self.wj.properties:
            if prop in bad:
                return Violation(prop, ViolationKind.INVARIANT, self.trace(k, bad[prop]))
        return Violation("Deadlock", ViolationKind.DEADLOCK, self.trace(k, bad[None]))

    def trace(self, k: int, fp: int):
        """The shortest path to state `fp` of level k (spark.trace.rebuild)."""
        return rebuild(self.job.spec, self.root, k, fp, self.partitions, self.damaged)

    # -- the search ---------------------------------------------------------
    def run(self) -> Outcome:
        job = self.job
        t0 = time.monotonic()
        deadline = t0 + job.max_seconds if job.max_seconds else None
        stop_after = job.options.stop_after_level
        progress = job.progress
        violation = None
        incomplete = None
        if self.m is None:
            self.start()
        m = self.m
        assert m is not None, "start made it"
        generated0 = m.generated
        try:
            while not m.done:
                k = len(m.levels)
                if job.max_states is not None and m.distinct >= job.max_states:
                    incomplete = f"max-states {job.max_states} reached"
                elif deadline is not None and time.monotonic() >= deadline:
                    incomplete = f"max-seconds {job.max_seconds:g} reached"
                elif stop_after is not None and k >= stop_after:
                    incomplete = f"stopped after level {k}"
                if incomplete:
                    break
                try:
                    violation = self.expand(k, m)
                except Exception as exc:
                    raise self.unreadable(exc, k) from None
                if violation is not None:
                    break
                if progress is not None:
                    elapsed = time.monotonic() - t0
                    frontier = m.levels[k] if len(m.levels) > k else 0
                    rate = (m.generated - generated0) / elapsed if elapsed else 0.0
                    progress.line(
                        f"depth {k}: frontier {m.levels[k - 1]:,} -> {frontier:,} new, {m.distinct:,} distinct, "
                        f"{m.generated:,} generated, {rate:,.0f} states/s, "
                        f"{self.per_level[-1]['seconds']:.2f} s ({self.per_level[-1]['where']})"
                    )
        except BaseException as exc:  # an interrupt, also inside a Z3 call (failures.as_interrupt)
            if not failures.stops_the_search(exc):
                raise
            incomplete = "interrupted"
        seconds = time.monotonic() - t0
        if progress is not None:
            progress.done()
        m.seconds += seconds
        if self.root and m.levels and violation is None:
            self.write(lambda: write_manifest(self.root, m))

        violations = [violation] if violation else []
        if violation is None and incomplete is None:
            violations += [Violation(w, ViolationKind.WITNESS) for w, ok in m.witnesses.items() if not ok]
        verdict = Verdict.VIOLATION if violations else (Verdict.INCOMPLETE if incomplete else Verdict.OK)
        depth = len(m.levels) if violation is None else violation.length
        return Outcome(
            engine="spark",
            verdict=verdict,
            distinct_states=m.distinct,
            states_generated=m.generated,
            depth=depth,
            seconds=m.seconds,
            violations=violations,
            coverage=dict(sorted(m.coverage.items())),
            peak_memory_mb=peak_memory_mb(),
            incomplete_reason=incomplete,
            witnesses_found=dict(m.witnesses),
            extra={"spark": {"master": self.session.sparkContext.master, "levels": list(m.levels),
                             "phase_seconds": {p: round(x, 3) for p, x in self.phases.items()},
                             "worker_seconds": {p: round(x, 3) for p, x in self.worker.items()},
                             "driver_expansion_seconds": {p: round(x, 3) for p, x in self.in_driver.items()},
                             "driver_below": self.threshold, "per_level": self.per_level,
                             "partitions": self.partitions,
                             "checked_depth": m.expanded if violation is None else None,
                             "checkpoint": self.job.options.checkpoint or self.job.options.resume}},
        )


def _identity(j: int) -> int:
    return j


def _why(exc: OSError) -> str:
    """The system's words for an OSError (pyarrow's text names its own source files)."""
    return os.strerror(exc.errno) if exc.errno else _first_line(exc)[:200]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
