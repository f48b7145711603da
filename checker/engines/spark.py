"""The `spark` engine: level-synchronous breadth-first search on PySpark.

Each level (depth k, the initial states being level 1):
  1. expand the frontier (level k) in Python workers with `mapPartitions`
     (`spark_worker.expander`): check the invariants and witnesses on each
     frontier state, call `next`, count every successor, keep one candidate
     per distinct successor per task;
  2. deduplicate the candidates by fingerprint (one shuffle), keeping the
     smallest (parent fingerprint, action), so the choice is deterministic;
  3. anti-join them against the visited set (the `fp` of levels 1..k), by a
     sort-merge join: a broadcast join would collect it into the driver;
  4. write the new states, hash-partitioned by fingerprint, with their parent
     pointers as level k+1 (`spark_checkpoint`), then update the manifest.
So every state is checked exactly once, when its level is expanded, and a
violation found at level k is reported after the whole level is expanded,
for the smallest fingerprint violating the first property (model order);
`spark_trace.rebuild` gives its shortest trace.

Statistics match `bfs`: distinct states, states generated (initial states
plus every successor, duplicates included) and depth. States cross process
boundaries only as `encoding.encode` bytes with blake2b fingerprints.

Options: `master` (default local[*]), `checkpoint` DIR (keep the run
directory; required on a cluster, where it must be shared storage),
`resume` DIR, and for the Python API `stop_after_level` (stop, incomplete,
once that many levels are complete: a kill at a known point).
"""

from __future__ import annotations

import shutil
import tempfile
import time

from ..encoding import decode, encode
from ..job import Job, Outcome, Verdict, Violation, ViolationKind
from ..errors import EngineError
from ..exploration import peak_memory_mb
from . import spark_driver
from .spark_checkpoint import (
    Manifest, check_identity, check_writable, identity, is_remote, level_path, read_manifest, write_manifest,
)
from .spark_revive import ShapeError, Shapes, class_name, resolve_class
from .spark_session import check_master, is_local, spark_session
from .spark_job import worker_job
from .spark_trace import ArrowError, rebuild
from .spark_worker import OUT_DDL, WorkerJob, expander, signed_fingerprint

# Set for the run (and restored): the dedupe shuffle hash-partitions the new level by
# fingerprint into exactly `partitions` parts, the next level's expansion tasks; small
# files are packed into few read tasks, so the visited set's many level files cost few.
SQL_CONF = {"spark.sql.shuffle.partitions": None, "spark.sql.adaptive.coalescePartitions.enabled": "false",
            "spark.sql.files.openCostInBytes": "1024"}
LEVEL_DDL = "fp long, state binary, pfp long, act binary, aname string"
OUT_COLUMNS = ("fp", "state", "pfp", "act", "aname", "note", "n")   # OUT_DDL's order


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
    below = spark_driver.threshold()
    check_master(job.options.master, resume or ckpt)   # before Spark starts, in seconds
    if resume or ckpt:
        check_writable(resume or ckpt)
    session = spark_session(job.options.master)
    root = resume or ckpt
    temporary = root is None
    if temporary:
        if not is_local(session):
            raise EngineError("engine 'spark' on a cluster needs --checkpoint DIR on storage every executor shares")
        root = tempfile.mkdtemp(prefix="txncheck-spark-")
    saved = {k: session.conf.get(k, None) for k in SQL_CONF}
    search = _Search(job, wj, session, root, manifest, below)
    try:
        for k, v in SQL_CONF.items():
            session.conf.set(k, str(search.partitions) if v is None else v)
        return search.run()
    finally:
        for k, v in saved.items():
            if v is None:
                session.conf.unset(k)
            else:
                session.conf.set(k, v)
        if temporary:
            shutil.rmtree(root, ignore_errors=True)


