"""What `txncheck prove MODEL --infer` prints: progress on stderr (after two
seconds, as `check` does), then the inferred lemmas and the proof, or the
CTI under the strongest inductive set and what the templates might add;
`--json`, one object."""

from __future__ import annotations

import sys
import time
from typing import Any

from ..glossary import cti_glossary
from .induction import show_cti, show_initial
from .infer import Inference
from .samples import show_bounds

DELAY = 2.0


class Say:
    """Progress lines on stderr, held back for the first DELAY seconds of
    CPU (a short run prints none, however busy the machine)."""

    def __init__(self, stream=None, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.t0 = time.process_time()
        self.held: list[str] = []

    def __call__(self, text: str) -> None:
        if self.quiet:
            return
        line = f"infer: {text}"
        if time.process_time() - self.t0 < DELAY:
            self.held.append(line)
            return
        for x in self.held + [line]:
            self.stream.write(x + "\n")
        self.held = []
        self.stream.flush()


def human(r: Inference, proof_lines, written: str | None = None) -> str:
    """`proof_lines(report)`: how `txncheck prove` prints a proof (checker/commands/prove.py)."""
    rel = r.system.relation
    spec = rel.spec
    lines = [f"model {r.model.path}: {spec.describe()}, symbolic relation of {len(r.system.acts)} actions "
             f"over {len(r.system.frame('s').keys)} state cells",
             f"invariant: {', '.join(r.properties) or 'no invariants'}; lemmas inferred "
             f"(the model file's [prove] lemmas are not used)"]
    if r.samples:
        own = spec.constants
        shown = ", ".join(f"{show_bounds(s.constants, own)} {s.states:,} states"
                          + ("" if s.complete else " (budget reached)") for s in r.samples)
        lines.append(f"sampled (bfs): {shown}")
    if r.sorts is not None:
        lines.append(f"quantified sorts: {', '.join(r.sorts.index) or 'none'}"
                     + (f"; left out: {', '.join(r.skipped)}" if r.skipped else ""))
    for i, lv in enumerate(r.levels, 1):
        end = {"inductive": "inductive", "property falls": "the properties fall",
               "deadlock": "inductive, but a state of it has no action enabled (deadlock = true)"}.get(lv.verdict,
                                                                                                  lv.verdict)
        ex = f", and {lv.exists:,} existential" if lv.exists else ""
        held = f" ({lv.held:,} of four literals held back, {lv.joined:,} joined at CTIs)" if lv.held else ""
        lines.append(f"level {i} ({lv.variables} variable{'s' if lv.variables > 1 else ''} per sort, at most "
                     f"{lv.literals} literals{ex}): {lv.candidates:,} candidates hold in every sample{held}; "
                     f"Houdini: {lv.ctis} CTIs, {lv.kept:,} kept: {end}")
    if r.violated is not None:
        v = r.violated
        lines.append(f"the search of {show_bounds(v.constants, spec.constants)} violates {v.prop} in {v.length} "
                     f"states: see it with txncheck check (those bounds)")
        lines.append("verdict: violation")
        return "\n".join(lines)
    p = r.proof
    if r.report is not None:      # the final check, as `txncheck prove` prints it
        if r.lemmas:
            lines.append(f"minimised: the proof needs {len(r.lemmas)} of the {len(r.inductive)} inductive lemmas")
            lines.append(f"inferred lemmas ({len(r.lemmas)}):")
            lines += [f"  {x.name} = {x.text}" for x in r.lemmas]
        else:
            lines.append("the properties are inductive alone: no lemma needed")
        lines += proof_lines(r.report)
        total = sum(r.seconds.values())
        lines.append(f"inferred: {len(r.lemmas)} lemma{'' if len(r.lemmas) == 1 else 's'} in {total:.1f} CPU s")
        if written:
            lines.append(f"written into {written} [prove.formulas]: `txncheck prove {written}` proves with them")
        elif r.lemmas:
            lines.append(f"keep them: txncheck prove {r.model.path} --infer --write (into [prove.formulas])")
        return "\n".join(lines)
    if p is not None and p.verdict == "violation":
        lines += show_initial(rel.schema, p.initial, p.failing)
        lines.append("verdict: violation")
        return "\n".join(lines)
    if r.verdict == "unknown":
        lines.append(f"verdict: unknown ({r.unknown})")
        return "\n".join(lines)
    lines.append(f"no level gave an inductive invariant; the strongest inductive set of the last level's "
                 f"candidates has {len(r.strongest)} lemmas")
    if p is not None and p.cti is not None:
        lines.append(f"under it, {p.cti.clause} is not preserved:")
        lines += show_cti(rel.schema, p.cti, *cti_glossary(rel))
    lines.append("what templates might add:")
    lines += [f"  - {h}" for h in r.hints]
    lines.append("verdict: not inductive (no lemma found; state 1 may be unreachable: write a lemma that rules it "
                 "out into [prove.formulas], or look for a real violation with --bounded K)")
    return "\n".join(lines)


def to_json(r: Inference, written: str | None = None) -> dict[str, Any]:
    spec = r.system.relation.spec
    out: dict[str, Any] = {
        "model": str(r.model.path), "spec": spec.name, "variant": spec.variant, "bounds": dict(spec.constants),
        "properties": r.properties, "mode": "infer", "verdict": r.verdict,
        "lemmas": [{"name": x.name, "text": x.text} for x in r.lemmas],
        "inductive": len(r.inductive),
        "samples": [{"bounds": dict(s.constants), "states": s.states, "complete": s.complete} for s in r.samples],
        "levels": [{"variables": lv.variables, "literals": lv.literals, "exists": lv.exists, "atoms": lv.atoms,
                    "tried": lv.tried,
                    "candidates": lv.candidates, "held": lv.held, "joined": lv.joined, "kept": lv.kept,
                    "ctis": lv.ctis,
                    "verdict": lv.verdict} for lv in r.levels],
        "seconds": {k: round(v, 3) for k, v in r.seconds.items()},
        "written": written, "unknown": r.unknown or None,
    }
    if r.report is not None:
        out["unproved"] = list(getattr(r.report, "unproved", []) or [])
    if r.violated is not None:
        out["violation"] = {"bounds": dict(r.violated.constants), "property": r.violated.prop,
                            "length": r.violated.length}
    p = r.proof
    if r.verdict != "proved" and p is not None and p.cti is not None:
        out["cti"] = {"clause": p.cti.clause, "action": p.cti.action[0], "params": dict(p.cti.action[1]),
                      "failing": p.cti.failing}
        out["strongest"] = [{"name": x.name, "text": x.text} for x in r.strongest]
        out["hints"] = r.hints
    return out


def run_infer(args, proof_lines) -> int:
    """`prove --infer [--write]` (the command's arguments, checker/commands/prove.py, and
    how it prints a proof)."""
    import json
    from contextlib import nullcontext

    from ..errors import UsageError
    from ..failures import BudgetExpired, budget_alarm, one_line
    from ..streams import stdout_to_stderr
    from .induction import z3_deadline
    from .infer import infer
    from .model_lemmas import write_formulas

    if not args.infer:
        raise UsageError("--write writes the lemmas --infer finds: give --infer too")
    if args.bounded is not None or args.without or args.agreement:
        raise UsageError("--infer proves by induction with lemmas it finds: drop --bounded, --without and "
                         "--agreement")
    r = None
    with stdout_to_stderr() if args.json else nullcontext():   # what specs print: stdout holds one JSON object
        try:
            with budget_alarm(args.max_seconds), z3_deadline(args.max_seconds):
                r = infer(args.model, timeout_ms=int(args.timeout * 1000) if args.timeout else 0,
                          say=Say(quiet=args.quiet or args.json))
        except BudgetExpired:
            pass
    if r is None:
        why = f"max-seconds {args.max_seconds:g} reached"
        print(json.dumps({"model": args.model, "mode": "infer", "verdict": "incomplete", "reason": why})
              if args.json else f"verdict: incomplete ({why}; nothing was proved)", flush=True)
        return 3
    written, error = None, None
    if args.write and r.proof is not None and r.proof.verdict == "proved" and r.lemmas:   # the invariant is
        try:
            write_formulas(r.model.path, [(x.name, x.text) for x in r.lemmas],
                           note=f"inferred by txncheck prove --infer: {len(r.lemmas)} lemmas, in the lemma "
                                f"language of docs/guide.md")
            written = str(r.model.path)
        except OSError as exc:
            error = f"{exc.filename or r.model.path}: cannot write the lemmas ({exc.strerror or exc})"
    print(json.dumps(to_json(r, written)) if args.json else human(r, proof_lines, written), flush=True)
    if error:
        print(f"txncheck: error: {one_line(error)}", file=sys.stderr)
        return r.exit_code if r.exit_code == 1 else 3
    return r.exit_code
