"""What `txncheck prove` costs: the proofs (CPU seconds of the base case and
of the inductive step), bounded checking of the PIP-473 corpus against the
lengths bfs finds (the [expect] the gate holds bfs to), and the agreement
test's rate. One process, one core; CPU seconds, since wall time depends on
what else the machine runs.

    .venv/bin/python bench/prove.py [--only proofs|bounded|agreement]

Each table is kept as a record, bench/records/{proofs,bounded,agreement}.json,
from which docs/performance.md's table is written (tests/test_docs_records.py
checks that they agree): a run measures and writes both; `--render` writes
the tables from the records alone.
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


def measure_proofs() -> dict:
    """Each proof as `prove` asks it (the step per action), and its step
    asked again of all actions at once, to compare."""
    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.run import prove_model

    rows = []
    for path in PROOFS:
        p = prove_model(load_model(ROOT / path)).proof
        whole = prove_model(load_model(ROOT / path), per_action=False).proof
        assert whole.verdict == p.verdict, (path, whole.verdict, p.verdict)
        rows.append({"model": path, "clauses": len(p.clauses), "verdict": p.verdict, "queries": p.queries,
                     "base_seconds": round(p.base_seconds, 2), "step_seconds": round(p.step_seconds, 2),
                     "whole_step_seconds": round(whole.step_seconds, 2)})
        print(f"  {path}: {p.verdict}", file=sys.stderr, flush=True)
    return {"rows": rows}


def _markdown(columns: str, rows) -> list[str]:
    """A Markdown table: `columns` as "name:align, ..." (r: right-aligned), `rows` lists of cells."""
    cols = [c.rsplit(":", 1) for c in columns.split(", ")]
    return (["| " + " | ".join(n for n, _ in cols) + " |", "|" + "|".join("---:" if a == "r" else "---" for _, a in cols)
             + "|"] + ["| " + " | ".join(cells) + " |" for cells in rows])


def render_proofs(r: dict) -> list[str]:
    return _markdown("model:l, clauses:r, verdict:l, base CPU s:r, step CPU s:r, queries:r, "
                     "step CPU s (all actions at once):r", (
        [x["model"], str(x["clauses"]), x["verdict"], f"{x['base_seconds']:.2f}", f"{x['step_seconds']:.2f}",
         str(x["queries"]), f"{x['whole_step_seconds']:.2f}"] for x in r["rows"]))


def measure_bounded() -> dict:
    from txncheck.checker.symbolic.run import prove_model
    from txncheck.spec.api import SpecError

    rows, refused = [], []
    for p in sorted((ROOT / "models/pip473").glob("*.toml")):
        exp = tomllib.loads(p.read_text()).get("expect", {})
        if exp.get("verdict") != "violation" or exp.get("length", 99) > 12:
            continue
        t0 = time.process_time()
        try:
            b = prove_model(p, depth=12).bounded
        except SpecError as e:   # a bound the hand-written relation does not state
            refused.append({"model": p.stem, "why": str(e).split(" does not state ")[-1]})
            continue
        cpu = time.process_time() - t0
        rows.append({"model": p.stem, "property": b.violated, "length": b.length, "bfs_length": exp["length"],
                     "cpu_seconds": round(cpu, 2)})
        print(f"  {p.stem}: {b.violated} in {b.length}", file=sys.stderr, flush=True)
    return {"rows": rows, "refused": refused}


def render_bounded(r: dict) -> list[str]:
    lines = _markdown("corpus model:l, property:l, states (bounded):r, states (bfs):r, CPU s:r", (
        [x["model"], x["property"], str(x["length"]), str(x["bfs_length"]), f"{x['cpu_seconds']:.2f}"]
        for x in r["rows"]))
    if r["refused"]:
        lines += ["", "Refused, a bound the relation does not state: " + "; ".join(
            f"{x['model']} ({x['why']})" for x in r["refused"]) + "."]
    return lines


AGREEMENT = ["models/classic/twophase-rm6.toml", "examples/paxos_commit/paxos_commit.toml",
             "models/pip473/fixed-standard.toml", "models/pip473/merged.toml"]


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


def render_agreement(r: dict) -> list[str]:
    return _markdown("model:l, distinct states:r, disagreements:r, CPU s:r, ms per state:r", (
        [x["model"], f"{x['states']:,}", str(x["disagreements"]), f"{x['cpu_seconds']:.1f}",
         f"{1000 * x['cpu_seconds'] / x['states']:.1f}"] for x in r["rows"]))


# Each table: how it is measured, how it is drawn, and what the line above it says was timed.
TABLES = {
    "proofs": (measure_proofs, render_proofs, "CPU seconds of each half of `prove_model` in one process"),
    "bounded": (measure_bounded, render_bounded, "CPU seconds of `prove_model(depth=12)` in one process"),
    "agreement": (measure_agreement, render_agreement,
                  "CPU seconds of `Agreement.check` in one process, coverage recorded"),
}
DOC = ROOT / "docs" / "performance.md"


def record_of(name: str) -> Path:
    return ROOT / "bench" / "records" / f"{name}.json"


def markers(name: str) -> tuple[str, str]:
    return (f"<!-- {name}: written by bench/prove.py from bench/records/{name}.json -->", f"<!-- /{name} -->")


def render(name: str, r: dict) -> str:
    from records import measured_at

    begin, end = markers(name)
    _, draw, what = TABLES[name]
    return "\n".join([begin, "", f"{measured_at(r)}; {what}.", "", *draw(r), "", end])


def table(name: str, render_only: bool = False) -> None:
    from records import record_and_write

    measure = TABLES[name][0]
    record_and_write(ROOT, record_of(name), DOC, *markers(name), lambda r: render(name, r),
                     None if render_only else lambda _: measure())
    print(render(name, json.loads(record_of(name).read_text())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=tuple(TABLES))
    ap.add_argument("--render", action="store_true", help="only write the tables from their records")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    for name in TABLES:
        if args.only in (None, name):
            table(name, render_only=args.render)
            print()


if __name__ == "__main__":
    main()
