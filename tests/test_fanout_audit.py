"""The bound `tc = publishes` audited against `tc = steps`: the coordinator's
publishes to the participants it listed (`fanOutEvents` fires them in
parallel and answers once all have landed) as one step, `tcPublish`, or one
step each, `tcPublishTo`. The join is not sound step by step: a failover
between two publishes leaves one participant told and the other not, with
nobody owing the rest, a state neither order of the join reaches. At these
bounds it hides no violation (nor, measured once, with a crash besides,
left out here for its 40 CPU s): every invariant keeps its verdict and its
shortest counterexample's length (merged's NoMissedDecision is the lost
fan-out either way; fixed's F9 re-drives it). docs/pip473.md's atomicity
table says so."""

from __future__ import annotations

import pytest

from txncheck.spec.pip473.spec import Pip473

from .test_apply_audit import SMALL
from .test_pruning_audit import first_violations

FAILOVER = {**SMALL, "decisions": "both", "failovers": 1, "crashes": 0}
CASES = {
    # a send and an ack of one txn on one segment: the buffer's and the pending-ack store's streams
    "failover": FAILOVER,
    # two sends on two segments: two buffers' streams
    "two-segments": {**FAILOVER, "writes": "t1:0 t1:3", "acks": ""},
}
FAST = {("merged", "failover")}   # the others take 3 to 15 CPU s: the slow tier


@pytest.mark.parametrize("variant, case", [
    (v, c) if (v, c) in FAST else pytest.param(v, c, marks=pytest.mark.slow)
    for v in ("merged", "fixed") for c in sorted(CASES)])
def test_the_joined_fanout_hides_no_violation(variant, case):
    joined, split = (first_violations(Pip473(variant, **CASES[case], tc=tc))[0] for tc in ("steps", "publishes"))
    assert split == joined
    assert any(v is not None for v in joined.values()) == (variant == "merged")
