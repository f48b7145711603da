"""`txncheck prove MODEL --agreement [--record]`: the relation against the
spec on the model's states (checker/symbolic/agreement_run.py), its
coverage, and with --record the passing run's digest written into the
model file's [prove] table, which `prove` then requires of a hand-written
relation."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic import write_text_atomic
from ..model import Model, load_model
from ..model_edit import set_table_keys
from ..render import terminal_safe
from ..symbolic.agreement_run import derived, run_agreement
from ..symbolic.coverage import coverage_lines
from ..symbolic.load import relation_for
from ..symbolic.system import show_action

if TYPE_CHECKING:
    from ...spec.api import Spec


def agreement(args):
    """Run the agreement (and record it, if asked); returns what prints the
    result and gives the exit code, to be called once stdout is stdout again."""
    m = load_model(args.model)
    spec = m.instantiate()
    rel = relation_for(spec, derived=args.derived)
    t0 = time.monotonic()
    # as every command's progress: only on a run that has taken over two seconds
    progress = None if args.quiet or args.json else (
        lambda text: print(text, file=sys.stderr, flush=True) if time.monotonic() - t0 > 2 else None)
    run = run_agreement(rel, states=args.states, walk_states=args.walk_states, depth=args.walk_depth,
                        seed=args.seed, progress=progress)
    recorded = None
    if args.record and run.agrees:
        path = Path(args.model)
        text = path.read_text(encoding="utf-8")
        new = set_table_keys(text, "prove", {"agreement": run.digest})
        if new != text:
            write_text_atomic(path, new)
        recorded = str(path)
    return lambda: _show(args, m, spec, rel, run, recorded)


def _show(args, m: Model, spec: Spec, rel, run, recorded) -> int:
    if args.json:
        print(json.dumps({"model": str(m.path), "spec": spec.name, "variant": spec.variant, "mode": "agreement",
                          "derived": derived(rel), **run.to_json(), "recorded": recorded,
                          "exit_code": 0 if run.agrees else 1}), flush=True)
        return 0 if run.agrees else 1
    lines = [f"model {m.path}: {spec.describe()}, {'derived' if derived(rel) else 'hand-written'} relation of "
             f"{len(set(a.label for a in rel.actions()))} action labels"]
    scope = (f"every reachable state ({run.exhaustive:,})" if run.complete else
             f"{run.exhaustive:,} states breadth first, then {run.walked:,} more from biased walks "
             f"(seed {args.seed}, depth {args.walk_depth})")
    if run.agrees:
        lines.append(f"agreement: no disagreement on {scope} ({run.seconds:.2f}s)")
    else:
        d = run.disagreement
        lines.append(f"agreement: a disagreement after {run.exhaustive + run.walked:,} states ({run.seconds:.2f}s)")
        act = f" by {show_action(d.action)}" if d.action else ""
        lines.append(f"  {d.what}{act}: {d.detail}")
        lines.append(f"  in state {d.state!r}")
    lines += coverage_lines(run.coverage)
    if run.agrees:
        lines.append(f"recorded in {recorded}: [prove] agreement = \"{run.digest}\"" if recorded else
                     f"digest {run.digest} (txncheck prove {m.path} --agreement --record writes it)")
        lines.append("verdict: agrees")
    else:
        lines.append("verdict: disagrees (the relation is not the spec's: a proof of it says nothing of the spec)")
    print(terminal_safe("\n".join(lines)), flush=True)
    return 0 if run.agrees else 1
