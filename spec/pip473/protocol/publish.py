"""The client side of a txn on a segment: transactional publish
(`appendBufferToTxn`, Flows / Publish) and transactional acks
(`appendIndividualAck` / `appendCumulativeAck`).

Publish, by variant:
  pip-text  header check (cache first) -> ledger append -> op record -> send-ack
  merged    header check (cache first; missing = ABORTED) -> op record with a
            placeholder position -> ledger append -> track position -> send-ack (notes 1)
  fixed     merged's order, plus F1: after the op put, a linearizable header
            re-read admits the write; a terminal header rejects it, and the
            broker materializes the decision it read (deleting the op); and
            F2: the segment's maxReadPosition watermark is persisted before
            the op put, so recovery can hold the read position below the entry.

The ghost `late` records a write or ack admitted while the store header
was already decided: the admission is the header check (cache first) in
pip-text and merged, the post-op re-read in fixed. merged writes an ack op
with no header check at all (its pending-ack store relies on the handle,
which does not read the header either); the ghost in `ackw` records an ack
written after the decision (AcksFixedAtDecision).

A non-transactional send (`publishPlain`) is publish_plain.py's.

Bound `unloads` (merged/fixed): a topic unload closes the segment's buffer
instance and a new owner loads it anew (recovery.unload); the sends the
closed instance took go on (`closed_*` below): the op put still lands, the
ledger append fails.

An append that lands after its txn's abort was materialized (a send in
flight when the timeout sweep aborted it, or a late one) sits above the
aborted record's prune key, which the buffer took from the positions it
tracked or the LAC. fixed F8: a record written while an append of its txn
is in flight on the segment has no key until the append lands (its
position) or fails (the LAC), and a later entry raises the key (each a
version CAS against the buffer's prune task), so ledger trimming cannot
prune the record while an entry of the txn is readable.
"""

from __future__ import annotations

from ...api import replace_at as _put
from .buffer import (
    callback_pending, drop_in_flight, max_read, rekey, release_failed, track_in_flight, track_position,
)
from .notify import materialize
from .pendingack import pas_ready
from .publish_cache import cache_put, closed_cache_put, read as read_header
from .segments import route
from .state import (
    ACTIVE, ADDED, APPENDED, C_ENDING, C_OPEN, CHECKED, CLOSED, CLOSED_READ, COMMITTED, ABORTED, DONE, OPEN, OPPUT,
    READ, READ_APPLIED, REJECTED, PUB_TODO, SUB_FIELDS, TODO, VALID, Pub, S,
)
from .store import header_state, put_op

CLOSED_STAGES = tuple(CLOSED.values())
SENDING = (C_OPEN,) + tuple(C_ENDING.values())   # the client may still send (the late-write race)


def _sending(m, client: str) -> bool:
    """The stock client sends nothing once it has sent endTxn."""
    return client == C_OPEN if m.stock_client else client in SENDING


def _pub(s: S, k: int, pub: Pub, **changed) -> S:
    """The state with plan operation k at `pub`, and the other `changed` fields."""
    return s._replace(pubs=_put(s.pubs, k, pub), **changed)


def _admit(m, s: S, j: int, t: int, from_store: bool, field: str = "cache") -> tuple[dict, bool]:
    """The header check: cache first unless `from_store`; an OPEN header is
    cached (and watched). Records a stale admission in the ghost `late`.
    Returns the fields it changes and whether it admits. `field` is the
    cache: the buffer's, or with participants = split the pending-ack store's."""
    p = s.part[j]
    cache = getattr(p, field)
    st = header_state(s, t)
    changed = {}
    if not from_store and t in cache:
        ok = True
    else:
        ok = st == OPEN
        if ok and t not in cache:
            changed["part"] = _put(s.part, j, p._replace(**{field: cache | {t}}))
    if ok and st != OPEN:
        changed["late"] = s.late | {t}
    return changed, ok


