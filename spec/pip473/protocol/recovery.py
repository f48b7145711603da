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
`recoverComplete`; dispatch does not wait for it (fixed F6:
`getMaxReadPosition` answers the earliest position until the buffer is
ready, so it reads nothing), while publishes and the buffer's event
handling do.
merged/fixed with split participants: each subscription's pending-ack
store replays on its own (`recoverAcks`), as the code's does when its
subscription loads, independently of the buffer's recovery: its scan of its
ACK ops and their headers, then its handle is ready; its acks, its events
and its dispatcher wait for that, not for the buffer (a consumer is let back
in only once the handle is ready: `PersistentSubscription.addConsumer`
waits on `pendingAckHandleFuture()`). The joint participant keeps the
store's replay inside `recoverComplete`.
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
checks that on reachable states. With bound `unloads` a closed instance's
send may put or delete its op meanwhile: before or after the one step,
which also stands for a put between the scan and the header reads, since
the scan misses it either way). The one step also assumes that the
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

from ...api import replace_at as _put
from .notify import materialize
from .state import (
    ABORTED, CLOSED, CLOSED_READ, COMMITTED, EMPTY_PART, GONE, IN_FLIGHT, OPEN, READ, READ_APPLIED, RECOVERED, REJECTED,
    SUB_FIELDS, UNKEYED, S,
)
from .store import acks_by_segment_subscription, header_state, writes_by_segment


def crash(m, s: S, j: int) -> S:
    # a send whose header read is out (check = steps) fails too: its callback never runs
    pubs = tuple(p._replace(stage=REJECTED) if p.seg == j and (p.stage in IN_FLIGHT or p.stage in (READ, READ_APPLIED))
                 else p for p in s.pubs)
    return s._replace(part=_put(s.part, j, None), pubs=pubs, crashes=s.crashes - 1)


def unload(m, s: S, j: int) -> S:
    """Bound `unloads` (merged/fixed): a topic unload, an ownership change
    of the segment. The old buffer instance is closed and the new owner
    loads the segment anew (`recover`, as after a crash: memory, events and
    watches are gone). Unlike a crash, the sends the closed instance took go
    on (stage CLOSED): `MetadataTransactionBuffer.internalAppend` checks
    `closed` only on entry, so a send past that check still puts its op,
    possibly after the new owner's recovery scanned the ops; its ledger
    append fails (publish.closed_append). With bound `apply = "steps"` its
    reconcile reads and apply chain, and its pending-ack store's, go on too
    (`closeAsync` waits for neither): the closed instance is kept in
    `S.zomb` with the ledger's length at the close, until it has nothing
    left to do (apply.py). A buffer still recovering has no reads or chain
    yet (its events wait), and the model does not run the rest of its
    recovery after the close (the reference's recovery tasks go with the
    broker too); its pending-ack store's deletes in flight go on, and so
    does a plain entry's add callback still to run (bound sync = steps). A
    send's add callback still to run (track = steps) runs in the closed
    instance in any case: its request goes on (publish.closed_track).
    Pruning: as a crash, only while the broker holds something to lose, or
    while it has such a send."""
    nw = len(m.writes)   # an ack in flight (apply = steps: its put done, not answered) fails with the connection
    pubs = tuple((p._replace(stage=TAKEN[p.stage]) if k < nw else p._replace(stage=REJECTED))
                 if p.seg == j and p.stage in TAKEN else p for k, p in enumerate(s.pubs))
    old = s.part[j]
    s = s._replace(part=_put(s.part, j, None), pubs=pubs, unloads=s.unloads - 1)
    if m.apply_steps and (old.reads or old.chain or old.areads or old.adel or old.psync):
        # its event subscriptions are closed: the events pending for it are gone
        s = s._replace(zomb=_put(s.zomb, j, (len(s.ledger[j]), old._replace(events=(), aevents=(), aevents2=()))))
    return s


def closing(m, s: S, j: int) -> bool:
    """The closed instance of segment j still has work: a send past its
    check (stage CLOSED), or, with apply = steps, reads or an apply chain.
    fixed F10 makes the new owner's load wait for it."""
    return any(p.seg == j and p.stage in CLOSED_STAGES for p in s.pubs) or (m.apply_steps and s.zomb[j] is not None)


# The stage a send of the closed instance moves to at an unload: past its
# check, or (check = steps) its header read out, whose callback puts into
# the closed instance (publish_cache.py).
TAKEN = {**CLOSED, READ: CLOSED_READ}
CLOSED_STAGES = frozenset(TAKEN.values())


def recover(m, s: S, j: int) -> S:
    """The broker is back. pip-text: recover() in one step. merged/fixed: the
    MetadataTransactionBuffer is constructed (maxReadPosition = the LAC; F6:
    its getter answers the earliest position until recovery completes, as
    the legacy buffer does) and subscribes to its events; its recovery
    completes later (`recover_complete`), with dispatch running meanwhile."""
    if m.flags.async_recovery:
        p = EMPTY_PART._replace(hold=len(s.ledger[j]), ready=False)
        if m.apply_steps and s.wmark[j] >= 0:   # it knows no watermark yet: a CAS would expect none
            p = p._replace(wstale=True)
        if m.pas_recovers:   # each pending-ack store replays on its own (recover_acks)
            p = p._replace(aready=False, aready2=m.subs < 2)
        return s._replace(part=_put(s.part, j, p))
    return recover_complete(m, s, j)


