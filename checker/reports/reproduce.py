"""How a report tells the reader to reproduce a finding: the commands, and
what they reproduce (inside txncheck, never on a running system)."""

from __future__ import annotations


def has_reference(trace) -> bool:
    """`reference/` has an implementation of the trace's spec to replay it on."""
    from ...counterexamples.replay import BRIDGES

    return trace.meta.get("spec") in BRIDGES


def commands(f) -> list[str]:
    t = f.trace_shown
    out = []
    if f.model_shown:
        out.append(f"txncheck check {f.model_shown}            # finds the trace again (exit 1: violation)")
    out.append(f"txncheck show {t}")
    out.append(f"txncheck show {t} --format html -o trace.html")
    if has_reference(f.trace):
        out.append(f"txncheck replay {t}            # on reference/ (exit 1: reproduced)")
        out.append(f"txncheck replay {t} --store zookeeper")
    if f.fix_shown:
        out.append(f"txncheck check {f.fix_shown}            # the fix (exit 0: every property holds)")
    src = f.model_shown or t
    out.append(f"txncheck report {src} -o findings/")
    return out + f.extra_commands


def reproduce_sentence(f) -> str:
    """What "reproduce" means here: inside txncheck, never on a running broker."""
    where = ("the model check finds the trace again and `txncheck replay` runs it on the reference "
             "implementation in `reference/`" if has_reference(f.trace) else
             "the model check finds the trace again (`reference/` has no implementation of this spec to replay it on)")
    return (f"These commands reproduce the finding inside txncheck: {where}. None of them runs the real system: "
            "no broker, controller or client was run for this report.")


