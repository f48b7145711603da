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
"""

from __future__ import annotations

from ..api import replace_at as _put
from .buffer import forget, max_read, prune_key
from .pendingack import acks_to_apply, apply_to_cursor
from .state import ABORTED, COMMITTED, OPEN, S
from .store import header_state

PENDING = (True,)


def fanout(m, s: S, t: int, new_state: str) -> tuple:
    """The participants (`S.part`) once the change of t's header to
    `new_state` is notified; the caller puts them in the new state."""
    part = list(s.part)
    if m.flags.coalesced:
        for j in sorted({o.seg for o in s.ops if o.txn == t}):
            p = part[j]
            if p is not None and p.events != PENDING:
                part[j] = p._replace(events=PENDING)
    else:
        for j, p in enumerate(part):
            if p is not None and t in p.cache:
                if m.oneshot and any(e[0] == t for e in p.events):
                    continue  # zk-oneshot: the watch already fired and is not re-registered yet
                part[j] = p._replace(events=p.events + ((t, new_state),))
    return tuple(part)


def materialize(m, s: S, j: int, t: int, decision: str) -> S:
    p = s.part[j]
    cursor = s.cursor
    arec = s.arec
    if decision == COMMITTED:
        cursor = _put(cursor, j, apply_to_cursor(cursor[j], acks_to_apply(m, s, j, p.packs, t)))
    elif m.flags.durable_aborts:   # a put: a record of t on j is rewritten
        arec = frozenset(a for a in arec if a[0] != j or a[1] != t) | {(j, t, prune_key(m, s, j, p, t))}
    else:
        p = p._replace(abrt=p.abrt | {t})
    p = forget(p, t)
    if p.packs:
        p = p._replace(packs=frozenset(x for x in p.packs if x[0] != t))
    ops = frozenset(o for o in s.ops if not (o.txn == t and o.seg == j))
    # the ledger is unchanged, so the watermark is the new buffer's maxReadPosition
    wmark = _put(s.wmark, j, max_read(s, j, p)) if m.flags.watermark else s.wmark
    return s._replace(cursor=cursor, arec=arec, part=_put(s.part, j, p), ops=ops, wmark=wmark)


def deliver_event(m, s: S, j: int) -> S:
    p = s.part[j]
    if m.flags.coalesced:
        s = s._replace(part=_put(s.part, j, p._replace(events=())))
        for t in sorted(p.cache):
            st = header_state(s, t)
            if st != OPEN:
                s = materialize(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED)
        return s
    (t, st), rest = p.events[0], p.events[1:]
    if m.oneshot:
        st = header_state(s, t)  # a ZooKeeper event carries no data: read the header, re-register
    s = s._replace(part=_put(s.part, j, p._replace(events=rest)))
    if t in p.cache and st != OPEN:
        s = materialize(m, s, j, t, COMMITTED if st == COMMITTED else ABORTED)
    return s
