"""Small BFS levels of the `spark` engine, expanded in the driver.

A level sent to Spark costs a job (two stages and a shuffle) whatever its
size, so a model of many small levels paid a cluster round trip per level
(docs/performance.md, "Spark levels", has the measured cost). A frontier
below `threshold()` states is expanded here instead, by the very code the
executors run: `spark.worker.Expansion` over each part of the frontier, then
`spark.level.merge` for each partition of the next level. So the levels are
the same files whichever side wrote them, and a resumed run or a later Spark
level reads them alike.

Memory: the driver holds one small frontier and its candidates (both
bounded by the threshold); the visited set is read one partition at a time,
its fingerprints only.

The threshold is `TXNCHECK_SPARK_DRIVER_BELOW` (default 10,000 frontier
states; 0 sends every level to Spark, as the cluster tests do). The run's
partition count (`asked_partitions`) is read here too.
"""

from __future__ import annotations

import os

from . import level as spark_level
from ...revive import Shapes
from .worker import CHUNK, Expansion, WorkerJob, expand_rows, failure

DEFAULT_THRESHOLD = 10_000
ENV = "TXNCHECK_SPARK_DRIVER_BELOW"
PARTITIONS_ENV = "TXNCHECK_SPARK_PARTITIONS"


def _whole(name: str, hint: str) -> int | None:
    from ...errors import EngineError

    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:
        raise EngineError(f"{name}={raw[:40]!r}: expected a whole number {hint}")
    return int(raw)


def threshold() -> int:
    n = _whole(ENV, "of states (0: every level on Spark)")
    return DEFAULT_THRESHOLD if n is None else n


def asked_partitions() -> int | None:
    """P for a new run as `TXNCHECK_SPARK_PARTITIONS` asks, or None: the
    session's cores (at least 2). A merge task holds its partition's
    candidates of one level, so a level too large for an executor's memory
    wants a larger P."""
    from ...errors import EngineError
    from .checkpoint import MAX_PARTITIONS

    n = _whole(PARTITIONS_ENV, f"of partitions, 1 to {MAX_PARTITIONS}")
    if n is not None and not 1 <= n <= MAX_PARTITIONS:
        raise EngineError(f"{PARTITIONS_ENV}={n}: expected a whole number of partitions, 1 to {MAX_PARTITIONS}")
    return n


def expand(wj: WorkerJob, pending: tuple[str, ...], shapes: Shapes, root: str, k: int, partitions: int):
    """Level k in this process: (notes, per-partition candidate tables). One
    `Expansion` over the whole frontier, as one task would."""
    e = Expansion(wj, pending, shapes, partitions)
    tables: list[list] = [[] for _ in range(partitions)]
    batches = (b for j in range(partitions) for b in spark_level.part_batches(root, k, j, CHUNK))
    it = expand_rows(e, batches, k)
    while True:
        try:
            o, t = next(it)
        except StopIteration as stop:
            return {**e.notes(), **(stop.value or {})}, tables
        tables[o].append(t)


def merge(root: str, k: int, tables: list[list]) -> tuple[dict[str, int], dict | None]:
    """Write level k+1 from the candidates of `expand`: (new states per
    action, a `spark.worker.failure` or None)."""
    counts: dict[str, int] = {}
    for j, ts in enumerate(tables):
        try:
            part = spark_level.merge(root, k, j, ts)
        except Exception as exc:
            bad = failure(exc, k)
            if bad is None:
                raise
            return counts, bad
        for name, n in part.items():
            counts[name] = counts.get(name, 0) + n
    return counts, None
