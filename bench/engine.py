"""Throughput of the generic bfs engine on TwoPhase (6 and 7 RMs).

Each configuration runs in a fresh subprocess, so peak RSS is its own.
Prints a Markdown table: distinct and generated states, seconds,
distinct/s, generated/s and peak memory.

    .venv/bin/python bench/engine.py            # 6 and 7 RMs
    .venv/bin/python bench/engine.py 5 6 7 8    # other sizes
    .venv/bin/python bench/engine.py --no-graph # parent pointers only
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.spec.classic.twophase import TwoPhase
n, keep = int(sys.argv[1]), sys.argv[2] == "1"
spec = TwoPhase(rm=n)
o = bfs.run(Job(spec=spec, properties=spec.invariants, deadlock=True, keep_graph=keep))
print(json.dumps({"rm": n, "verdict": o.verdict, "distinct": o.distinct_states, "generated": o.states_generated,
                  "depth": o.depth, "seconds": o.seconds, "peak_mb": o.peak_memory_mb}))
"""


def main(argv: list[str]) -> None:
    keep = "--no-graph" not in argv
    sizes = [int(a) for a in argv if a.isdigit()] or [6, 7]
    print(f"bfs engine, TwoPhase, {'state graph kept' if keep else 'parent pointers only'}, one core")
    print()
    print("| RMs | distinct | generated | depth | seconds | distinct/s | generated/s | peak MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), "1" if keep else "0"],
                             capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        s = r["seconds"]
        print(f"| {n} | {r['distinct']:,} | {r['generated']:,} | {r['depth']} | {s:.2f} | "
              f"{r['distinct'] / s:,.0f} | {r['generated'] / s:,.0f} | {r['peak_mb']:,.0f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
