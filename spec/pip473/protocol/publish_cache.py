"""A send's header check in the code's two stages (bound `check = "steps"`,
merged/fixed).

`readStateCacheFirst` (apache/pulsar@ec708a828947,
pulsar-broker/.../buffer/impl/MetadataTransactionBuffer.java L366-L377)
answers from the buffer's entry map when the txn is in it; otherwise it
issues `getHeader`, and the read's callback `putIfAbsent`s the entry (a
`TxnEntry` of the state read, with no position: from then on it holds the
read position). `check = "atomic"` joins the read and the put in
`publishCheck`. With `steps`, `publishCheck` on a cache miss is the read,
whose answer is the header at that moment, and `publishCache` is the
callback's put, a step of its own: a decision, its event and a reconcile
that finds no entry of the txn fit between the two, and the put then leaves
an OPEN entry that no event will clear (tests/test_check_audit.py;
late-cache-put-merged.toml). fixed F11: an instance that applies a txn marks
its reads of that txn still out (`applied`), and their callbacks fail the
send instead of putting the entry back.

A read that answers a decided or missing header rejects the send at the read
step. The callback would put a terminal entry (not modelled; it answers a
later check as a fresh read of the decided header would, docs/pip473.md) and
fail the send; a decided header never becomes OPEN again, so answering at
the read loses no run.

An unload between the read and its callback: the callback puts into the
instance that issued the read, the closed one (stage CLOSED_READ), and the
send goes on as that instance's (`CLOSED[CHECKED]`). The closed instance's
memory is in the state only with `apply = "steps"` (`S.zomb`), as for its
other sends; otherwise nothing reads it.
"""

from __future__ import annotations

from ...api import replace_at as _put
from .buffer import track_in_flight
from .state import CHECKED, CLOSED, CLOSED_READ, OPEN, READ, READ_APPLIED, REJECTED, Pub, S
from .store import header_state


def read(m, s: S, k: int, j: int) -> S:
    """publishCheck of send k on segment j with the txn not in the buffer's
    map: `getHeader` answers; OPEN waits for its callback (READ)."""
    stage = READ if header_state(s, m.writes[k].txn) == OPEN else REJECTED
    return s._replace(pubs=_put(s.pubs, k, Pub(stage, j, 0, -1)))


def applied(m, s: S, j: int, t: int, closed: bool = False) -> S:
    """fixed F11: segment j's buffer instance (the closed one: `closed`)
    applied t; a read of t it issued and whose callback has not run is
    stale now, and its callback will fail the send."""
    if not m.flags.stale_reads_fail:
        return s
    mine = CLOSED_READ if closed else READ
    if not any(p.stage == mine and p.seg == j and m.writes[k].txn == t for k, p in enumerate(s.pubs)):
        return s
    return s._replace(pubs=tuple(p._replace(stage=READ_APPLIED) if p.stage == mine and p.seg == j
                                 and m.writes[k].txn == t else p for k, p in enumerate(s.pubs)))


def cache_put(m, s: S, k: int):
    """publishCache: the read's callback, `putIfAbsent` of the OPEN entry it
    read (an entry already there, another send's, stays); the send goes on
    to its op put. F11: a read the buffer applied its txn since fails the
    send (READ_APPLIED), whichever instance issued it."""
    pub = s.pubs[k]
    if pub.stage == READ_APPLIED:
        return s._replace(pubs=_put(s.pubs, k, pub._replace(stage=REJECTED)))
    if pub.stage != READ:
        return None
    j, t = pub.seg, m.writes[k].txn
    p = s.part[j]
    part = s.part if t in p.cache else _put(s.part, j, track_in_flight(s, j, p, t))
    return s._replace(part=part, pubs=_put(s.pubs, k, pub._replace(stage=CHECKED)))


def closed_cache_put(m, s: S, k: int):
    """publishCache of a read whose instance an unload closed: the put lands
    in the closed instance, whose ledger handle stopped at the close."""
    pub = s.pubs[k]
    if pub.stage != CLOSED_READ:
        return None
    j, t = pub.seg, m.writes[k].txn
    s = s._replace(pubs=_put(s.pubs, k, pub._replace(stage=CLOSED[CHECKED])))
    if m.apply_steps and s.zomb[j] is not None and t not in s.zomb[j][1].cache:
        lac, p = s.zomb[j]
        s = s._replace(zomb=_put(s.zomb, j, (lac, track_in_flight(s, j, p, t, lac))))
    return s