def check(m, s: S, k: int):
    """publishCheck: route to the ACTIVE segment of the key, read the header."""
    w = m.writes[k]
    if s.pubs[k].stage != TODO or not _sending(m, s.client[w.txn]):
        return None
    j = route(m.topo, s, w.key)
    if j is None or s.part[j] is None or not s.part[j].ready:   # appendBufferToTxn waits for recovery
        return None
    if m.check_steps and w.txn not in s.part[j].cache:   # the read now, its callback's put later
        return read_header(m, s, k, j)
    changed, ok = _admit(m, s, j, w.txn, from_store=False) if not m.flags.validate_after_op else _check_only(s, j, w.txn)
    if "part" in changed and m.flags.op_first and w.txn not in s.part[j].cache:
        # the header read made the buffer's TxnEntry, OPEN with no position:
        # recomputeMaxReadPositionLocked holds the read position from now on
        part = changed["part"]
        changed["part"] = _put(part, j, track_in_flight(s, j, part[j], w.txn))
    return _pub(s, k, Pub(CHECKED if ok else REJECTED, j, 0, -1), **changed)


def _check_only(s: S, j: int, t: int) -> tuple[dict, bool]:
    """fixed: the early cache-first check only filters; admission comes later."""
    p = s.part[j]
    if t in p.cache:
        return {}, True
    if header_state(s, t) == OPEN:
        return {"part": _put(s.part, j, p._replace(cache=p.cache | {t}))}, True
    return {}, False


def append(m, s: S, k: int):
    """publishAppend: ML.asyncAddEntry; a terminated or sealed ledger refuses."""
    w, pub = m.writes[k], s.pubs[k]
    want = VALID if m.flags.validate_after_op else (OPPUT if m.flags.op_first else CHECKED)
    if pub.stage != want:
        return None
    j, t = pub.seg, w.txn
    if callback_pending(s, j):   # an earlier add's callback has not returned: this add completes after it
        return None
    if s.status[j] != ACTIVE:                               # TopicTerminated
        changed = {}
        if m.flags.op_first:   # the entry stays; it holds the read position while it has none
            changed["part"] = _put(s.part, j, drop_in_flight(s.part[j], t))
        if m.flags.validate_after_op:
            changed["ops"] = frozenset(o for o in s.ops if not (o.txn == t and o.seq == pub.seq))
        if m.flags.rekey_late:
            changed["arec"] = rekey(m, s, j, t, 0, k)
        if m.flags.drop_failed:
            s2 = s._replace(**changed)
            changed["part"] = _put(s2.part, j, release_failed(m, s2, j, s2.part[j], t, k))
        return _pub(s, k, pub._replace(stage=REJECTED), **changed)
    pos = len(s.ledger[j]) + 1
    ledger = _put(s.ledger, j, s.ledger[j] + (t,))
    if m.flags.op_first:
        added = _pub(s, k, pub._replace(stage=ADDED, pos=pos), ledger=ledger)
        return added if m.track_steps else track(m, added, k)
    return _pub(s, k, pub._replace(stage=APPENDED, pos=pos), ledger=ledger)


def track(m, s: S, k: int):
    """publishTrack (merged/fixed): the add's callback, `trackPosition` of
    the entry's position (L398-L416), F8's re-key, then the client's answer.
    With `track = steps` a step of its own (stage ADDED): a crash before it
    leaves the entry in the ledger and fails the send at the client."""
    w, pub = m.writes[k], s.pubs[k]
    if pub.stage != ADDED:
        return None
    j, t, pos = pub.seg, w.txn, pub.pos
    changed = {"arec": rekey(m, s, j, t, pos, k)} if m.flags.rekey_late else {}   # F8
    return _pub(s, k, pub._replace(stage=DONE), part=_put(s.part, j, track_position(s.part[j], t, pos)), **changed)


