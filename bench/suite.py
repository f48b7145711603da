"""The benchmark suite: fixed configurations, one Markdown table.

    .venv/bin/python bench/suite.py                 # every configuration
    .venv/bin/python bench/suite.py --only twophase-rm7
    .venv/bin/python bench/suite.py --list

Each run is a separate `txncheck check --json --no-graph` process, so its
peak RSS and CPU time are its own. Figures: distinct states, states
generated, depth, wall and CPU seconds, states generated per CPU second
(the process's whole CPU time, start-up included, so a shared machine's
load does not distort it), peak RSS, the RSS above an idle baseline per
million distinct states, and the reduction ratio (unreduced distinct /
distinct) against the unreduced run of the same model. Every run is capped
at --max-seconds (default 600).

The configurations are fixed here; PIP-473 ones run when its model files
exist (bench/models/*larger*.toml are the larger bounds, kept out of the
gate because they take tens of minutes, and are run with fingerprints,
which they need for memory), and --model adds
any model file. The Spark engine runs PIP-473 `fixed` at the standard
bounds (under 3 minutes here), without the TC failover, and with a second
crash (pip473-fixed-crashes2, one step larger, which bfs also runs).
Spark's JVM and Python workers are not this process's children, so its
rows have no CPU figures and the driver's RSS only. The `workers2` rows
(`--workers 2`) count the forked workers' CPU time, and their RSS is the sum
of the coordinator's and the workers' peaks. The reduction ratio is
against the first complete run of the configuration without --symmetry or
--por. Timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TXNCHECK = [sys.executable, "-m", "txncheck.checker.cli"]

TWOPHASE = """spec = "twophase"
properties = ["TPTypeOK", "TCConsistent"]
deadlock = true
[constants]
rm = {rm}
"""

WORKERS = {"workers2": ["--workers", "2"]}  # bfs on both cores (engines/parallel/)
# name -> (model file text or path under models/, the runs: label -> extra flags)
CONFIGS: dict[str, tuple[str, dict[str, list[str]]]] = {
    "twophase-rm7": (TWOPHASE.format(rm=7), {
        "unreduced": [], "compact": ["--compact"], "fingerprints": ["--fingerprints"],
        "symmetry": ["--symmetry"], "por": ["--por"], **WORKERS}),
    "twophase-rm8": (TWOPHASE.format(rm=8), {
        "unreduced": [], "symmetry": ["--symmetry"], **WORKERS}),
}
PIP473 = {  # the standard bounds: the shipped models
    "pip473-merged": "pip473/merged.toml",
    "pip473-fixed": "pip473/fixed.toml",
}
LARGER = "*larger*.toml"  # larger bounds: bench/models/, not in the gate (they take tens of minutes)
# The standard plans give each txn its own workload, so --symmetry does not apply there.
PIP473_RUNS = {"unreduced": [], "compact": ["--compact"], "fingerprints": ["--fingerprints"], "por": ["--por"],
               **WORKERS}
# (the larger model files switch symmetry and fingerprints on themselves)
LARGER_RUNS = {"fingerprints": ["--no-symmetry", "--fingerprints"],
               "symmetry+fingerprints": ["--symmetry", "--fingerprints"],
               "symmetry+workers2": ["--symmetry", "--workers", "2"]}
SPARK = {"spark": ["--engine", "spark"]}
# name -> (model under models/, {bound line: replacement}, runs)
DERIVED = {
    "pip473-fixed-nofailover-spark": ("pip473/fixed.toml", {"failovers = 1": "failovers = 0"},
                                      {"bfs": [], **SPARK}),
    "pip473-fixed-spark": ("pip473/fixed.toml", {}, SPARK),
    # one step beyond the standard bounds that both engines finish: a second crash
    "pip473-fixed-crashes2": ("pip473/fixed.toml", {"crashes = 1": "crashes = 2"},
                              {"unreduced": [], "fingerprints": ["--fingerprints"], **WORKERS, **SPARK}),
}


def whole(text: str) -> str:
    """A shipped model's text without its `max_depth`: the suite measures the
    whole state space, where the gate may stop at a depth (fixed.toml does:
    its proof covers every depth)."""
    return re.sub(r"(?m)^max_depth = .*\n", "", text)


def configurations(extra=()) -> dict[str, tuple[Path, dict[str, list[str]]]]:
    out = {}
    tmp = Path(tempfile.mkdtemp(prefix="txncheck-bench-"))
    for name, (text, runs) in CONFIGS.items():
        p = tmp / f"{name}.toml"
        p.write_text(text)
        out[name] = (p, runs)
    for name, rel in PIP473.items():
        p = ROOT / "models" / rel
        if p.exists():
            q = tmp / f"{name}.toml"
            q.write_text(whole(p.read_text()))
            out[name] = (q, PIP473_RUNS)
    for p in sorted((ROOT / "bench" / "models").glob(LARGER)):
        out[p.stem] = (p, LARGER_RUNS)
    for name, (rel, edits, runs) in DERIVED.items():
        text = whole((ROOT / "models" / rel).read_text())
        for old, new in edits.items():
            text = text.replace(old, new)
        p = tmp / f"{name}.toml"
        p.write_text(text)
        out[name] = (p, runs)
    for p in extra:
        out[Path(p).stem] = (Path(p), {**PIP473_RUNS, "symmetry": ["--symmetry"], "symmetry+por": ["--symmetry", "--por"]})
    return out


def run_one(model: Path, flags: list[str], max_seconds: float) -> dict:
    cmd = [*TXNCHECK, "check", str(model), "--json", "--quiet", "--no-graph",
           "--out", tempfile.mkdtemp(prefix="txncheck-bench-out-"), "--max-seconds", str(max_seconds), *flags]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode == 2:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit 2"}
    r = json.loads(p.stdout)
    r["cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="configuration name (repeatable)")
    ap.add_argument("--runs", help="comma-separated run labels to keep (e.g. unreduced,symmetry)")
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--model", action="append", default=[], help="also run this model file (repeatable)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    configs = configurations(args.model)
    if args.list:
        for name, (p, runs) in configs.items():
            print(f"{name}: {p.name} [{', '.join(runs)}]")
        return 0
    keep = set(args.runs.split(",")) if args.runs else None
    baseline = _baseline()
    print(f"idle baseline RSS: {baseline:.0f} MiB (python, z3 and txncheck loaded)\n")
    print("| configuration | run | verdict | distinct | generated | depth | wall s | CPU s | generated/CPU s "
          "| peak RSS MiB | MiB / M states | reduction |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (model, runs) in configs.items():
        if args.only and name not in args.only:
            continue
        unreduced = None  # the first complete run without --symmetry or --por
        for label, flags in runs.items():
            if keep and label not in keep:
                continue
            r = run_one(model, flags, args.max_seconds)
            if "error" in r:
                print(f"| {name} | {label} | error: {r['error']} | | | | | | | | | |")
                continue
            d = r["distinct_states"]
            plain = not {"symmetry", "por"} & set(r.get("reductions") or {})  # as the report says
            if plain and unreduced is None and r["verdict"] != "incomplete":
                unreduced = d
            # per million states; blank for small runs, where the baseline is all there is
            per_m = f"{(r['peak_memory_mb'] - baseline) / d * 1e6:,.0f}" if d >= 50_000 else ""
            ratio = f"{unreduced / d:.1f}x" if unreduced and not plain else ""
            if r["engine"] == "spark":
                # Spark's JVM and Python workers are not children this process
                # can account for: no CPU time, and the RSS is the driver's.
                cpu_s, rate_s = "", ""
                rss, per_m = f"{r['peak_memory_mb']:.0f} (driver)", ""
            else:
                cpu = r["cpu_seconds"]  # the whole process, start-up included
                cpu_s, rate_s = f"{cpu:.1f}", f"{r['states_generated'] / cpu:,.0f}" if cpu > 0 else ""
                rss = f"{r['peak_memory_mb']:.0f}"
            print(f"| {name} | {label} | {r['verdict']} | {d:,} | {r['states_generated']:,} | {r['depth']} "
                  f"| {r['seconds']:.1f} | {cpu_s} | {rate_s} | {rss} | {per_m} | {ratio} |", flush=True)
    return 0


def _baseline() -> float:
    """Peak RSS of a trivial check: the interpreter, z3 and txncheck."""
    r = run_one(ROOT / "models" / "classic" / "tcommit-rm3.toml", [], 60)
    return float(r["peak_memory_mb"])


if __name__ == "__main__":
    sys.exit(main())
