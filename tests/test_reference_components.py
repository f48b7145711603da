"""The reference implementation's components, scenario by scenario, in each
behaviour. Every scenario drives the scheduler explicitly."""

from __future__ import annotations

import pytest

from txncheck.reference.cluster import Cluster
from txncheck.reference.coordinator import INVALID_STATUS, NOT_FOUND
from txncheck.reference.records import header_path, ops_prefix
from txncheck.reference.transaction_buffer import PublishRequest

RANGES = {"s1": (0, 2), "s2": (2, 4)}


def cluster(b, **kw):
    return Cluster(b, RANGES, ["sub"], seed_entries=True, **kw)


def run(c, *label):
    task = c.scheduler.find(*label)
    assert task is not None, (label, c.scheduler.runnable())
    c.scheduler.run(task)


def commit(c, txn):
    got = []
    c.tc.end_txn(txn, True, got.append)
    return got


def test_pip_text_exposes_an_entry_before_its_op_record():
    """The text appends first: until the op record lands, nothing pins the
    read position and the dispatcher delivers an uncommitted entry."""
    c = cluster("pip-text")
    t = c.tc.new_txn()
    req = c.send(0, t, "m")
    run(c, "publish", "s1", req.rid, "check")
    run(c, "publish", "s1", req.rid, "append")
    run(c, "ledger-add", "s1")
    assert req.stage == "appended" and req.position == 1
    assert c.brokers["s1"].tb.get_max_read_position() == 1
    assert c.dispatch("s1") == "delivered"
    assert c.store.get(header_path(t)).value["state"] == "OPEN"


@pytest.mark.parametrize("b", ["merged", "fixed"])
def test_op_first_holds_the_read_position_until_commit(b):
    c = cluster(b)
    t = c.tc.new_txn()
    req = c.send(0, t, "m")
    c.run_until_idle()
    assert req.stage == "done" and req.position == 1
    tb = c.brokers["s1"].tb
    assert tb.get_max_read_position() == 0 and c.dispatch("s1") is None
    assert commit(c, t) == []  # the client is answered after finalize
    c.run_until_idle()
    assert tb.get_max_read_position() == 1 and c.dispatch("s1") == "delivered"
    assert c.store.children(ops_prefix(t)) == []


def test_merged_late_append_after_materialization_leaves_an_orphan_op():
    """The cached-OPEN check passes, the participant materializes the commit,
    then the op record lands: nobody will delete it (protocol notes)."""
    c = cluster("merged")
    t = c.tc.new_txn()
    first = c.send(0, t, "a")
    c.run_until_idle()
    late = c.send(0, t, "b")
    run(c, "publish", "s1", late.rid, "check")  # cache says OPEN
    commit(c, t)
    run(c, "stream", "broker:s1")  # materialize: evict, delete ops
    assert c.store.children(ops_prefix(t)) == []
    c.run_until_idle()
    assert first.stage == late.stage == "done"
    assert len(c.store.children(ops_prefix(t))) == 1  # the orphan
    c.scheduler.advance(c.env.behaviour.retention_ms)
    assert c.tc.collect(t) is False and c.store.get(header_path(t)) is not None  # re-drives forever


def _late_send_checked():
    """fixed: t's first send lands; a second send of t has passed its cache check only."""
    c = cluster("fixed")
    t = c.tc.new_txn()
    c.send(0, t, "a")
    c.run_until_idle()
    late = c.send(0, t, "b")
    run(c, "publish", "s1", late.rid, "check")
    return c, t, late


def test_fixed_validate_rejects_the_late_write():
    c, t, late = _late_send_checked()
    commit(c, t)
    run(c, "stream", "broker:s1")
    c.run_until_idle()
    assert late.stage == "rejected" and late.result == "TxnConflict"
    assert c.store.children(ops_prefix(t)) == []


@pytest.mark.parametrize("b, kept", [("merged", False), ("fixed", True), ("pip-text", True)])
def test_committed_ack_after_a_participant_restart(b, kept):
    """merged applies only the acks held in memory: a restart loses them."""
    c = cluster(b)
    t = c.tc.new_txn()
    ack = c.ack("s1", t, 0)
    c.run_until_idle()
    assert ack.stage == "done"
    c.crash("s1")
    c.restart("s1")
    commit(c, t)
    c.run_until_idle()
    assert c.ledgers["s1"].cursors["sub"].mark_delete == (0 if kept else -1)


