"""A spec loaded by path against the same spec registered as a built-in.

A model file that names its spec by path gets a guarded spec
(checker/spec_errors.py); a built-in one does not. This runs one spec both
ways, PaxosCommit from examples/ by default, each in a fresh process (the
in-process bfs engine, fingerprints), the two ways alternating, and prints
the CPU seconds of each check (loading the model and the spec, checking
the properties' sanity and the search: the process's start-up left out)
side by side with their ratio. CPU time, not wall time, is the figure to
compare on a shared machine.

    .venv/bin/python bench/by_path.py                   # PaxosCommit, one round
    .venv/bin/python bench/by_path.py --rounds 3
    .venv/bin/python bench/by_path.py --model examples/voting/mc.toml
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAXOS = ROOT / "examples" / "paxos_commit" / "paxos_commit.toml"

HEADER = "| loaded | round | verdict | distinct | generated | depth | wall s | CPU s | peak MiB |"
ALIGN = "|---|---:|---|---:|---:|---:|---:|---:|---:|"

# The child: check the model as written (by path), or with its spec file's
# folder on sys.path and the class registered under a built-in name.
CHILD = r"""
import json, sys, time
from pathlib import Path
from txncheck.checker.api import check_model
from txncheck.checker.exploration import peak_memory_mb
from txncheck.checker.model import load_model
from txncheck.spec import registry
path, how = Path(sys.argv[1]).resolve(), sys.argv[2]
m = load_model(path)
if how == "built-in":
    file, cls = m.spec_name.rsplit(":", 1)
    file = (path.parent / file).resolve()
    sys.path.insert(0, str(file.parent))
    registry.SPECS["bench_builtin"] = f"{file.stem}:{cls}"
    m.spec_name = "bench_builtin"
found = m.resolve_spec()
assert found.builtin == (how == "built-in"), found
t0, c0 = time.monotonic(), time.process_time()
o = check_model(m, keep_graph=False, options={"fingerprints": True}).outcome
cpu = time.process_time() - c0
print(json.dumps({"verdict": o.verdict, "distinct": o.distinct_states, "generated": o.states_generated,
                  "depth": o.depth, "wall": time.monotonic() - t0, "cpu": cpu,
                  "peak_mb": peak_memory_mb()}))
"""


def run(model: Path, how: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(model), how], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{how} run failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    return json.loads(out.stdout)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=PAXOS, help="a model file whose spec is named by path")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each (median CPU reported)")
    args = ap.parse_args(argv)
    shown = args.model.resolve()
    print(f"{shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown}: "
          "bfs in process, fingerprints; CPU s of check_model")
    print()
    print(HEADER)
    print(ALIGN)
    cpu: dict[str, list[float]] = {"built-in": [], "by path": []}
    counts = set()
    for r in range(1, args.rounds + 1):
        order = ("built-in", "by path") if r % 2 else ("by path", "built-in")
        for how in order:
            x = run(args.model, how)
            cpu[how].append(x["cpu"])
            counts.add((x["verdict"], x["distinct"], x["generated"], x["depth"]))
            print(f"| {how} | {r} | {x['verdict']} | {x['distinct']:,} | {x['generated']:,} | {x['depth']} | "
                  f"{x['wall']:.1f} | {x['cpu']:.1f} | {x['peak_mb']:,.0f} |", flush=True)
    a, b = statistics.median(cpu["by path"]), statistics.median(cpu["built-in"])
    print()
    print(f"by path / built-in, median CPU s: {a:.1f} / {b:.1f} = {a / b:.3f}"
          + ("" if len(counts) == 1 else "  (the counts differ!)"))


if __name__ == "__main__":
    main(sys.argv[1:])
