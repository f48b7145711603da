"""How a participant applies a decision, stage by stage, as the merged code
runs it (bound `apply = "steps"`, merged/fixed; notify.py joins the stages
into one step otherwise).

The transaction buffer (`MetadataTransactionBuffer`, apache/pulsar@ec708a8):
* `triggerReconcile` (L419-L443) snapshots the txns its cache holds OPEN and
  reads each header: `deliverEvent` issues the reads (`Part.reads`), and each
  returns in a step of its own (`reconcileRead`). Two reads of one header in
  flight (two events) are one here: whatever the earlier returns, the later
  can return at the same moment, and a second decided answer finds the first
  apply queued (a no-op); the replay runs both tasks at once. A decided header enqueues
  the apply on the chain `stateTail` (`enqueueApplyTerminal`, called at L440).
* `applyTerminalNow` (L468-L515) runs when the chain reaches it, at once if
  the chain is idle: under the lock it marks the entry, adds an aborted txn
  to the in-memory aborted set, recomputes maxReadPosition and drops the
  entry (its prune key, the entry's last position or the LAC, captured
  first); that in-memory part joins the step that reached it. Then three
  metadata calls, each a step: the aborted record's put (abort only,
  `persistAbortedRecord`, L529-L541: `applyAbortedRecord`), the watermark
  CAS (`persistWatermarkIfAdvanced`, forward only: `applyWatermark`), the
  delete of the txn's WRITE ops on the segment (L512-L514:
  `applyDeleteOps`), whose completion runs the next item's in-memory part.
  A normal publish's `syncMaxReadPositionForNormalPublish` (L664-L679)
  chains its `persistWatermarkIfAdvanced` there too (`plainWatermark`): it
  waits behind the queued applies, and on an idle chain its CAS is in
  flight at once, or there is nothing to do. Every CAS here reads
  maxReadPosition when it lands, not when it is issued (a join of the two).
* `isTxnAborted` (L652-L659) answers from the in-memory aborted set only,
  which recovery's scan of the aborted records fills (`recover_aborted`).

The pending-ack store (`MetadataPendingAckStore`, apache/pulsar@442b4cd):
its reconcile reads likewise (`ackReconcileRead`); a decided header runs
`applyTerminal` in the read's callback: the txn leaves the open set and the
handle commits (acks to the cursor) or aborts at once; the delete of its
ACK ops is a call of its own (`ackDeleteOps`).

`closeAsync` (L687-L694 of the buffer; the store's likewise) sets `closed`
and closes the event subscription, and waits for neither: the reads in
flight and the queued chain go on in the closed instance (`S.zomb`, the
same steps with `closed = True`), with its memory as it was; its watermark
CAS reads maxReadPosition, which its closed ledger handle caps at the
entries it had (`S.zomb[j][0]`). fixed F10 drains the closed instance
before the new owner loads the segment (recovery.recover).
"""

from __future__ import annotations

from ...api import replace_at as _put
from .buffer import ceiling, forget, prune_key
from .pendingack import acks_to_apply, apply_to_cursor
from .publish_cache import applied
from .state import ABORTED, COMMITTED, DEL, MEM, OPEN, PLAIN, REC, WM, S
from .store import header_state

FOUND = -2   # a MEM item's key: its entry came from recovery (terminal), not from the cache


def instance(s: S, j: int, closed: bool):
    """The live participant of segment j, or its closed instance."""
    return s.zomb[j][1] if closed else s.part[j]


def put_instance(s: S, j: int, p, closed: bool) -> S:
    """The state with segment j's live (or closed) instance now p."""
    if closed:
        return s._replace(zomb=_put(s.zomb, j, (s.zomb[j][0], p)))
    return s._replace(part=_put(s.part, j, p))


def finish(s: S, j: int, closed: bool) -> S:
    """A closed instance with nothing left to do is gone."""
    if closed:
        p = s.zomb[j][1]
        if not (p.reads or p.chain or p.areads or p.adel or p.psync):
            return s._replace(zomb=_put(s.zomb, j, None))
    return s


def instance_lac(s: S, j: int, closed: bool) -> int:
    """The last confirmed entry (a length) of the instance's ledger handle."""
    return s.zomb[j][0] if closed else len(s.ledger[j])


