"""`txncheck check MODEL.toml`: check one model and report the verdict.

`txncheck check --all [DIR ...]` is the CI gate (checker/gate.py): every model
under the folders, judged against its `[expect]` table, with JUnit and SARIF
reports (checker/reports/)."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from dataclasses import fields
from typing import TYPE_CHECKING

from ..options import Options
from ..progress import Progress
from ..streams import stdout_to_stderr
from .argtypes import natural, positive_int, seconds

if TYPE_CHECKING:   # the engines load when a check runs, not when the command line is parsed
    from ..api import Report

EXIT = {"ok": 0, "violation": 1, "incomplete": 3}


def register(sub) -> None:
    p = sub.add_parser("check", help="check a model file, or every model with --all (exit 0 ok, 1 violation, "
                                      "2 bad input, 3 incomplete)")
    p.add_argument("model", nargs="*", metavar="MODEL", help="model file (TOML); with --all, folders of model files")
    p.add_argument("--all", action="store_true",
                   help="the CI gate: check every model under the folders (default: the shipped models/) "
                        "against its [expect] table")
    p.add_argument("--junit", metavar="FILE", help="with --all: write a JUnit XML report")
    p.add_argument("--sarif", metavar="FILE", help="with --all: write a SARIF 2.1.0 report")
    p.add_argument("--engine", help="bfs, spark or simulate (default: the model file's engine, else bfs)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    p.add_argument("--out", default="out", metavar="DIR", help="where counterexample traces go (default: out)")
    p.add_argument("--z3-eval", action="store_true", help="evaluate the properties with Z3 itself (slow)")
    p.add_argument("--max-states", type=positive_int, metavar="N",
                   help="stop at N distinct states (exit 3): bfs at exactly N (with --checkpoint, once the state "
                        "that found the Nth is expanded); --workers, spark and simulate at the end of a level or walk")
    p.add_argument("--max-seconds", type=seconds, metavar="S", help="stop after S seconds (exit 3)")
    p.add_argument("--max-depth", type=positive_int, metavar="D",
                   help="bfs: stop once every state to depth D is checked (exit 3 if more remain)")
    p.add_argument("--runtime", choices=("quick", "heavy", "all"),
                   help="with --all: the models to check by their [expect] runtime (default quick; CI: all)")
    p.add_argument("--no-graph", action="store_true", help="keep parent pointers only, not the state graph")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    # Engine options, passed through Job.options; an engine that does not
    # support one rejects it with a one-line error.
    p.add_argument("--master", metavar="URL", help="spark: the Spark master (default local[*])")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="bfs: expand each level in N forked processes, one per core (fingerprint visited set)")
    p.add_argument("--checkpoint", metavar="DIR", help="write checkpoints to DIR periodically")
    p.add_argument("--resume", metavar="DIR", help="resume a killed run from its checkpoint DIR")
    p.add_argument("--checkpoint-interval", type=seconds, metavar="S",
                   help="seconds between checkpoints (default 60)")
    p.add_argument("--symmetry", action=argparse.BooleanOptionalAction,
                   help="symmetry reduction over the spec's symmetric sorts (--no-symmetry: off, even if the "
                        "model file switches it on)")
    p.add_argument("--por", action=argparse.BooleanOptionalAction,
                   help="partial-order reduction, safety only (--no-por: off, even if the model file switches it on)")
    p.add_argument("--fingerprints", action="store_true",
                   help="store 64-bit fingerprints only, not full states (reports collision probability)")
    p.add_argument("--exact", action="store_true", help="store full states in the visited set (the default)")
    p.add_argument("--compact", action="store_true",
                   help="share equal parts of stored states (less memory, more time)")
    p.add_argument("--seed", type=natural, help="simulate: random seed (default 0)")
    p.add_argument("--walks", type=positive_int, help="simulate: number of random walks (default 1000)")
    p.add_argument("--walk-depth", type=positive_int, help="simulate: steps per walk (default 100)")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..errors import UsageError
    from ..api import check_model, write_traces

    if args.workers:  # its bound once, not once per model of a gate
        Options(workers=args.workers).validate(None, "bfs")
    if args.all:
        from .check_all import run_gate_command

        return run_gate_command(args, engine_options(args))
    if args.junit or args.sarif or args.runtime:
        raise UsageError("--junit, --sarif and --runtime go with --all (the CI gate)")
    if len(args.model) != 1:
        raise UsageError("check takes one MODEL file (or --all [DIR ...] for every model under folders)")
    args.model = args.model[0]
    progress = None if args.quiet else Progress()
    with spec_output(args):
        report = check_model(
            args.model,
            engine=args.engine,
            z3_eval=args.z3_eval,
            max_states=args.max_states,
            max_seconds=args.max_seconds,
            max_depth=args.max_depth,
            out_dir=None,  # written below, so a write that fails cannot lose the verdict
            progress=progress,
            keep_graph=not args.no_graph,
            options=engine_options(args),
        )
    write_error = None
    try:
        write_traces(report.model, report.spec, report.outcome, args.out)
    except OSError as exc:
        write_error = f"{exc.filename or args.out}: cannot write the counterexample trace ({exc.strerror or exc})"
    ck_error = (report.outcome.extra.get("checkpoint") or {}).get("error")
    if ck_error:  # the run stopped there (incomplete) or had ended: the checkpoint on disk is the last good one
        write_error = ck_error
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(human_report(report))
    if write_error:
        from ..failures import one_line

        print(f"txncheck: error: {one_line(write_error)}", file=sys.stderr)
        # the verdict outranks the lost file: a violation stays exit 1
        return EXIT[report.verdict] if report.verdict == "violation" else 3
    return EXIT[report.verdict]


def spec_output(args):
    """With --json, what the spec's code prints goes to stderr: stdout holds the one JSON object."""
    return stdout_to_stderr() if args.json else nullcontext()