def put_write_op(m, s: S, k: int):
    """publishPutOp: the sequential put of the WRITE op record."""
    w, pub = m.writes[k], s.pubs[k]
    j, t = pub.seg, w.txn
    p = s.part[j]
    if m.flags.op_first:
        if pub.stage != CHECKED:
            return None
        changed = put_op(s, t, "write", j, 0)
        if m.flags.watermark_before_op and not any(o.txn == t and o.seg == j and o.kind == "write" for o in s.ops):
            # F2: t's first op on the segment (its entry since the header read has no position)
            changed["wmark"] = _put(s.wmark, j, max_read(s, j, p))
            if m.apply_steps:   # the instance knows what it wrote; a closed one's version is stale now
                p = p._replace(wmirror=max_read(s, j, p))
                changed["part"] = _put(s.part, j, p)
                if s.zomb[j] is not None:
                    changed["zomb"] = _put(s.zomb, j, (s.zomb[j][0], s.zomb[j][1]._replace(wstale=True)))
        if t in p.cache:
            changed["part"] = _put(s.part, j, track_in_flight(s, j, p, t))
        return _pub(s, k, pub._replace(stage=OPPUT, seq=s.seqs[t]), **changed)
    if pub.stage != APPENDED:
        return None
    return _pub(s, k, pub._replace(stage=DONE, seq=s.seqs[t]), **put_op(s, t, "write", j, pub.pos),
                part=_put(s.part, j, track_position(p, t, pub.pos)))   # the index tells the TB


def op_fails(m, s: S, k: int):
    """publishOpFails (bound opfail): the WRITE op put fails with a
    metadata-store error and the send is rejected. The merged buffer keeps
    the cache entry its header read created (protocol notes), with no
    position, so it holds the read position until an event reaches the
    buffer; fixed F5 drops it when the broker holds nothing else of the txn."""
    w, pub = m.writes[k], s.pubs[k]
    if not m.op_fail or pub.stage != CHECKED:
        return None
    j = pub.seg
    if s.part[j] is None:
        return None
    part = _put(s.part, j, release_failed(m, s, j, s.part[j], w.txn, k))
    return _pub(s, k, pub._replace(stage=REJECTED), part=part)


def validate(m, s: S, k: int):
    """fixed F1, publishValidate: a linearizable header read after the op put."""
    w, pub = m.writes[k], s.pubs[k]
    if not m.flags.validate_after_op or pub.stage != OPPUT:
        return None
    j, t = pub.seg, w.txn
    st = header_state(s, t)
    if st == OPEN:
        return _pub(s, k, pub._replace(stage=VALID))
    ops = frozenset(o for o in s.ops if not (o.txn == t and o.seq == pub.seq))
    s = _pub(s, k, pub._replace(stage=REJECTED), ops=ops)   # rejected first: no append of it is in flight
    if t in s.part[j].cache:
        s = materialize(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED, pas=not m.split)
    return s


def ack(m, s: S, k: int):
    """appendAck: the header check, then one ack op record (a cumulative ack
    carries its single position). merged keeps the ack in the handle's memory."""
    a = m.acks[k]
    t, j = a.txn, a.seg
    i = len(m.writes) + k
    if s.pubs[i].stage != TODO or not _sending(m, s.client[t]):
        return None
    f = SUB_FIELDS[a.sub]
    if s.part[j] is None or not pas_ready(m, s.part[j], a.sub) or getattr(s, f["rd"])[j] <= a.pos:
        return None   # the handle queues acks until its store's replay (or, joint, the recovery) completes
    field = f["acache"] if m.split else "cache"
    if m.flags.acks_unchecked and m.apply_steps:
        # merged, apply = steps: `appendAcks` puts the op; only once the put
        # completes (`allOf(appends).thenRun`) does the txn join the store's
        # open set and the handle's memory (`ack_open`)
        changed = {"late": s.late | {t}} if header_state(s, t) != OPEN else {}
        after = header_state(s, t) != OPEN
        return _pub(s, i, Pub(OPPUT, j, a.pos, s.seqs[t]), ackw=s.ackw | {(t, j, a.pos, after, a.sub)},
                    **changed, **put_op(s, t, "ack", j, a.pos, a.cumulative, a.sub))
    if m.flags.acks_unchecked:
        # merged: the pending-ack store writes the op without reading the
        # header, then counts the txn among its open ones (the cache)
        p = s.part[j]
        cache = getattr(p, field)
        changed, ok = ({} if t in cache else {"part": _put(s.part, j, p._replace(**{field: cache | {t}}))}), True
        if header_state(s, t) != OPEN:
            changed["late"] = s.late | {t}   # accepted after the decision
    else:
        changed, ok = _admit(m, s, j, t, from_store=m.flags.validate_after_op, field=field)
    if not ok:
        return _pub(s, i, Pub(REJECTED, j, a.pos, -1), **changed)
    changed.update(put_op(s, t, "ack", j, a.pos, a.cumulative, a.sub))
    if m.flags.memory_acks:
        part = changed.get("part", s.part)   # the admission may have cached the header
        packs = getattr(part[j], f["packs"])
        changed["part"] = _put(part, j, part[j]._replace(**{f["packs"]: packs | {(t, a.pos, a.cumulative)}}))
    after = header_state(s, t) != OPEN   # the ghost of AcksFixedAtDecision
    return _pub(s, i, Pub(DONE, j, a.pos, s.seqs[t]), ackw=s.ackw | {(t, j, a.pos, after, a.sub)}, **changed)


