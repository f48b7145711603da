"""TLC and txncheck side by side on PaxosCommit (tlaplus/Examples'
transaction_commit/PaxosCommit.cfg; txncheck checks examples/paxos_commit/,
the same spec written against the spec API and loaded by path).

TLC is not part of txncheck: build tla2tools.jar from tlaplus/tlaplus and
fetch PaxosCommit.tla, PaxosCommit.cfg and TCommit.tla (which it instances)
from tlaplus/Examples into one folder, outside the repository (docs/
performance.md says how, and at which commits they were measured).

Each run is a separate process: TLC with -workers 1 and 2; txncheck in
process and with --workers 2 (fingerprints, no state graph, as TLC). For
each: wall seconds, CPU seconds (the process and its children, from wait4:
the JVM's threads, txncheck's forked workers), distinct and generated
states and depth, and the ratio of wall and of CPU time to TLC with as many
workers. The runs alternate between the two tools, and a mismatch in the
counts is printed. On a shared machine, compare CPU seconds; wall time is
an indication only.

    .venv/bin/python bench/tlc_paxos.py --tlc-jar /work/tlc/dist/tla2tools.jar --tla /work/tlc/paxos
    .venv/bin/python bench/tlc_paxos.py ... --workers 2          # only the 2-worker pair
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "paxos_commit" / "paxos_commit.toml"
TLC_FILES = ("PaxosCommit.tla", "PaxosCommit.cfg", "TCommit.tla")
HEADER = "| tool | workers | distinct | generated | depth | wall s | CPU s | wall / TLC | CPU / TLC |"
ALIGN = "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
TLC_FIGURES = {  # TLC's summary lines
    "distinct": re.compile(r"([\d,]+) distinct states found"),
    "generated": re.compile(r"([\d,]+) states generated"),
    "depth": re.compile(r"depth of the complete state graph search is (\d+)"),
}


def timed(cmd: list[str], cwd: Path) -> tuple[str, float, float, int]:
    """(stdout, wall s, CPU s of the process and its waited-for children, exit code)."""
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return out.read(), wall, ru.ru_utime + ru.ru_stime, p.returncode


def run_tlc(jar: Path, tla: Path, workers: int, java: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="tlc-paxos-") as d:
        for f in TLC_FILES:
            shutil.copy(tla / f, d)
        text, wall, cpu, rc = timed([java, "-XX:+UseParallelGC", "-cp", str(jar), "tlc2.TLC", "-workers",
                                     str(workers), "-metadir", str(Path(d) / "states"), "-config",
                                     "PaxosCommit.cfg", "PaxosCommit.tla"], Path(d))
    if rc != 0:
        sys.exit(f"TLC failed (exit {rc}):\n{text[-2000:]}")
    got = {}
    for k, pat in TLC_FIGURES.items():
        m = pat.findall(text)
        got[k] = int(m[-1].replace(",", "")) if m else None
    return {"tool": "TLC", "workers": workers, "wall": wall, "cpu": cpu, **got}


def run_txncheck(workers: int) -> dict:
    cmd = [sys.executable, "-m", "txncheck.checker.cli", "check", str(MODEL), "--json", "--quiet", "--no-graph",
           "--fingerprints"] + (["--workers", str(workers)] if workers > 1 else [])
    text, wall, cpu, rc = timed(cmd, ROOT)
    if rc != 0:
        sys.exit(f"txncheck failed (exit {rc}):\n{text[-2000:]}")
    r = json.loads(text)
    return {"tool": "txncheck" + (f" --workers {workers}" if workers > 1 else " (in process)"), "workers": workers,
            "wall": wall, "cpu": cpu, "distinct": r["distinct_states"], "generated": r["states_generated"],
            "depth": r["depth"]}


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tlc-jar", type=Path, required=True, help="tla2tools.jar built from tlaplus/tlaplus")
    ap.add_argument("--tla", type=Path, required=True, help=f"the folder holding {', '.join(TLC_FILES)}")
    ap.add_argument("--workers", type=int, action="append", help="worker counts to compare (default 1 and 2)")
    ap.add_argument("--java", default="java")
    args = ap.parse_args(argv)
    missing = [f for f in TLC_FILES if not (args.tla / f).is_file()]
    if missing or not args.tlc_jar.is_file():
        sys.exit(f"missing: {', '.join(missing) or args.tlc_jar}")
    print("PaxosCommit.cfg (2 RMs, 3 acceptors, Ballot = {0, 1}); TLC's figures: 1,321,761 distinct, "
          "16,959,159 generated, depth 28")
    print()
    print(HEADER)
    print(ALIGN)
    for w in args.workers or [1, 2]:
        tlc = run_tlc(args.tlc_jar, args.tla, w, args.java)
        ours = run_txncheck(w)
        for r in (tlc, ours):
            print(f"| {r['tool']} | {r['workers']} | {r['distinct']:,} | {r['generated']:,} | {r['depth']} | "
                  f"{r['wall']:.1f} | {r['cpu']:.1f} | {r['wall'] / tlc['wall']:.2f} | {r['cpu'] / tlc['cpu']:.2f} |",
                  flush=True)
        if (tlc["distinct"], tlc["generated"], tlc["depth"]) != (ours["distinct"], ours["generated"], ours["depth"]):
            print(f"counts differ at {w} workers!")


if __name__ == "__main__":
    main(sys.argv[1:])
