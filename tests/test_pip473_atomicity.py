"""docs/pip473.md's atomicity table, checked: each `merged` step that joins
several of the code's stages is either split (a bound runs the stages as
steps) or sound by a commute argument that a check here runs.

- The stages of applying a decision (bound `apply`) do not commute with the
  GC's sweep, a send's append or the pending-ack store's event, so they are
  split (`apply = steps`); the profiler's commute check shows which pairs.
- The GC's sweep lists the txn's ops, then deletes the header by version:
  an op put between the two (merged's puts read no header) commutes with the
  delete, so the code's run `list; put; delete` is the model's `gcSweep; put`.
- The pending-ack store's replay scans its ACK ops, then reads their headers:
  no action between the two changes what the scan read but the closed store's
  delete, which ends where the model does.
"""

from __future__ import annotations

import pytest

from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.checker.profiling.commute import commutation
from txncheck.checker.profiling.fields import Layout
from txncheck.spec.pip473 import coordinator as tc
from txncheck.spec.pip473.spec import Pip473
from txncheck.spec.pip473.state import GONE
from txncheck.spec.pip473.store import acks_by_segment_subscription, header_state


def _states(spec, cap=None):
    job = Job(spec=spec, properties={}, witnesses={}, deadlock=False, keep_graph=False, max_states=cap)
    return bfs.run(job).exploration.states


@pytest.mark.slow
def test_the_stages_of_applying_a_decision_do_not_commute_so_they_are_split():
    spec = Pip473("merged", txns=1, writes="t1:0", acks="t1:s1:1:ind", client="permissive", crashes=0, failovers=0,
                  reshape="none", decisions="both", apply="steps", recovery="steps", timeout=1)
    states = _states(spec)
    com = commutation(spec, Layout(states[::max(1, len(states) // 500)]), states, list(range(len(states))), {})
    failing = {pair for pair, p in com.pairs.items() if p.independent < p.co_enabled}
    assert {("applyDeleteOps", "gcSweep"), ("ackDeleteOps", "gcSweep"), ("applyWatermark", "publishAppend"),
            ("appendAckOpen", "deliverAckEvent"), ("publishAppend", "reconcileRead")} <= failing


def test_the_gc_sweeps_listing_and_delete_join_with_an_op_put_between():
    """On every reachable state where the sweep deletes a header and a put of
    the txn's op (a send's or, merged, an ack's) is enabled: the code's order
    (list, put, delete by version) reaches what the model's gcSweep then the
    put reaches."""
    spec = Pip473("merged", txns=1, writes="t1:0", acks="t1:s1:1:ind", client="permissive", crashes=0, failovers=0,
                  reshape="none", decisions="both", timeout=1)
    checked = 0
    for s in _states(spec):
        for t in tc.gc_candidates(spec, s):
            g = tc.gc(spec, s, t)
            if header_state(g, t) != GONE:
                continue   # a re-drive: nothing deleted
            for (name, _), after in spec.next(s):
                if name not in ("publishPutOp", "appendAck") or after.ops == s.ops:
                    continue
                model = next(u for (n2, p2), u in spec.next(g) if (n2, p2) == (name, _))
                code = after._replace(hdr=g.hdr, gcsnap=g.gcsnap)   # the delete after the put, on the listing's view
                assert model == code, (name, s)
                checked += 1
    assert checked > 0


def _ack_scan(s, j: int, sub: int) -> frozenset:
    return frozenset(acks_by_segment_subscription(s, j, sub))


@pytest.mark.parametrize("variant, bounds", [
    ("merged", {"writes": "t1:0", "crashes": 1, "unloads": 0, "apply": "atomic", "client": "permissive"}),
    ("merged", {"writes": "", "crashes": 0, "unloads": 1, "apply": "steps", "client": "stock"}),
    ("fixed", {"writes": "t1:0", "crashes": 1, "unloads": 0, "apply": "steps", "client": "permissive"}),
    ("fixed", {"writes": "", "crashes": 0, "unloads": 1, "apply": "steps", "client": "stock"}),
], ids=["merged-crash", "merged-unload-steps", "fixed-crash-steps", "fixed-unload-steps"])
def test_the_pending_ack_stores_replay_joins_its_scan_and_reads(variant, bounds):
    """recoverAcks is `replayAsync`: the ACK-op scan, then a header read per txn found, as one step.
    In the code another action can land between the scan and the reads. On every reachable state
    where the replay and another action b are enabled (and b leaves it enabled): b changes nothing
    the scan read, so the code's `scan; b; reads` is the model's `b; recoverAcks`; or b is the closed
    store's delete of the txn's ACK ops (merged, an unload, apply = steps), and the code's run, once
    the new store's own delete of what its scan found has landed, is where the model's is."""
    spec = Pip473(variant, txns=1, acks="t1:s1:1:ind", failovers=0, reshape="none",
                  decisions="both", participants="split", recovery="steps", **bounds)
    joined = deleted = 0
    for s in _states(spec):
        succ = list(spec.next(s))
        for (name, params), _ in succ:
            if name != "recoverAcks":
                continue
            j, sub = spec.seg_names.index(dict(params)["seg"]), 0
            scan = _ack_scan(s, j, sub)
            for (b, _), u in succ:
                model = {t for (n, p), t in spec.next(u) if (n, p) == (name, params)}
                if b == name or not model:
                    continue
                joined += 1
                lost = scan - _ack_scan(u, j, sub)
                if not lost and _ack_scan(u, j, sub) == scan:
                    continue
                assert b == "ackDeleteOps" and bounds["unloads"], (b, s)
                code = {t for (n, p), t in spec.next(u._replace(ops=u.ops | lost)) if (n, p) == (name, params)}
                landed = {w for c in code for (n, _), w in spec.next(c)
                          if n == "ackDeleteOps" and not _ack_scan(w, j, sub) & lost}
                assert landed & model, (s, b)
                deleted += 1
    assert joined > 400 and (deleted > 0) == (variant == "merged" and bounds["unloads"] > 0), (joined, deleted)
