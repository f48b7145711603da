"""The bound `apply` audited: `atomic` (a decision's reads, apply chain and
metadata calls in the event's step) is a claim that joining those stages
hides no violation. At small bounds without an unload it holds: every
property has the same verdict under `atomic` and under `steps` (the code's
stages, each a step), in merged and fixed. With an unload it does not hold,
and the models of the closed instance use `steps`: there the split finds what
the join cannot (the closed instance's apply lands between the new owner's
scans). The commute check that fails for the joined stages, and why they are
split rather than argued, is in docs/pip473.md's atomicity table
(tests/test_pip473_atomicity.py runs it)."""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model
from txncheck.spec.registry import load_spec_class

from .test_pruning_audit import first_violations

PROPERTIES = ("Atomicity", "AbortedStaysHidden", "NoLostCommittedAck", "NoAbortedAck", "AcksFixedAtDecision",
              "SingleFinalization", "ReadCommitted", "GcSafety", "MaxReadPositionSafe", "ParentFenced", "NoOrphanOp",
              "NoMissedDecision", "WatermarkSafe")
SMALL = {"participants": "split", "txns": 1, "writes": "t1:0", "acks": "t1:s1:1:ind", "client": "permissive",
         "crashes": 1, "failovers": 0, "reshape": "none", "decisions": "both", "recovery": "steps", "ticks": 0,
         "timeout": 0, "retention": 0}


def _model(tmp_path, variant: str, prop: str, **bounds) -> object:
    lines = [f'description = "apply audit"', 'spec = "pip473"', f'variant = "{variant}"',
             f'properties = ["{prop}"]', "witnesses = []", "deadlock = false", "[constants]"]
    for k, v in {**SMALL, **bounds}.items():
        lines.append(f"{k} = {str(v).lower() if isinstance(v, bool) else v if isinstance(v, int) else repr(v)}"
                     .replace("'", '"'))
    path = tmp_path / f"{variant}-{prop}-{bounds.get('apply')}.toml"
    path.write_text("\n".join(lines) + "\n")
    return check_model(path, keep_graph=False)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_atomic_apply_misses_no_violation_without_an_unload(variant):
    """One exploration per `apply` gives every property's verdict (the plain
    breadth-first search of the pruning audit, independent of the engines),
    where a check per property would explore the same states again for each."""
    cls = load_spec_class("pip473")
    joined, _, _ = first_violations(cls(variant, **SMALL, apply="atomic"))
    split, _, _ = first_violations(cls(variant, **SMALL, apply="steps"))
    differ = {p: (joined[p], split[p]) for p in PROPERTIES if (joined[p] is None) != (split[p] is None)}
    assert not differ, f"apply = atomic and steps disagree (shortest violation, None: holds): {differ}"


def test_atomic_apply_misses_the_closed_instance(tmp_path):
    """With an unload the join is not sound: unload-abort-fixed.toml's bounds
    without F10 break Atomicity only when the closed instance's apply runs in
    the code's stages."""
    from txncheck.spec.pip473 import variants

    bounds = {"txns": 1, "writes": "t1:0", "acks": "", "client": "stock", "crashes": 0, "unloads": 1,
              "decisions": "abort", "timeout": 1}
    saved = variants.VARIANTS["fixed"]
    variants.VARIANTS["fixed"] = variants.without("fixed", "F10")
    try:
        split = _model(tmp_path, "fixed", "Atomicity", apply="steps", **bounds)
        joined = _model(tmp_path, "fixed", "Atomicity", apply="atomic", **bounds)
    finally:
        variants.VARIANTS["fixed"] = saved
    assert [(v.property, v.length) for v in split.outcome.violations] == [("Atomicity", 19)]
    assert joined.verdict == "ok"
