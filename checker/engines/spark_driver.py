"""Small BFS levels of the `spark` engine, expanded in the driver.

A level sent to Spark costs a few jobs (expand, shuffle, anti-join, write)
whatever its size, so a model of many small levels paid a cluster round trip
per level (docs/performance.md, "Spark levels", has the measured cost). A
frontier below `threshold()` states is expanded here
instead, with the very function the executors run
(`spark_worker.expander`, as one task holding the whole frontier), and the
level files are read and written with pyarrow in the checkpoint's own
layout, so the levels are the same rows whichever side wrote them and a
resumed run or a later Spark level reads them alike:

    DIR/level-NNNN/part-PPPPP.parquet   fp long, state binary, pfp long, act binary, aname string

The new level is split into the engine's partition count by fingerprint
(`fp mod partitions`), so a large level that follows still gets one task per
part. Memory: the driver holds one small frontier and its candidates (both
bounded by the threshold), and the visited set is never loaded: it is
scanned level file by level file, keeping only the candidates' fingerprints
that it contains.

The threshold is `TXNCHECK_SPARK_DRIVER_BELOW` (default 10,000 frontier
states; 0 sends every level to Spark, as the cluster tests do).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DEFAULT_THRESHOLD = 10_000
ENV = "TXNCHECK_SPARK_DRIVER_BELOW"


def threshold() -> int:
    from ..errors import EngineError

    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return DEFAULT_THRESHOLD
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:
        raise EngineError(f"{ENV}={raw[:40]!r}: expected a whole number of states (0: every level on Spark)")
    return int(raw)


def _schema():
    import pyarrow as pa

    return pa.schema([("fp", pa.int64()), ("state", pa.binary()), ("pfp", pa.int64()),
                      ("act", pa.binary()), ("aname", pa.string())])


def _files(level_dir: str) -> list[str]:
    """The level's data files, as Spark sees them (no _SUCCESS, no .crc)."""
    return sorted(str(p) for p in Path(level_dir).iterdir()
                  if p.is_file() and not p.name.startswith(("_", ".")) and p.name.endswith(".parquet"))


def _dataset(level_dirs: list[str]):
    import pyarrow.dataset as ds

    files = [f for d in level_dirs for f in _files(d)]
    return ds.dataset(files, schema=_schema(), format="parquet")


def read_frontier(level_dir: str):
    """(fp, encoded state) of every state of one level."""
    for batch in _dataset([level_dir]).to_batches(columns=["fp", "state"]):
        fps, states = batch.column(0).to_pylist(), batch.column(1).to_pylist()
        yield from zip(fps, states)


def visited_among(level_dirs: list[str], fps: list[int]) -> set[int]:
    """Those of `fps` that some level already holds: a streaming scan of the
    levels' fp column, filtered to the candidates."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if not fps:
        return set()
    want = pa.array(fps, type=pa.int64())
    seen: set[int] = set()
    for batch in _dataset(level_dirs).to_batches(columns=["fp"], filter=ds.field("fp").isin(want)):
        seen.update(batch.column(0).to_pylist())
    return seen


def parent_of(level_dir: str, fp: int):
    """(parent fp, encoded action) of state `fp` in one level, or None."""
    import pyarrow.dataset as ds

    t = _dataset([level_dir]).to_table(columns=["pfp", "act"], filter=ds.field("fp") == fp)
    if t.num_rows == 0:
        return None
    return t.column(0)[0].as_py(), t.column(1)[0].as_py()


def write_level(level_dir: str, rows: list[tuple], partitions: int) -> None:
    """Write (fp, state, pfp, act, aname) rows as one level, split by fp mod
    `partitions`; whatever a killed run left in the folder goes first."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shutil.rmtree(level_dir, ignore_errors=True)
    os.makedirs(level_dir)
    parts: list[list[tuple]] = [[] for _ in range(partitions)]
    for r in rows:
        parts[r[0] % partitions].append(r)
    schema = _schema()
    for i, part in enumerate(parts):
        if not part:
            continue
        cols = list(zip(*part))
        table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, schema)], schema=schema)
        pq.write_table(table, os.path.join(level_dir, f"part-{i:05d}.parquet"))
