"""What `txncheck prove` costs: the proofs (CPU seconds of the base case and
of the inductive step), bounded checking of the PIP-473 corpus against the
lengths bfs finds (the [expect] the gate holds bfs to), and the agreement
test's rate. One process, one core; CPU seconds, since wall time depends on
what else the machine runs.

    .venv/bin/python bench/prove.py [--only proofs|bounded|agreement]

The agreement table is kept as a record, bench/records/agreement.json, from
which docs/performance.md's table is written (tests/test_docs_records.py
checks the two agree); `--only agreement` measures and writes both,
`--render` writes the table from the record alone.
"""

from __future__ import annotations

import argparse
import json
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


AGREEMENT = ["models/classic/twophase-rm6.toml", "examples/paxos_commit/paxos_commit.toml",
             "models/pip473/fixed-standard.toml", "models/pip473/merged.toml"]
RECORD = ROOT / "bench" / "records" / "agreement.json"
DOC = ROOT / "docs" / "performance.md"
BEGIN = "<!-- agreement: written by bench/prove.py from bench/records/agreement.json -->"
END = "<!-- /agreement -->"


def measure_agreement(states: int = 2000) -> dict:
    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.agreement import Agreement, walk
    from txncheck.checker.symbolic.load import relation_for

    rows = []
    for path in AGREEMENT:
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
        rows.append({"model": path, "states": len(todo), "disagreements": bad, "cpu_seconds": round(cpu, 2)})
        print(f"  {path}: {cpu:.1f} CPU s", file=sys.stderr, flush=True)
    return {"rows": rows}


def render_agreement(r: dict) -> str:
    from records import measured_at

    lines = [BEGIN, "", f"{measured_at(r)}; CPU seconds of `Agreement.check` in one process, coverage recorded.",
             "", "| model | distinct states | disagreements | CPU s | ms per state |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {x['model']} | {x['states']:,} | {x['disagreements']} | {x['cpu_seconds']:.1f} | "
              f"{1000 * x['cpu_seconds'] / x['states']:.1f} |" for x in r["rows"]]
    return "\n".join(lines + ["", END])


def agreement(render_only: bool = False) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from records import record_and_write

    record_and_write(ROOT, RECORD, DOC, BEGIN, END, render_agreement,
                     None if render_only else lambda _: measure_agreement())
    print(render_agreement(json.loads(RECORD.read_text())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("proofs", "bounded", "agreement"))
    ap.add_argument("--render", action="store_true", help="only write the agreement table from its record")
    args = ap.parse_args()
    if args.render:
        agreement(render_only=True)
        return
    for name, fn in (("proofs", proofs), ("bounded", bounded), ("agreement", agreement)):
        if args.only in (None, name):
            fn()
            print()


if __name__ == "__main__":
    main()
