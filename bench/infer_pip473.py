"""PIP-473 `fixed` at the standard bounds with inferred lemmas: how many of
the 46 hand-written lemmas of models/pip473/fixed-standard.toml inference
finds, how many the proof still needs beside the inferred ones, in what
time: the inference section of docs/pip473.md.

Two runs of `infer` (checker/symbolic/infer.py) in this process, timed
with `time.process_time`:

1. with the hand-written lemmas assumed: candidates of level (1, 2) that
   Houdini keeps beside them are invariants of `fixed`; the proof is then
   minimised trying the hand-written lemmas first, so what remains of them
   is what inference could not replace;
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

    say = lambda s: print(f"  {s}", file=sys.stderr, flush=True)   # noqa: E731
    m = load_model(ROOT / MODEL)
    names = m.raw["prove"]["lemmas"]
    hand = {n: relation_for(m.instantiate()).lemmas[n] for n in names}
    t0 = time.process_time()
    both = infer(m, levels=WITH_HAND, given=hand, four="off", say=say)
    both_cpu = time.process_time() - t0

    # which hand-written lemmas the inferred invariants imply
    system, spec = both.system, both.system.relation.spec
    f = system.frame("found")
    at = Stater(system, f)
    sv = z3.Solver()
    sv.add(*system.clauses(f, m.selected_properties(spec), {}).values(), *f.types())
    sv.add(*[at(compile_text(x.text, spec.schema)) for x in both.inductive])
    found = [n for n in names if sv.check(z3.Not(system.clauses(f, {}, {n: hand[n]})[n])) == z3.unsat]

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
                      "kept": len(both.inductive), "inferred_needed": [f"{x.name} = {x.text}" for x in both.lemmas],
                      "hand_needed": both.given},
        "hand": names, "found": found,
    }


def render(r: dict) -> str:
    a, b = r["alone"], r["with_hand"]
    n = len(r["hand"])
    found, needed = r["found"], b["hand_needed"]
    if a["verdict"] == "stopped":
        alone = (f"stopped at its budget of {a['budget']:,} s of wall time ({a['cpu_seconds']:,.1f} CPU s), "
                 f"Houdini still dropping candidates")
    else:
        levels = "; ".join(f"level ({v}, {k}): {c:,} candidates, {kept:,} kept, {ctis} CTIs"
                           for v, k, c, kept, ctis in a["levels"])
        alone = (f"{a['verdict']} in {a['cpu_seconds']:,.1f} CPU s, from {a['samples']:,} sampled states; {levels}"
                 + (f"; its last counterexample to induction breaks only {a['cti'][0]}, at `{a['cti'][1]}`, with "
                    f"no candidate left to drop" if a["cti"] else ""))
    lines = [BEGIN, "",
             f"{measured_at(r)}, CPU seconds in one process.", "",
             f"- **With the {n} hand-written lemmas assumed** (level {WITH_HAND[0]}): {b['verdict']} in "
             f"{b['cpu_seconds']:,.1f} CPU s, from {b['samples']:,} sampled states; {b['candidates']:,} "
             f"candidates, {b['kept']:,} of them inductive beside the hand-written lemmas (so invariants of "
             f"`fixed`).",
             f"- **Found**: those inferred invariants and the properties imply {len(found)} of the {n} "
             f"hand-written lemmas" + (f": {', '.join(found)}." if found else "."),
             f"- **Still needed**: minimised with the hand-written lemmas tried first, the proof keeps "
             f"{len(needed)} of the {n} and {len(b['inferred_needed'])} inferred ones: inference replaces "
             f"{n - len(needed)}.",
             f"- **Alone** (`txncheck prove {MODEL} --infer`, level {ALONE[0]} only): {alone}.", ""]
    if b["inferred_needed"]:
        lines += ["The inferred lemmas the proof keeps:", ""] + [f"    {x}" for x in b["inferred_needed"]] + [""]
    rest = [x for x in r["hand"] if x not in found]
    lines.append(f"The {len(rest)} not found: {', '.join(rest)}.")
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
