"""Reduced and unreduced state counts for every shipped model, as Markdown.

    .venv/bin/python bench/models.py [--max-states N]

Runs each model whose spec supports a reduction (symmetric sorts with
`permute`, or `footprints`) unreduced, with --symmetry, --por and both;
models where no reduction applies are listed with the reason, not run.
Safety part only (invariants, witnesses, deadlock), like
tests/test_reductions_models.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.checker.model import find_models, load_model
from txncheck.checker.reductions import ReductionError
from txncheck.checker.reductions.symmetry import check_symmetric

ROOT = Path(__file__).resolve().parent.parent
MODES = {"unreduced": {}, "symmetry": {"symmetry": True}, "por": {"por": True},
         "symmetry+por": {"symmetry": True, "por": True}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-states", type=int, default=2_000_000)
    args = ap.parse_args(argv)
    print("| model | verdict | " + " | ".join(f"{m} distinct / generated" for m in MODES) + " | seconds |")
    print("|---|---|" + "---:|" * len(MODES) + "---:|")
    for path in find_models(ROOT / "models"):
        m = load_model(path)
        spec = m.instantiate()
        props = m.selected_properties(spec)
        witnesses = {w: spec.witnesses[w] for w in m.witnesses}
        name = str(path.relative_to(ROOT / "models"))
        try:
            check_symmetric(spec, {**props, **witnesses})
            sym = True
        except ReductionError:
            sym = False
        por = spec.footprints() is not None
        if not sym and not por:
            print(f"| {name} | not run: no reduction applies to {spec.name} |" + " |" * len(MODES))
            continue
        cells, verdicts, t0 = [], set(), time.perf_counter()
        for label, opts in MODES.items():
            if (opts.get("symmetry") and not sym) or (opts.get("por") and not por):
                cells.append("n/a")
                continue
            out = bfs.run(Job(spec=spec, properties=props, witnesses=witnesses, deadlock=m.deadlock,
                              max_states=args.max_states, keep_graph=False, options=opts))
            verdicts.add(out.verdict)
            cells.append(f"{out.distinct_states:,} / {out.states_generated:,}")
        verdict = verdicts.pop() if len(verdicts) == 1 else "DIFFER: " + ", ".join(sorted(verdicts))
        print(f"| {name} | {verdict} | " + " | ".join(cells) + f" | {time.perf_counter() - t0:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
