"""The abstraction audit for bound `recovery` (spec/pip473/protocol/recovery.py).

`recovery = "atomic"` loads the recovering buffer's watermark, aborted set and
ops in one step; `steps` loads them in the code's order, with dispatch and
publishes between the loads. The shipped models with a crash use steps;
atomic is the bound's default and gives smaller models, and an "ok" under it
rests on a claim: atomic loses no violation that steps can reach. Before its
loads, atomic's buffer answers like steps' unloaded one (the LAC, no aborted
mark), and its publishes' watermark writes never fail; so a violation under
steps should appear under atomic too, and no later (steps takes two more
actions).

At bounds small enough to explore, with every change of `fixed` switched off
in turn (so that there are violations to lose), this checks it: per
property, a violation under steps is a violation under atomic, whose
shortest counterexample is no longer; and every witness steps reaches,
atomic reaches. The reverse is not claimed (atomic may fail where the code
cannot), and at these bounds the violated sets happen to be equal.
"""

from __future__ import annotations

import tomllib

import pytest

from txncheck.spec.pip473 import variants
from txncheck.spec.registry import load_spec_class

from .helpers import ROOT
from .test_pruning_audit import PIP473, first_violations

# Each change of fixed, switched off (spec/pip473/variants.py FIXES), and none.
CHANGES = {"none": variants.VARIANTS["fixed"], **{c.name: variants.without("fixed", c.name) for c in variants.FIXES}}
# The recovery models' bounds: restarts around sends, acks, non-transactional
# publishes, trimming.
STEMS = ("tb-recovery-publish-fixed", "tb-recovery-dispatch-fixed", "pas-restart-fixed", "prune-after-trim-fixed")


def _bounds(stem: str) -> dict:
    c = tomllib.loads((ROOT / "models" / "pip473" / f"{stem}.toml").read_text())["constants"]
    return {k: v for k, v in c.items() if k != "recovery"}


CASES = ([pytest.param("fixed", change, stem, id=f"fixed-{change}-{stem}") for stem in STEMS for change in CHANGES]
         + [pytest.param("merged", "none", i, id=f"merged-audit{i}") for i in range(len(PIP473))])


@pytest.mark.parametrize("variant,change,where", CASES)
def test_atomic_recovery_loses_no_violation_of_steps(variant, change, where, monkeypatch):
    monkeypatch.setitem(variants.VARIANTS, "fixed", CHANGES[change])
    bounds = _bounds(where) if isinstance(where, str) else {k: v for k, v in PIP473[where].items() if k != "recovery"}
    cls = load_spec_class("pip473")
    atomic, atomic_wits, _ = first_violations(cls(variant, **bounds, recovery="atomic"))
    steps, steps_wits, _ = first_violations(cls(variant, **bounds, recovery="steps"))
    lost = {p: (atomic[p], n) for p, n in steps.items() if n is not None and (atomic[p] is None or atomic[p] > n)}
    assert not lost, f"recovery = atomic misses or lengthens what steps shows (atomic, steps): {lost}"
    assert steps_wits <= atomic_wits, f"witnesses only steps reaches: {steps_wits - atomic_wits}"


def test_the_audit_has_violations_to_lose(monkeypatch):
    """The audit means something only if steps shows violations at its bounds."""
    monkeypatch.setitem(variants.VARIANTS, "fixed", CHANGES["F7"])
    steps, _, _ = first_violations(load_spec_class("pip473")("fixed", **_bounds("tb-recovery-publish-fixed"),
                                                             recovery="steps"))
    # F6 gates the getter, so without F7 a consumer still reads past an OPEN entry (ReadCommitted), once
    # its pending-ack store has replayed (one step more than when the replay came with the buffer's)
    assert (steps["WatermarkSafe"], steps["MaxReadPositionSafe"], steps["ReadCommitted"]) == (10, 12, 14)
