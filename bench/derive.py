"""What deriving the relation from the spec's code costs (ADR 0011): per
model, the CPU seconds of the derivation and of `txncheck prove` with it,
each in a fresh process (so no derivation is cached), and, for a spec that
still has a hand-written relation (PIP-473), the same prove with that one,
and the ratio the issue bounds (derived: derivation + proof, at most twice
the hand-written proof's time).

    .venv/bin/python bench/derive.py [MODEL ...]     # default: the proofs of docs/performance.md
    .venv/bin/python bench/derive.py --render        # the doc's table from the record alone

The figures are kept as a record, bench/records/derive.json (a run replaces
the rows of the models it measured), from which docs/performance.md's table
is written (tests/test_docs_records.py checks that they agree). Run it on a
quiet machine: CPU seconds barely depend on load, but a busy machine's
caches do.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# PIP-473's fixed-standard joins these once its derivation ends in a bench's time (its row in the
# record gives today's); `bench/derive.py models/pip473/fixed-standard.toml` measures it alone
MODELS = ["models/classic/tcommit-rm3.toml", "models/classic/twophase-rm3.toml", "models/classic/twophase-rm6.toml",
          "examples/paxos_commit/prove-typeok.toml"]

CHILD = r"""
import json, resource, sys, time
from txncheck.checker.model import load_model
from txncheck.checker.symbolic import load
from txncheck.checker.symbolic.induction import outside_types
from txncheck.checker.symbolic.run import prove_model
path, mode = sys.argv[1], sys.argv[2]
t0 = time.process_time()
if mode == "derived":
    real = load.relation_for
    load.relation_for = lambda spec, derived=False: real(spec, derived=True)
    import txncheck.checker.symbolic.run as run
    run.relation_for = load.relation_for
    spec = load_model(path).instantiate()
    rel = load.relation_for(spec)
    derive = time.process_time() - t0
    acts, cells = len(rel.actions()), len(rel.schema.symbols)
    hand = load.hand_written(type(spec)) is not None
else:
    derive, acts, cells, hand = 0.0, None, None, True
r = prove_model(path)
p = r.proof
why = ([f"CTI at {p.cti.action[0]}{dict(p.cti.action[1])}: {', '.join(p.cti.failing)}"] if p and p.cti else []) \
    + (outside_types(r.system.relation.schema, p.cti.after) if p and p.cti else []) \
    + ([f"unknown: {p.unknown}"] if p and p.unknown else []) + list(r.unproved)
print(json.dumps({"derive": derive, "total": time.process_time() - t0, "verdict": r.verdict, "why": why,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "hand_written": hand,
                  "actions": acts if acts is not None else len(r.system.acts),
                  "cells": cells if cells is not None else len(r.system.frame("s").keys)}))
"""


def child(path: str, mode: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", CHILD, path, mode], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT.parent)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    doc["process"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)   # with startup
    return doc


DOC = ROOT / "docs" / "performance.md"
RECORD = ROOT / "bench" / "records" / "derive.json"
BEGIN, END = "<!-- derive: written by bench/derive.py from bench/records/derive.json -->", "<!-- /derive -->"
MODES = ("derived", "as loaded")


def measure(models: list[str], old: dict) -> dict:
    from records import provenance

    rows = {r["model"]: r for r in old.get("rows", [])}
    commit = provenance(ROOT)["commit"]     # each row's own: a run replaces some rows only
    for path in models:
        row = rows[path] = {"model": path, "commit": commit}
        for mode in MODES:   # "as loaded" only where a hand-written relation is loaded by default
            if mode == "derived" or row["derived"].get("hand_written"):
                r = row[mode] = child(path, mode)
                print(f"{path} {mode}: {r}", flush=True)
    order = [m for m in MODELS if m in rows] + sorted(m for m in rows if m not in MODELS)
    return {"rows": [rows[m] for m in order]}


def _cell(r: dict, key: str, fmt: str = "{}") -> str:
    return fmt.format(r[key]) if r.get(key) is not None else ""


def render(record: dict) -> str:
    from records import measured_at

    lines = [BEGIN, "", f"{measured_at(record)} (each row at its commit); CPU seconds of one process each (the derivation, then "
             "`prove` with it; a spec that still has a hand-written relation also proved with that one), and the "
             "ratio issue 52 bounds by 2.", "",
             "| model | commit | relation | actions | cells | derive CPU s | derive + prove CPU s | process CPU s | "
             "peak MB | verdict |", "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for row in record["rows"]:
        for mode in MODES:
            r = row.get(mode)
            if r is None:
                continue
            if "error" in r:
                lines.append(f"| {row['model']} | {row.get('commit', '')} | {mode} | | | | | | | error: {r['error']} |")
                continue
            lines.append(f"| {row['model']} | {row.get('commit', '')} | {mode} | {r['actions']} | {r['cells']} | {r['derive']:.1f} | "
                         f"{r['total']:.1f} | {r['process']:.1f} | {_cell(r, 'peak_mb')} | {r['verdict']} |")
        for why in row["derived"].get("why", []):   # what a verdict short of "proved" left undecided
            lines.append(f"|  | | not decided: {why.replace('|', '/')} | | | | | | | |")
        d, h = row["derived"], row.get("as loaded")
        if h is not None and "error" not in d and "error" not in h and h["process"] > 0:
            lines.append(f"|  | | ratio derived / as loaded | | | | | {d['process'] / h['process']:.2f} | | |")
    return "\n".join(lines + ["", END])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=MODELS)
    ap.add_argument("--render", action="store_true", help="only write the table from the record")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from records import record_and_write

    record_and_write(ROOT, RECORD, DOC, BEGIN, END, render,
                     None if args.render else lambda old: measure(args.models, old))
    print(render(json.loads(RECORD.read_text())))


if __name__ == "__main__":
    main()
