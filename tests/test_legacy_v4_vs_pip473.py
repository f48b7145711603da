"""The sealed-segment stall of legacy_v4, and the same scenario under pip473
`fixed`: one txn writes to s1, a split seals s1 mid-txn, the client commits.

v4: from every state where the end is under way and the sealed s1 still owes
its marker, the end-txn can never complete (tests/test_legacy_v4.py).
pip473 fixed: from every state where t1's entry sits in the terminated or
sealed parent, a state is reachable where t1 is committed and every live
participant, the sealed parent included, has materialized it.
"""

from __future__ import annotations

import networkx as nx

from txncheck.checker.api import check_model
from txncheck.checker.invariants import compile_predicate

from .helpers import MODELS
from .helpers import explore

MODEL = MODELS / "legacy_v4" / "split-mid-txn-pip473-fixed.toml"


def _can_reach(spec, ex, names):
    g, fps = ex.graph(), ex.fingerprints()
    goal = [compile_predicate(spec.schema, spec.predicates[n]) for n in names]
    can = set()
    for i, s in enumerate(ex.states):
        o = spec.observe(s)
        if all(p(o) for p in goal):
            can.add(fps[i])
            can |= nx.ancestors(g, fps[i])
    return can, fps


def test_pip473_fixed_model_holds_with_its_witnesses():
    r = check_model(MODEL)
    assert r.spec.name == "pip473" and r.spec.variant == "fixed"
    assert r.spec.constants["reshape"] == "split"
    assert r.verdict == "ok" and r.outcome.violations == []
    assert all(r.outcome.witnesses_found.values())


def test_split_mid_txn_completes_under_pip473_fixed():
    from txncheck.spec.pip473.protocol.state import SEALED, TERMINATED

    r = check_model(MODEL)
    spec = r.spec
    ex = explore(spec, props={}).exploration
    can, fps = _can_reach(spec, ex, ["Committed_t1", "MaterializedByLive_t1"])
    # t1's data entry is in s1's ledger and s1 is terminated or sealed: the v4 stall's shape.
    mid = [i for i, s in enumerate(ex.states) if 0 in s.ledger[0] and s.status[0] in (TERMINATED, SEALED)]
    assert mid, "the model never splits s1 under a txn that wrote to it"
    assert all(fps[i] in can for i in mid)
    # The split really happens mid-txn: some such state has t1 still undecided.
    assert any(ex.states[i].decided[0] == "" for i in mid)


def test_same_shape_stalls_under_legacy_v4():
    from txncheck.spec.legacy_v4.spec import LegacyV4

    spec = LegacyV4("default", txns=1, segments=2, splits=1)
    ex = explore(spec, props={}).exploration
    can, fps = _can_reach(spec, ex, ["EndCompleted_t1"])
    mid = [i for i, s in enumerate(ex.states)
           if 0 in s.parts[0] and s.seg[0] == "SEALED" and s.status[0] == "COMMITTING"
           and ("p", 0) not in s.acked[0]]
    assert mid and not any(fps[i] in can for i in mid)
