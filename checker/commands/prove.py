"""`txncheck prove MODEL`: the model's properties proved with Z3 (exit 0
proved: every property the model asks for was decided true; 1 an initial
state violates them; 3 not inductive, unknown, or something the model asks
not decided, each named), or with `--bounded K` checked to depth K (exit 1
violation, 3 none within K steps); with `--agreement`, a hand-written
relation compared with the spec (exit 0 agrees, 1 a disagreement).
checker/symbolic/ does the work."""

from __future__ import annotations

import json
import sys
import time
from contextlib import nullcontext

from ..failures import BudgetExpired, budget_alarm
from ..streams import stdout_to_stderr
from typing import TYPE_CHECKING, Callable

from .argtypes import int_from, natural, positive_int, seconds

if TYPE_CHECKING:   # Z3 and the relation load when a proof runs, not when the command line is parsed
    from ..symbolic.run import ProveReport


def register(sub) -> None:
    p = sub.add_parser("prove", help="prove a model's invariants inductive with Z3, or check them to a depth "
                                      "(exit 0 proved, 1 violation, 2 bad input, 3 not proved or unknown)")
    p.add_argument("model", metavar="MODEL", help="model file (TOML); its spec needs a symbolic relation")
    p.add_argument("--bounded", type=int_from(0, 1000, "depth from 0 to 1000"), metavar="K",
                   help="bounded checking instead: every path of up to K steps (exit 1 with a shortest "
                        "counterexample, 3 when none is found: not a proof)")
    p.add_argument("--without", action="append", default=[], metavar="LEMMA",
                   help="leave out a lemma the model file's [prove] table names (repeatable)")
    p.add_argument("--timeout", type=seconds, metavar="S", help="give up a Z3 query after S seconds (exit 3)")
    p.add_argument("--max-seconds", type=seconds, metavar="S",
                   help="stop the whole run after S seconds (exit 3), Z3's queries and the relation's code included")
    p.add_argument("--out", default="out", metavar="DIR", help="where a counterexample trace goes (default: out)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    p.add_argument("--agreement", action="store_true",
                   help="instead of proving: compare the relation with the spec's next and observe on the "
                        "model's states, with a coverage report (exit 0 agrees, 1 a disagreement)")
    p.add_argument("--record", action="store_true",
                   help="with --agreement: write the passing agreement into the model file's [prove] table")
    p.add_argument("--states", type=natural, default=20_000, metavar="N",
                   help="with --agreement: the states compared breadth first (default 20000; a smaller model "
                        "is compared whole)")
    p.add_argument("--walk-states", type=natural, default=10_000, metavar="N",
                   help="with --agreement: then the states of biased random walks (default 10000)")
    p.add_argument("--seed", type=natural, default=0, help="with --agreement: the walks' seed (default 0)")
    p.add_argument("--walk-depth", type=positive_int, default=100, metavar="D",
                   help="with --agreement: steps per walk (default 100)")
    p.add_argument("--derived", action="store_true",
                   help="prove from the relation derived from the spec's code even where the spec still has a "
                        "hand-written one (PIP-473 until issue 52 ends; ADR 0011)")
    p.add_argument("--whole-step", action="store_true",
                   help="ask the inductive step of all actions at once, not per action (the same verdicts; "
                        "to compare their cost)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--infer", action="store_true",
                   help="infer the lemmas instead of using the model file's: candidates from templates, kept when "
                        "true in every state of bfs searches, then Houdini with Z3 (docs/guide.md)")
    p.add_argument("--write", action="store_true",
                   help="with --infer: write the inferred lemmas into the model file's [prove.formulas]")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..errors import UsageError
    from ..symbolic.cti import write_cti
    from ..symbolic.induction import z3_deadline
    from ..symbolic.run import prove_model, write_bounded_trace

    if args.record and not args.agreement:
        raise UsageError("--record goes with --agreement")
    if args.derived and (args.infer or args.write):
        raise UsageError("--derived goes with a proof, --bounded or --agreement, not --infer")
    if args.derived and args.record:
        raise UsageError("--record writes the hand-written relation's agreement; a derived relation needs none")
    if args.whole_step:
        if args.agreement or args.bounded is not None or args.infer or args.write:
            raise UsageError("--whole-step goes with a proof (--infer's Houdini asks of all actions at once)")
        from ..symbolic import induction

        induction.PER_ACTION = False
    if args.infer or args.write:
        from ..symbolic.infer_report import run_infer

        return run_infer(args, _proof_lines)
    if args.agreement and (args.bounded is not None or args.without):
        raise UsageError("--agreement compares the relation with the spec; --bounded and --without go with a proof")
    shown: Callable[[], int] | None = None
    report: ProveReport | None = None
    expired = False
    with stdout_to_stderr() if args.json else nullcontext():  # what specs print: stdout holds one JSON object
        try:
            with budget_alarm(args.max_seconds), z3_deadline(args.max_seconds):
                if args.agreement:
                    from .prove_agreement import agreement

                    shown = agreement(args)
                else:
                    from ..symbolic.derive import relation as derivation

                    # a derivation's stages on stderr, as every command's progress: once past two seconds
                    t0 = time.monotonic()
                    derivation.progress = None if args.quiet or args.json else (
                        lambda line: print(line, file=sys.stderr, flush=True) if time.monotonic() - t0 > 2 else None)
                    try:
                        report = prove_model(args.model, depth=args.bounded, without=args.without,
                                             timeout_ms=int(args.timeout * 1000) if args.timeout else 0,
                                             derived=args.derived)
                    finally:
                        derivation.progress = None
        except BudgetExpired:
            expired = True
    if expired:   # printed once stdout is stdout again
        return _out_of_time(args)
    if args.agreement:
        assert shown is not None
        return shown()
    assert report is not None
    error = None
    try:
        write_bounded_trace(report, args.out)
        report.cti_file = write_cti(report, args.out)
    except OSError as exc:
        error = f"{exc.filename or args.out}: cannot write the counterexample trace ({exc.strerror or exc})"
    print(json.dumps(report.to_json()) if args.json else human(report), flush=True)
    if error:
        from ..failures import one_line

        print(f"txncheck: error: {one_line(error)}", file=sys.stderr)
        return report.exit_code if report.exit_code == 1 else 3
    return report.exit_code


