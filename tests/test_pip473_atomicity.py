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
- The dispatcher reads the limit, then the entry and whether its txn is
  aborted: any step between the two gives a run of one of the model's orders.
- newTxn's first stage, the sequence counter's bump, has nothing in the model:
  the step writes the txn's header and the client's view, nothing else.
- endTxn reads the header, then updates it by version: a step between the two
  either leaves the header (the CAS lands as after it) or fails the CAS.
"""

from __future__ import annotations

import pytest

from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.checker.profiling.commute import commutation
from txncheck.checker.profiling.fields import Layout
from txncheck.spec.pip473.protocol import coordinator as tc, dispatcher
from txncheck.spec.pip473.spec import Pip473
from txncheck.spec.pip473.protocol.state import GONE
from txncheck.spec.pip473.protocol.store import acks_by_segment_subscription, header_state


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


@pytest.mark.parametrize("variant, bounds", [
    ("merged", {"writes": "t1:0", "acks": "", "plain": "0", "crashes": 1, "prune": False, "client": "permissive"}),
    ("fixed", {"writes": "t1:0", "acks": "", "plain": "0", "crashes": 1, "prune": False, "client": "permissive"}),
    ("merged", {"writes": "t1:0", "acks": "t1:s1:1:ind", "crashes": 0, "unloads": 1, "apply": "steps",
                "client": "stock", "timeout": 1}),
], ids=["merged-crash", "fixed-crash", "merged-unload-steps"])
def test_the_dispatchers_limit_read_and_filter_join_with_any_step_between(variant, bounds, monkeypatch):
    """dispatch is `getMaxReadPosition`, the ledger read, then `isTxnAborted` on the entry, as one
    step. On every reachable state where it and another action b are enabled, the code's run (the
    limit read before b, the entry read and filtered after it: the spec's dispatch at b's state
    with the limit it read already passed) reaches what the model's `b; dispatch` or
    `dispatch; b` does. Only recoverWatermark lowers the limit under a read in flight (merged, a
    restart), and the run it makes is `dispatch; recoverWatermark`."""
    spec = Pip473(variant, txns=1, failovers=0, reshape="none", decisions="both", recovery="steps", **bounds)
    states = _states(spec)
    orders = {"after": 0, "before": 0}
    for s in states:
        succ = list(spec.next(s))
        for (name, params), d in succ:
            if name != "dispatch":
                continue
            for (b, bp), t in succ:
                if b == "dispatch":
                    continue
                model = {u for a, u in spec.next(t) if a == (name, params)}
                with monkeypatch.context() as mp:   # the limit was read at s, before b
                    mp.setattr(dispatcher, "read_limit", lambda *_: float("inf"))
                    code = {u for a, u in spec.next(t) if a == (name, params)}
                if code <= model:
                    orders["after"] += 1
                    continue
                assert code <= {u for a, u in spec.next(d) if a == (b, bp)}, (b, s)
                assert b == "recoverWatermark", (b, s)
                orders["before"] += 1
    assert orders["after"] > 10_000 and (orders["before"] > 0) == ((variant, bounds["crashes"]) == ("merged", 1)), orders


def test_new_txn_writes_only_what_create_header_and_the_answer_write():
    """newTxn joins `nextTxnSequence` and `createHeader`. The model keeps no sequence counter (txns
    are named by index, created in id order), so the first stage changes nothing in it: on every
    reachable state, newTxn changes the txn's header and the client's view of it, nothing else."""
    spec = Pip473("merged", txns=2, writes="t1:0", acks="t2:s1:1:ind", client="permissive", crashes=0, failovers=0,
                  reshape="none", decisions="both")
    checked = 0
    for s in _states(spec):
        for (name, params), t in spec.next(s):
            if name != "newTxn":
                continue
            x = int(dict(params)["txn"][1:]) - 1
            assert {f for f in s._fields if getattr(s, f) != getattr(t, f)} == {"hdr", "client"}, s
            assert [i for i in range(len(s.hdr)) if (s.hdr[i], s.client[i]) != (t.hdr[i], t.client[i])] == [x]
            checked += 1
    assert checked > 100, checked


def test_a_normal_publish_persists_its_watermark_behind_the_queued_applies():
    """`publishPlain`: `syncMaxReadPositionForNormalPublish` chains its
    watermark CAS on `stateTail`, so with `apply = steps` it waits behind
    the applies queued there (`plainWatermark`). Taken at once, as the model
    did, it persisted a watermark over an aborted entry whose record was not
    put yet: a state the code cannot reach. On every reachable state of a
    small model: while an abort's record is in flight, no watermark covers
    its entries."""
    from txncheck.spec.pip473.protocol.state import ABORTED, PLAIN, REC

    spec = Pip473("merged", txns=1, writes="t1:0", plain="0 0", acks="", reshape="none", decisions="abort",
                  crashes=0, failovers=0, apply="steps", recovery="steps", timeout=1)
    states, queued = _states(spec), 0
    for s in states:
        for j, p in enumerate(s.part):
            if p is None or not p.chain:
                continue
            queued += any(c[0] == PLAIN for c in p.chain[1:])
            t, d, stage, _ = p.chain[0]
            if t != PLAIN and d == ABORTED and stage == REC:
                mine = [i + 1 for i, tag in enumerate(s.ledger[j]) if tag == t]
                assert not mine or s.wmark[j] < min(mine), (s.wmark[j], mine, p.chain)
    assert queued, "no normal publish's CAS ever waited behind an apply"


@pytest.mark.parametrize("variant, bounds, outside", [
    ("merged", {"recovery": "steps"}, {"crash"}),
    ("fixed", {"recovery": "steps"}, {"crash"}),
    pytest.param("merged", {"apply": "steps", "recovery": "steps"}, {"reconcileRead", "recoverComplete"},
                 marks=pytest.mark.slow),
], ids=["merged-recovery", "fixed-recovery", "merged-apply"])
def test_a_plain_sends_add_and_its_callback_do_not_commute_with_everything(variant, bounds, outside):
    """With `sync = atomic` publishPlain joins the ledger add and its
    callback's sync (publish_plain.py), and the join is not sound step by
    step: measured on every reachable state of small models, a step taken
    between the two that changes what the callback's recompute reads ends
    where neither of the model's orders does (`publishPlain; b`, `b;
    publishPlain`): a crash (the callback never runs, the watermark stays),
    an apply's read or a recovery's completion (it sees their entries). A
    ledger add of the segment is not a candidate (the next plain send, a
    transactional append): the ledger completes adds, and runs their
    callbacks, in order. So `sync = steps` splits the two
    (tests/test_sync_audit.py: no verdict changes at small bounds)."""
    from txncheck.spec.pip473.protocol import publish_plain

    spec = Pip473(variant, txns=1, writes="t1:0", plain="0", acks="", reshape="none", decisions="abort",
                  crashes=1, failovers=0, **bounds)
    between, found = 0, set()
    for s in _states(spec):
        added = publish_plain.plain_add(spec, s, s.plain)
        if added is None:
            continue
        mid, j = added
        joined = publish_plain.plain(spec, s, s.plain)
        for (name, params), t in spec.next(mid):
            if name in ("publishPlain", "publishAppend") and dict(params)["seg"] == spec.seg_names[j]:
                continue
            code = publish_plain.plain_sync(spec, t, j)
            first = {x for (n, q), x in spec.next(joined) if (n, q) == (name, params)}
            then = {publish_plain.plain(spec, y, y.plain) for (n, q), y in spec.next(s) if (n, q) == (name, params)}
            between += 1
            if code not in first | then:
                found.add(name)
    assert between > 1_000 and found == outside


@pytest.mark.parametrize("variant, bounds, outside", [
    pytest.param("merged", {}, {"dispatch"}, marks=pytest.mark.slow), ("fixed", {}, set()),
    pytest.param("fixed", {"apply": "steps", "recovery": "steps"}, {"applyAbortedRecord", "recoverComplete"},
                 marks=pytest.mark.slow)], ids=["merged", "fixed", "fixed-apply"])
def test_a_prunes_deletes_commute_or_delete_only_what_no_entry_needs(variant, bounds, outside):
    """pruneAborted joins `pruneTrimmedAbortedTxns`' scan and its deletes
    (unconditional, by the txn's path). The join would be sound if the
    delete of each record the scan chose commuted with every other step.
    Checked on every reachable state of small trim models, for each such
    record and each other step (delete then step against step then
    delete): with `apply = atomic` every step commutes in fixed; in merged
    a dispatch does not (the record of a txn whose entry landed after its
    abort is keyed below that entry, and its delete lets the entry out:
    prune-after-trim-merged, fixed by F8: the delete's harm, not the
    join's). With `apply = steps` an apply's record put (a re-apply, keyed
    at the LAC) and a recovery's completion do not commute: the delete then
    removes a record put since the scan. That loses nothing in fixed: no
    record the scan can choose belongs to a txn with an entry still in the
    ledger (checked on the same states), so the records it deletes, and
    their re-puts, filter no readable entry."""
    from txncheck.spec.pip473.protocol.buffer import prune_aborted

    spec = Pip473(variant, **{"txns": 2, "writes": "t1:0", "acks": "t2:s1:1:cum", "reshape": "none",
                              "decisions": "both", "crashes": 1, "failovers": 0, "client": "stock", "trim": True,
                              **bounds})

    def delete(s, rec):
        """One record's delete, as prune_aborted does it (the in-memory set too)."""
        p = s.part[rec[0]]
        part = s.part
        if spec.apply_steps and p is not None and rec[1] in p.abrt:
            part = part[:rec[0]] + (p._replace(abrt=p.abrt - {rec[1]}),) + part[rec[0] + 1:]
        return s._replace(arec=s.arec - {rec}, part=part)

    checked, found, needed = 0, set(), False
    for s in _states(spec):
        for j in range(len(spec.seg_names)):
            if prune_aborted(spec, s, j) is None:
                continue
            for rec in [a for a in s.arec if a[0] == j and a[2] < s.retained[j]]:
                needed |= rec[1] in s.ledger[j][s.retained[j] - 1:]
                after: dict = {}
                for label, t in spec.next(delete(s, rec)):
                    after.setdefault(label, set()).add(t)
                for label, t in spec.next(s):
                    if label[0] == "pruneAborted":
                        continue
                    checked += 1
                    if delete(t, rec) not in after.get(label, set()):
                        found.add(label[0])
    assert checked > 1_000 and found == outside
    assert needed == (variant == "merged")


@pytest.mark.parametrize("variant, bounds, outside", [
    ("merged", {}, {"crash"}), ("fixed", {}, {"crash"}),
    pytest.param("merged", {"apply": "steps"}, {"crash", "plainWatermark"}, marks=pytest.mark.slow)],
    ids=["merged", "fixed", "merged-apply"])
def test_a_transactional_appends_add_and_its_callback_do_not_commute_with_a_crash(variant, bounds, outside):
    """publishAppend joins the ledger add and its callback (`trackPosition`,
    and fixed F8's re-key). As for a plain entry, the managed ledger runs
    the callback in the add's completion task, so the segment's next add
    cannot come between, but the metadata store's callbacks, a dispatch and
    a crash can. Measured on every reachable state of small models, a step
    taken between the add and the callback ends where one of the model's
    orders does (`publishAppend; b` or `b; publishAppend`), except a crash:
    the entry is in the ledger and the send failed at the client, which
    neither order reaches (so `track = steps` splits the two:
    tests/test_sync_audit.py),
    and, with `apply = steps`, a normal publish's watermark CAS (not
    examined further). An apply's recompute or a dispatch in between reads
    the held limit: the entry is OPEN with no position until the callback
    (`track_in_flight`)."""
    from txncheck.spec.pip473.protocol import publish
    from txncheck.spec.pip473.protocol.buffer import rekey, track_position

    spec = Pip473(variant, txns=1, writes="t1:0", plain="0", acks="", reshape="none", decisions="abort",
                  crashes=1, failovers=0, recovery="steps", **bounds)
    want = "valid" if spec.flags.validate_after_op else "op"
    between, found = 0, set()
    for s in _states(spec):
        for k, w in enumerate(spec.writes):
            pub = s.pubs[k]
            if pub.stage != want or s.status[pub.seg] != "ACTIVE":
                continue
            joined = publish.append(spec, s, k)
            if joined is None:
                continue
            j, t = pub.seg, w.txn
            pos = len(s.ledger[j]) + 1
            mid = s._replace(ledger=joined.ledger)   # the add completed; its callback has not run

            def callback(x):
                if x.part[j] is None or x.pubs[k] != pub:   # the broker went, or the send with it
                    return x
                changed = {"arec": rekey(spec, x, j, t, pos, k)} if spec.flags.rekey_late else {}
                return x._replace(pubs=x.pubs[:k] + (pub._replace(stage="done", pos=pos),) + x.pubs[k + 1:],
                                  part=x.part[:j] + (track_position(x.part[j], t, pos),) + x.part[j + 1:], **changed)

            assert callback(mid) == joined
            for (name, params), y in spec.next(mid):
                if name in ("publishPlain", "publishAppend") and dict(params)["seg"] == spec.seg_names[j]:
                    continue   # the segment's next add completes after this callback
                between += 1
                first = {x for (n, q), x in spec.next(joined) if (n, q) == (name, params)}
                then = {publish.append(spec, x, k) for (n, q), x in spec.next(s) if (n, q) == (name, params)}
                if callback(y) not in first | then:
                    found.add(name)
    assert between > 50 and found == outside


def _with_change(s, e, s2):
    """s2 with the change the step s -> e made (its fields, or the indexes
    and set elements of them that changed) laid over it."""
    out = {}
    for f in s._fields:
        a, b, c = getattr(s, f), getattr(e, f), getattr(s2, f)
        if a == b:
            continue
        if isinstance(a, frozenset):
            out[f] = (c - (a - b)) | (b - a)
        elif isinstance(a, tuple) and len(a) == len(b) == len(c):
            out[f] = tuple(y if x != y else z for x, y, z in zip(a, b, c))
        else:
            out[f] = b
    return s2._replace(**out)


@pytest.mark.parametrize("variant, client", [
    ("merged", "stock"), ("merged", "permissive"), ("fixed", "stock")])
def test_the_end_txns_read_and_cas_join_with_any_step_between(variant, client):
    """endTxn is `getHeader`, then the header's update by version
    (`TransactionCoordinatorV5.endTransaction`): with a step x between the
    read (in state s) and the CAS, either x left the header as it was, and
    the CAS lands where the model's `x; endTxn` does; or x changed it, the
    CAS fails on the version and the client gets an error, where the model's
    `x; endTxn` answers a failure too or, x having made the same decision,
    takes the idempotent retry that the error leads the client to."""
    spec = Pip473(variant, txns=1, writes="t1:0", acks="t1:s1:1:ind", client=client, crashes=0, failovers=1,
                  reshape="none", decisions="both", tc="steps")
    lands = fails = 0
    changers = set()
    for s in _states(spec):
        succ = list(spec.next(s))
        for (name, params), e in succ:
            if name != "endTxn":
                continue
            t, d = spec.txn_index[dict(params)["txn"]], dict(params)["decision"]
            for label, s2 in succ:
                if label[0] == "endTxn" and dict(label[1])["txn"] == spec.txn_names[t]:
                    continue
                joined = tc.end_txn(spec, s2, t, d)
                if s2.hdr[t] == s.hdr[t]:
                    assert joined == _with_change(s, e, s2), (label, s)
                    lands += 1
                else:
                    changers.add(label[0])
                    assert joined.client[t] in ("told-conflict", "told-notfound") or header_state(s2, t) == d, (label, s)
                    fails += 1
    assert lands > 1000 and fails > 10
    assert changers == {"timeoutSweep", "gcSweep"}   # the other decision; the header's deletion
