"""What `txncheck prove` costs: the proofs (CPU seconds of the base case and
of the inductive step), bounded checking of the PIP-473 corpus against the
lengths bfs finds (the [expect] the gate holds bfs to), and the agreement
test's rate. One process, one core; CPU seconds, since wall time depends on
what else the machine runs.

    .venv/bin/python bench/prove.py [--only proofs|bounded|agreement]
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROOFS = ["models/classic/tcommit-rm3.toml", "models/classic/twophase-rm3.toml", "models/classic/twophase-rm6.toml",
          "examples/paxos_commit/prove-typeok.toml", "models/pip473/fixed.toml",
          "models/pip473/fixed-standard.toml"]


def proofs() -> None:
    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.run import prove_model

    print("| model | clauses | verdict | base CPU s | step CPU s | queries |")
    print("|---|---:|---|---:|---:|---:|")
    for path in PROOFS:
        m = load_model(ROOT / path)
        if path == "models/pip473/fixed.toml":   # the standard model's lemmas, at the gate's bounds
            std = load_model(ROOT / "models/pip473/fixed-standard.toml")
            m.raw["prove"] = std.raw["prove"]
        r = prove_model(m)
        p = r.proof
        print(f"| {path} | {len(p.clauses)} | {p.verdict} | {p.base_seconds:.2f} | {p.step_seconds:.2f} | {p.queries} |",
              flush=True)


def bounded() -> None:
    from txncheck.checker.symbolic.run import prove_model

    print("| corpus model | property | states (bounded) | states (bfs) | CPU s |")
    print("|---|---|---:|---:|---:|")
    for p in sorted((ROOT / "models/pip473").glob("*.toml")):
        exp = tomllib.loads(p.read_text()).get("expect", {})
        if exp.get("verdict") != "violation" or exp.get("length", 99) > 12:
            continue
        t0 = time.process_time()
        b = prove_model(p, depth=12).bounded
        cpu = time.process_time() - t0
        print(f"| {p.stem} | {b.violated} | {b.length} | {exp['length']} | {cpu:.2f} |", flush=True)


def agreement(states: int = 2000) -> None:
    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.agreement import Agreement, walk
    from txncheck.checker.symbolic.load import relation_for

    print("| model | distinct states | disagreements | CPU s | ms per state |")
    print("|---|---:|---:|---:|---:|")
    for path in ("models/classic/twophase-rm6.toml", "examples/paxos_commit/paxos_commit.toml",
                 "models/pip473/fixed-standard.toml", "models/pip473/merged.toml"):
        spec = load_model(ROOT / path).instantiate()
        ag = Agreement(relation_for(spec))
        todo: list = []
        seen: set = set()
        for s in walk(spec, 10**9, seed=473, depth=60):
            if len(seen) >= states:
                break
            if s not in seen:
                seen.add(s)
                todo.append(s)
        t0 = time.process_time()
        bad = sum(len(ag.check(s)) for s in todo)
        cpu = time.process_time() - t0
        print(f"| {path} | {len(todo):,} | {bad} | {cpu:.1f} | {1000 * cpu / len(todo):.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("proofs", "bounded", "agreement"))
    args = ap.parse_args()
    for name, fn in (("proofs", proofs), ("bounded", bounded), ("agreement", agreement)):
        if args.only in (None, name):
            fn()
            print()


if __name__ == "__main__":
    main()
