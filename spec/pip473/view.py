"""The state as a trace shows it (`Spec.state_vars`): every field named.

The state itself indexes txns, segments and plan operations by position and
keeps small tuples in its sets (state.py); a trace names them. Each field of
`S` keeps its name (docs/pip473-state.md is the glossary), and its value
becomes:
* per txn, segment or plan operation: a map keyed by its name (t1, s1, w1);
* a `Header`, `Op`, `Pub`, `Part`, a cursor, an ack, a delivery: a record
  whose fields are named, so that `show` prints `hdr[t1].state` and
  `part[s1].cache`;
* a ledger as a map from position (from 1) to the entry's txn, `-` for a
  plain entry;
* a txn as its name.
The view is one-to-one (replay matches a trace's states against it), and
`tests/test_pip473.py` checks it on reachable states.
"""

from __future__ import annotations

from ..api import Record
from .protocol.state import NO_GC, PLAIN, RECOVERED, SUB_NAMES, UNKEYED, Header, S

_NO_KEY = "unkeyed"   # an aborted record with no prune key yet (F8: UNKEYED)


def _key(key: int) -> object:
    """A chain item's prune key: none yet (FOUND, an entry recovery made), unkeyed (F8)."""
    return {-2: "-", UNKEYED: _NO_KEY}.get(key, key)


def _pos(tpos: int) -> object:
    """A tracked position: 0 is an append in flight, RECOVERED one recovery found."""
    return {0: "in-flight", RECOVERED: "recovered"}.get(tpos, tpos)


def state_vars(m, s: S) -> dict:
    tn, sn = m.txn_names, m.seg_names
    txn = tn.__getitem__
    txns = lambda xs: frozenset(map(txn, xs))   # noqa: E731
    per_txn = lambda values, f=lambda v: v: {tn[t]: f(v) for t, v in enumerate(values)}   # noqa: E731
    per_seg = lambda values, f=lambda v: v: {sn[j]: f(v) for j, v in enumerate(values)}   # noqa: E731
    op_names = [w.name for w in m.writes] + [a.name for a in m.acks]

    def header(h):
        return Record(state=h.state, deadline=h.deadline, fin_at=h.fin_at) if isinstance(h, Header) else h

    def cursor(c):
        return Record(markDelete=c[0], acked=c[1])

    def events(q):
        if m.flags.coalesced:
            return bool(q)   # one coalesced "something changed" flag
        return tuple(Record(txn=txn(t), state=st) for t, st in q)

    def acks(packs):
        return frozenset(Record(txn=txn(t), pos=pos, cumulative=cum) for t, pos, cum in packs)

    def chain(items):
        return tuple(Record(txn=PLAIN, decision=PLAIN, stage=stage, key=PLAIN) if t == PLAIN   # a normal publish's
                     else Record(txn=txn(t), decision=d, stage=stage, key=_key(key)) for t, d, stage, key in items)

    def part(p):
        if p is None:
            return "down"
        steps = {"reads": txns(p.reads), "chain": chain(p.chain), "areads": txns(p.areads),
                 "adel": txns(p.adel), "wmirror": p.wmirror, "wstale": p.wstale} if m.apply_steps else {}
        return Record(
            cache=txns(p.cache), tpos=frozenset(Record(txn=txn(t), pos=_pos(pos)) for t, pos in p.tpos),
            abrt=txns(p.abrt),
            packs=acks(p.packs), events=events(p.events), hold=p.hold, ready=p.ready, acache=txns(p.acache),
            aevents=events(p.aevents), loaded=p.loaded, wknown=p.wknown, acache2=txns(p.acache2),
            aevents2=events(p.aevents2), packs2=acks(p.packs2), aready=p.aready, aready2=p.aready2, **steps,
            **({"psync": p.psync} if m.sync_steps else {}))

    def pub(p):
        return Record(stage=p.stage, seg=sn[p.seg] if p.seg >= 0 else "-", pos=p.pos, seq=p.seq)

    out = {
        "now": s.now,
        "hdr": per_txn(s.hdr, header),
        "seqs": per_txn(s.seqs),
        "ops": {f"/txn-op/{txn(o.txn)}/{o.seq}": Record(kind=o.kind, seg=sn[o.seg], pos=o.pos,
                                                        cumulative=o.cumulative, sub=SUB_NAMES[o.sub])
                for o in s.ops},
        "arec": {f"{sn[j]}/{txn(t)}": _NO_KEY if key == UNKEYED else key for j, t, key in s.arec},
        "wmark": per_seg(s.wmark),
        "status": per_seg(s.status),
        "ledger": per_seg(s.ledger, lambda tags: {pos: PLAIN if x == PLAIN else txn(x)
                                                  for pos, x in enumerate(tags, start=1)}),
        "cursor": per_seg(s.cursor, cursor),
        "rd": per_seg(s.rd),
        "reshape": s.reshape,
        "part": per_seg(s.part, part),
        "crashes": s.crashes,
        "tcp": frozenset(Record(txn=txn(t), step=step, reply=reply) for t, step, reply in s.tcp),
        "failovers": s.failovers,
        "client": per_txn(s.client),
        "pubs": {op_names[k]: pub(p) for k, p in enumerate(s.pubs)},
        "fincnt": per_txn(s.fincnt),
        "decided": per_txn(s.decided, lambda d: d or "undecided"),
        "late": txns(s.late),
        "dlv": frozenset(Record(seg=sn[j], pos=pos, state=st) for j, pos, st in s.dlv),
        "ackw": frozenset(Record(txn=txn(t), seg=sn[j], pos=pos, after=after, sub=SUB_NAMES[x])
                          for t, j, pos, after, x in s.ackw),
        "gcsnap": per_txn(s.gcsnap, lambda g: Record(ops=g[0], unmaterialized=g[1]) if g != NO_GC else "-"),
        "fence": per_seg(s.fence),
        "plain": s.plain,
        "retained": per_seg(s.retained),
        "unloads": s.unloads,
    }
    if m.apply_steps:   # bound apply = steps: the closed instances still at work
        out["zomb"] = per_seg(s.zomb, lambda z: "-" if z is None else Record(lac=z[0], instance=part(z[1])))
    if s.cursor2:   # bound subs = 2
        out["cursor2"] = per_seg(s.cursor2, cursor)
        out["rd2"] = per_seg(s.rd2)
    return out


