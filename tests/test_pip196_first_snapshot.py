"""pip196 `merged` with the first-snapshot window (spec/pip196/first_snapshot.py,
issue 54): what the window's steps do on hand-built states, that the queued
append of an aborted txn is released only by a later txn's low water mark, that
the candidate fix survives a crash through the coordinator's retry, and that
the window, switched on, changes no verdict of the other properties."""

from __future__ import annotations

import networkx as nx
import pytest

from txncheck.checker.invariants import compile_predicate
from txncheck.checker.model import load_model
from txncheck.spec.pip196.first_snapshot import FIRST
from txncheck.spec.pip196.spec import ABORT, DATA, NOSNAP, READY, Pip196

from .helpers import MODELS
from .helpers import explore


def _spec(**bounds):
    return Pip196("merged", **{"txns": 1, "capacity": 1, "ledgers": 1, "crashes": 0,
                               "first_snapshot_window": True, **bounds})


def _next(spec, s):
    return {a[0]: t for a, t in spec.next(s)}


def _holds(spec, name, s) -> bool:
    return compile_predicate(spec.schema, spec.invariants[name])(spec.observe(s))


def test_an_abort_while_the_first_snapshot_is_written_leaves_the_late_entry_pinned():
    """The append is queued (FirstSnapshotting, reads held at EARLIEST); the
    abort writes no marker and completes; the snapshot lands, then the entry,
    tracked as ongoing: maxReadPosition stays before it."""
    spec = _spec()
    [init] = spec.init_states()
    assert init.phase == NOSNAP
    queued = _next(spec, init)["TxnWrite"]
    assert queued.phase == FIRST and queued.pending == (("W", 1, 0),) and queued.ledger == ()
    assert spec.observe(queued)["maxReadPosition"] == 0 and spec.observe(queued)["serving"]
    aborted = _next(spec, queued)["TxnEnd"]
    assert aborted.ledger == () and aborted.acked == {1} and aborted.aborted == frozenset()
    landed = _next(spec, aborted)["FirstSnapshotWritten"]
    assert landed.phase == READY and landed.index is not None
    assert landed.ledger == ((DATA, 1, 0),) and landed.ongoing == ((1, 0),) and landed.max_read == 0
    assert not _holds(spec, "NoEndedTxnHoldsRead", landed)
    # the same abort once the buffer is Ready writes its marker: nothing is held
    ready = _next(spec, queued)["FirstSnapshotWritten"]
    done = _next(spec, ready)["TxnEnd"]
    assert done.ledger[-1][0] == ABORT and done.ongoing == () and _holds(spec, "NoEndedTxnHoldsRead", done)


def test_only_a_later_txn_of_the_coordinator_releases_the_pin():
    """From each state where an ended txn holds the read position and the
    recorded low water mark is below it, a release (LowWaterMarkAbort) is
    reachable only through a later TxnEnd; where the later txn already ended,
    nothing ever releases it."""
    spec = _spec(txns=2)
    ex = explore(spec, props={}).exploration
    g, fps = ex.graph(), ex.fingerprints()
    held = compile_predicate(spec.schema, spec.invariants["NoEndedTxnHoldsRead"])
    pinned = [i for i, s in enumerate(ex.states) if not held(spec.observe(s))]
    no_end = g.edge_subgraph([(u, v) for u, v, d in g.edges(data=True)
                              if not any(a.startswith("TxnEnd") for a in d["actions"])])
    released = {fps[i] for i, s in enumerate(ex.states) if s.phase == READY and held(spec.observe(s))}
    forever = 0
    for i in pinned:
        s = ex.states[i]
        if s.lwm < s.ongoing[0][0]:
            assert not (nx.descendants(no_end, fps[i]) if fps[i] in no_end else set()) & released
        forever += not nx.descendants(g, fps[i]) & released
    assert len(pinned) > forever > 0


def _stuck(spec):
    """States from which some txn the coordinator ended holds the read
    position forever (no path releases it)."""
    ex = explore(spec, props={}).exploration
    g, fps = ex.graph(), ex.fingerprints()
    holding = lambda s: {t for t, _ in s.ongoing} & s.tc_ended
    free = {fps[i] for i, s in enumerate(ex.states) if s.phase == READY and not holding(s)}
    return [i for i, s in enumerate(ex.states) if holding(s) and not nx.descendants(g, fps[i]) & free]


def test_the_fix_needs_the_coordinators_retry_after_a_crash(monkeypatch):
    """With ends queued behind the first snapshot a crash loses the queue; the
    coordinator re-sends the abort (TxnEndRetry), so from every state a
    release is reachable. Without that retry a late entry can stay pinned
    forever (the safety property cannot see it: the end never completed)."""
    from txncheck.spec.pip196 import first_snapshot

    m = load_model(MODELS / "pip196" / "first-snapshot-window-fixed.toml")
    spec = m.instantiate()
    out = explore(spec, props=m.selected_properties(spec))
    assert out.verdict == "ok" and out.coverage["TxnEndRetry"]["distinct"] > 0
    assert _stuck(spec) == []
    monkeypatch.setattr(first_snapshot, "end_retries", lambda spec, s: iter(()))
    assert _stuck(spec)


@pytest.mark.parametrize("stem", ["merged", "publish-during-recovery"])
def test_the_window_changes_no_other_verdict(stem):
    """The atomic first snapshot of the shipped models is an abstraction: with
    the window switched on, every property but the one it breaks keeps its
    verdict at the model's bounds."""
    m = load_model(MODELS / "pip196" / f"{stem}.toml")
    for window in (False, True):
        spec = Pip196(m.variant, **{**m.constants, "first_snapshot_window": window})
        props = {k: v for k, v in m.selected_properties(spec).items() if k != "NoEndedTxnHoldsRead"}
        assert explore(spec, props=props).verdict == "ok"
