"""`txncheck check --all [DIR ...]`: the CI gate's command line (the gate itself is checker/gate.py)."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from pathlib import Path

from ..gate import ERROR, FAILED, PASSED, SKIPPED, GateResult, ModelResult, run_gate
from ..model import ModelError
from ..options import Options
from ..progress import Progress
from ..render import terminal_safe
from ..streams import stdout_to_stderr

MARK = {0: "PASS", 1: "FAIL", 2: "ERROR", 3: "INCOMPLETE"}


def run_gate_command(args, options: Options) -> int:
    from ..errors import UsageError

    if options.checkpoint or options.resume:
        raise UsageError("--checkpoint and --resume go with one MODEL, not with --all")
    if args.max_depth:
        raise UsageError("--max-depth goes with one MODEL; in the gate a model file's max_depth bounds it")
    roots = args.model
    if not roots:  # the folder models/ where the command is typed, as the README's layout has it
        if not Path("models").is_dir():
            raise ModelError("no folder given and no models/ here: give the folders of model files "
                             "(txncheck check --all DIR ...)")
        roots = ["models"]
    progress = None if args.quiet else (lambda label: Progress(label))
    # a model file's name and the gate's messages are untrusted text: no escape reaches the terminal
    echo = None if args.json else (lambda r: print(terminal_safe(model_line(r)), flush=True))
    try:
        with stdout_to_stderr() if args.json else nullcontext():  # what specs print: stdout holds one JSON object
            result = run_gate(roots, engine=args.engine, out_dir=args.out, max_seconds=args.max_seconds,
                              max_states=args.max_states, progress_factory=progress, on_result=echo,
                              options=options, runtime=args.runtime or "quick")
    except KeyboardInterrupt:  # before the first model: the summary and the reports say so all the same
        result = GateResult([], [Path(r) for r in roots], interrupted=True)
    from ..reports.output import ReportError

    write_error = None
    try:
        if args.junit:
            from ..reports.junit import write_junit

            write_junit(result, args.junit)
        if args.sarif:
            from ..reports.sarif import write_sarif

            write_sarif(result, args.sarif)
    except ReportError as exc:  # the summary is printed all the same, then this line
        write_error = str(exc)
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(summary_line(result))
    if write_error:
        from ..failures import one_line

        print(f"txncheck: error: {one_line(write_error)}", file=sys.stderr)
        # worst first: a model that could not be checked (2) or an unmet expectation (1) outranks the lost file
        return result.exit_code if result.exit_code in (1, 2) else 3
    return result.exit_code


def model_line(r: ModelResult) -> str:
    if r.not_run:
        return f"{'SKIP':<10} {r.shown}: {r.not_run}"
    head = f"{MARK[r.exit_code]:<10} {r.shown}"
    if r.error is not None:
        return f"{MARK[r.exit_code]:<10} {r.error}" if str(r.path) in r.error else f"{head}: {r.error}"
    model, report = r.ran()
    o = report.outcome
    stats = f"{o.distinct_states:,} distinct, {o.states_generated:,} generated, depth {o.depth}, {r.seconds:.2f}s"
    want = model.expect.get("verdict", "ok")
    got = str(o.verdict)
    if got == "violation":
        got += " of " + ", ".join(f"{v.property} ({v.length} states)" for v in o.violations)
    lines = [f"{head}: {got}; expected {want}" + (f" of {model.expect['property']}" if model.expect.get("property") else "")
             + f" ({stats})"]
    if r.label:
        lines.append(f"           {r.label}")
    if r.note:
        lines.append(f"           {r.note}")
    if o.checked_depth and o.verdict == "incomplete":
        lines.append(f"           {o.checked_depth_text()}")
    for c in r.cases:
        if c.kind == "proof" and c.status == PASSED:
            lines.append(f"           proof: {c.message}")
    for c in r.cases:
        if c.status in (FAILED, ERROR):
            lines.append(f"           {c.name}: {c.message}")
            if c.violation is not None and c.violation.trace_file:
                lines.append(f"           trace: {c.violation.trace_file} (txncheck show it)")
    return "\n".join(lines)


# Why a case is skipped, by the start of its message (checker/expectations.py), as the summary counts them.
SKIP_REASONS = (("not settled", "not settled at a violation"), ("not reached", "not reached within max_depth"),
                ("not judged", "figures not judged"))


def summary_line(result: GateResult) -> str:
    n = result.counts()
    bad = sum(1 for r in result.results if r.exit_code)
    heavy = sum(1 for r in result.results if r.not_run)
    models = len(result.results) - heavy
    return (f"gate: {models} model{'' if models == 1 else 's'}, {bad} not as expected"
            + (f", {heavy} heavy not run (--runtime all runs them)" if heavy else "")
            + f"; cases: {n['passed']} passed, {n['failed']} failed, {n['error']} errors, {n['skipped']} skipped"
            + _why_skipped(result)
            + ("; interrupted: the models after these were not checked" if result.interrupted else ""))


def _why_skipped(result: GateResult) -> str:
    """` (3 not settled at a violation, 1 figures not judged, 8 models not run)`:
    what the skipped cases are."""
    counts: dict[str, int] = {}
    for r in result.results:
        for c in r.cases:
            if c.status == SKIPPED:
                why = "models not run" if r.not_run else \
                    next((w for start, w in SKIP_REASONS if c.message.startswith(start)), "other")
                counts[why] = counts.get(why, 0) + 1
    order = [w for _, w in SKIP_REASONS] + ["models not run", "other"]
    return f" ({', '.join(f'{counts[w]} {w}' for w in order if w in counts)})" if counts else ""