# The trace's fields in Pulsar's names, for the finding reports' legends
# (`Spec.legend`, checker/reports/explain.py): what each is in the merged
# code; docs/pip473-state.md says what each holds and how it is encoded.
LEGEND = {
    "hdr": "the header record `/txn/<txnId>` (`TxnHeader`: state, `timeoutMs`, `finalizedAt`)",
    "seqs": "the store's sequential-key counter under `/txn-op/<txnId>/`",
    "ops": "the op records `/txn-op/<txnId>/<seq>` (`TxnOp`: WRITE with placeholder positions, or ACK)",
    "arec": "the aborted records `/txn/segment-state/<segment>/aborted/<txnId>`, each keyed for pruning",
    "wmark": "the persisted watermark `/txn/segment-state/<segment>/watermark` (`SegmentWatermark`)",
    "status": "the segment's state in the scalable topic's layout (PIP-460/468)",
    "ledger": "the segment's managed ledger, entry by entry",
    "cursor": "the subscription's managed cursor (mark-delete position and individual acks)",
    "rd": "the dispatcher's read position",
    "part": "the broker that owns the segment: its `MetadataTransactionBuffer` and `MetadataPendingAckStore`",
    "part.cache": "`MetadataTransactionBuffer.txns`, its OPEN entries",
    "part.tpos": "`TxnEntry.firstPosition`, or `recoveryDiscovered` (pos `recovered`), or none yet (`in-flight`)",
    "part.abrt": "`MetadataTransactionBuffer.abortedTxns` (with `apply = steps`)",
    "part.packs": "the acks `PendingAckHandleImpl` holds in memory",
    "part.events": "a segment event (`subscribeSegmentEvents`) not yet handled",
    "part.hold": "`maxReadPosition` as the buffer holds it (recovery, an append in flight)",
    "part.ready": "`recoveryFuture` completed",
    "part.acache": "`MetadataPendingAckStore.openTxns`",
    "part.aevents": "a subscription event (`subscribeSubscriptionEvents`) not yet handled",
    "part.loaded": "how far `recover()` has got: 1 the watermark, 2 the aborted records",
    "part.wknown": "a recovering buffer knows the watermark record's version",
    "part.aready": "`MetadataPendingAckStore.recoveryFuture` completed (the handle is ready)",
    "part.reads": "the `getHeader` reads `triggerReconcile` has in flight",
    "part.chain": "`stateTail`: the `applyTerminalNow` calls queued, the head's metadata call in flight",
    "part.areads": "the pending-ack store's `getHeader` reads in flight",
    "part.adel": "`deleteAckOpsForSegmentSubscriptionAndTxn` calls in flight",
    "part.wmirror": "`MetadataTransactionBuffer.watermark`, the watermark it last read or wrote",
    "part.psync": "a non-transactional entry's add callback (`syncMaxReadPositionForNormalPublish`) has not run",
    "part.wstale": "`watermarkVersion` is not the record's version any more (its next CAS fails)",
    "zomb": "the buffer instance a topic unload closed (`closeAsync`), still running its reads and apply chain",
    "crashes": "broker crashes the model still allows",
    "unloads": "topic unloads the model still allows",
    "tcp": "`TransactionCoordinatorV5`'s in-memory work: the fan-out it owes, the answer it owes",
    "failovers": "coordinator failovers the model still allows",
    "client": "the client's `TransactionImpl` state, and what it was told",
    "pubs": "each send (`appendBufferToTxn`) and ack (`appendAcks`) of the plan, stage by stage",
    "now": "the coordinator's clock, in timeout units",
    "fincnt": "ghost: how often `finalizedAt` was written",
    "decided": "ghost: the transaction's first decision",
    "late": "ghost: transactions with a send or ack admitted after their decision",
    "dlv": "ghost: each delivery to a consumer, with the header's state then",
    "ackw": "ghost: each ACK op record written, and whether it came after the decision",
    "gcsnap": "ghost: what the GC left when it deleted the header",
    "fence": "ghost: a parent's ledger length when it was terminated",
    "retained": "the managed ledger's first retained entry (after trimming)",
}