def enqueue(m, s: S, j: int, t: int, d: str, found: bool = False, closed: bool = False) -> S:
    """`enqueueApplyTerminal`: t's apply joins the chain; on an idle chain its
    in-memory part runs now. An event's apply needs t's entry (the cache),
    and one already queued for t makes a later one a no-op (the first drops
    the entry); recovery's apply (`found`) has a terminal entry of its own."""
    p = instance(s, j, closed)
    if any(x[0] == t for x in p.chain) or not found and t not in p.cache:
        return s
    item = (t, d, MEM, FOUND if found else 0)
    p = p._replace(chain=p.chain + (item,))
    s = put_instance(s, j, p, closed)
    return _run_memory(m, s, j, closed) if len(p.chain) == 1 else s


def _run_memory(m, s: S, j: int, closed: bool) -> S:
    """The head's in-memory part (`applyTerminalNow` under its lock), then
    its first metadata call is in flight; an item whose entry is gone
    (already applied) is a no-op and the next one runs."""
    p = instance(s, j, closed)
    while p.chain and p.chain[0][2] == MEM:
        t, d, _, key = p.chain[0]
        if key != FOUND and t not in p.cache:
            p = p._replace(chain=p.chain[1:])
            continue
        key = prune_key(m, s, j, p, t, instance_lac(s, j, closed))
        p = forget(p, t)
        s = applied(m, s, j, t, closed)   # F11
        if d == ABORTED:
            p = p._replace(abrt=p.abrt | {t})
        p = p._replace(chain=((t, d, REC if d == ABORTED else WM, key),) + p.chain[1:])
    return put_instance(s, j, p, closed)


def read_header(m, s: S, j: int, t: int, closed: bool = False) -> S:
    """reconcileRead: the buffer's read of t's header returns; a decided one
    is enqueued (a missing header counts as ABORTED)."""
    p = instance(s, j, closed)
    s = put_instance(s, j, p._replace(reads=p.reads - {t}), closed)
    st = header_state(s, t)
    if st == OPEN:
        return s
    return enqueue(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED, closed=closed)


def put_aborted_record(m, s: S, j: int, closed: bool = False) -> S:
    """applyAbortedRecord: the head's `putAbortedTxn` lands (a put: t's record
    on j is rewritten with the captured key)."""
    p = instance(s, j, closed)
    t, d, _, key = p.chain[0]
    arec = frozenset(a for a in s.arec if a[0] != j or a[1] != t) | {(j, t, key)}
    p = p._replace(chain=((t, d, WM, key),) + p.chain[1:])
    return put_instance(s._replace(arec=arec), j, p, closed)


def enqueue_plain_watermark(m, s: S, j: int, closed: bool = False) -> S:
    """`syncMaxReadPositionForNormalPublish` (L664-L679) chains
    `persistWatermarkIfAdvanced` on `stateTail`: behind the applies queued
    there, at once (its CAS in flight) on an idle chain. The item is
    `(PLAIN, None, WM, None)`: no txn, no in-memory part, no delete."""
    p = instance(s, j, closed)
    return put_instance(s, j, p._replace(chain=p.chain + ((PLAIN, None, WM, None),)), closed)


def cas_watermark(m, s: S, j: int, closed: bool = False) -> S:
    """applyWatermark (and plainWatermark, a normal publish's item):
    `persistWatermarkIfAdvanced` (L547-L596) reads maxReadPosition when the
    chain reaches it: nothing to do unless it is above the watermark the
    instance knows; else a CAS on the version it last read or wrote. A lost
    CAS (the other instance wrote the record since, or a recovering buffer
    has not loaded it: `wstale`) re-reads the record and fails the item: an
    apply's delete of the WRITE ops never runs, and the chain goes on with
    the next item (`enqueueApplyTerminal`'s `exceptionally`, and the normal
    publish's, which only logs)."""
    p = instance(s, j, closed)
    t, d, _, key = p.chain[0]
    ok = p._replace(chain=p.chain[1:] if t == PLAIN else ((t, d, DEL, key),) + p.chain[1:])
    done = (lambda s: _run_memory(m, s, j, closed)) if t == PLAIN else (lambda s: s)
    if not m.flags.watermark:
        return done(put_instance(s, j, ok, closed))
    v = ceiling(p, instance_lac(s, j, closed))
    if v <= p.wmirror:
        return done(put_instance(s, j, ok, closed))
    if p.wstale:
        failed = p._replace(chain=p.chain[1:], wstale=False, wmirror=s.wmark[j], wknown=p.wknown or not p.ready)
        return _run_memory(m, put_instance(s, j, failed, closed), j, closed)
    return done(wrote_watermark(put_instance(s, j, ok._replace(wmirror=v), closed), j, v, closed))


