"""A non-transactional send (`publishPlain`, bound `plain`; Flows /
Publish): routed by its key and added to the ledger (`plain_add`); merged
and fixed then run `syncMaxReadPositionForNormalPublish` in the add's
callback (`plain_sync`, apache/pulsar@ec708a828947
MetadataTransactionBuffer.java L664-L679): recompute maxReadPosition under
the buffer's lock and persist the watermark if it advanced (forward only).

The add completes (the entry is in the ledger, its last confirmed entry
moves) and the callback runs next on the ledger's thread: the ledger's next
add completes only after it returns, but the metadata store's callbacks (an
apply, a recovery's completion) and a crash, after which the callback never
runs, may come between. Bound `sync = "atomic"` joins the two in one step,
which is not sound (tests/test_pip473_atomicity.py measures what it hides);
`sync = "steps"` makes the callback a step of its own (`plainSync`,
`Part.psync`), on the instance that added the entry: a crash drops it, and
after an unload it runs on the closed instance (`S.zomb`, with `apply =
"steps"`; otherwise the closed instance's work is not modelled). The
watermark CAS is chained on the apply chain (`apply.enqueue_plain_watermark`,
bound `apply = steps`).

In merged the sync is not gated on the buffer's recovery: while recovery
runs, the buffer knows no txn, so the recompute gives the LAC and the
watermark moves past the entries of txns recovery has not found yet
(protocol notes, "Merged-code mechanisms"). fixed F7 gates it: during
recovery a normal publish moves and persists nothing, and the completion
of recovery computes both.
"""

from __future__ import annotations

from ...api import replace_at as _put
from .apply import enqueue_plain_watermark, finish, instance, instance_lac, put_instance
from .buffer import callback_pending, ceiling
from .segments import route
from .state import PLAIN, S


def plain(m, s: S, k: int):
    """publishPlain: plain send k appended, then its callback's sync (with
    `sync = steps`, later: plainSync)."""
    added = plain_add(m, s, k)
    if added is None:
        return None
    t, j = added
    if m.sync_steps:
        return t._replace(part=_put(t.part, j, t.part[j]._replace(psync=True)))
    return plain_sync(m, t, j)


def plain_add(m, s: S, k: int):
    """The ledger add of plain send k: (the state, its segment), or None
    while it cannot be sent (the sends go in order)."""
    if s.plain != k or k >= len(m.plain_keys):
        return None
    j = route(m.topo, s, m.plain_keys[k])
    if j is None or s.part[j] is None:   # mid-reshape, or the broker is down: the producer waits
        return None
    if m.producers_gated and not s.part[j].ready:   # a broker that gates producers (bound producers)
        return None
    if callback_pending(s, j):   # the previous add's callback has not returned: this add completes after it
        return None
    return s._replace(ledger=_put(s.ledger, j, s.ledger[j] + (PLAIN,)), plain=k + 1), j


def callback(m, s: S, j: int, closed: bool = False) -> S:
    """plainSync (`sync = steps`): the callback of segment j's plain add runs
    on the instance that added the entry, the closed one after an unload."""
    p = instance(s, j, closed)
    s = put_instance(s, j, p._replace(psync=False), closed)
    return finish(plain_sync(m, s, j, closed), j, closed)


def plain_sync(m, s: S, j: int, closed: bool = False) -> S:
    """`syncMaxReadPositionForNormalPublish` on segment j's buffer (or its
    closed instance), as the add's callback runs it (its broker gone:
    nothing). The last confirmed entry is the plain entry's: the ledger's
    next add waits for this callback."""
    p = instance(s, j, closed)
    if not m.flags.watermark or p is None:
        return s
    lac = instance_lac(s, j, closed)
    if not p.ready:
        if m.flags.sync_waits:
            return s                            # F7: recovery's completion recomputes
        p = p._replace(hold=lac)                # no txn loaded yet: the recompute gives the LAC
        if m.recovery_steps and not m.apply_steps and not p.wknown and s.wmark[j] >= 0:
            # the CAS expects no record (version -1) and fails; the buffer
            # re-reads the record's version, so the next CAS can succeed
            return put_instance(s, j, p._replace(wknown=True), closed)
        s = put_instance(s, j, p, closed)
    v = ceiling(p, lac)
    if m.apply_steps:
        # persistWatermarkIfAdvanced, chained on stateTail: on an idle chain it
        # finds nothing to do at once, or its CAS is in flight (plainWatermark)
        if not p.chain and v <= p.wmirror:
            return s
        return enqueue_plain_watermark(m, s, j, closed)
    return s._replace(wmark=_put(s.wmark, j, v)) if v > s.wmark[j] else s
