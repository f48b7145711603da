"""MetadataTransactionBuffer, one per segment (Components table).

`getMaxReadPosition` = min(first position over OPEN txns) - 1, capped at the
last confirmed entry (LAC = the ledger length here). The merged code holds
the current value while an OPEN entry of the buffer has no position yet:
from the header read that makes the entry (not the op put) until its append
lands, so an op write or append that fails leaves the hold in place
(`recomputeMaxReadPositionLocked`, `anyOpen` with no minimum), and after
recovery (notes, "Recovery in the merged code"). Where the code lets a
later txn's first position replace such a hold (its minimum wins), the
model keeps the lower of the two: it may hold longer, never expose more.

`isTxnAborted`: pip-text looks the header up in the cache and falls back to
"aborted" for an unknown txnId (Recovery, "Broker crash mid-publish");
merged/fixed consult the durable aborted records, an unknown txnId is visible;
like the merged `isTxnAborted`, it ignores the record's position (its prune key).
With bound `apply = "steps"` it answers, as the code does (L652-L659), from the
buffer's in-memory aborted set (`Part.abrt`), which recovery's scan of the
records fills and each applied abort extends (before its record's put lands);
a record another instance puts after that scan is not in it.
"""

from __future__ import annotations

from ...api import replace_at as _put
from .state import ABORTED, ADDED, GONE, IN_FLIGHT, NONE, OPPUT, RECOVERED, UNKEYED, VALID, Part, S
from .store import header_state, streams


def max_read(s: S, j: int, p: Part) -> int:
    """The buffer's `maxReadPosition` field: what the watermark persists."""
    return ceiling(p, len(s.ledger[j]))


def ceiling(p: Part, lac: int) -> int:
    """maxReadPosition of a buffer whose ledger's last confirmed entry is
    `lac` (a closed instance's ledger handle stopped where it was closed)."""
    if not p.ready:   # recovering: the constructor's LAC, the watermark once loaded, or a plain send's LAC
        return p.hold
    v = lac
    for _, pos in p.tpos:
        if 0 < pos <= v:
            v = pos - 1
    if 0 <= p.hold < v:
        v = p.hold
    return v


def read_limit(m, s: S, j: int, p: Part) -> int:
    """`getMaxReadPosition()`, what the dispatcher reads up to: the field,
    except that fixed F6 gates the getter: the earliest position (0) until
    the buffer's recovery completes, whatever the field holds meanwhile."""
    if not p.ready and m.flags.dispatch_waits:
        return 0
    return max_read(s, j, p)


def is_txn_aborted(m, s: S, j: int, p: Part, t: int) -> bool:
    if not p.ready and p.loaded < 2:
        return False   # recovering: the aborted set is not loaded yet
    if m.apply_steps:   # the in-memory aborted set (`abortedTxns`), which recovery's scan loaded
        return t in p.abrt
    if m.flags.durable_aborts:
        return any(a[0] == j and a[1] == t for a in s.arec)
    if t in p.abrt:
        return True
    if t in p.cache:
        return False
    return header_state(s, t) in (ABORTED, GONE, NONE)


def track_in_flight(s: S, j: int, p: Part, t: int, lac: int | None = None) -> Part:
    """merged: t's entry has no position yet (the header read made it, or an
    op put for an append to come): hold maxReadPosition, as the merged
    `recomputeMaxReadPositionLocked` does while an OPEN entry has none.
    `lac`: a closed instance's ledger handle stopped there."""
    hold = p.hold if p.hold >= 0 else ceiling(p, len(s.ledger[j]) if lac is None else lac)
    return p._replace(cache=p.cache | {t}, tpos=p.tpos | {(t, 0)}, hold=hold)


def _held(tpos: frozenset) -> bool:
    """Something still needs the hold: an append in flight or a recovered txn."""
    return any(q[1] <= 0 for q in tpos)


def track_position(p: Part, t: int, pos: int) -> Part:
    """The position of t's entry is known; release the hold when nothing is
    in flight. A txn found by recovery keeps its hold and is not re-keyed:
    its earlier entries sit at unknown positions below this one."""
    if t not in p.cache:
        return p  # already materialized: nothing pins the read position
    tpos = frozenset(x for x in p.tpos if not (x[0] == t and x[1] == 0))
    if not any(q[0] == t for q in tpos):
        tpos = tpos | {(t, pos)}
    return p._replace(tpos=tpos, hold=p.hold if _held(tpos) else -1)


def forget(p: Part, t: int) -> Part:
    """Commit evicts the cache entry; abort too, once marked aborted."""
    tpos = frozenset(x for x in p.tpos if x[0] != t) if p.tpos else p.tpos
    return p._replace(cache=p.cache - {t}, tpos=tpos, hold=p.hold if _held(tpos) else -1)


