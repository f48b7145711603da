"""The zk-oneshot watch flag of the PIP-473 spec (issue 10): a ZooKeeper one-shot
watch fires once; the participant reads the header when it handles the event and
re-registers, so a change in between is not notified."""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model

from .helpers import MODELS


def _max_pending_per_txn(states) -> int:
    worst = 0
    for s in states:
        for p in s.part:
            if p is None:
                continue
            per_txn: dict = {}
            for t, _ in p.events:
                per_txn[t] = per_txn.get(t, 0) + 1
            worst = max([worst, *per_txn.values()])
    return worst


@pytest.mark.parametrize("name, pending", [("zk-oneshot", 1), ("zk-oneshot-point", 2)])
def test_oneshot_watches_never_queue_twice(name, pending):
    """Both models keep every property (their [expect], which the gate judges)."""
    r = check_model(MODELS / "pip473" / f"{name}.toml", keep_graph=False)
    o = r.outcome
    # point watches queue a second event for the same txn (the GC's delete after
    # the decision); a one-shot watch never holds more than one
    assert _max_pending_per_txn(o.exploration.states) == pending
