"""The bounds `sync` and `track` audited. `sync`: `atomic` (a non-transactional entry's add and
its callback, `syncMaxReadPositionForNormalPublish`, in one step,
`publishPlain`) against `steps` (the callback is `plainSync`, before the
ledger's next add completes). The join is not sound step by step
(tests/test_pip473_atomicity.py: a crash, a recovery's completion or an
apply's read between the two ends where neither order does), but at these
bounds it hides no violation: every property keeps its verdict, and only
WatermarkSafe's shortest run grows, by the callback's own step. A crash
before the callback, a recovery's load and an unload (the closed instance
runs the callback, apply = steps) are each in a case. docs/pip473.md's
atomicity table says so."""

from __future__ import annotations

import pytest

from txncheck.spec.pip473.protocol import publish_plain
from txncheck.spec.pip473.spec import Pip473

from .test_apply_audit import PROPERTIES, SMALL
from .test_pruning_audit import first_violations

PLAIN = {**SMALL, "plain": "0", "acks": ""}
CASES = {
    "crash": PLAIN,
    "unload": {**PLAIN, "crashes": 0, "unloads": 1},
    "unload-apply-steps": {**PLAIN, "crashes": 0, "unloads": 1, "apply": "steps"},
}


def _shortest(variant: str, bounds: dict, sync: str, track: str = "atomic") -> dict:
    first, _, _ = first_violations(Pip473(variant, **bounds, sync=sync, track=track))
    return {p: first[p] for p in PROPERTIES if first[p] is not None}


@pytest.mark.parametrize("variant, case", [
    pytest.param(v, c, marks=pytest.mark.slow) if (v, c) == ("merged", "unload-apply-steps") else (v, c)
    for v in ("merged", "fixed") for c in sorted(CASES)])   # that one: about a CPU minute
def test_the_joined_callback_hides_no_violation(variant, case):
    joined, split = (_shortest(variant, CASES[case], sync) for sync in ("atomic", "steps"))
    assert split.keys() == joined.keys()
    longer = {p: split[p] - joined[p] for p in joined if split[p] != joined[p]}
    assert longer == ({"WatermarkSafe": 1} if variant == "merged" else {})


@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_the_add_then_its_callback_is_the_joined_send(variant):
    """From every reachable state of the split model, the add followed at
    once by its callback reaches what the joined publishPlain reaches: the
    split adds runs only by what comes between the two."""
    split, joined = (Pip473(variant, **PLAIN, sync=c) for c in ("steps", "atomic"))
    level = list(dict.fromkeys(split.init_states()))
    seen, sent = set(level), 0
    while level:
        for s in level:
            after = publish_plain.plain(split, s, s.plain)
            if after is None:
                continue
            j = next(j for j in range(len(s.ledger)) if after.ledger[j] != s.ledger[j])
            assert after.part[j].psync
            assert publish_plain.callback(split, after, j) == publish_plain.plain(joined, s, s.plain), s
            sent += 1
        level = [t for s in level for _, t in split.next(s) if t not in seen and not seen.add(t)]
    assert sent > 100


# The bound `track`: a transactional entry's add and its callback
# (`trackPosition`, then the client's answer). A crash between them leaves
# the entry in the ledger and fails the send, which the join cannot reach
# (tests/test_pip473_atomicity.py); so does an unload, after which the
# closed instance runs the callback and the answer is lost with the
# connection (the stock client resends). It changes no verdict at these bounds,
# only the shortest runs that pass a callback (merged: NoMissedDecision by
# one step; with two sends NoOrphanOp by two).
TRACK = {
    "crash": ({**SMALL}, {"NoMissedDecision": 1}),
    "two-sends": ({**SMALL, "writes": "t1:0 t1:0", "acks": "", "client": "stock"},
                  {"NoMissedDecision": 1, "NoOrphanOp": 2}),
    "apply-steps": ({**SMALL, "acks": "", "apply": "steps"}, {"NoMissedDecision": 1}),
    # an unload between the add and its callback: the closed instance runs it, the answer is lost
    "unload": ({**SMALL, "acks": "", "crashes": 0, "unloads": 1, "client": "stock"}, {"NoMissedDecision": 1}),
    "unload-apply-steps": ({**SMALL, "acks": "", "crashes": 0, "unloads": 1, "client": "stock", "apply": "steps"},
                           {"NoMissedDecision": 1}),
}
TRACK_SLOW = {("merged", "crash"), ("merged", "two-sends"), ("merged", "unload-apply-steps")}   # over 2 CPU s


@pytest.mark.parametrize("variant, case", [
    pytest.param(v, c, marks=pytest.mark.slow) if (v, c) in TRACK_SLOW else (v, c)
    for v in ("merged", "fixed") for c in sorted(TRACK)])
def test_the_joined_track_hides_no_violation(variant, case):
    bounds, longer = TRACK[case]
    joined, split = (_shortest(variant, bounds, "atomic", track) for track in ("atomic", "steps"))
    assert split.keys() == joined.keys()
    assert {p: split[p] - joined[p] for p in joined if split[p] != joined[p]} == (
        longer if variant == "merged" else {})