def engine_options(args) -> Options:
    """The engine options the command line gives (checker/options.py); an
    explicit --no-symmetry / --no-por is kept, to turn the model file's key off."""
    names = [f.name for f in fields(Options) if f.name != "stop_after_level"]  # that one is the Python API's
    return Options.of({n: getattr(args, n, None) for n in names})


def reductions_line(extra: dict) -> str | None:
    """What the run reduced, and how it stored states, when not the default
    (a model file can switch these on, so the report says so)."""
    parts = []
    red = extra.get("reductions") or {}
    if "symmetry" in red:
        sym = red["symmetry"]
        inexact = (f", {sym['inexact_states']:,} states not fully canonical (too many ties)"
                   if sym.get("inexact_states") else "")
        parts.append(f"symmetry over {', '.join(sym['sorts'])}{inexact}")
    if "por" in red:
        por = red["por"]
        parts.append(f"partial-order reduction ({por['ample_states']:,} states expanded in part)"
                     if por.get("declared") else "partial-order reduction (no footprints: every state in full)")
    if extra.get("visited_set") == "fingerprints":
        parts.append(f"64-bit fingerprints (collision probability {extra['collision_probability']:.1e})")
    return "reductions: " + "; ".join(parts) if parts else None


def human_report(report: Report) -> str:
    o = report.outcome
    workers = (o.extra.get("workers") or {}).get("processes")
    engine = f"{o.engine} ({workers} workers)" if workers else o.engine
    lines = [f"model {report.model.path}: {report.spec.describe()}, engine {engine}"]
    lines.append(
        f"{o.distinct_states:,} distinct states, {o.states_generated:,} states generated, depth {o.depth}, "
        f"{o.seconds:.2f}s ({o.states_per_second:,.0f} states/s), peak memory {o.peak_memory_mb:,.0f} MiB"
    )
    red = reductions_line(o.extra)
    if red:
        lines.append(red)
    if o.verdict == "ok":
        props = ", ".join(report.model.selected_properties(report.spec)) or "no invariants"
        lines.append(f"verdict: ok ({props} hold in every reachable state)")
    elif o.verdict == "incomplete":
        lines.append(f"verdict: incomplete ({o.incomplete_reason}); no violation found so far")
        if o.checked_depth:
            lines.append("  " + o.checked_depth_text())
        if o.witnesses_found:  # how far the search got: which witnesses it reached
            reached = [n for n, ok in o.witnesses_found.items() if ok]
            missed = [n for n, ok in o.witnesses_found.items() if not ok]
            lines.append(f"  witnesses reached: {', '.join(reached) or 'none'}"
                         + (f"; not reached: {', '.join(missed)}" if missed else ""))
    else:
        lines.append("verdict: violation")
    for v in o.violations:
        if v.kind == "witness":
            lines.append(f"  witness {v.property}: no reachable state satisfies it")
        elif v.kind == "deadlock":
            lines.append(f"  deadlock: a state with no successor, reached in {v.length} states -> "
                         f"{v.trace_file or '(trace not written)'}")
        else:
            shortest = "shortest " if o.engine != "simulate" else ""
            where = v.trace_file or "(trace not written)"
            lines.append(f"  {v.kind} {v.property} violated; {shortest}counterexample has {v.length} states -> {where}")
            if v.trace_file:
                lines.append(f"  see it with: txncheck show {v.trace_file}")
    live = o.extra.get("liveness")
    if live:
        for name, r in live.get("properties", {}).items():
            lines.append(f"  temporal {name}: {r['verdict']}" + (f" ({r['formula']})" if r.get("formula") else ""))
        if live.get("skipped"):
            lines.append(f"  temporal properties not settled: {live['skipped']}")
    ck = o.extra.get("checkpoint")
    if ck:
        resumed = f", resumed from {ck['resumed_from_states']:,} states" if ck.get("resumed_from_states") else ""
        writes = f"{ck['writes']} write{'' if ck['writes'] == 1 else 's'}"
        failed = ", then a write failed" if ck.get("error") else ""
        resumable = o.verdict == "incomplete" and (ck["writes"] or ck.get("resumed_from_states"))
        lines.append(f"checkpoint: {ck['dir']} ({writes}{resumed}{failed})"
                     + (f"; continue with --resume {ck['dir']}" if resumable else ""))
    if o.coverage:
        lines.append("coverage (action: generated / distinct):")
        width = max(len(n) for n in o.coverage)
        for name, c in o.coverage.items():
            lines.append(f"  {name:<{width}}  {c['generated']:>10,} / {c['distinct']:,}")
    return "\n".join(lines)
