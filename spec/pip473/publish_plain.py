"""A non-transactional send (`publishPlain`, bound `plain`; Flows /
Publish): routed by its key and added to the ledger (`plain_add`); merged
and fixed then run `syncMaxReadPositionForNormalPublish` in the add's
callback (`plain_sync`, apache/pulsar@ec708a828947
MetadataTransactionBuffer.java L664-L679): recompute maxReadPosition under
the buffer's lock and persist the watermark if it advanced (forward only).

The model joins the add and its callback in one step, which is not sound: a
step between the two that changes what the recompute reads (a crash, after
which the callback never runs; a transactional append; an apply's read; a
recovery's completion) ends where neither of the model's orders does
(tests/test_pip473_atomicity.py measures which, on small models). A split
of the two stages is left to do. The watermark CAS is chained on the apply
chain (`apply.enqueue_plain_watermark`, bound `apply = steps`).

In merged the sync is not gated on the buffer's recovery: while recovery
runs, the buffer knows no txn, so the recompute gives the LAC and the
watermark moves past the entries of txns recovery has not found yet
(protocol notes, "Merged-code mechanisms"). fixed F7 gates it: during
recovery a normal publish moves and persists nothing, and the completion
of recovery computes both.
"""

from __future__ import annotations

from ..api import replace_at as _put
from .apply import enqueue_plain_watermark
from .buffer import max_read
from .segments import route
from .state import PLAIN, S


def plain(m, s: S, k: int):
    """publishPlain: plain send k appended, then its callback's sync."""
    added = plain_add(m, s, k)
    return None if added is None else plain_sync(m, *added)


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
    return s._replace(ledger=_put(s.ledger, j, s.ledger[j] + (PLAIN,)), plain=k + 1), j


def plain_sync(m, s: S, j: int) -> S:
    """`syncMaxReadPositionForNormalPublish` on segment j's buffer, as the
    add's callback runs it (its broker gone: nothing)."""
    p = s.part[j]
    if not m.flags.watermark or p is None:
        return s
    if not p.ready:
        if m.flags.sync_waits:
            return s                            # F7: recovery's completion recomputes
        p = p._replace(hold=len(s.ledger[j]))   # no txn loaded yet: the recompute gives the LAC
        if m.recovery_steps and not m.apply_steps and not p.wknown and s.wmark[j] >= 0:
            # the CAS expects no record (version -1) and fails; the buffer
            # re-reads the record's version, so the next CAS can succeed
            return s._replace(part=_put(s.part, j, p._replace(wknown=True)))
        s = s._replace(part=_put(s.part, j, p))
    v = max_read(s, j, p)
    if m.apply_steps:
        # persistWatermarkIfAdvanced, chained on stateTail: on an idle chain it
        # finds nothing to do at once, or its CAS is in flight (plainWatermark)
        if not p.chain and v <= p.wmirror:
            return s
        return enqueue_plain_watermark(m, s, j)
    return s._replace(wmark=_put(s.wmark, j, v)) if v > s.wmark[j] else s