def test_pip_text_gc_force_delete_loses_a_slow_participants_ack():
    """Review of PIP-473: the sweep deletes the ack op records of a participant
    that has not materialized yet; when it does, there is nothing to apply."""
    c = cluster("pip-text")
    t = c.tc.new_txn()
    c.ack("s1", t, 0)
    c.run_until_idle()
    commit(c, t)
    run(c, "tc-finalize", t)
    c.scheduler.advance(c.env.behaviour.retention_ms)
    assert c.tc.collect(t) is True
    c.run_until_idle()  # the watch events arrive now
    assert c.ledgers["s1"].cursors["sub"].mark_delete == -1


def test_coordinator_answers_and_ids():
    c = cluster("merged")
    t1 = c.tc.new_txn()
    got = commit(c, t1)
    c.run_until_idle()
    assert got == ["COMMITTED"]
    assert commit(c, t1) == [] and c.scheduler.find("tc-finalize", t1) is not None  # idempotent retry
    c.run_until_idle()
    again = []
    c.tc.end_txn(t1, False, again.append)
    assert again == [INVALID_STATUS]
    c.tc_failover()
    t2 = c.tc.new_txn()
    assert t2 != t1  # the counter is durable
    missing = []
    c.tc.end_txn("t99", True, missing.append)
    assert missing == [NOT_FOUND]


def test_timeout_and_gc_run_from_periodic_sweeps():
    c = cluster("merged")
    t = c.tc.new_txn(timeout_ms=5_000)
    c.tc.start_sweeps()
    c.scheduler.advance(10_000)
    c.run_until_idle()
    rec = c.store.get(header_path(t))
    assert rec.value["state"] == "ABORTED" and rec.value["finalized_ms"] == 10_000
    c.scheduler.advance(c.env.behaviour.retention_ms + 10_000)
    c.run_until_idle()
    assert c.store.get(header_path(t)) is None


def test_split_terminates_the_parent_and_routes_to_children():
    c = cluster("merged")
    t = c.tc.new_txn()
    c.send(0, t, "a")
    c.run_until_idle()
    c.split(["s1"], {"s3": (0, 1), "s4": (1, 2)})
    assert c.controller.state("s1") == "SEALED" and c.controller.route(1) == "s4"
    assert c.ledgers["s3"].cursors["sub"].mark_delete == -1
    tb = c.brokers["s1"].tb
    late = PublishRequest("x", t, "b")  # a producer that has not seen the new layout yet
    tb.append_buffer_to_txn(late)
    c.run_until_idle()
    assert late.result == "TopicTerminated"
    commit(c, t)
    c.run_until_idle()  # materialization on a sealed segment needs no append
    assert tb.get_max_read_position() == 1 and c.dispatch("s1") == "delivered"


def test_crash_fails_in_flight_sends_and_recovery_rebuilds_from_the_store():
    c = cluster("pip-text")
    t = c.tc.new_txn()
    done = c.send(0, t, "a")
    c.run_until_idle()
    pending = c.send(0, t, "b")
    run(c, "publish", "s1", pending.rid, "check")
    c.crash("s1")
    assert pending.result == "Disconnected" and c.scheduler.pending("publish") == []
    c.restart("s1")
    b = c.brokers["s1"]
    assert t in b.cache and b.tb.first == {t: done.position}
    assert b.tb.get_max_read_position() == done.position - 1


def test_merged_pruned_aborted_record_exposes_a_late_entry():
    """Protocol notes, candidate problem: the prune key of an aborted record
    can sit below a late entry of the same txn; once pruned, the late entry
    is an unknown txnId, and unknown counts as visible."""
    c = cluster("merged")
    t = c.tc.new_txn()
    c.send(0, t, "a")
    c.run_until_idle()
    late = c.send(0, t, "b")
    run(c, "publish", "s1", late.rid, "check")       # admitted from the cache
    c.tc.end_txn(t, False, lambda r: None)
    run(c, "stream", "broker:s1")                     # materialize the abort
    c.run_until_idle()                                # the late op and entry land
    assert late.stage == "done" and late.position == 2
    tb = c.brokers["s1"].tb
    cursor = c.brokers["s1"].dispatchers["sub"].cursor
    assert tb.is_txn_aborted(t)
    cursor.mark_delete(1)                             # entries up to 1 acknowledged (the aborted one filtered)
    assert c.trim("s1") == 2 and not tb.is_txn_aborted(t)
    assert c.dispatch("s1") == "skipped"              # entry 1 is trimmed
    assert c.dispatch("s1") == "delivered"            # entry 2: the late entry of an aborted txn
    assert c.consumers["s1/sub"].received[-1] == ("s1", 2, ("txn", t, "b"))


def test_fixed_keeps_the_late_entry_out():
    c, t, late = _late_send_checked()
    c.tc.end_txn(t, False, lambda r: None)
    run(c, "stream", "broker:s1")
    c.run_until_idle()
    assert late.stage == "rejected" and c.ledgers["s1"].entries[-1] == ("txn", t, "a")
