"""`txncheck profile MODEL`: why the state space is this big (checker/profiling/)."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext

from ..model import load_model
from ..render import terminal_safe
from ..streams import stdout_to_stderr
from .argtypes import natural, positive_int, seconds


def register(sub) -> None:
    p = sub.add_parser("profile", help="why the state space is this big: levels, fields, reduction candidates")
    p.add_argument("model", help="model file (TOML)")
    p.add_argument("--max-states", type=positive_int, default=200_000, metavar="N",
                   help="explore at most N distinct states (default 200000)")
    p.add_argument("--max-depth", type=positive_int, metavar="D", help="explore at most D levels")
    p.add_argument("--max-seconds", type=seconds, metavar="S", help="explore for at most S seconds")
    p.add_argument("--probes", type=positive_int, default=40, metavar="K",
                   help="sampled mixes per field to find what reads it (default 40)")
    p.add_argument("--por-states", type=positive_int, default=60, metavar="K",
                   help="sampled states whose enabled actions are checked for commutation (default 60)")
    p.add_argument("--seed", type=natural, default=0, help="seed of the samples (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..profiling import Settings, profile
    from ..profiling.render import text, to_json

    m = load_model(args.model)

    def progress(lv) -> None:
        print(f"level {lv.depth}: {lv.new:,} new, {lv.generated:,} generated", file=sys.stderr, flush=True)

    with stdout_to_stderr() if args.json else nullcontext():  # what specs print: stdout holds one JSON object
        p = profile(m, Settings(max_states=args.max_states, max_depth=args.max_depth, max_seconds=args.max_seconds,
                                probes=args.probes, por_states=args.por_states, seed=args.seed),
                    progress=None if args.quiet or args.json else progress)
    if args.json:
        print(json.dumps(to_json(p)))
    else:
        print(terminal_safe(text(p)), end="")
    return 0
