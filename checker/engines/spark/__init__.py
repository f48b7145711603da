"""The `spark` engine (`--engine spark`): level-synchronous BFS on PySpark.

`engine.py` runs a search (the driver's loop, `run`); `job.py` and `ship.py`
prepare what the executors need (the job, a spec's code); `worker.py` is
the executors' expansion and merge; `driver.py`, `level.py`, `codec.py` and
`trace.py` hold the levels (Parquet parts, the field codec) and rebuild a
trace; `checkpoint.py` the resumable runs; `session.py` and `probe.py` the
Spark session and the cluster's master. A decoded state's classes are
rebuilt by checker/revive.py, which the parallel engine's moves share.
"""

from .engine import run

__all__ = ["run"]
