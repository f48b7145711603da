"""Participant crash and recovery (Recovery; `recover()`, `replayAsync()`;
notes "Recovery in the merged code").

A crash loses the participant's caches, watches, pending events and its
in-flight publishes (their clients see an error). Recovery is one step: it
reads `idx:writes-by-segment` and `idx:acks-by-segment-subscription` for the
segment (each subscription's pending-ack store its own) and the headers of
the txns found (the first watch event delivers the snapshot), re-watches the
OPEN ones and finishes the materialization of the decided ones.

pip-text: the write ops carry positions, so OPEN txns pin maxReadPosition at
their first entry; an unknown (missing) header counts as aborted.
merged/fixed: recovery is asynchronous, in steps (protocol notes,
"Merged-code mechanisms"): `recover` constructs the buffer, whose
maxReadPosition is the LAC and whose aborted set is empty until
`recoverComplete`; dispatch does not wait (fixed F6: `getMaxReadPosition`
answers the earliest position until the buffer is ready, so it reads
nothing), while publishes, acks and event handling do.
merged: the write ops carry placeholder positions: OPEN txns hold
maxReadPosition at the persisted watermark if there is one, else at the
current value (the LAC); a missing header is ABORTED with a durable aborted
record; the pending-ack store re-seeds only the open txn ids (memory_acks).

Bound `recovery` (merged/fixed): `atomic` loads everything in
`recoverComplete`; `steps` runs the buffer's loads in the code's order
(`MetadataTransactionBuffer.recover`), each a step that dispatch and
non-transactional publishes may interleave with: `recoverWatermark` (the
durable watermark; maxReadPosition starts there), `recoverAborted` (the
aborted set; isTxnAborted answers from it), then `recoverComplete` (the scan
of the segment's WRITE ops and the header reads, one step: no WRITE op of
the segment is put or deleted while its buffer recovers, since sends wait
for the recovery and only this buffer deletes them; tests/test_pip473.py
checks that on reachable states). The one step also assumes that the
header reads, which the code issues one by one after the scan, form one
snapshot with it: a header that changes after its read is a decision CAS,
whose event reaches the buffer's stream (it subscribed before its loads, and
the txn's op is still there, so the TC lists it) and is handled once the
recovery completes, as in the code (`triggerReconcile` after
`recoveryFuture` completes); a header deleted by the GC had no op left,
so the scan did not find it. Atomic is a claim: it misses no violation
that steps shows (its unloaded buffer answers like steps' before the loads,
and its watermark writes never fail), which tests/test_recovery_audit.py
checks at small bounds.
"""

from __future__ import annotations

from ..api import replace_at as _put
from .notify import materialize
from .state import ABORTED, COMMITTED, EMPTY_PART, GONE, IN_FLIGHT, OPEN, RECOVERED, REJECTED, UNKEYED, S
from .store import acks_by_segment_subscription, header_state, writes_by_segment


def crash(m, s: S, j: int) -> S:
    pubs = tuple(p._replace(stage=REJECTED) if p.seg == j and p.stage in IN_FLIGHT else p for p in s.pubs)
    return s._replace(part=_put(s.part, j, None), pubs=pubs, crashes=s.crashes - 1)


def recover(m, s: S, j: int) -> S:
    """The broker is back. pip-text: recover() in one step. merged/fixed: the
    MetadataTransactionBuffer is constructed (maxReadPosition = the LAC; F6:
    its getter answers the earliest position until recovery completes, as
    the legacy buffer does) and subscribes to its events; its recovery
    completes later (`recover_complete`), with dispatch running meanwhile."""
    if m.flags.async_recovery:
        return s._replace(part=_put(s.part, j, EMPTY_PART._replace(hold=len(s.ledger[j]), ready=False)))
    return recover_complete(m, s, j)


def recover_watermark(m, s: S, j: int) -> S:
    """recovery = steps, step 1: load the durable watermark; maxReadPosition
    starts there when it exists (F6 gates only the getter, `read_limit`)."""
    p = s.part[j]
    hold = p.hold if s.wmark[j] < 0 else s.wmark[j]
    return s._replace(part=_put(s.part, j, p._replace(loaded=1, hold=hold, wknown=True)))


def recover_aborted(m, s: S, j: int) -> S:
    """recovery = steps, step 2: load the segment's aborted records into the
    aborted set (F8: re-key the waiting ones at the LAC)."""
    p = s.part[j]
    return _rekey_waiting(m, s._replace(part=_put(s.part, j, p._replace(loaded=2))), j)


def _rekey_waiting(m, s: S, j: int) -> S:
    """F8: no append survives the restart: key the waiting records at the LAC."""
    if m.flags.rekey_late:
        waiting = {a for a in s.arec if a[0] == j and a[2] == UNKEYED}
        if waiting:
            s = s._replace(arec=s.arec - waiting | {(j, t, len(s.ledger[j])) for _, t, _ in waiting})
    return s


def recover_complete(m, s: S, j: int) -> S:
    """Load the watermark and aborted records, scan the segment's op records,
    read their headers; events that arrived meanwhile stay pending."""
    writes = writes_by_segment(s, j)
    old = s.part[j]
    p = EMPTY_PART if old is None else EMPTY_PART._replace(events=old.events, aevents=old.aevents,
                                                           aevents2=old.aevents2)
    wrote = {o.txn for o in writes}
    acked, acked2 = ({o.txn for o in acks_by_segment_subscription(s, j, x)} for x in (0, 1))
    decided = []
    for t in sorted(wrote | acked | acked2):
        st = header_state(s, t)
        if st == GONE and m.flags.collected_not_aborted:
            # fixed F4: the GC deletes a header only once no op is left, so this
            # op was put after the collection by a send that F1 never admitted:
            # its entry was never appended. Delete it; the txn's outcome was
            # materialized here long ago (an abort left its aborted record).
            s = s._replace(ops=frozenset(o for o in s.ops if not (o.txn == t and o.seg == j)))
            continue
        if st != OPEN:
            decided.append((t, COMMITTED if st == COMMITTED else ABORTED))
            continue
        if m.split:   # each participant re-seeds its own open txns
            p = p._replace(cache=p.cache | ({t} if t in wrote else set()),
                           acache=p.acache | ({t} if t in acked else set()),
                           acache2=p.acache2 | ({t} if t in acked2 else set()))
        else:
            p = p._replace(cache=p.cache | {t})
        mine = [o.pos for o in writes if o.txn == t]
        if not mine:
            continue
        if m.flags.merged_recovery:
            hold = s.wmark[j] if s.wmark[j] >= 0 else len(s.ledger[j])
            p = p._replace(tpos=p.tpos | {(t, RECOVERED)}, hold=hold if p.hold < 0 else min(p.hold, hold))
        else:
            p = p._replace(tpos=p.tpos | {(t, min(mine))})
    s = s._replace(part=_put(s.part, j, p))
    if not (old is not None and old.loaded >= 2):   # recovery = atomic: the aborted set loads now
        s = _rekey_waiting(m, s, j)
    for t, d in decided:
        s = materialize(m, s, j, t, d, **({"tb": t in wrote, "pas": t in acked} if m.split else {}))
        if t in acked2:   # the second subscription's pending-ack store (split only)
            s = materialize(m, s, j, t, d, tb=False, pas=True, sub=1)
    return s
