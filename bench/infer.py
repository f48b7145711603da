"""What `txncheck prove --infer` finds and costs, protocol by protocol, beside
the figures the papers' tools published: the inference table of
docs/performance.md.

Each protocol's model is proved by one `txncheck prove MODEL --infer --json`
process, as a user runs it, timed by the kernel's account of its CPU and by
`time.monotonic` (wall); the figures go into
the record, bench/records/infer.json, and the table in docs/performance.md
is written from the record (tests/test_symbolic_infer_docs.py checks that
it is). Run it on a quiet machine:

    .venv/bin/python bench/infer.py              # every protocol, then the record and the table
    .venv/bin/python bench/infer.py --only NAME  # one protocol; the others keep their record
    .venv/bin/python bench/infer.py --render     # the table from the record alone
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from records import measured_at, record_and_write  # noqa: E402

RECORD = ROOT / "bench" / "records" / "infer.json"
DOC = ROOT / "docs" / "performance.md"
BEGIN = "<!-- infer-table: written by bench/infer.py from bench/records/infer.json -->"
END = "<!-- /infer-table -->"

# (name, model, the figures published for the same protocol: tool, lemmas, time, where)
PROTOCOLS = [
    ("TCommit", "models/classic/tcommit-rm3.toml", [
        ("TLAPS proof", "0", "", "tlaplus/Examples@0ff87952 specifications/transaction_commit/TCommit_proof.tla"),
        ("Endive", "0", "1.1 s", "will62794/endive-artifact@0ccc16d benchmarks/TCommit_IndAutoGen.tla")]),
    ("TwoPhase", "models/classic/twophase-rm3.toml", [
        ("TLAPS proof", "7", "", "tlaplus/Examples@77b15b44 specifications/transaction_commit/TwoPhase_proof.tla"),
        ("Endive", "9", "46.4 s", "will62794/endive-artifact@0ccc16d benchmarks/TwoPhase_IndAutoGen.tla")]),
    ("PaxosCommit (PCTypeOK)", "examples/paxos_commit/prove-typeok.toml", [
        ("TLAPS proof", "2", "", "tlaplus/Examples@77b15b44 specifications/transaction_commit/PaxosCommit_proof.tla")]),
    ("PaxosCommit (TCConsistent)", "examples/paxos_commit/paxos_commit.toml", []),
    ("PaxosCommit (TCConsistent, messages observed)", "examples/paxos_commit/tcconsistent.toml", [
        ("hand-written here", "19", "", "examples/paxos_commit/tcconsistent-hand.toml")]),
    ("lock server", "examples/lock_server/lock_server.toml", [
        ("DistAI", "1", "", "VeriGu/DistAI@6669038 outputs/lock_server/lock_server_inv.ivy")]),
    ("leader election", "examples/leader_election/leader_election.toml", [
        ("DistAI", "16", "", "VeriGu/DistAI@6669038 outputs/leader/leader_inv.ivy")]),
]


def measure(name: str, model: str) -> dict:
    """One `txncheck prove MODEL --infer --json` process, as a user runs it:
    its CPU seconds (user and system, from the kernel's account of the child)
    and wall seconds."""
    from txncheck.checker.symbolic.samples import show_bounds

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "prove", str(ROOT / model), "--infer",
                        "--json"], capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode == 2 or not p.stdout.strip():      # a protocol without a relation yet: recorded, not fatal
        return {"model": model, "error": (p.stderr.strip().splitlines() or ["no output"])[-1]
                .removeprefix("txncheck: error: ")}
    r = json.loads(p.stdout)
    last = r["levels"][-1] if r["levels"] else None
    return {
        "model": model, "instance": show_bounds(r["bounds"], {}), "verdict": r["verdict"],
        "samples": sum(s["states"] for s in r["samples"]),
        "level": [last["variables"], last["literals"]] if last else None,
        "candidates": last["candidates"] if last else 0, "kept": last["kept"] if last else 0,
        "lemmas": len(r["lemmas"]), "ctis": sum(lv["ctis"] for lv in r["levels"]),
        "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2),
        "texts": [f"{x['name']} = {x['text']}" for x in r["lemmas"]],
    }


def render(record: dict) -> str:
    lines = [BEGIN,
             f"{measured_at(record)}.",
             "",
             "| protocol | instance | verdict | candidates | kept | final lemmas | CPU s | published |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for name, model, papers in PROTOCOLS:
        r = record["protocols"].get(name)
        pub = "; ".join(f"{tool}: {n} lemmas{', ' + t if t else ''} ({src})" for tool, n, t, src in papers) or "-"
        if r is None or "error" in r:
            why = "not measured" if r is None else r["error"].replace("|", "/")
            lines.append(f"| {name} | `{model}` | {why} | | | | | {pub} |")
            continue
        lines.append(f"| {name} | {r['instance']} | {r['verdict']} | {r['candidates']:,} | {r['kept']:,} | "
                     f"{r['lemmas']} | {r['cpu_seconds']:.1f} | {pub} |")
    lines.append(END)
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=[n for n, _, _ in PROTOCOLS])
    ap.add_argument("--render", action="store_true", help="only write the table from the record")
    args = ap.parse_args(argv)

    def measured(record: dict) -> dict:
        record.setdefault("protocols", {})
        for name, model, _ in PROTOCOLS:
            if args.only in (None, name):
                record["protocols"][name] = measure(name, model)
                print(json.dumps({name: record["protocols"][name]}), flush=True)
        return record

    record_and_write(ROOT, RECORD, DOC, BEGIN, END, render, None if args.render else measured)
    return 0


if __name__ == "__main__":
    sys.exit(main())
