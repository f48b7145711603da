"""What each reduction buys on the standard PIP-473 models, side by side.

    .venv/bin/python bench/reductions.py                    # both standard models, each to its gate depth
    .venv/bin/python bench/reductions.py --model M --max-depth D

Each model file is checked with the owed-answer reduction and pruning
on, then with one reduction switched off (or, for --por, on) at a time, to the same depth (every state to it:
a bounded run gives equal verdicts at equal depth, so the states are
comparable), each in its own `txncheck check --json --no-graph
--fingerprints` process. The factor is distinct states without the
reduction over distinct states with it. The reductions are the spec's
reduction bounds and the engine's switches; each is audited elsewhere
(`prune`: tests/test_pruning_audit.py; `replies`:
tests/test_reduction_audit.py; `--por`: tests/test_pip473_por.py).
Symmetry is not a row: these models give each txn its own sends and acks,
and `--symmetry` refuses them in one line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capacity  # noqa: E402  (its run(): one check in its own process, with its CPU time)

ROOT = Path(__file__).resolve().parent.parent
MODELS = [ROOT / "models" / "pip473" / "fixed-standard.toml", ROOT / "models" / "pip473" / "fixed-every-mechanism.toml"]

# (name, constants changed, flags, whether the row is the reduction's absence)
# every row on top of the owed-answer reduction (the first), which fixed-standard.toml leaves out
# because `txncheck prove` does not state it
OWED = {"replies": "owed"}
ROWS = [
    ("replies = owed, pruning on", OWED, [], False),
    ("replies = sent (no owed-answer reduction)", {"replies": "sent"}, [], True),
    ("prune = false (no scheduling pruning)", {**OWED, "prune": False}, [], True),
    ("--por (partial-order reduction on)", OWED, ["--por"], False),
]


def _toml(v) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def variant(model: Path, changes: dict, folder: Path) -> Path:
    """The model file with some [constants] changed (a copy in `folder`)."""
    if not changes:
        return model
    lines, section = [], None
    for ln in model.read_text().splitlines():
        if ln.startswith("["):
            section = ln.strip()
        elif section == "[constants]" and ln.split("=")[0].strip() in changes:
            continue  # replaced below
        lines.append(ln)
        if ln.strip() == "[constants]":
            lines += [f"{k} = {_toml(v)}" for k, v in changes.items()]
    out = folder / f"{model.stem}-{'-'.join(changes)}.toml"
    out.write_text("\n".join(lines) + "\n")
    return out


def run(model: Path, depth: int, flags: list[str]) -> dict:
    return capacity.run(model, ["--max-depth", str(depth), *flags])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, action="append", help="a model file (default: the two standard models)")
    ap.add_argument("--max-depth", type=int, help="the depth of every run (default: each model's max_depth)")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="txncheck-bench-reductions-"))
    print("| model | configuration | verdict | distinct | generated | depth | CPU s | factor |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for model in args.model or MODELS:
        depth = args.max_depth or tomllib.loads(model.read_text()).get("max_depth") or 10
        shipped = None
        for name, changes, flags, absent in ROWS:
            r = run(variant(model, changes, folder), depth, flags)
            n = r["distinct_states"]
            shipped = shipped or n
            factor = n / shipped if absent else shipped / n
            print(f"| {model.stem} | {name} | {r['verdict']} | {n:,} | {r['states_generated']:,} | {r['depth']} "
                  f"| {r['cpu']:,.1f} | {'' if not (absent or flags) else f'{factor:.2f}x'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
