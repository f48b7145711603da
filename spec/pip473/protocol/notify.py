"""How participants learn a decision (Notification mechanism), and
materialization (Garbage collection, phase 1).

pip-text: point watches on the headers a participant has cached. A change
of `/txn/<txnId>` (the decision CAS, the GC's delete) enqueues one event,
carrying the new value, for each watcher; events are delivered in order per
watcher, after any delay the checker chooses, and are lost on a crash.

merged/fixed (notes 3): after its CAS the TC lists the txn's ops and appends
one event per written segment and (segment, subscription) to each
participant's stream. The stream is coalesced, so a participant holds at
most one pending "something changed" event; on delivery it re-reads the
header of every txn it believes OPEN. A missing header counts as ABORTED.

Materialization: commit evicts the cache entry and applies the acks to the
cursor; abort marks the txn aborted and drops the acks; then the participant
deletes the op records it owns (`/txn-op/<txnId>/<seq>` on its segment).

Bound `apply = "steps"` (merged/fixed): an event only issues the header
reads; each read's return, the buffer's apply chain and the store's delete
of its ACK ops are steps of their own, as the code runs them (apply.py).

Bound `participants = "split"`: the transaction buffer and the pending-ack
store are separate participants, each with its own cache and events (the
merged code's two streams: one per written segment, one per (segment,
subscription) with acks). The buffer materializes the txn's entries and
deletes its WRITE ops (`deliverEvent`); each subscription's store applies or
drops its acks and deletes its ACK ops (`deliverAckEvent`), each when its own
event comes.
"""

from __future__ import annotations

from ...api import replace_at as _put
from .apply import apply_acks, enqueue
from .buffer import forget, max_read, prune_key
from .pendingack import acks_to_apply, apply_to_cursor
from .publish_cache import applied
from .state import ABORTED, COMMITTED, OPEN, SUB_FIELDS, S
from .store import header_state, streams

PENDING = (True,)


def publish(part: tuple, targets) -> tuple:
    """Append one coalesced event to each target stream of a live participant."""
    part = list(part)
    for j, field in sorted(targets):
        p = part[j]
        if p is not None and getattr(p, field) != PENDING:
            part[j] = p._replace(**{field: PENDING})
    return tuple(part)


def fanout(m, s: S, t: int, new_state: str) -> tuple:
    """The participants (`S.part`) once the change of t's header to
    `new_state` is notified; the caller puts them in the new state."""
    if m.flags.coalesced:
        return publish(s.part, streams(m, s, t))
    part = list(s.part)
    for j, p in enumerate(part):
        if p is None:
            continue
        for cache, field in (("cache", "events"), ("acache", "aevents"), ("acache2", "aevents2")):
            if t in getattr(p, cache):
                queue = getattr(p, field)
                if m.oneshot and any(e[0] == t for e in queue):
                    continue  # zk-oneshot: the watch already fired and is not re-registered yet
                p = p._replace(**{field: queue + ((t, new_state),)})
        part[j] = p
    return tuple(part)


def materialize(m, s: S, j: int, t: int, decision: str, tb: bool = True, pas: bool = True, sub: int = 0,
                found: bool = False) -> S:
    """The participant of segment j applies t's decision: the pending-ack
    store of subscription `sub` (`pas`: acks to its cursor or dropped, its
    ACK ops deleted) and the transaction buffer (`tb`: aborted record or
    mark, evict, its WRITE ops deleted, the watermark). Joint participants
    always do both. With bound `apply = "steps"` the buffer's apply joins
    its chain and the store's delete is a step of its own (apply.py);
    `found`: recovery found the txn decided (its entry is its own)."""
    if m.apply_steps:
        if pas:
            s = apply_acks(m, s, j, t, decision)
        return enqueue(m, s, j, t, decision, found=found) if tb else s
    p = s.part[j]
    arec, wmark = s.arec, s.wmark
    f = SUB_FIELDS[sub]
    cursors = {}
    if pas:
        packs, acache = getattr(p, f["packs"]), getattr(p, f["acache"])
        if decision == COMMITTED:
            cursor = getattr(s, f["cursor"])
            cursors[f["cursor"]] = _put(cursor, j, apply_to_cursor(cursor[j], acks_to_apply(m, s, j, packs, t, sub)))
        if packs:
            p = p._replace(**{f["packs"]: frozenset(x for x in packs if x[0] != t)})
        if t in acache:
            p = p._replace(**{f["acache"]: acache - {t}})
    if tb:
        if decision != COMMITTED and m.flags.durable_aborts:   # a put: a record of t on j is rewritten
            arec = frozenset(a for a in arec if a[0] != j or a[1] != t) | {(j, t, prune_key(m, s, j, p, t))}
        elif decision != COMMITTED:
            p = p._replace(abrt=p.abrt | {t})
        if t in p.cache:
            s = applied(m, s, j, t)   # F11: the entry goes, which a read's callback would put back
        p = forget(p, t)
    kinds = ("write", "ack") if tb and pas else ("write",) if tb else ("ack",)
    ops = frozenset(o for o in s.ops if not (o.txn == t and o.seg == j and o.kind in kinds and o.sub == sub))
    if tb and m.flags.watermark:
        # the ledger is unchanged, so the watermark is the new buffer's maxReadPosition
        wmark = _put(s.wmark, j, max_read(s, j, p))
    return s._replace(arec=arec, part=_put(s.part, j, p), ops=ops, wmark=wmark, **cursors)


def deliver_event(m, s: S, j: int, acks: bool = False, sub: int = 0) -> S:
    """The next event of segment j's participant (split: of its buffer, or
    with `acks` of subscription `sub`'s pending-ack store), and the
    materializations it starts."""
    p = s.part[j]
    cache, field = (SUB_FIELDS[sub]["acache"], SUB_FIELDS[sub]["aevents"]) if acks else ("cache", "events")
    who = {"tb": not acks, "pas": acks or not m.split, "sub": sub}
    if m.flags.coalesced:
        if m.apply_steps:   # triggerReconcile: a read of every OPEN header it caches, each returning later
            reads = "areads" if acks else "reads"
            return s._replace(part=_put(s.part, j, p._replace(
                **{field: (), reads: getattr(p, reads) | getattr(p, cache)})))
        s = s._replace(part=_put(s.part, j, p._replace(**{field: ()})))
        for t in sorted(getattr(p, cache)):
            st = header_state(s, t)
            if st != OPEN:
                s = materialize(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED, **who)
        return s
    queue = getattr(p, field)
    (t, st), rest = queue[0], queue[1:]
    if m.oneshot:
        st = header_state(s, t)  # a ZooKeeper event carries no data: read the header, re-register
    s = s._replace(part=_put(s.part, j, p._replace(**{field: rest})))
    if t in getattr(p, cache) and st != OPEN:
        s = materialize(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED, **who)
    return s