def _out_of_time(args) -> int:
    why = f"max-seconds {args.max_seconds:g} reached"
    if args.json:
        print(json.dumps({"model": args.model, "verdict": "incomplete", "reason": why, "exit_code": 3}), flush=True)
    else:
        print(f"verdict: incomplete ({why}; nothing was proved)", flush=True)
    return 3


def human(r: ProveReport) -> str:
    rel = r.system.relation
    spec = rel.spec
    cells = len(r.system.frame("s").keys)
    lines = [f"model {r.model.path}: {spec.describe()}, symbolic relation of {len(r.system.acts)} actions "
             f"over {cells} state cells"]
    props = ", ".join(r.properties) or "no invariants"
    lemmas = f"; lemmas: {', '.join(r.lemmas)}" if r.lemmas and r.proof is not None else ""
    more = (f"; with the properties of [prove] lemmas_from: {', '.join(r.strengthening)}"
            if r.strengthening and r.proof is not None else "")
    lines.append(f"invariant: {props}{more}{lemmas}")
    if r.proof is not None:
        lines += _proof_lines(r)
    else:
        lines += _bounded_lines(r)
    return "\n".join(lines)


def _proof_lines(r: ProveReport) -> list[str]:
    from ..glossary import cti_glossary
    from ..symbolic.induction import show_cti, show_initial
    from ..symbolic.system import show_action

    p, schema = r.proof, r.system.relation.schema
    assert p is not None, "_proof_lines is for a report with a proof"
    n = len(p.clauses)
    props = ", ".join(r.properties) or "the lemmas"
    if p.verdict == "violation":
        return ["base case: fails", *show_initial(schema, p.initial, p.failing), "verdict: violation"]
    out = [f"base case: every clause holds in the initial states ({p.base_seconds:.2f}s)"]
    if p.verdict == "not inductive":
        assert p.cti is not None, "a step that is not inductive has its CTI"
        out.append(f"inductive step: {p.cti.clause} is not preserved ({p.step_seconds:.2f}s)")
        out += show_cti(schema, p.cti, *cti_glossary(r.system.relation))
        if r.cti_file:
            out.append(f"  written to {r.cti_file} (see it with: txncheck show {r.cti_file})")
        out.append("verdict: not inductive (state 1 may be unreachable: add a lemma that rules it out, "
                   "or look for a real violation with --bounded K)")
        return out
    if p.verdict != "proved":
        out.append(f"verdict: unknown ({p.unknown})")
        return out
    out.append(f"inductive step: every action preserves all {n} clauses ({p.queries - n} queries, "
               f"{p.step_seconds:.2f}s)")
    v = r.vacuity
    assert v is not None, "a proved step is followed by the vacuity check"
    labels = len(set(r.system.labels))
    dead = [show_action(a) for a in v.dead]
    out.append(f"actions: {labels - len(dead)} of {labels} can fire under the invariant"
               + (f"; dead: {', '.join(dead)}" if dead else "") + f" ({v.queries} queries, {v.seconds:.2f}s)")
    if v.deadlock is not None:
        out.append(f"deadlock freedom: {v.deadlock}")
    if r.witnesses:
        got = {w: how for w, how in r.witnesses.items() if how is not None}
        out.append(f"witnesses: {len(got)} of {len(r.witnesses)} reached"
                   + "".join(f"\n  {w}: by {how}" for w, how in got.items() if "bounded" in how))
    if r.verdict == "proved":
        out.append(f"verdict: proved ({props} hold in every reachable state at these bounds)")
    else:
        out.append(f"verdict: not proved: the invariant is inductive, but {len(r.unproved)} thing"
                   f"{'' if len(r.unproved) == 1 else 's'} the model asks for {'is' if len(r.unproved) == 1 else 'are'} "
                   "not decided:")
        out += [f"  - {x}" for x in r.unproved]
    return out


def _bounded_lines(r: ProveReport) -> list[str]:
    b = r.bounded
    assert b is not None, "a report without a proof is a bounded check's"
    if b.verdict == "violation":
        where = r.trace_file or "(trace not written)"
        out = [f"bounded checking: no violation within {b.depth - 1} steps, one in {b.depth} ({b.seconds:.2f}s)"
               if b.depth else f"bounded checking: an initial state violates ({b.seconds:.2f}s)", "verdict: violation"]
        if b.kind == "deadlock":
            out.append(f"  deadlock: a state with no successor, reached in {b.length} states -> {where}")
        else:
            out.append(f"  invariant {b.violated} violated; shortest counterexample has {b.length} states -> {where}")
        if r.trace_file:
            out.append(f"  see it with: txncheck show {r.trace_file}")
        return out
    if b.verdict == "none":
        steps = f"{b.depth} step{'' if b.depth == 1 else 's'}"
        return [f"bounded checking: every path of up to {steps} ({b.seconds:.2f}s)",
                f"verdict: no violation within {steps} of an initial state (not a proof)"]
    return [f"verdict: unknown ({b.unknown})"]

