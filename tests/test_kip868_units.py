"""KIP-868 building blocks: the broker's loader, the controller's offsets,
the failover batch, and the spec's input checks."""

from __future__ import annotations

import pytest

from txncheck.spec.api import SpecError
from txncheck.spec.kip868 import controller, loader
from txncheck.spec.kip868.records import state_at, txn_status
from txncheck.spec.kip868.spec import Kip868

B1, R11, R12, E1, A1 = ("B", 1), ("R", 1, 1), ("R", 1, 2), ("E", 1), ("A", 1)
B2, N1 = ("B", 2), ("N", 1)


def commit(ld, batches, base, clearing):
    """One commit callback: load the batches (first offset `base`), then flush."""
    published, off = [], base
    for b in batches:
        ld = loader.load_batch(ld, b, off, clearing, published)
        off += len(b)
    return loader.flush(ld, off - 1, published), published


@pytest.mark.parametrize("clearing", [False, True])
def test_nothing_is_published_inside_a_transaction(clearing):
    ld, pub = commit(loader.INITIAL, [(B1, R11)], 0, clearing)
    assert ld.image == frozenset() and ld.image_offset == -1 and ld.txn_state == "continued"
    ld, pub = commit(ld, [(R12, E1)], 2, clearing)
    assert ld.image == {R11, R12} and ld.image_offset == 3
    assert pub == [frozenset({R11, R12})]  # one image, all at once


@pytest.mark.parametrize("clearing", [False, True])
def test_abort_flushed_alone_publishes_an_empty_change(clearing):
    ld, _ = commit(loader.INITIAL, [(B1, R11)], 0, clearing)
    ld, pub = commit(ld, [(A1,)], 2, clearing)
    assert ld.image == frozenset() and ld.image_offset == 2 and pub == [frozenset()]
    ld, _ = commit(ld, [(N1,)], 3, clearing)
    assert ld.image == {N1}


@pytest.mark.parametrize("follow", [(N1,), (B2,)])
def test_kafka_loader_publishes_aborted_records_when_abort_is_not_flushed_alone(follow):
    ld, _ = commit(loader.INITIAL, [(B1, R11)], 0, False)
    ld, _ = commit(ld, [(A1,), follow], 2, False)
    assert R11 in ld.image


@pytest.mark.parametrize("follow", [(N1,), (B2,)])
def test_clearing_loader_drops_aborted_records(follow):
    ld, _ = commit(loader.INITIAL, [(B1, R11)], 0, True)
    ld, _ = commit(ld, [(A1,), follow], 2, True)
    assert R11 not in ld.image and ld.image_offset >= 2  # past the Abort


def test_begin_publishes_what_precedes_it():
    ld, pub = commit(loader.INITIAL, [(N1, B1, R11)], 0, False)
    assert ld.image == {N1} and ld.image_offset == 0 and ld.txn_state == "continued"


@pytest.mark.parametrize("batches,fault", [
    ([(B1, B2)], "nested Begin(t2)"),
    ([(E1,)], "End(t1) without Begin"),
    ([(A1,)], "Abort(t1) without Begin"),
])
def test_malformed_sequences_are_replay_faults(batches, fault):
    ld, _ = commit(loader.INITIAL, batches, 0, False)
    assert ld.fault == fault


def test_last_stable_offset_stays_below_an_open_transaction():
    log = ((N1,), (B1, R11))
    assert controller.lso_after_commit(-1, log, 1) == 0
    assert controller.lso_after_commit(0, log, 2) == 0  # min(txnStart - 1, lastCommitted)
    log = log + ((R12, E1),)
    assert controller.lso_after_commit(0, log, 3) == 4


def test_end_replayed_at_append_lets_the_lso_into_a_partial_transaction():
    # The active controller replays End when it appends it: once End is in
    # its log, committing the first batch moves the LSO past t1.r1.
    log = ((B1, R11), (R12, E1))
    lso = controller.lso_after_commit(-1, log, 1)
    assert lso == 1 and state_at(log[0] + log[1], lso) == {R11}


def test_lso_from_committed_records_stays_before_the_partial_transaction():
    log = ((B1, R11), (R12, E1))
    assert controller.lso_after_commit(-1, log, 1, from_committed=True) == -1
    assert controller.lso_after_commit(-1, log, 2, from_committed=True) == 3


def test_a_standby_replaying_an_open_transaction_stops_before_it():
    assert controller.lso_of_replayed_log(((N1,), (B1, R11))) == 0
    assert controller.lso_of_replayed_log(((B1, R11),)) == -1


def test_failover_aborts_a_dangling_transaction_first():
    assert controller.activation_batch(((N1,), (B1, R11)), 2) == ((A1,), None)
    assert controller.activation_batch(((B1,),), 2) == ((A1, B2), 2)  # empty log: re-run the bootstrap
    assert controller.activation_batch(((B1,),), None) == ((A1,), None)
    assert controller.activation_batch(((B1, R11, E1),), 2) == ((), None)


def test_abort_reverts_the_controller_to_before_begin():
    recs = (N1, B1, R11, A1)
    assert state_at(recs, 2) == {N1, R11}
    assert state_at(recs, 3) == {N1}
    assert txn_status(recs, 2) == ("aborted", "none")


def test_bad_bounds_and_variants_are_one_line_errors():
    with pytest.raises(SpecError, match="unknown variant"):
        Kip868("default")
    with pytest.raises(SpecError, match="txns = 0 is out of range"):
        Kip868("kafka-loader", txns=0)
    with pytest.raises(SpecError, match="pipelined must be true or false"):
        Kip868("kafka-loader", pipelined=1)


def test_predicates_for_liveness_are_declared():
    spec = Kip868("clearing-loader")
    assert set(spec.predicates) == {"InTxn", "NoOpenTxn"}


def test_standby_replay_throws_where_offset_control_manager_does():
    """OffsetControlManager.replay: a Begin while a start offset is set, an
    End or Abort while none is, throws; otherwise the start offset follows."""
    recs = (B1, R11, E1, B2, A1)
    assert controller.standby_replay(recs, -1, 0, 0, 3) == (-1, 1, "")
    assert controller.standby_replay(recs, -1, 0, 0, 4) == (3, 2, "")
    assert controller.standby_replay(recs, 0, 1, 0, 1) == (0, 1, "Begin at 0 while the transaction at 0 was never closed")
    assert controller.standby_replay(recs, -1, 0, 2, 3) == (-1, 0, "End at 2 with no open transaction")
    assert controller.standby_replay(recs, 3, 2, 4, 5) == (-1, 2, "")


def test_deactivate_keeps_the_appended_start_offset_unless_fixed():
    """Appended [Begin, r] (committed) and [r, End]: the active controller's
    start offset is -1 (End replayed when appended); the fix takes the
    committed log's open transaction (Begin at 0)."""
    log = ((B1, R11), (R12, E1))
    assert controller.deactivated(log, 1) == (-1, 0)
    assert controller.deactivated(log, 1, resets=True) == (0, 1)
    assert controller.deactivated(((B1,),), 0) == (0, 1)            # Begin appended, not committed
    assert controller.deactivated(((B1,),), 0, resets=True) == (-1, 0)
