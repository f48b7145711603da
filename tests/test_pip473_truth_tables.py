"""Truth tables for every PIP-473 property: hand-written observations that
must satisfy it and some that must not, each evaluated both by the compiled
predicate the engines use and by Z3 itself.

An observation starts from a quiet one (t1 and t2 OPEN, nothing written,
every segment up and reading everything) and changes only what a row names,
so each row reads as the situation it describes.
"""

from __future__ import annotations

import copy

import pytest

from txncheck.checker.invariants import Z3Evaluator, compile_predicate
from txncheck.spec.registry import load_spec_class

SPEC = load_spec_class("pip473")("merged", txns=2, writes="t1:0 t2:0", acks="t1:s1:1:ind t2:s1:2:cum",
                                  reshape="merge")
Z3 = Z3Evaluator(SPEC.schema, SPEC.invariants)


def quiet() -> dict:
    t, s = SPEC.txn_names, SPEC.seg_names
    return {
        "hdr": {x: "OPEN" for x in t}, "fin": set(), "fincnt": {x: 0 for x in t}, "decided": {x: "" for x in t},
        "told": {x: "open" for x in t}, "late": set(), "opsleft": {x: 0 for x in t}, "gcops": {}, "gcunmat": {},
        "entry": {}, "dlv": {}, "skipped": set(), "up": set(s), "maxread": {x: 0 for x in s},
        "firstopen": {x: 99 for x in s}, "tracks": set(), "pending": set(), "pins": set(), "sealed": set(),
        "ackw": set(), "ackafter": set(), "ackcover": set(), "fenced": set(), "ackop": set(), "acked": set(),
        "opon": set(), "inflight": set(), "fanning": set(), "wmark": {},
    }


def _apply(obs: dict, change: dict) -> dict:
    obs = copy.deepcopy(obs)
    for k, v in change.items():
        if isinstance(obs[k], dict):
            obs[k].update(v)
        else:
            obs[k] = set(v)
    return obs


COMMITTED_ENTRY = {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "COMMITTED"}, "entry": {("s1", "p2"): "t1"}}
ABORTED_ENTRY = {"decided": {"t1": "ABORTED"}, "hdr": {"t1": "ABORTED"}, "entry": {("s1", "p2"): "t1"}}