class _Search:
    def __init__(self, job: Job, wj: WorkerJob, session, root: str, manifest: Manifest | None,
                 below: int = spark_driver.DEFAULT_THRESHOLD) -> None:
        self.job, self.wj, self.session, self.root = job, wj, session, root
        self.m = manifest
        self.shapes = Shapes()
        if manifest is not None:
            try:
                for path, length, name in manifest.shapes:
                    self.shapes.add(tuple(path), length, resolve_class(name))
            except (ShapeError, TypeError, ValueError) as exc:
                raise EngineError(f"{root}: corrupt checkpoint manifest (shapes: {exc})") from None
        self.shapes.freeze()
        self.partitions = max(2, 2 * session.sparkContext.defaultParallelism)
        # Wall seconds per driver phase, and CPU seconds in the workers (summed over tasks).
        self.phases = {"driver": 0.0, "expand": 0.0, "dedupe+write": 0.0, "count": 0.0, "trace": 0.0}
        self.worker: dict[str, float] = {}      # expansion CPU seconds by part, in Spark's Python workers
        self.in_driver: dict[str, float] = {}   # ... and in the driver (small levels)
        self.threshold = below   # a frontier below this many states is expanded in the driver
        self.per_level: list[dict] = []   # this run's levels: depth, frontier, new, seconds, where

    def read(self, *levels: int):
        try:
            return self.session.read.schema(LEVEL_DDL).parquet(*[level_path(self.root, k) for k in levels])
        except Exception as exc:  # AnalysisException: a level directory that is not Parquet
            raise EngineError(f"{self.root}: unreadable checkpoint level ({_first_line(exc)})") from None

    # -- level 1 ------------------------------------------------------------
    def start(self) -> None:
        rows: dict[int, tuple] = {}
        generated = 0
        for s0 in self.job.spec.init_states():
            generated += 1
            data = encode(s0)
            fp = signed_fingerprint(s0)
            if fp not in rows:
                rows[fp] = (fp, data, None, None, None)
                self.learn(s0)
        self.write_level(1, list(rows.values()))
        self.m = Manifest(job=identity(self.wj), levels=[len(rows)] if rows else [], generated=generated,
                          witnesses={w: False for w in self.wj.witnesses}, done=not rows,
                          shapes=self.shape_records())
        self.shapes.freeze()
        if rows:
            write_manifest(self.root, self.m)

    # -- one level ----------------------------------------------------------
    def expand(self, k: int):
        """Expand level k, in the driver when its frontier is below the
        threshold (`spark_driver`), else on Spark. Returns a violation or
        None; on None, level k+1 is written and the manifest updated."""
        m = self.m
        pending = tuple(w for w, found in m.witnesses.items() if not found)
        t = time.monotonic()
        where = "driver" if m.levels[k - 1] < self.threshold else "spark"
        if where == "driver":
            result = self.expand_in_driver(k, pending)
        else:
            result = self.expand_on_spark(k, pending)
        if isinstance(result, Violation):
            self.per_level.append({"depth": k, "frontier": m.levels[k - 1], "new": None,
                                   "seconds": round(time.monotonic() - t, 3), "where": where})
            return result
        gen, per_action = result
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
        write_manifest(self.root, m)
        self.per_level.append({"depth": k, "frontier": m.levels[k - 1], "new": n_new,
                               "generated": sum(gen.values()),
                               "seconds": round(time.monotonic() - t, 3), "where": where})
        return None

    def notes(self, rows, k: int, timing: dict):
        """Read the expansion's note rows (OUT_DDL order): successors generated
        per action, then the level's violation if any. Returns (gen, violation)."""
        m = self.m
        gen: dict[str, int] = {}
        bad: dict[str | None, int] = {}
        for fp, state, _pfp, _act, aname, note, n in rows:
            if note == "generated":
                gen[aname] = gen.get(aname, 0) + n
            elif note in ("violation", "deadlock"):
                prop = aname if note == "violation" else None
                if prop not in bad or fp < bad[prop]:
                    bad[prop] = fp
            elif note == "witness":
                m.witnesses[aname] = True
            elif note == "shape":
                self.learn_record(decode(bytes(state)), n, aname)
            elif note == "timing":
                timing[aname] = timing.get(aname, 0.0) + n / 1e6
            elif note == "shape-conflict":
                raise EngineError(f"engine 'spark' cannot rebuild the states of spec {self.wj.spec}: {aname}")
        self.shapes.freeze()
        if bad:
            t = time.monotonic()
            try:
                return gen, self.violation(k, bad)
            finally:
                self._lap("trace", t)
        return gen, None

    def expand_in_driver(self, k: int, pending):
        """One task over the whole (small) frontier, in this process; the
        candidates already seen at levels 1..k are dropped by a scan of the
        levels' fp column; the rest is level k+1."""
        t = time.monotonic()
        try:
            frontier = list(spark_driver.read_frontier(level_path(self.root, k)))
        except (ValueError, OSError, ArrowError()) as exc:
            raise self.damaged(k, exc) from None
        cand, notes = [], []
        for row in expander(self.wj, pending, self.shapes)(iter(frontier)):
            (cand if row[5] is None else notes).append(row)
        del frontier
        gen, violation = self.notes(notes, k, self.in_driver)
        if violation is not None:
            self._lap("driver", t)
            return violation
        try:
            seen = spark_driver.visited_among([level_path(self.root, j) for j in range(1, k + 1)],
                                              [r[0] for r in cand])
        except (ValueError, OSError, ArrowError()) as exc:
            raise self.damaged(k, exc) from None
        new = [r[:5] for r in cand if r[0] not in seen]
        self.write_level(k + 1, new)
        per_action: dict[str, int] = {}
        for r in new:
            per_action[r[4]] = per_action.get(r[4], 0) + 1
        self._lap("driver", t)
        return gen, per_action

    def write_level(self, k: int, rows: list) -> None:
        spark_driver.write_level(level_path(self.root, k), rows, self.partitions)

    def damaged(self, k: int, exc: Exception) -> Exception:
        if isinstance(exc, OSError) and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            return exc   # a fault of the disk: exit 3
        return EngineError(f"{self.root}: cannot read the checkpoint at level {k} ({_first_line(exc)[:200]})")

    def expand_on_spark(self, k: int, pending):
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        frontier = self.read(k).select("fp", "state")
        rdd = frontier.rdd.mapPartitions(expander(self.wj, pending, self.shapes))
        succ = self.session.createDataFrame(rdd, OUT_DDL, verifySchema=False).persist(StorageLevel.MEMORY_AND_DISK)
        t = time.monotonic()
        try:
            rows = succ.where(F.col("note").isNotNull()).select(*OUT_COLUMNS).collect()
            gen, violation = self.notes(rows, k, self.worker)
            self._lap("expand", t)
            if violation is not None:
                return violation
            t = time.monotonic()
            cand = (succ.where(F.col("note").isNull()).groupBy("fp")
                    .agg(F.min(F.struct("pfp", "act", "aname", "state")).alias("c"))
                    .select("fp", "c.state", "c.pfp", "c.act", "c.aname"))
            visited = self.read(*range(1, k + 1)).select("fp").hint("merge")   # never broadcast
            new = cand.join(visited, "fp", "left_anti")
            new.write.mode("overwrite").parquet(level_path(self.root, k + 1))
        finally:
            succ.unpersist()
        t = self._lap("dedupe+write", t)
        per_action = self.level_counts(k + 1)
        self._lap("count", t)
        return gen, per_action

    # -- state classes (spark_revive) -----------------------------------------
    def learn(self, s) -> None:
        try:
            self.shapes.learn(s)
        except ShapeError as exc:
            raise EngineError(f"engine 'spark' cannot rebuild the states of spec {self.wj.spec}: {exc}") from None

    def learn_record(self, path, length: int, name: str) -> None:
        try:
            self.shapes.add(tuple(path), length, resolve_class(name))
        except ShapeError as exc:
            raise EngineError(f"engine 'spark' cannot rebuild the states of spec {self.wj.spec}: {exc}") from None

    def shape_records(self) -> list:
        return [[list(p), n, class_name(c)] for p, n, c in self.shapes.records()]

    def level_counts(self, k: int) -> dict[str, int]:
        """New states per action name at level k: read from the Parquet files
        on the driver when they are local, else by a Spark job."""
        if is_local(self.session) and "://" not in self.root:
            import pyarrow.dataset as ds

            names = ds.dataset(level_path(self.root, k), format="parquet").to_table(columns=["aname"]).column(0)
            return {str(r["values"]): int(r["counts"]) for r in names.value_counts().to_pylist()}
        return {r.aname: r["count"] for r in self.read(k).groupBy("aname").count().collect()}

    def unreadable(self, exc: Exception, k: int) -> Exception:
        """A failed Spark job: a damaged checkpoint (resume) is bad input, one
        line; anything else, including an exception in the spec, goes up as is."""
        from pyspark.errors import PythonException

        if isinstance(exc, (EngineError, PythonException, KeyboardInterrupt)) or not self.job.options.resume:
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
        """The shortest path to state `fp` of level k (spark_trace.rebuild)."""
        return rebuild(self.job.spec, self.root, k, fp, self.damaged)

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
                    violation = self.expand(k)
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
        except KeyboardInterrupt:
            incomplete = "interrupted"
        seconds = time.monotonic() - t0
        if progress is not None:
            progress.done()
        m.seconds += seconds
        if self.root and m.levels and violation is None:
            write_manifest(self.root, m)

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
                             "checkpoint": self.job.options.checkpoint or self.job.options.resume}},
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