def ack_open(m, s: S, k: int):
    """appendAckOpen (merged, apply = steps): the ack's op put completed:
    the txn joins the store's open set (`openTxns.add`), the handle keeps
    the ack in memory, and the client has its answer. An event that reached
    the store between the put and now found the txn missing from its
    snapshot (`triggerReconcile` reads only the open set)."""
    a = m.acks[k]
    i = len(m.writes) + k
    pub = s.pubs[i]
    if pub.stage != OPPUT or s.part[a.seg] is None:
        return None
    f = SUB_FIELDS[a.sub]
    p = s.part[a.seg]
    p = p._replace(**{f["acache"]: getattr(p, f["acache"]) | {a.txn}})
    if m.flags.memory_acks:
        p = p._replace(**{f["packs"]: getattr(p, f["packs"]) | {(a.txn, a.pos, a.cumulative)}})
    return _pub(s, i, pub._replace(stage=DONE), part=_put(s.part, a.seg, p))


def _closed_end(m, pub: Pub) -> Pub:
    """A closed instance's send ends (its append failed, or its op put or
    check rejected it). Its answer never reaches the client, whose connection
    the unload closed: the stock client's producer resends the message to the
    new owner (`ProducerImpl.resendMessages` on reconnect), so the operation
    starts again; a permissive client sees the error. The model resends once
    the closed send has ended (the producer may resend sooner; with fixed F10
    the new owner takes no send before then)."""
    return PUB_TODO if m.stock_client else pub._replace(stage=REJECTED)


def _closed_memory(m, s: S, j: int, update) -> S:
    """apply = steps: a closed instance kept for its reads and apply chain
    (`S.zomb`) also sees its own sends' effects on its memory (the hold its
    op put makes, what a failed append or op write releases), since its
    watermark CAS reads it. Without such an instance nothing observes that
    memory."""
    if not m.apply_steps or s.zomb[j] is None:
        return s
    lac, p = s.zomb[j]
    return s._replace(zomb=_put(s.zomb, j, (lac, update(p))))


def closed_put_op(m, s: S, k: int):
    """publishPutOp of a send whose buffer instance an unload closed (bound
    `unloads`): the op lands in the store, which does not know the instance
    is closed, possibly after the new owner's recovery scanned the segment's
    ops. Its hold, in a closed instance kept with `apply = steps`, is taken
    at the closed ledger handle's end, not at the entries the new owner added
    since. Its F2 watermark write is not modelled: the send's append will
    fail, so there is no entry for a watermark to hold below."""
    w, pub = m.writes[k], s.pubs[k]
    if pub.stage != CLOSED[CHECKED]:
        return None
    j, t = pub.seg, w.txn
    s = _closed_memory(m, s, j, lambda p: track_in_flight(s, j, p, t, s.zomb[j][0]) if t in p.cache else p)
    return _pub(s, k, pub._replace(stage=CLOSED[OPPUT], seq=s.seqs[t]), **put_op(s, t, "write", j, 0))


