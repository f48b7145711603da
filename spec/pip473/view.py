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
from .state import PLAIN, RECOVERED, SUB_NAMES, UNKEYED, Header, S

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
        return tuple(Record(txn=txn(t), decision=d, stage=stage, key=_key(key)) for t, d, stage, key in items)

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
            aevents2=events(p.aevents2), packs2=acks(p.packs2), aready=p.aready, aready2=p.aready2, **steps)

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
        "gcsnap": per_txn(s.gcsnap, lambda g: Record(ops=g[0], unmaterialized=g[1]) if g else "-"),
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
