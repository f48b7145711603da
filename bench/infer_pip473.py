"""PIP-473 `fixed` at the standard bounds with inferred lemmas: how many of
the 46 hand-written lemmas of models/pip473/fixed-standard.toml inference
finds, how many the proof still needs beside the inferred ones, in what
time: the inference section of docs/pip473.md.

Two runs of `infer` (checker/symbolic/infer.py) in this process, timed
with `time.process_time`:

1. with the hand-written lemmas assumed: candidates of level (1, 2) that
   Houdini keeps beside them are invariants of `fixed`. The hand-written
   lemmas they imply (with the properties) are the ones inference
   replaces: the model is proved once more with the others and the whole
   inferred set, to show it. (Not minimised: `needed` asks Z3 about each
   of some 300 lemmas left out, which takes hours here.)
2. alone: the properties, no lemma, the template level (1, 2), within
   ALONE_SECONDS of wall time.

Both runs leave out the last level, clauses of four literals (`four="off"`):
the figures are those of level (1, 2) and its existentials.

A hand-written lemma counts as found when the inferred invariants of run 1
and the properties imply it (one Z3 query on one state). The figures go to
bench/records/infer-pip473.json, and docs/pip473.md's section is written
from the record (tests/test_symbolic_infer_docs.py checks it):

    .venv/bin/python bench/infer_pip473.py            # measure (tens of minutes), then the record and the doc
    .venv/bin/python bench/infer_pip473.py --alone-seconds 1200   # run 2 within a shorter budget
    .venv/bin/python bench/infer_pip473.py --render   # the doc from the record alone
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from records import measured_at, record_and_write  # noqa: E402

MODEL = "models/pip473/fixed-standard.toml"
RECORD = ROOT / "bench" / "records" / "infer-pip473.json"
DOC = ROOT / "docs" / "pip473.md"
BEGIN = "<!-- infer-pip473: written by bench/infer_pip473.py from bench/records/infer-pip473.json -->"
END = "<!-- /infer-pip473 -->"
ALONE = ((1, 2),)
ALONE_SECONDS = 3600       # wall seconds for the run alone: its Houdini takes hours on a busy machine
WITH_HAND = ((1, 2),)


def measure(alone_seconds: int = ALONE_SECONDS) -> dict:
    import z3

    from txncheck.checker.failures import BudgetExpired, budget_alarm
    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.houdini import Stater
    from txncheck.checker.symbolic.induction import z3_deadline
    from txncheck.checker.symbolic.infer import infer
    from txncheck.checker.symbolic.lemma_z3 import compile_text
    from txncheck.checker.symbolic.load import relation_for
    from txncheck.checker.symbolic.run import prove_model

    say = lambda s: print(f"  {s}", file=sys.stderr, flush=True)   # noqa: E731
    m = load_model(ROOT / MODEL)
    names = m.raw["prove"]["lemmas"]
    hand = {n: relation_for(m.instantiate()).lemmas[n] for n in names}
    t0 = time.process_time()
    both = infer(m, levels=WITH_HAND, given=hand, four="off", minimise=False, say=say)
    both_cpu = time.process_time() - t0

    # which hand-written lemmas the inferred invariants imply
    system, spec = both.system, both.system.relation.spec
    f = system.frame("found")
    at = Stater(system, f)
    sv = z3.Solver()
    sv.add(*system.clauses(f, m.selected_properties(spec), {}).values(), *f.types())
    sv.add(*[at(compile_text(x.text, spec.schema)) for x in both.inductive])
    found = [n for n in names if sv.check(z3.Not(system.clauses(f, {}, {n: hand[n]})[n])) == z3.unsat]
    say(f"the inferred invariants imply {len(found)} of the {len(names)} hand-written lemmas")
    t1 = time.process_time()
    rest = [n for n in names if n not in found]
    table = {**m.raw["prove"], "lemmas": rest, "formulas": {x.name: x.text for x in both.inductive}}
    without = prove_model(replace(m, raw={**m.raw, "prove": table}))
    without_cpu = time.process_time() - t1
    say(f"proved with the other {len(rest)} and the inferred set: {without.verdict}")

    m = load_model(ROOT / MODEL)
    t0, wall = time.process_time(), time.monotonic()
    alone = None
    try:
        with budget_alarm(alone_seconds), z3_deadline(alone_seconds):
            alone = infer(m, levels=ALONE, explain=False, four="off", say=say)
    except BudgetExpired:
        pass
    alone_cpu = time.process_time() - t0
    return {
        "alone": {"verdict": alone.verdict if alone else "stopped", "cpu_seconds": round(alone_cpu, 1),
                  "budget": alone_seconds, "wall_seconds": round(time.monotonic() - wall, 1),
                  "samples": sum(s.states for s in alone.samples) if alone else None,
                  "levels": [[lv.variables, lv.literals, lv.candidates, lv.kept, lv.ctis] for lv in alone.levels]
                  if alone else [],
                  "cti": list(alone.levels[-1].cti) if alone and alone.levels and alone.levels[-1].cti else None},
        "with_hand": {"verdict": both.verdict, "cpu_seconds": round(both_cpu, 1),
                      "samples": sum(s.states for s in both.samples),
                      "candidates": both.levels[-1].candidates if both.levels else 0,
                      "kept": len(both.inductive)},
        "hand": names, "found": found,
        "without_found": {"verdict": without.verdict, "cpu_seconds": round(without_cpu, 1)},
    }


def render(r: dict) -> str:
    a, b, w = r["alone"], r["with_hand"], r["without_found"]
    n = len(r["hand"])
    found = r["found"]
    if a["verdict"] == "stopped":
        alone = (f"stopped at its budget of {a['budget']:,} s of wall time ({a['cpu_seconds']:,.1f} CPU s), "
                 f"Houdini still dropping candidates")
    else:
        levels = "; ".join(f"{'level' if i == 0 else 'then'} ({v}, {k}){' with existentials' if i else ''}: "
                           f"{c:,} candidates, {kept:,} kept, {ctis} CTIs"
                           for i, (v, k, c, kept, ctis) in enumerate(a["levels"]))
        why = (" (the bounds the hand-written relation declares for its cells, which no template can "
               "name: they are not in the properties' vocabulary)") if a["cti"] and a["cti"][0] == "DeclaredBounds" else ""
        alone = (f"{a['verdict']} in {a['cpu_seconds']:,.1f} CPU s, from {a['samples']:,} sampled states; {levels}"
                 + (f"; its last counterexample to induction breaks only {a['cti'][0]}{why}, at `{a['cti'][1]}`, "
                    f"with no candidate left to drop" if a["cti"] else ""))
    lines = [BEGIN, "",
             f"{measured_at(r)}, CPU seconds in one process.", "",
             f"- **With the {n} hand-written lemmas assumed** (level {WITH_HAND[0]}): {b['verdict']} in "
             f"{b['cpu_seconds']:,.1f} CPU s, from {b['samples']:,} sampled states; {b['candidates']:,} "
             f"candidates, {b['kept']:,} of them inductive beside the hand-written lemmas (so invariants of "
             f"`fixed`).",
             f"- **Replaced**: those inferred invariants and the properties imply {len(found)} of the {n} "
             f"hand-written lemmas" + (f": {', '.join(found)}." if found else "."),
             f"- **Proved without them**: the other {n - len(found)} hand-written lemmas and the inferred "
             f"invariants, as a model file's `[prove]` table: {w['verdict']} in {w['cpu_seconds']:,.1f} CPU s.",
             f"- **Alone** (`txncheck prove {MODEL} --infer`, level {ALONE[0]} only): {alone}.", ""]
    rest = [x for x in r["hand"] if x not in found]
    lines.append(f"The {len(rest)} not replaced: {', '.join(rest)}.")
    lines.append(END)
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", action="store_true", help="only write the doc from the record")
    ap.add_argument("--alone-seconds", type=int, default=ALONE_SECONDS, metavar="S",
                    help=f"wall seconds for run 2, the properties alone (default {ALONE_SECONDS})")
    args = ap.parse_args(argv)
    record_and_write(ROOT, RECORD, DOC, BEGIN, END, render,
                     None if args.render else lambda _: measure(args.alone_seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