def closed_op_fails(m, s: S, k: int):
    """publishOpFails (bound opfail) of a closed instance's send."""
    pub = s.pubs[k]
    if not m.op_fail or pub.stage != CLOSED[CHECKED]:
        return None
    s = _pub(s, k, _closed_end(m, pub))
    return _closed_memory(m, s, pub.seg, lambda p: release_failed(m, s, pub.seg, p, m.writes[k].txn, k, CLOSED_STAGES))


def closed_validate(m, s: S, k: int):
    """fixed F1 in a closed instance: the header re-read after the op put; a
    decided header deletes the op and rejects the send (the closed buffer
    materializes nothing: the new owner learns the decision by its own events)."""
    w, pub = m.writes[k], s.pubs[k]
    if not m.flags.validate_after_op or pub.stage != CLOSED[OPPUT]:
        return None
    if header_state(s, w.txn) == OPEN:
        return _pub(s, k, pub._replace(stage=CLOSED[VALID]))
    return _pub(s, k, _closed_end(m, pub),
                ops=frozenset(o for o in s.ops if not (o.txn == w.txn and o.seq == pub.seq)))


def closed_append(m, s: S, k: int):
    """publishAppend of a closed instance's send: the closed ledger refuses it.
    merged leaves the op; fixed's F1 deletes it on the failure, as after
    TopicTerminated; F8 keys a waiting aborted record, as there."""
    w, pub = m.writes[k], s.pubs[k]
    if pub.stage != CLOSED[VALID if m.flags.validate_after_op else OPPUT]:
        return None
    changed = {}
    if m.flags.validate_after_op:
        changed["ops"] = frozenset(o for o in s.ops if not (o.txn == w.txn and o.seq == pub.seq))
    if m.flags.rekey_late:
        changed["arec"] = rekey(m, s, pub.seg, w.txn, 0, k)
    s = _pub(s, k, _closed_end(m, pub), **changed)
    j, t = pub.seg, w.txn
    return _closed_memory(m, s, j, lambda p: release_failed(m, s, j, drop_in_flight(p, t), t, k, CLOSED_STAGES))


def closed_track(m, s: S, k: int):
    """publishTrack (track = steps) of an add that landed before an unload
    closed its buffer instance: the callback runs in the closed instance
    (`trackPosition` into its memory, F8's re-key), and its answer is lost
    with the closed connection (`_closed_end`); the entry stays in the ledger."""
    w, pub = m.writes[k], s.pubs[k]
    if pub.stage != CLOSED[ADDED]:
        return None
    j, t, pos = pub.seg, w.txn, pub.pos
    changed = {"arec": rekey(m, s, j, t, pos, k)} if m.flags.rekey_late else {}
    s = _pub(s, k, _closed_end(m, pub), **changed)
    return _closed_memory(m, s, j, lambda p: track_position(p, t, pos))


# The steps a send may take from each unfinished stage, in the order `next`
# tries them (which one applies depends on the variant; each checks its guard).
STEPS = {
    TODO: (("publishCheck", check),),
    READ: (("publishCache", cache_put),),   # bound check = steps (publish_cache.py)
    READ_APPLIED: (("publishCache", cache_put),),   # F11
    CHECKED: (("publishPutOp", put_write_op), ("publishAppend", append), ("publishOpFails", op_fails)),
    OPPUT: (("publishAppend", append), ("publishValidate", validate)),
    APPENDED: (("publishPutOp", put_write_op),),
    VALID: (("publishAppend", append),),
    ADDED: (("publishTrack", track),),   # bound track = steps
    # a send of a buffer instance that an unload closed (bound unloads)
    CLOSED_READ: (("publishCache", closed_cache_put),),
    CLOSED[CHECKED]: (("publishPutOp", closed_put_op), ("publishOpFails", closed_op_fails)),
    CLOSED[OPPUT]: (("publishAppend", closed_append), ("publishValidate", closed_validate)),
    CLOSED[VALID]: (("publishAppend", closed_append),),
    CLOSED[ADDED]: (("publishTrack", closed_track),),
}
