"""The spark engine's levels, one line each, and the median seconds per level.

    .venv/bin/python bench/spark_levels.py models/classic/twophase-rm6.toml
    .venv/bin/python bench/spark_levels.py MODEL.toml --master 'local[2]' --driver-below 0   # every level on Spark

Prints, per level: depth, frontier, new states, seconds, where it was
expanded (driver or spark); then the counts, the engine seconds, the median
seconds per level, and where Spark's time went (driver phases, worker CPU).
`--driver-below N` sets TXNCHECK_SPARK_DRIVER_BELOW for the run. Timing
lives here, never in a test; the machine's other load shows in every figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-below", type=int, default=None, metavar="N",
                    help="expand frontiers below N states in the driver (default: the engine's)")
    args = ap.parse_args()
    if args.driver_below is not None:
        os.environ["TXNCHECK_SPARK_DRIVER_BELOW"] = str(args.driver_below)

    from txncheck.checker.api import check_model

    o = check_model(args.model, engine="spark", keep_graph=False, options={"master": args.master}).outcome
    sp = o.extra["spark"]
    print(f"{args.model} on {sp['master']}, driver below {sp['driver_below']:,} states")
    print(f"{'depth':>5} {'frontier':>9} {'new':>9} {'seconds':>8}  where")
    for x in sp["per_level"]:
        new = "" if x["new"] is None else f"{x['new']:,}"
        print(f"{x['depth']:>5} {x['frontier']:>9,} {new:>9} {x['seconds']:>8.3f}  {x['where']}")
    secs = [x["seconds"] for x in sp["per_level"]]
    print(f"{o.verdict}: {o.distinct_states:,} distinct, {o.states_generated:,} generated, depth {o.depth}; "
          f"engine {o.seconds:.1f} s; median {statistics.median(secs) if secs else 0:.3f} s per level "
          f"over {len(secs)} levels")
    print("driver phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in sp["phase_seconds"].items()))
    for name, key in (("Spark's Python workers", "worker_seconds"), ("driver expansion", "driver_expansion_seconds")):
        if sp.get(key):
            print(f"{name} (CPU s): " + ", ".join(f"{k} {v:.1f}" for k, v in sp[key].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
