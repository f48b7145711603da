"""pip196 `merged`: the three mechanisms of the shipped TopicTransactionBuffer
that PIP-196's text does not describe (issue 43, item 6): the NoSnapshot state,
the first snapshot taken before the first transactional append, and the read
limit taken from the buffer's own tracking of ongoing txns. Each is shown on
hand-built states (what it does) and on the graph of models/pip196/merged.toml
(the invariant that makes NoSnapshot's skipped replay safe)."""

from __future__ import annotations

from txncheck.checker.invariants import compile_predicate
from txncheck.spec.pip196.spec import ABORT, DATA, DOWN, NOSNAP, PLAIN, READY, Pip196

from .helpers import explore


def _spec(variant="merged", **bounds):
    return Pip196(variant, **{"txns": 2, "capacity": 1, "ledgers": 2, "crashes": 1, **bounds})


def _holds(spec, name, state) -> bool:
    return compile_predicate(spec.schema, spec.invariants[name])(spec.observe(state))


def _next(spec, s):
    return {a[0]: t for a, t in spec.next(s)}


def test_a_new_topic_starts_in_no_snapshot_and_takes_the_first_snapshot_before_any_write():
    spec = _spec()
    [init] = spec.init_states()
    assert init.phase == NOSNAP and init.index is None
    succ = _next(spec, init)
    assert "TxnWrite" not in succ and "TakeFirstSnapshot" in succ
    first = succ["TakeFirstSnapshot"]
    assert first.phase == READY and first.index == ((), (), 0)
    assert "TxnWrite" in _next(spec, first)
    # the document's variant has no such state
    assert next(iter(_spec("pip-text").init_states())).phase == READY


def test_recovery_with_no_index_skips_the_replay_and_puts_the_limit_at_the_lac():
    """noNeedToRecover: hand-built, a topic holding t1's data and abort marker but
    no index (unreachable in merged, see below): the buffer does not replay, so
    it never learns t1 aborted, and RecoveredAbortsExact fails; the text's
    variant replays from the start and knows it."""
    spec = _spec()
    [init] = spec.init_states()
    down = init._replace(phase=DOWN, ledger=((DATA, 1, 0), (ABORT, 1, 0)))
    nosnap = _next(spec, down)["RecoverReadIndex"]
    assert nosnap.phase == NOSNAP and nosnap.max_read == 2 and nosnap.aborted == frozenset()
    assert not _holds(spec, "RecoveredAbortsExact", nosnap)
    text = _spec("pip-text")
    s = _next(text, down)["RecoverReadIndex"]
    for step in ("RecoverLoadSegments", "RecoverReplay"):
        s = _next(text, s)[step]
    assert s.aborted == {1} and _holds(text, "RecoveredAbortsExact", s)


def test_in_merged_no_transactional_entry_is_ever_in_a_topic_without_an_index():
    """What makes the skipped replay safe: the first snapshot writes the index
    before the first transactional append lands, and an index is never deleted."""
    spec = _spec(commits=True)
    ex = explore(spec, props={}).exploration
    assert all(s.index is not None for s in ex.states if any(e[0] == DATA for e in s.ledger))
    assert any(s.phase == NOSNAP and s.crashes == 0 for s in ex.states)  # NoSnapshot after a crash


def test_the_read_limit_comes_from_the_buffers_own_tracking():
    """updateMaxReadPosition: hand-built, a ready buffer whose tracking misses
    t1's open entry; a normal publish then moves the limit to the LAC, past t1
    (MaxReadNeverAhead fails), where the never-crashed value would have healed it."""
    spec = _spec(publishes=1)
    [init] = spec.init_states()
    missed = init._replace(phase=READY, index=((), (), 0), ledger=((DATA, 1, 0),), ongoing=(), max_read=0)
    after = _next(spec, missed)["Publish"]
    assert after.ledger[-1][0] == PLAIN and after.max_read == 2
    assert not _holds(spec, "MaxReadNeverAhead", after)
    tracked = missed._replace(ongoing=((1, 0),))
    assert _next(spec, tracked)["Publish"].max_read == 0


def test_the_no_snapshot_witness_is_reached_by_merged():
    spec = _spec()
    w = compile_predicate(spec.schema, spec.witnesses["NoSnapshotAfterCrash"])
    assert any(w(spec.observe(s)) for s in explore(spec, props={}).exploration.states)
