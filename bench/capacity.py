"""The fingerprint search's capacity: memory and disk per visited state, and
what more workers buy, side by side in one run.

    .venv/bin/python bench/capacity.py                       # pip473-fixed-standard to 20 M states, 1 and 2 workers
    .venv/bin/python bench/capacity.py --model M --max-states N --workers 1,2,4
    .venv/bin/python bench/capacity.py --model M --max-depth D   # every state to depth D

Each run is a separate `txncheck check --json --no-graph` process (so its
CPU time and peak RSS are its own), capped at --max-states (or stopped after
--max-depth levels). Figures:

- memory per state: the run's peak RSS (coordinator plus workers) above
  the idle baseline (python, z3 and txncheck loaded), over its distinct
  states. With workers the shared fingerprint table is counted once per
  process that maps it, so the one-process row is the memory figure;
- table, trail, level disk: the visited set's slots, the parent-pointer
  files at the end, and the most one level with its proposals took on
  disk, each per distinct state;
- speed-up: states generated per wall second against the first row's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TXNCHECK = [sys.executable, "-m", "txncheck.checker.cli"]
STANDARD = ROOT / "models" / "pip473" / "fixed-standard.toml"


def run(model: Path, flags: list[str]) -> dict:
    cmd = [*TXNCHECK, "check", str(model), "--json", "--quiet", "--no-graph", "--fingerprints",
           "--out", tempfile.mkdtemp(prefix="txncheck-bench-out-"), *flags]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode == 2 or not p.stdout.strip():
        raise SystemExit(f"capacity: {' '.join(cmd)}: {p.stderr.strip().splitlines()[-1:] or p.returncode}")
    r = json.loads(p.stdout)
    r["wall"] = wall
    r["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=STANDARD)
    ap.add_argument("--max-states", type=int, default=20_000_000)
    ap.add_argument("--max-depth", type=int, help="stop after this many levels instead (every state to that depth)")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    args = ap.parse_args(argv)
    base = run(ROOT / "models" / "classic" / "tcommit-rm3.toml", [])["peak_memory_mb"]
    # --max-depth replaces the model file's max_depth, which would stop a --max-states run early
    limit = (["--max-depth", str(args.max_depth)] if args.max_depth
             else ["--max-depth", "1000", "--max-states", str(args.max_states)])
    print(f"{args.model.relative_to(ROOT) if args.model.is_relative_to(ROOT) else args.model}: "
          f"{' '.join(limit)}; {os.cpu_count()} cores; idle baseline RSS {base:.0f} MiB\n")
    print("| workers | verdict | distinct | generated | depth | wall s | CPU s | generated/s | speed-up "
          "| peak RSS MiB | memory B/state | table B/state | trail B/state | level disk B/state | field values |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    first = None
    for w in [int(x) for x in args.workers.split(",")]:
        r = run(args.model, limit + ["--workers", str(w)])
        n = r["distinct_states"]
        rate = r["states_generated"] / r["wall"]
        first = first or rate
        s = r.get("search", {})
        per = lambda b: f"{b / n:,.1f}" if n else "-"  # noqa: E731
        print(f"| {w} | {r['verdict']} | {n:,} | {r['states_generated']:,} | {r['depth']} | {r['wall']:,.1f} "
              f"| {r['cpu']:,.1f} | {rate:,.0f} | {rate / first:.2f}x | {r['peak_memory_mb']:,.0f} "
              f"| {per((r['peak_memory_mb'] - base) * 2**20)} | {per(s.get('table_bytes', 0))} "
              f"| {per(s.get('trail_bytes', 0))} | {per(s.get('level_disk_bytes', 0))} | {s.get('field_values', 0):,} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
