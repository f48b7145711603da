"""Bytes per stored state, by visited-set mode, measured with tracemalloc.

    .venv/bin/python bench/memory.py            # TwoPhase, 6 RMs
    .venv/bin/python bench/memory.py --rm 7

Runs the exact bfs engine in process under tracemalloc and divides the
memory the finished exploration still holds (states, visited set, parent
pointers, edges) by the distinct states. tracemalloc slows the run, so
the seconds here are not throughput figures (see bench/suite.py). The
fingerprint search holds nothing once it ends (its table and rows are
gone): bench/capacity.py measures its peak memory and disk per state.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc

from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.spec.classic.twophase import TwoPhase

MODES = {
    "--compact, graph kept": ({"compact": True}, True),
    "--compact --no-graph": ({"compact": True}, False),
    "graph kept (default)": ({}, True),
    "--no-graph": ({}, False),
}


def measure(spec, options: dict, keep_graph: bool) -> tuple[int, float]:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    out = bfs.run(Job(spec=spec, properties=spec.invariants, keep_graph=keep_graph, options=options))
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    n = out.distinct_states
    del out
    return n, held / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rm", type=int, default=6)
    args = ap.parse_args(argv)
    spec = TwoPhase(rm=args.rm)
    print(f"TwoPhase, {args.rm} RMs: bytes held per distinct state after the run\n")
    print("| mode | distinct | bytes / state |")
    print("|---|---:|---:|")
    for label, (options, keep) in MODES.items():
        n, per = measure(spec, options, keep)
        print(f"| {label} | {n:,} | {per:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