def release_failed(m, s: S, j: int, p: Part, t: int, but: int, stages=None) -> Part:
    """fixed F5: after a failed send (plan operation `but`), a broker that
    holds no op, no tracked position and no other send of t in progress
    forgets its cache entry, which no event would ever clear (no op there,
    so the coordinator publishes nothing to it). Another send of t past its
    header check still needs the entry: its op put tracks the append only
    for a cached txn. Only an op whose event reaches the buffer counts
    (`streams`): with split participants an ACK op's event goes to the
    pending-ack store, which has a cache of its own."""
    if not m.flags.drop_failed or t not in p.cache or any(x[0] == t and x[1] != 0 for x in p.tpos):
        return p
    pubs = s.pubs
    stages = IN_FLIGHT if stages is None else stages
    if any(k != but and w.txn == t and pubs[k].seg == j and pubs[k].stage in stages
           for k, w in enumerate(m.writes)):
        return p
    if (j, "events") in streams(m, s, t):
        return p
    tpos = p.tpos - {(t, 0)}
    return p._replace(cache=p.cache - {t}, tpos=tpos, hold=p.hold if _held(tpos) else -1)


def prune_aborted(m, s: S, j: int):
    """pruneAborted (bound `trim`): the buffer's periodic task deletes the
    aborted records whose key is below the ledger's first retained position
    (the merged `pruneTrimmedAbortedTxns`; its scan and deletes are one step
    here). It runs whether or not the buffer's recovery has completed."""
    p = s.part[j]
    if p is None:
        return None
    gone = [a for a in s.arec if a[0] == j and a[2] < s.retained[j]]
    if not gone:
        return None
    if m.apply_steps and p.abrt:   # and drops them from the in-memory set
        p = p._replace(abrt=p.abrt - {a[1] for a in gone})
        s = s._replace(part=_put(s.part, j, p))
    return s._replace(arec=s.arec - set(gone))


def appending(m, s: S, j: int, t: int, but: int = -1) -> bool:
    """A send of t on segment j (other than plan operation `but`) whose
    ledger append may still land, or landed with its callback still to run
    (track = steps): the buffer holds the request."""
    stage = VALID if m.flags.validate_after_op else OPPUT
    pubs = s.pubs
    return any(k != but and w.txn == t and pubs[k].seg == j and pubs[k].stage in (stage, ADDED)
               for k, w in enumerate(m.writes))


def callback_pending(s: S, j: int) -> bool:
    """An add to segment j's ledger completed and its callback has not run
    (bounds sync, track = steps): the ledger's next add completes after it
    (the managed ledger runs the callback in the add's completion task)."""
    p = s.part[j]
    return p is not None and p.psync or any(q.seg == j and q.stage == ADDED for q in s.pubs)


def rekey(m, s: S, j: int, t: int, pos: int, but: int) -> frozenset:
    """fixed F8, when a send `but` of t on j ends: an entry at `pos` raises
    the key of t's aborted record there (a failed send passes 0); an
    UNKEYED record gets its key once no other append of t is in flight
    (the entry's position, or the LAC)."""
    old = aborted_key(s, j, t)
    if old is None:
        return s.arec
    if appending(m, s, j, t, but):
        new = UNKEYED if pos > old or old == UNKEYED else old
    elif old == UNKEYED:
        new = pos or len(s.ledger[j])
    else:
        new = max(old, pos)
    return s.arec if new == old else s.arec - {(j, t, old)} | {(j, t, new)}


def aborted_key(s: S, j: int, t: int) -> int | None:
    """The key of t's aborted record on segment j, None without one
    (`put_aborted_record` keeps one per (j, t); the least, so that the
    answer is the set's, not its order's, in every state)."""
    return min((a[2] for a in s.arec if a[0] == j and a[1] == t), default=None)


def prune_key(m, s: S, j: int, p: Part, t: int, lac: int | None = None) -> int:
    """The key of t's aborted record on segment j (the merged
    `persistAbortedRecord`): the last position of t this buffer tracked,
    else the LAC. Every entry of t since its first tracked one was tracked
    (a crash forgets all, and recovery's txns are RECOVERED) but one whose
    add's callback has not run (track = steps), so the last tracked
    position is t's last such entry in the ledger. fixed F8: UNKEYED while
    an append of t is in flight here."""
    if m.flags.rekey_late and appending(m, s, j, t):
        return UNKEYED
    if any(x[0] == t and x[1] > 0 for x in p.tpos):
        untracked = {q.pos for q in s.pubs if q.seg == j and q.stage == ADDED}
        return max(i + 1 for i, tag in enumerate(s.ledger[j]) if tag == t and i + 1 not in untracked)
    return len(s.ledger[j]) if lac is None else lac


def drop_in_flight(p: Part, t: int) -> Part:
    """A failed append (TopicTerminated). The merged code removes nothing:
    an entry of t with no position keeps holding the read position (fixed
    F5 may then drop it, `release_failed`); one with a position or found by
    recovery no longer needs the in-flight mark."""
    if not any(x[0] == t and x[1] != 0 for x in p.tpos):
        return p
    tpos = p.tpos - {(t, 0)}
    return p._replace(tpos=tpos, hold=p.hold if _held(tpos) else -1)