def wrote_watermark(s: S, j: int, v: int, closed: bool = False) -> S:
    """An instance's watermark write of `v` landed: the other instance's
    known version is stale now."""
    s = s._replace(wmark=_put(s.wmark, j, v))
    other = s.part[j] if closed else (s.zomb[j][1] if s.zomb and s.zomb[j] is not None else None)
    if other is not None and not other.wstale:
        s = put_instance(s, j, other._replace(wstale=True), not closed)
    return s


def delete_write_ops(m, s: S, j: int, closed: bool = False) -> S:
    """applyDeleteOps: `deleteWriteOpsForSegmentAndTxn` lands; the chain moves
    on, and the next item's in-memory part runs in the same callback."""
    p = instance(s, j, closed)
    t = p.chain[0][0]
    ops = frozenset(o for o in s.ops if not (o.txn == t and o.seg == j and o.kind == "write"))
    s = put_instance(s._replace(ops=ops), j, p._replace(chain=p.chain[1:]), closed)
    return _run_memory(m, s, j, closed)


CHAIN_STEPS = {REC: ("applyAbortedRecord", put_aborted_record), WM: ("applyWatermark", cas_watermark),
               DEL: ("applyDeleteOps", delete_write_ops)}


# -- the pending-ack store (one subscription: apply = steps needs subs = 1) ---------------------

def apply_acks(m, s: S, j: int, t: int, d: str, closed: bool = False) -> S:
    """`applyTerminal`: t leaves the store's open set and its handle commits
    (the acks to the cursor) or aborts now; the ACK ops' delete is in flight."""
    p = instance(s, j, closed)
    if t not in p.acache:
        return s
    changed = {}
    if d == COMMITTED:
        changed["cursor"] = _put(s.cursor, j, apply_to_cursor(s.cursor[j], acks_to_apply(m, s, j, p.packs, t)))
    p = p._replace(acache=p.acache - {t}, packs=frozenset(x for x in p.packs if x[0] != t), adel=p.adel | {t})
    return put_instance(s._replace(**changed), j, p, closed)


def read_ack_header(m, s: S, j: int, t: int, closed: bool = False) -> S:
    """ackReconcileRead: the store's read of t's header returns."""
    p = instance(s, j, closed)
    s = put_instance(s, j, p._replace(areads=p.areads - {t}), closed)
    st = header_state(s, t)
    if st == OPEN:
        return s
    return apply_acks(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED, closed)


def delete_ack_ops(m, s: S, j: int, t: int, closed: bool = False) -> S:
    """ackDeleteOps: `deleteAckOpsForSegmentSubscriptionAndTxn` lands."""
    p = instance(s, j, closed)
    ops = frozenset(o for o in s.ops if not (o.txn == t and o.seg == j and o.kind == "ack" and o.sub == 0))
    return put_instance(s._replace(ops=ops), j, p._replace(adel=p.adel - {t}), closed)


def steps(m, s: S, j: int, closed: bool):
    """(action name, txn or None, successor) of every stage that may run now
    on segment j's live or closed instance."""
    p = instance(s, j, closed)
    for t in sorted(p.reads):
        yield "reconcileRead", t, finish(read_header(m, s, j, t, closed), j, closed)
    if p.chain:
        t = p.chain[0][0]
        name, fn = ("plainWatermark", cas_watermark) if t == PLAIN else CHAIN_STEPS[p.chain[0][2]]
        yield name, None if t == PLAIN else t, finish(fn(m, s, j, closed), j, closed)
    for t in sorted(p.areads):
        yield "ackReconcileRead", t, finish(read_ack_header(m, s, j, t, closed), j, closed)
    for t in sorted(p.adel):
        yield "ackDeleteOps", t, finish(delete_ack_ops(m, s, j, t, closed), j, closed)
