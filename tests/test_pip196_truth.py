"""PIP-196: a truth table for every property (compiled predicate and Z3
agree with the expected value); the mechanism or hand-built state that
breaks each; and the `prune` bound compared both ways."""

from __future__ import annotations

import pytest

from txncheck.checker.invariants import compile_predicate
from txncheck.checker.model import load_model
from txncheck.spec.pip196.spec import ABORT, DATA, LOADED, READ, STUCK, Pip196

from .helpers import MODELS
from .helpers import explore
from .truth_tables import cannot_be_seen_failing, check_table

SPEC = Pip196("merged", txns=2, capacity=1, ledgers=2, crashes=1)
INIT = next(iter(SPEC.init_states()))
BASE = SPEC.observe(INIT)


def test_every_property_has_a_table_and_can_be_seen_failing():
    """Each property fails in a shipped model or in a row of its table."""
    assert set(SPEC.invariants) == set(TABLES)
    assert cannot_be_seen_failing("pip196", TABLES, MODELS) == []


TABLES = {
    "RecoveredAbortsExact": [
        ({"ready": True, "abortedLive": {"t1"}, "abortedEver": {"t1"}, "tbAborted": {"t1"}}, True),
        ({"ready": True, "abortedLive": {"t1"}, "abortedEver": {"t1"}, "tbAborted": set()}, False),  # lost
        ({"ready": True, "abortedEver": {"t1"}, "tbAborted": {"t2"}}, False),                          # invented
        ({"ready": True, "abortedEver": {"t1"}, "abortedLive": set(), "tbAborted": set()}, True),      # trimmed
        ({"ready": False, "abortedLive": {"t1"}, "abortedEver": {"t1"}, "tbAborted": set()}, True),
    ],
    "RecoveredMaxRead": [
        ({"ready": True, "maxReadPosition": 2, "ghostMaxReadPosition": 2}, True),
        ({"ready": True, "maxReadPosition": 1, "ghostMaxReadPosition": 2}, False),
        ({"ready": True, "maxReadPosition": 3, "ghostMaxReadPosition": 2}, False),
        ({"ready": False, "maxReadPosition": 0, "ghostMaxReadPosition": 2}, True),
    ],
    "MaxReadNeverAhead": [
        ({"serving": True, "maxReadPosition": 1, "ghostMaxReadPosition": 2}, True),
        ({"serving": True, "maxReadPosition": 3, "ghostMaxReadPosition": 2}, False),
        ({"serving": False, "maxReadPosition": 3, "ghostMaxReadPosition": 2}, True),
    ],
    "NoOrphanWhenQuiescent": [
        ({"ready": True, "workerIdle": True, "segmentStored": {"k0"}, "segmentListed": {"k0", "k1"}}, True),
        ({"ready": True, "workerIdle": True, "segmentStored": {"k0", "k1"}, "segmentListed": {"k0"}}, False),
        ({"ready": True, "workerIdle": False, "segmentStored": {"k0", "k1"}, "segmentListed": {"k0"}}, True),
        ({"ready": False, "workerIdle": True, "segmentStored": {"k1"}, "segmentListed": set()}, True),
    ],
    "RecoveryNotStuck": [({"recoveryStuck": False}, True), ({"recoveryStuck": True}, False)],
    "UnlistedKeyReused": [
        ({"ready": True, "workerIdle": True, "segmentStored": {"k0", "k1"}, "segmentListed": {"k0"},
          "nextSequenceId": 1}, True),                                                # k1 is written next
        ({"ready": True, "workerIdle": True, "segmentStored": {"k0", "k1"}, "segmentListed": {"k1"},
          "nextSequenceId": 2}, False),                                               # k0 is never written again
        ({"ready": True, "workerIdle": False, "segmentStored": {"k0", "k1"}, "segmentListed": {"k1"},
          "nextSequenceId": 2}, True),
    ],
    "NoEndedTxnHoldsRead": [
        ({"ready": True, "ongoingTxn": {"t1"}, "endCompleted": set()}, True),
        ({"ready": True, "ongoingTxn": {"t1"}, "endCompleted": {"t1"}}, False),
        ({"ready": True, "ongoingTxn": {"t2"}, "endCompleted": {"t1"}}, True),
        ({"ready": False, "ongoingTxn": {"t1"}, "endCompleted": {"t1"}}, True),
    ],
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_truth_table(name):
    check_table(SPEC, name, BASE, TABLES[name])


def _step(spec, s, action):
    [t] = [t for (name, _), t in spec.next(s) if name == action]
    return t


def _holds(spec, name, s):
    return compile_predicate(spec.schema, spec.invariants[name])(spec.observe(s))


def test_replay_from_an_index_captured_past_an_open_txn_breaks_recovered_max_read():
    """t1 is open at entry 0; an index whose maxReadPosition is 1 (a buggy
    capture) makes the replay start after t1's entry and miss it."""
    s = INIT._replace(ledger=((DATA, 1, 0),), phase=LOADED, start=1, crashes=0)
    assert _holds(SPEC, "RecoveredMaxRead", _step(SPEC, s._replace(start=0), "RecoverReplay"))
    bad = _step(SPEC, s, "RecoverReplay")
    assert bad.max_read == 1 and not _holds(SPEC, "RecoveredMaxRead", bad)


def test_an_index_listing_a_missing_live_segment_breaks_recovery_not_stuck():
    s = INIT._replace(ledger=((DATA, 1, 0), (ABORT, 1, 0)), phase=READ, to_load=((0, 1),), crashes=0)
    stuck = _step(SPEC, s, "RecoverLoadSegments")
    assert stuck.phase == STUCK and not _holds(SPEC, "RecoveryNotStuck", stuck)
    ok = _step(SPEC, s._replace(store=frozenset({(0, (1,), 1)})), "RecoverLoadSegments")
    assert ok.phase == LOADED and _holds(SPEC, "RecoveryNotStuck", ok)


@pytest.mark.parametrize("stem,name", [("index-race-pip-text", "RecoveredAbortsExact"),
                                       ("early-publish", "MaxReadNeverAhead"),
                                       ("orphan-segment", "NoOrphanWhenQuiescent"),
                                       ("resealed-segment", "UnlistedKeyReused"),
                                       ("first-snapshot-window", "NoEndedTxnHoldsRead")])
def test_the_shipped_mechanism_breaks_it(stem, name):
    m = load_model(MODELS / "pip196" / f"{stem}.toml")
    spec = m.instantiate()
    out = explore(spec, props={name: spec.invariants[name]})
    assert out.verdict == "violation"


# stem: distinct states (prune = true, prune = false); verdict and trace length do not change.
PRUNE = {"merged": (7130, 8366), "index-race-pip-text": (1729, 2210), "orphan-segment": (1792, 2316)}


@pytest.mark.parametrize("stem", sorted(PRUNE))
def test_pruned_and_unpruned_rollover_agree(stem):
    m = load_model(MODELS / "pip196" / f"{stem}.toml")
    runs = []
    for prune in (True, False):
        spec = Pip196(m.variant, **{**m.constants, "prune": prune})
        runs.append(explore(spec, props=m.selected_properties(spec)))
    assert tuple(o.distinct_states for o in runs) == PRUNE[stem]
    assert {o.verdict for o in runs} == {m.expect.get("verdict", "ok")}
    assert len({tuple((v.property, v.length) for v in o.violations) for o in runs}) == 1