# property -> [(row, change to the quiet observation, holds?)]
TABLES: dict[str, list[tuple[str, dict, bool]]] = {
    "NoAbortedDelivered": [
        ("a committed entry delivered", {**COMMITTED_ENTRY, "dlv": {("s1", "p2"): "COMMITTED"}}, True),
        ("an aborted entry never delivered", ABORTED_ENTRY, True),
        ("an aborted entry delivered", {**ABORTED_ENTRY, "dlv": {("s1", "p2"): "OPEN"}}, False),
    ],
    "CommittedVisible": [
        ("a committed entry visible", COMMITTED_ENTRY, True),
        ("an aborted entry hidden", {**ABORTED_ENTRY, "skipped": {("s1", "p2")}}, True),
        ("a committed entry hidden on a crashed segment", {**COMMITTED_ENTRY, "skipped": {("s1", "p2")},
                                                           "up": {"s2", "s3"}}, True),
        ("a committed entry hidden by a participant that materialized",
         {**COMMITTED_ENTRY, "skipped": {("s1", "p2")}}, False),
        ("a committed entry hidden while another participant still tracks the txn",
         {**COMMITTED_ENTRY, "skipped": {("s1", "p2")}, "tracks": {("s2", "t1")}}, False),
    ],
    "NoLateAdmission": [
        ("nothing admitted late", {}, True),
        ("a send admitted after the decision", {"late": {"t2"}}, False),
    ],
    "NoLostCommittedAck": [
        ("a committed ack applied", {"decided": {"t1": "COMMITTED"}, "ackw": {("t1", "s1", "p1")},
                                     "acked": {("s1", "p1")}}, True),
        ("a committed ack still pending as an op", {"decided": {"t1": "COMMITTED"}, "ackw": {("t1", "s1", "p1")},
                                                    "ackop": {("t1", "s1", "p1")}}, True),
        ("an aborted ack dropped", {"decided": {"t1": "ABORTED"}, "ackw": {("t1", "s1", "p1")}}, True),
        ("a committed ack gone and not applied", {"decided": {"t1": "COMMITTED"}, "ackw": {("t1", "s1", "p1")}},
         False),
    ],
    "SingleFinalization": [
        ("finalized once", {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "COMMITTED"}, "fincnt": {"t1": 1},
                            "told": {"t1": "told-committed"}}, True),
        ("collected after the decision", {"decided": {"t1": "ABORTED"}, "hdr": {"t1": "GONE"},
                                          "told": {"t1": "told-aborted"}}, True),
        ("finalized twice", {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "COMMITTED"}, "fincnt": {"t1": 2}}, False),
        ("the header left its first decision", {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "ABORTED"}}, False),
        ("told committed after an abort", {"decided": {"t1": "ABORTED"}, "hdr": {"t1": "ABORTED"},
                                           "told": {"t1": "told-committed"}}, False),
        ("told aborted after a commit", {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "COMMITTED"},
                                         "told": {"t1": "told-aborted"}}, False),
    ],
    "ReadCommitted": [
        ("a committed entry delivered", {"dlv": {("s1", "p2"): "COMMITTED"}}, True),
        ("a plain entry skipped by nothing", {"entry": {("s1", "p1"): "-"}}, True),
        ("an OPEN entry delivered", {"dlv": {("s1", "p2"): "OPEN"}}, False),
        ("an ABORTED entry delivered", {"dlv": {("s3", "p3"): "ABORTED"}}, False),
    ],
    "AbortedStaysHidden": [
        ("an OPEN entry delivered (ReadCommitted's other clause)", {"dlv": {("s1", "p2"): "OPEN"}}, True),
        ("a committed entry delivered", {"dlv": {("s1", "p2"): "COMMITTED"}}, True),
        ("an entry delivered after its txn's abort", {"dlv": {("s1", "p2"): "ABORTED"}}, False),
    ],
    "GcSafety": [
        ("collected with nothing left", {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "GONE"},
                                         "gcops": {"t1": 0}, "gcunmat": {"t1": 0}}, True),
        ("an OPEN header is not collected", {"gcops": {"t1": 3}}, True),
        ("collected with an op left", {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "GONE"},
                                       "gcops": {"t1": 1}, "gcunmat": {"t1": 0}}, False),
        ("collected before a live participant materialized",
         {"decided": {"t1": "COMMITTED"}, "hdr": {"t1": "GONE"}, "gcops": {"t1": 0}, "gcunmat": {"t1": 1}}, False),
        ("an undecided header collected", {"hdr": {"t1": "GONE"}, "gcops": {"t1": 0}, "gcunmat": {"t1": 0}}, False),
    ],
    "MaxReadPositionSafe": [
        ("read position below the first OPEN entry", {"maxread": {"s1": 1}, "firstopen": {"s1": 2}}, True),
        ("no OPEN entry", {"maxread": {"s1": 4}}, True),
        ("a crashed segment is not read", {"maxread": {"s1": 4}, "firstopen": {"s1": 2}, "up": {"s2", "s3"}}, True),
        ("read position at the first OPEN entry", {"maxread": {"s1": 2}, "firstopen": {"s1": 2}}, False),
    ],
    "WatermarkSafe": [
        ("no watermark persisted", {"firstopen": {"s1": 2}}, True),
        ("watermark below the first OPEN entry", {"wmark": {"s1": 1}, "firstopen": {"s1": 2}}, True),
        ("watermark with no OPEN entry", {"wmark": {"s1": 4}}, True),
        ("watermark at the first OPEN entry", {"wmark": {"s1": 2}, "firstopen": {"s1": 2}}, False),
        ("a crashed segment's watermark counts: the next recovery trusts it",
         {"wmark": {"s1": 3}, "firstopen": {"s1": 2}, "up": {"s2", "s3"}}, False),
    ],
    "NoOrphanOp": [
        ("an op of an OPEN txn", {"opon": {("t1", "s1")}}, True),
        ("an op of a decided txn still tracked", {"decided": {"t1": "COMMITTED"}, "opon": {("t1", "s1")},
                                                  "tracks": {("s1", "t1")}}, True),
        ("an op of a decided txn with an event pending", {"decided": {"t1": "COMMITTED"}, "opon": {("t1", "s1")},
                                                          "pending": {"s1"}}, True),
        ("an op of a decided txn whose send is in flight", {"decided": {"t1": "ABORTED"}, "opon": {("t1", "s1")},
                                                            "inflight": {("t1", "s1")}}, True),
        ("an op nobody will materialize", {"decided": {"t1": "COMMITTED"}, "opon": {("t1", "s1")}}, False),
    ],
    "NoMissedDecision": [
        ("an OPEN txn pins", {"pins": {("s1", "t1")}}, True),
        ("a decided txn pins with an event pending", {"decided": {"t1": "COMMITTED"}, "pins": {("s1", "t1")},
                                                      "pending": {"s1"}}, True),
        ("a decided txn pins with nothing left to tell", {"decided": {"t1": "COMMITTED"}, "pins": {("s1", "t1")}},
         False),
        ("a decided txn pins while the TC still owes its fan-out",
         {"decided": {"t1": "COMMITTED"}, "pins": {("s1", "t1")}, "fanning": {"t1"}}, True),
        ("the TC owes another txn's fan-out", {"decided": {"t1": "COMMITTED"}, "pins": {("s1", "t1")},
                                                "fanning": {"t2"}}, False),
    ],
    "NoAbortedAck": [
        ("nothing acked", {}, True),
        ("acked by a committed individual ack", {"decided": {"t1": "COMMITTED"}, "ackcover": {("t1", "s1", "p1")},
                                                 "acked": {("s1", "p1")}}, True),
        ("acked below a committed cumulative ack",
         {"decided": {"t2": "COMMITTED"}, "ackcover": {("t2", "s1", "p1"), ("t2", "s1", "p2")},
          "acked": {("s1", "p1"), ("s1", "p2")}}, True),
        ("acked by an aborted txn's ack", {"decided": {"t1": "ABORTED"}, "ackcover": {("t1", "s1", "p1")},
                                           "acked": {("s1", "p1")}}, False),
        ("acked by an OPEN txn's ack", {"ackcover": {("t1", "s1", "p1")}, "acked": {("s1", "p1")}}, False),
        ("acked by nobody", {"acked": {("s3", "p2")}}, False),
    ],
    "AcksFixedAtDecision": [
        ("acks written while OPEN", {"ackw": {("t1", "s1", "p1")}}, True),
        ("an ack written after the decision", {"ackw": {("t1", "s1", "p1")}, "ackafter": {("t1", "s1", "p1")}},
         False),
    ],
    "ParentFenced": [
        ("entries before the termination", {"entry": {("s1", "p2"): "t1"}}, True),
        ("an entry appended to a terminated parent", {"fenced": {("s2", "p2")}}, False),
    ],
}
# Atomicity is its three clauses.
TABLES["Atomicity"] = [
    (f"{clause}: {row}", change, holds)
    for clause in ("NoAbortedDelivered", "CommittedVisible", "NoLateAdmission")
    for row, change, holds in TABLES[clause] if not holds
] + [("a committed entry delivered and visible", {**COMMITTED_ENTRY, "dlv": {("s1", "p2"): "COMMITTED"}}, True)]


def test_every_property_has_a_table_with_both_outcomes():
    assert set(TABLES) == set(SPEC.invariants)
    for name, rows in TABLES.items():
        assert {holds for _, _, holds in rows} == {True, False}, name


@pytest.mark.parametrize("name,row,change,holds", [
    (name, row, change, holds) for name, rows in sorted(TABLES.items()) for row, change, holds in rows],
    ids=[f"{name}: {row}" for name, rows in sorted(TABLES.items()) for row, _, _ in rows])
def test_truth_table(name, row, change, holds):
    obs = _apply(quiet(), change)
    formula = SPEC.invariants[name]
    assert compile_predicate(SPEC.schema, formula)(obs) is holds, row
    assert Z3.evaluate(formula, obs) is holds, row


def test_the_quiet_observation_satisfies_every_property():
    obs = quiet()
    for name, formula in SPEC.invariants.items():
        assert compile_predicate(SPEC.schema, formula)(obs), name
