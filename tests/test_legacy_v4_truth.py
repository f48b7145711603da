"""legacy_v4: a truth table for every property (compiled predicate and Z3
agree with the expected value), and the variant that breaks each."""

from __future__ import annotations

import pytest

from txncheck.spec.legacy_v4.spec import LegacyV4

from .helpers import MODELS
from .helpers import explore
from .truth_tables import cannot_be_seen_failing, check_table

SPEC = LegacyV4("default", txns=1, segments=2, splits=1)
BASE = SPEC.observe(next(iter(SPEC.init_states())))
TS = ("t1", "s1")


def test_every_property_has_a_table_and_can_be_seen_failing():
    """Each property fails in a shipped model or in a row of its table."""
    assert set(SPEC.invariants) == set(TABLES)
    assert cannot_be_seen_failing("legacy_v4", TABLES, MODELS) == []


TABLES = {
    "EndTxnNotStranded": [
        ({"status": {"t1": "COMMITTING"}, "partition": {TS}}, True),                   # s1 still active
        ({"status": {"t1": "COMMITTING"}, "partition": {TS}, "segState": {**BASE["segState"], "s1": "SEALED"}},
         False),                                                                     # owes a marker to a sealed s1
        ({"status": {"t1": "COMMITTING"}, "partition": {TS}, "partitionAcked": {TS},
          "segState": {**BASE["segState"], "s1": "SEALED"}}, True),                  # marker written before the seal
        ({"status": {"t1": "COMMITTED"}, "partition": {TS}, "segState": {**BASE["segState"], "s1": "SEALED"}},
         True),
    ],
    "Atomicity": [
        ({"commitMarker": {TS, ("t1", "s2")}}, True),
        ({"commitMarker": {TS}, "abortMarker": {("t1", "s2")}}, False),
        ({"commitMarker": {TS}, "abortMarker": {TS}}, False),
    ],
    "ReadCommitted": [
        ({"delivered": {TS}, "status": {"t1": "COMMITTING"}}, True),
        ({"delivered": {TS}, "status": {"t1": "ABORTING"}}, False),
        ({"delivered": {TS}, "status": {"t1": "REMOVED"}, "outcome": {"t1": "COMMITTED"}}, True),
        ({"delivered": {TS}, "status": {"t1": "OPEN"}}, False),
    ],
    "CommittingIsFinal": [
        ({"everCommitting": {"t1"}, "status": {"t1": "COMMITTED"}}, True),
        ({"everCommitting": {"t1"}, "status": {"t1": "TIME_OUT"}}, False),
        ({"everCommitting": {"t1"}, "status": {"t1": "ABORTING"}}, False),
        ({"everCommitting": set(), "status": {"t1": "ABORTING"}}, True),
    ],
    "CommitReplyTruthful": [
        ({"asked": {"t1": "commit"}, "result": {"t1": "ok"}, "outcome": {"t1": "COMMITTED"}}, True),
        ({"asked": {"t1": "commit"}, "result": {"t1": "failed"}, "outcome": {"t1": "COMMITTED"}}, False),
        ({"asked": {"t1": "commit"}, "result": {"t1": "ok"}, "outcome": {"t1": "ABORTED"}}, False),
        ({"asked": {"t1": "commit"}, "result": {"t1": "failed"}, "outcome": {"t1": "ABORTED"}}, True),
        ({"asked": {"t1": "abort"}, "result": {"t1": "failed"}, "outcome": {"t1": "COMMITTED"}}, True),
    ],
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_truth_table(name):
    check_table(SPEC, name, BASE, TABLES[name])


@pytest.mark.parametrize("variant,bounds,name", [
    ("default", dict(splits=1), "EndTxnNotStranded"),
    ("timeout-race", dict(splits=0, timeout=True), "Atomicity"),
    ("timeout-race", dict(splits=0, timeout=True), "CommittingIsFinal"),
    ("timeout-race", dict(splits=0, timeout=True), "ReadCommitted"),
    ("retry-strict", dict(splits=0, restarts=1), "CommitReplyTruthful"),
    ("current", dict(splits=0, restarts=1), "CommitReplyTruthful"),
    ("retry-reply", dict(splits=0, restarts=1, op_timeout=False), "CommitReplyTruthful"),
])
def test_the_variant_breaks_it_and_the_fix_does_not(variant, bounds, name):
    spec = LegacyV4(variant, txns=1, segments=2, **bounds)
    out = explore(spec, props={name: spec.invariants[name]})
    assert out.verdict == "violation"
    if variant != "default":
        fixed = LegacyV4("default", txns=1, segments=2, **bounds)
        assert explore(fixed, props={name: fixed.invariants[name]}).verdict == "ok"