def recover_watermark(m, s: S, j: int) -> S:
    """recovery = steps, step 1: load the durable watermark; maxReadPosition
    starts there when it exists (F6 gates only the getter, `read_limit`)."""
    p = s.part[j]
    hold = p.hold if s.wmark[j] < 0 else s.wmark[j]
    p = p._replace(loaded=1, hold=hold, wknown=True)
    if m.apply_steps:
        p = p._replace(wstale=False, wmirror=s.wmark[j])
    return s._replace(part=_put(s.part, j, p))


def recover_aborted(m, s: S, j: int) -> S:
    """recovery = steps, step 2: load the segment's aborted records into the
    aborted set (F8: re-key the waiting ones at the LAC)."""
    p = s.part[j]._replace(loaded=2)
    if m.apply_steps:   # the in-memory aborted set is what this scan finds
        p = p._replace(abrt=_aborted_here(s, j))
    return _rekey_waiting(m, s._replace(part=_put(s.part, j, p)), j)


def _aborted_here(s: S, j: int) -> frozenset:
    return frozenset(a[1] for a in s.arec if a[0] == j)


def _rekey_waiting(m, s: S, j: int) -> S:
    """F8: no append survives the restart: key the waiting records at the LAC."""
    if m.flags.rekey_late:
        waiting = {a for a in s.arec if a[0] == j and a[2] == UNKEYED}
        if waiting:
            s = s._replace(arec=s.arec - waiting | {(j, t, len(s.ledger[j])) for _, t, _ in waiting})
    return s


def recover_complete(m, s: S, j: int) -> S:
    """Load the watermark and aborted records, scan the segment's op records,
    read their headers; events that arrived meanwhile stay pending. With
    `m.pas_recovers` the scan is of the WRITE ops only: the pending-ack
    stores replay on their own (`recover_acks`) and keep what they hold."""
    writes = writes_by_segment(s, j)
    old = s.part[j]
    own = m.pas_recovers
    if old is None:
        p = EMPTY_PART
    elif own:   # the buffer's fields anew (nothing reached them while it recovered), the stores' kept
        abrt = old.abrt if m.apply_steps and old.loaded >= 2 else frozenset()   # apply = steps: loaded by its scan
        p = old._replace(cache=frozenset(), tpos=frozenset(), abrt=abrt, hold=-1, ready=True, loaded=0,
                         wknown=False)
        if m.apply_steps and old.loaded < 1:   # recovery = atomic: it loads the watermark now
            p = p._replace(wstale=False, wmirror=s.wmark[j])
    else:
        p = EMPTY_PART._replace(events=old.events, aevents=old.aevents, aevents2=old.aevents2)
    wrote = {o.txn for o in writes}
    acked, acked2 = (set() if own else {o.txn for o in acks_by_segment_subscription(s, j, x)} for x in (0, 1))
    decided = []
    for t in sorted(wrote | acked | acked2):
        st = header_state(s, t)
        if st == GONE and m.flags.collected_not_aborted:
            # fixed F4: the GC deletes a header only once no op is left, so this
            # op was put after the collection by a send that F1 never admitted:
            # its entry was never appended. Delete it (the ops this recovery
            # scanned); the txn's outcome was materialized here long ago (an
            # abort left its aborted record).
            s = s._replace(ops=frozenset(o for o in s.ops if not (o.txn == t and o.seg == j
                                                                  and (o.kind == "write" or not own))))
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
    loaded = old is not None and old.loaded >= 2
    if m.apply_steps:
        # recovery = atomic: the aborted set loads now; applyHeaderForRecovery adds an
        # ABORTED txn at once, before its apply runs on the chain
        p = p._replace(abrt=(p.abrt if loaded else _aborted_here(s, j))
                       | {t for t, d in decided if d == ABORTED and t in wrote})
    s = s._replace(part=_put(s.part, j, p))
    if not loaded:   # recovery = atomic: the aborted set loads now
        s = _rekey_waiting(m, s, j)
    for t, d in decided:
        s = materialize(m, s, j, t, d, found=True,
                        **({"tb": t in wrote, "pas": t in acked} if m.split else {}))
        if t in acked2:   # the second subscription's pending-ack store (split only)
            s = materialize(m, s, j, t, d, tb=False, pas=True, sub=1)
    return s


def recover_acks(m, s: S, j: int, sub: int = 0) -> S:
    """merged/fixed with split participants: `replayAsync` of subscription
    `sub`'s pending-ack store, independent of the buffer's recovery (the
    store's subscription loads on its own; notes, "Facts read from current
    code"). It scans `idx:acks-by-segment-subscription`, reads each txn's
    header (a missing one counts as ABORTED), re-seeds its open set with the
    OPEN ones and applies the decided ones (`applyTerminal`: the handle's
    commit or abort, then its ACK ops deleted), then marks the handle ready:
    the acks queued meanwhile, its events and a consumer's return (the
    dispatcher) wait until then. One step, as recover_complete's scan: no
    ACK op of the store is put or deleted while it replays, since its acks
    and events wait for it."""
    f = SUB_FIELDS[sub]
    opened, decided = set(), []
    for t in sorted({o.txn for o in acks_by_segment_subscription(s, j, sub)}):
        st = header_state(s, t)
        if st == OPEN:
            opened.add(t)
        else:
            decided.append((t, COMMITTED if st == COMMITTED else ABORTED))
    p = s.part[j]
    if m.apply_steps:   # every txn found joins the open set; `applyTerminal` then takes the decided out
        opened |= {t for t, _ in decided}
    s = s._replace(part=_put(s.part, j, p._replace(**{f["acache"]: getattr(p, f["acache"]) | opened,
                                                       f["aready"]: True})))
    for t, d in decided:
        s = materialize(m, s, j, t, d, tb=False, pas=True, sub=sub)
    return s
