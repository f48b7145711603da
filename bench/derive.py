"""What deriving the relation from the spec's code costs (ADR 0011): per
model, the CPU seconds of the derivation and of `txncheck prove` with it,
each in a fresh process (so no derivation is cached), and, for a spec that
still has a hand-written relation (PIP-473), the same prove with that one,
and the ratio the issue bounds (derived: derivation + proof, at most twice
the hand-written proof's time).

    .venv/bin/python bench/derive.py [MODEL ...]     # default: the proofs of docs/performance.md

Run it on a quiet machine: CPU seconds barely depend on load, but a busy
machine's caches do.
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
MODELS = ["models/classic/tcommit-rm3.toml", "models/classic/twophase-rm3.toml", "models/classic/twophase-rm6.toml",
          "examples/paxos_commit/prove-typeok.toml", "models/pip473/fixed-standard.toml"]

CHILD = r"""
import json, sys, time
from txncheck.checker.model import load_model
from txncheck.checker.symbolic import load
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
else:
    derive, acts, cells = 0.0, None, None
r = prove_model(path)
print(json.dumps({"derive": derive, "total": time.process_time() - t0, "verdict": r.verdict,
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=MODELS)
    args = ap.parse_args()
    print("| model | relation | actions | cells | derive CPU s | prove CPU s (with derive) | process CPU s | verdict |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for path in args.models:
        rows = {}
        for mode in ("derived", "as loaded"):
            r = rows[mode] = child(path, mode)
            if "error" in r:
                print(f"| {path} | {mode} | | | | | | error: {r['error']} |", flush=True)
                continue
            print(f"| {path} | {mode} | {r['actions']} | {r['cells']} | {r['derive']:.2f} | {r['total']:.2f} | "
                  f"{r['process']:.2f} | {r['verdict']} |", flush=True)
        d, h = rows["derived"], rows["as loaded"]
        if "error" not in d and "error" not in h and h["total"] > 0:
            print(f"|  | ratio derived / as loaded (process CPU) | | | | | {d['process'] / h['process']:.2f} | |",
                  flush=True)


if __name__ == "__main__":
    main()
