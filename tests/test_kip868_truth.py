"""KIP-868: a truth table for every property (compiled predicate and Z3
agree with the expected value), and for each property a correct model cannot
violate, the broken mechanism that does violate it."""

from __future__ import annotations

import pytest

from txncheck.spec.kip868 import controller, loader
from txncheck.spec.kip868.spec import Kip868

from .helpers import MODELS
from .helpers import explore
from .truth_tables import cannot_be_seen_failing, check_table

SPEC = Kip868("clearing-loader", txns=2, txn_records=2, normals=1, batch_records=2, failovers=1, snapshots=1)
BASE = SPEC.observe(next(iter(SPEC.init_states())))
T1 = {"t1.r1", "t1.r2"}
ST = lambda a, b: {"status": {"t1": a, "t2": b}}


def test_every_property_has_a_table_and_can_be_seen_failing():
    """Each property fails in a shipped model or in a row of its table."""
    assert set(SPEC.invariants) == set(TABLES)
    assert cannot_be_seen_failing("kip868", TABLES, MODELS) == []


TABLES = {
    "BrokerSeesOnlyCommittedTxns": [
        ({}, True),
        ({**ST("committed", "none"), "broker_image": T1 | {"n1"}}, True),
        ({**ST("aborted", "none"), "broker_image": {"t1.r1"}}, False),      # aborted record published
        ({**ST("open", "none"), "broker_image": {"t1.r1"}}, False),         # partial transaction
        ({**ST("none", "none"), "broker_image": {"n1"}}, True),
    ],
    "ControllerReadsOnlyCommittedTxns": [
        ({**ST("committed", "open"), "controller_view": T1}, True),
        ({**ST("committed", "open"), "controller_view": T1 | {"t2.r1"}}, False),
        ({**ST("aborted", "none"), "controller_view": {"t1.r2"}}, False),
    ],
    "TxnPublishedAtOnce": [
        ({**ST("committed", "none"), "broker_image": T1, "publishes": {"t1": 1, "t2": 0}}, True),
        ({**ST("committed", "none"), "broker_image": {"t1.r1"}, "publishes": {"t1": 1, "t2": 0}}, False),
        ({**ST("committed", "none"), "broker_image": T1, "publishes": {"t1": 2, "t2": 0}}, False),
    ],
    "BrokerPublishesCommitted": [
        ({"broker_caught_up": True, "committed_records": T1, "broker_image": T1}, True),
        ({"broker_caught_up": True, "committed_records": T1 | {"n1"}, "broker_image": T1}, False),
        ({"broker_caught_up": True, "committed_records": T1, "broker_image": set()}, False),  # never publishes
        ({"broker_caught_up": False, "committed_records": T1, "broker_image": set()}, True),  # still loading
    ],
    "SnapshotOutsideTxn": [({"snapshot_in_txn": False}, True), ({"snapshot_in_txn": True}, False)],
    "SnapshotBatchAligned": [({"snapshot_aligned": True}, True), ({"snapshot_aligned": False}, False)],
    "FormerLeaderReplaysCleanly": [
        ({"former_leader_fault": ""}, True),
        ({"former_leader_fault": "End at 3 with no open transaction"}, False),
    ],
    "RecordsWellFormed": [({"replay_fault": ""}, True), ({"replay_fault": "nested Begin(t2)"}, False)],
    "IdleMeansNoOpenTxn": [
        ({**ST("open", "none"), "controller_idle": False}, True),
        ({**ST("open", "none"), "controller_idle": True}, False),
        ({**ST("committed", "aborted"), "controller_idle": True}, True),
    ],
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_truth_table(name):
    check_table(SPEC, name, BASE, TABLES[name])


def _violated(spec, name):
    out = explore(spec, props={name: spec.invariants[name]})
    assert out.verdict == "violation", name
    [v] = out.violations
    return v


def _no_abort_on_failover(log, next_txn, with_record=False, believed=None):
    """A broken new leader: it never aborts the transaction left open."""
    return (), None


@pytest.mark.parametrize("name", ["IdleMeansNoOpenTxn", "RecordsWellFormed"])
def test_failover_without_abort_breaks(name, monkeypatch):
    spec = Kip868("clearing-loader", txns=2, txn_records=1, normals=0, batch_records=1, failovers=1, snapshots=0)
    assert explore(spec).verdict == "ok"
    monkeypatch.setattr(controller, "activation_batch", _no_abort_on_failover)
    v = _violated(spec, name)
    assert any(a[0] == "ControllerFailover" for a, _ in v.path[1:])


def _flush_inside_txn(states):
    """A broken flush that also publishes while the transaction is in `states`."""
    good = loader.flush

    def flush(ld, last_offset, published):
        if ld.txn_state in states:
            return loader._publish(ld, ld.delta, last_offset, published)._replace(txn_state=ld.txn_state)
        return good(ld, last_offset, published)
    return flush


def test_publish_right_after_begin_breaks_snapshot_outside_txn(monkeypatch):
    spec = Kip868("clearing-loader", txns=1, txn_records=1, normals=1, batch_records=1, failovers=0, snapshots=1)
    assert explore(spec).verdict == "ok"
    monkeypatch.setattr(loader, "flush", _flush_inside_txn((loader.STARTED,)))
    v = _violated(spec, "SnapshotOutsideTxn")
    # Nothing uncommitted was exposed: only the snapshot's offset is wrong.
    others = {k: f for k, f in spec.invariants.items() if k != "SnapshotOutsideTxn"}
    assert explore(spec, props=others).verdict == "ok"
    assert v.path[-1][0][0] == "TakeSnapshot"


def test_publish_inside_txn_breaks_published_at_once(monkeypatch):
    spec = Kip868("clearing-loader", txns=1, txn_records=2, normals=0, batch_records=2, failovers=0, snapshots=0)
    assert explore(spec).verdict == "ok"
    monkeypatch.setattr(loader, "flush", _flush_inside_txn(loader.IN_TXN))
    _violated(spec, "TxnPublishedAtOnce")


def test_a_loader_that_never_publishes_fails_completeness_only(monkeypatch):
    spec = Kip868("clearing-loader", txns=1, txn_records=1, normals=1, batch_records=1, failovers=0, snapshots=0)
    monkeypatch.setattr(loader, "flush", lambda ld, last_offset, published: ld)
    monkeypatch.setattr(loader, "_publish", lambda ld, delta, offset, published: ld)
    assert _violated(spec, "BrokerPublishesCommitted").property == "BrokerPublishesCommitted"
    safety = {k: f for k, f in spec.invariants.items() if k != "BrokerPublishesCommitted"}
    assert explore(spec, props=safety).verdict == "ok"


@pytest.mark.parametrize("variant,name", [("kafka-loader", "BrokerSeesOnlyCommittedTxns"),
                                          ("dropping-loader", "BrokerPublishesCommitted")])
def test_loader_variants_break(variant, name):
    spec = Kip868(variant, txns=2, txn_records=1, normals=1, batch_records=2, failovers=1, snapshots=0)
    _violated(spec, name)


def test_pipelined_controller_breaks_controller_reads():
    spec = Kip868("clearing-loader", txns=1, txn_records=2, normals=0, batch_records=1, failovers=0,
                  snapshots=0, pipelined=True)
    _violated(spec, "ControllerReadsOnlyCommittedTxns")
