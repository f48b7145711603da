"""`txncheck prove MODEL`: the model's properties proved inductive with Z3
(exit 0 proved, 1 an initial state violates them, 3 not inductive or
unknown), or with `--bounded K` checked to depth K (exit 1 violation,
3 none within K steps). checker/symbolic/ does the work."""

from __future__ import annotations

import json
import sys

from ..symbolic.induction import show_cti, show_initial
from ..symbolic.run import ProveReport, prove_model, write_bounded_trace


def register(sub) -> None:
    p = sub.add_parser("prove", help="prove a model's invariants inductive with Z3, or check them to a depth "
                                      "(exit 0 proved, 1 violation, 2 bad input, 3 not inductive or unknown)")
    p.add_argument("model", metavar="MODEL", help="model file (TOML); its spec needs a symbolic relation")
    p.add_argument("--bounded", type=_depth, metavar="K",
                   help="bounded checking instead: every path of up to K steps (exit 1 with a shortest "
                        "counterexample, 3 when none is found: not a proof)")
    p.add_argument("--without", action="append", default=[], metavar="LEMMA",
                   help="leave out a lemma the model file's [prove] table names (repeatable)")
    p.add_argument("--timeout", type=_seconds, metavar="S", help="give up a Z3 query after S seconds (exit 3)")
    p.add_argument("--out", default="out", metavar="DIR", help="where a counterexample trace goes (default: out)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    p.add_argument("--infer", action="store_true",
                   help="infer the lemmas instead of using the model file's: candidates from templates, kept when "
                        "true in every state of bfs searches, then Houdini with Z3 (docs/guide.md)")
    p.add_argument("--write", action="store_true",
                   help="with --infer: write the inferred lemmas into the model file's [prove.formulas]")
    p.set_defaults(run=run)


def _depth(text: str) -> int:
    v = int(text)
    if not 0 <= v <= 1000:
        raise ValueError
    return v


def _seconds(text: str) -> float:
    v = float(text)
    if not 0 < v <= 86400:
        raise ValueError
    return v


_depth.__name__ = "depth from 0 to 1000"
_seconds.__name__ = "number of seconds"


def run(args) -> int:
    if args.infer or args.write:
        from ..symbolic.infer_report import run_infer
        return run_infer(args)
    report = prove_model(args.model, depth=args.bounded, without=args.without,
                         timeout_ms=int(args.timeout * 1000) if args.timeout else 0)
    error = None
    try:
        write_bounded_trace(report, args.out)
    except OSError as exc:
        error = f"{exc.filename or args.out}: cannot write the counterexample trace ({exc.strerror or exc})"
    print(json.dumps(report.to_json()) if args.json else human(report))
    if error:
        from ..failures import one_line

        print(f"txncheck: error: {one_line(error)}", file=sys.stderr)
        return report.exit_code if report.exit_code == 1 else 3
    return report.exit_code


def human(r: ProveReport) -> str:
    rel = r.system.relation
    spec = rel.spec
    cells = len(r.system.frame("s").keys)
    lines = [f"model {r.model.path}: {spec.describe()}, symbolic relation of {len(r.system.acts)} actions "
             f"over {cells} state cells"]
    props = ", ".join(r.properties) or "no invariants"
    lemmas = f"; lemmas: {', '.join(r.lemmas)}" if r.lemmas and r.proof is not None else ""
    lines.append(f"invariant: {props}{lemmas}")
    if r.proof is not None:
        lines += _proof_lines(r)
    else:
        lines += _bounded_lines(r)
    return "\n".join(lines)


def _proof_lines(r: ProveReport) -> list[str]:
    p, schema = r.proof, r.system.relation.schema
    n = len(p.clauses)
    props = ", ".join(r.properties) or "the lemmas"
    if p.verdict == "violation":
        return ["base case: fails", *show_initial(schema, p.initial, p.failing), "verdict: violation"]
    out = [f"base case: every clause holds in the initial states ({p.base_seconds:.2f}s)"]
    if p.verdict == "proved":
        out.append(f"inductive step: every action preserves all {n} clauses ({p.queries - n} queries, "
                   f"{p.step_seconds:.2f}s)")
        out.append(f"verdict: proved ({props} hold in every reachable state at these bounds)")
    elif p.verdict == "not inductive":
        out.append(f"inductive step: {p.cti.clause} is not preserved ({p.step_seconds:.2f}s)")
        out += show_cti(schema, p.cti)
        out.append("verdict: not inductive (state 1 may be unreachable: add a lemma that rules it out, "
                   "or look for a real violation with --bounded K)")
    else:
        out.append(f"verdict: unknown ({p.unknown})")
    return out


def _bounded_lines(r: ProveReport) -> list[str]:
    b = r.bounded
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
