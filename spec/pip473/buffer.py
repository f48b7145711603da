"""MetadataTransactionBuffer, one per segment (Components table).

`getMaxReadPosition` = min(first position over OPEN txns) - 1, capped at the
last confirmed entry (LAC = the ledger length here). The merged code holds
the current value while an append is in flight (op written, position
unknown) and after recovery (notes, "Recovery in the merged code").

`isTxnAborted`: pip-text looks the header up in the cache and falls back to
"aborted" for an unknown txnId (Recovery, "Broker crash mid-publish");
merged/fixed consult the durable aborted records, an unknown txnId is visible.
"""

from __future__ import annotations

from .state import ABORTED, GONE, NONE, RECOVERED, Part, S
from .store import header_state


def max_read(s: S, j: int, p: Part) -> int:
    if not p.ready:   # recovering: the constructor's value (hold), or the earliest position (F6: hold 0)
        return p.hold
    v = len(s.ledger[j])
    for _, pos in p.tpos:
        if 0 < pos <= v:
            v = pos - 1
    if 0 <= p.hold < v:
        v = p.hold
    return v


def is_txn_aborted(m, s: S, j: int, p: Part, t: int) -> bool:
    if not p.ready:
        return False   # recovering: the aborted set is not loaded yet
    if m.flags.durable_aborts:
        return (j, t) in s.arec
    if t in p.abrt:
        return True
    if t in p.cache:
        return False
    return header_state(s, t) in (ABORTED, GONE, NONE)


def track_in_flight(s: S, j: int, p: Part, t: int) -> Part:
    """merged: the op is written, the position is not known yet: hold maxReadPosition."""
    hold = p.hold if p.hold >= 0 else max_read(s, j, p)
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
    return Part(cache=p.cache - {t}, tpos=tpos, abrt=p.abrt, packs=p.packs, events=p.events,
                hold=p.hold if _held(tpos) else -1)


def release_failed(m, s: S, j: int, p: Part, t: int) -> Part:
    """fixed F5: after a failed send, a broker that holds no op and no
    tracked position of t forgets its cache entry, which no event would
    ever clear (no op there, so the coordinator publishes nothing to it)."""
    if not m.flags.drop_failed or t not in p.cache or any(x[0] == t for x in p.tpos):
        return p
    if any(o.txn == t and o.seg == j for o in s.ops):
        return p
    return p._replace(cache=p.cache - {t})


def drop_in_flight(p: Part, t: int) -> Part:
    """A failed append (TopicTerminated): nothing is in flight for t any more."""
    tpos = p.tpos - {(t, 0)}
    return p._replace(tpos=tpos, hold=p.hold if _held(tpos) else -1)
