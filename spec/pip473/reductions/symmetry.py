"""Which txns are interchangeable, and renaming them (for --symmetry).

A txn's identity in the model is its client's workload: the plan binds
writes and acks to txn ids (`plan.py`). Two txns are interchangeable when
their plans are the same up to the id: the same routing keys for their
sends, in order, and the same acks. Renaming such txns moves every per-txn
value, every txn id inside the store, the ledgers, the participants, the
coordinator and the ghosts, and the progress of their plan operations.

The standard models give every txn a different plan, so each class is a
single txn and `--symmetry` has nothing to do; a model whose clients share a
workload (models/pip473/twin-clients-*.toml, bench/models/pip473-fixed-larger.toml)
gets a real reduction.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter

from ..protocol.state import PLAIN, Op, Part, S


def plan_classes(writes, acks, n: int) -> tuple[tuple[int, ...], ...]:
    """Txn indexes grouped by plan, classes ordered by their first txn."""
    by_plan: dict[tuple, list[int]] = {}
    for t in range(n):
        plan = (tuple(w.key for w in writes if w.txn == t),
                tuple((a.seg, a.pos, a.cumulative, a.sub) for a in acks if a.txn == t))
        by_plan.setdefault(plan, []).append(t)
    return tuple(sorted((tuple(c) for c in by_plan.values()), key=lambda c: c[0]))


def op_slots(writes, acks, n: int) -> tuple[tuple[int, ...], ...]:
    """Per txn, the indexes of its operations in `S.pubs` (writes, then acks)."""
    slots: list[list[int]] = [[] for _ in range(n)]
    for k, w in enumerate(writes):
        slots[w.txn].append(k)
    for k, a in enumerate(acks):
        slots[a.txn].append(len(writes) + k)
    return tuple(tuple(x) for x in slots)


def permute(m, s: S, mapping) -> S:
    """`s` with txns renamed by mapping["Txn"] (names to names, within classes).
    Parts that mention no renamed txn are kept as they are (the same objects)."""
    ren = mapping["Txn"]
    index = m.txn_index
    p = tuple(index[ren[name]] for name in m.txn_names)   # old index -> new index
    r = m._renamings.get(p)
    if r is None:
        r = m._renamings[p] = _Renaming(m, p)
    return r(s) if r.moved else s


def _kept(new, old):
    # A part the renaming leaves equal stays the same object. (Equal means
    # the same encoding here: no part of the state mixes bools with ints.)
    return old if new == old else new


MEMO = 1 << 14  # values remembered per field and renaming; then forgotten


class _Renaming:
    """One renaming of txn indexes, applied to states. The set-valued fields,
    the ledgers and the participants repeat across states, so their renamed
    values are remembered (frozensets keep their hash, so a lookup is cheap)."""

    def __init__(self, m, p: tuple) -> None:
        self.p = p
        self.moved = frozenset(i for i, j in enumerate(p) if i != j)
        q = [0] * len(p)   # new index -> old index
        for i, j in enumerate(p):
            q[j] = i
        self.per_txn = getter(q)
        pub_q = list(range(sum(len(x) for x in m.op_slots)))
        for t, slots in enumerate(m.op_slots):
            for k, k2 in zip(slots, m.op_slots[p[t]]):
                pub_q[k2] = k
        self.pubs = getter(pub_q)
        self.coalesced = m.flags.coalesced
        rename = {"ops": self.ops, "arec": self.arec, "ledger": self.ledger, "part": self.parts,
                  "tcp": self.tcp, "late": self.late, "ackw": self.ackw}
        self.memos = {f: ({}, fn) for f, fn in rename.items()}

    def ops(self, ops: frozenset) -> frozenset:
        p, moved = self.p, self.moved
        if not any(o.txn in moved for o in ops):
            return ops
        return frozenset(Op(p[o.txn], o.seq, o.kind, o.seg, o.pos, o.cumulative, o.sub) for o in ops)

    def arec(self, arec: frozenset) -> frozenset:
        p = self.p
        return _kept(frozenset((j, p[t], key) for j, t, key in arec), arec)

    def ledger(self, ledger: tuple) -> tuple:
        p = self.p
        if self.moved.isdisjoint(chain.from_iterable(ledger)):   # tags: txn indexes, or PLAIN
            return ledger
        return tuple(tuple(tag if isinstance(tag, str) else p[tag] for tag in led) for led in ledger)

    def parts(self, parts: tuple) -> tuple:
        return _kept(tuple([self.part(x) for x in parts]), parts)

    def part(self, x: Part | None) -> Part | None:
        p, moved = self.p, self.moved
        if x is None or (moved.isdisjoint(x.cache) and moved.isdisjoint(x.abrt) and moved.isdisjoint(x.acache)
                         and moved.isdisjoint(x.acache2) and moved.isdisjoint(x.reads)
                         and moved.isdisjoint(x.areads) and moved.isdisjoint(x.adel)
                         and not any(c[0] in moved for c in x.chain)   # PLAIN: a normal publish's item
                         and not (x.tpos and any(t in moved for t, _ in x.tpos))
                         and not (x.packs and any(t in moved for t, _, _ in x.packs))
                         and not (x.packs2 and any(t in moved for t, _, _ in x.packs2))
                         and (self.coalesced or not any(t in moved for t, _ in x.events + x.aevents + x.aevents2))):
            return x
        def queue(q):
            return q if self.coalesced else tuple((p[t], st) for t, st in q)
        return Part(frozenset(p[t] for t in x.cache), frozenset((p[t], pos) for t, pos in x.tpos),
                    frozenset(p[t] for t in x.abrt), frozenset((p[t], pos, c) for t, pos, c in x.packs),
                    queue(x.events), x.hold, x.ready, frozenset(p[t] for t in x.acache), queue(x.aevents),
                    x.loaded, x.wknown, frozenset(p[t] for t in x.acache2), queue(x.aevents2),
                    frozenset((p[t], pos, c) for t, pos, c in x.packs2), x.aready, x.aready2,
                    frozenset(p[t] for t in x.reads),
                    tuple((t if t == PLAIN else p[t], *rest) for t, *rest in x.chain),
                    frozenset(p[t] for t in x.areads), frozenset(p[t] for t in x.adel), x.wmirror, x.wstale,
                    x.psync)

    def tcp(self, tcp: frozenset) -> frozenset:
        p = self.p
        return _kept(frozenset((p[t], step, reply) for t, step, reply in tcp), tcp)

    def late(self, late: frozenset) -> frozenset:
        p = self.p
        return _kept(frozenset(p[t] for t in late), late)

    def ackw(self, ackw: frozenset) -> frozenset:
        p = self.p
        return _kept(frozenset((p[t], j, pos, after, sub) for t, j, pos, after, sub in ackw), ackw)

    def _memo(self, field: str, value):
        memo, rename = self.memos[field]
        r = memo.get(value)
        if r is None:
            if len(memo) >= MEMO:
                memo.clear()
            r = memo[value] = rename(value)
        return r

    def __call__(self, s: S) -> S:
        move, memo = self.per_txn, self._memo
        (now, hdr, seqs, ops, arec, wmark, status, ledger, cursor, rd, reshape, part, crashes,
         tcp, failovers, client, pubs, fincnt, decided, late, dlv, ackw, gcsnap, fence, plain, retained,
         cursor2, rd2, unloads, zomb) = s
        return _new(S, (
            now, _kept(move(hdr), hdr), _kept(move(seqs), seqs), memo("ops", ops), memo("arec", arec),
            wmark, status, memo("ledger", ledger), cursor, rd, reshape, memo("part", part), crashes,
            memo("tcp", tcp), failovers, _kept(move(client), client), _kept(self.pubs(pubs), pubs),
            _kept(move(fincnt), fincnt), _kept(move(decided), decided), memo("late", late),
            dlv, memo("ackw", ackw), _kept(move(gcsnap), gcsnap), fence, plain, retained, cursor2, rd2, unloads,
            _kept(tuple(z if z is None else (z[0], self.part(z[1])) for z in zomb), zomb)))


_new = tuple.__new__


def getter(order):
    """x -> tuple(x[k] for k in order), in C where it can be."""
    if len(order) >= 2:
        return itemgetter(*order)
    if order:
        k = order[0]
        return lambda x: (x[k],)
    return lambda x: ()


def signatures(m, s: S) -> dict:
    """Per txn of a class with more than one member, a value that renaming
    does not change: its per-txn fields and plan progress, and, when that
    ties with another txn's, everything else the state says about it (txn
    ids left out). Txns whose signatures are equal are swapped by no
    renaming that changes the state, so sorting by it finds the
    representative."""
    out = {}
    hdr, late, pubs = s.hdr, s.late, s.pubs
    for t, pubs_of in m.sig_pubs:
        h = hdr[t]
        out[t] = ((0, h) if h.__class__ is str else (1, *h), s.seqs[t], s.client[t], s.fincnt[t], s.decided[t],
                  s.gcsnap[t], t in late, pubs_of(pubs))
    sigs = list(out.values())
    if (sigs[0] != sigs[1]) if len(sigs) == 2 else len(set(sigs)) == len(sigs):  # no ties: the commonest case
        return {m.txn_names[t]: sig for t, sig in out.items()}
    seen: dict = {}
    for sig in out.values():
        seen[sig] = seen.get(sig, 0) + 1
    ties = [t for t in m.symmetric_txns if seen[out[t]] > 1]
    for t in ties:
        led = tuple(tuple(i for i, tag in enumerate(x) if tag == t) for x in s.ledger)
        parts = tuple(None if p is None else (
            t in p.cache, tuple(sorted(pos for u, pos in p.tpos if u == t)), t in p.abrt,
            tuple(sorted((pos, c) for u, pos, c in p.packs if u == t)),
            () if m.flags.coalesced else tuple((i, st) for i, (u, st) in enumerate(p.events) if u == t),
            t in p.acache,
            () if m.flags.coalesced else tuple((i, st) for i, (u, st) in enumerate(p.aevents) if u == t),
            t in p.acache2, tuple(sorted((pos, c) for u, pos, c in p.packs2 if u == t)),
            () if m.flags.coalesced else tuple((i, st) for i, (u, st) in enumerate(p.aevents2) if u == t),
            t in p.reads, tuple((i, *rest) for i, (u, *rest) in enumerate(p.chain) if u == t), t in p.areads,
            t in p.adel)
            for p in s.part + tuple(z and z[1] for z in s.zomb))
        out[t] = out[t] + (
            tuple(sorted(o[1:] for o in s.ops if o.txn == t)),
            tuple(sorted((j, key) for j, u, key in s.arec if u == t)), led, parts,
            tuple(sorted(x[1:] for x in s.tcp if x[0] == t)),
            tuple(sorted(x[1:] for x in s.ackw if x[0] == t)))
    return {m.txn_names[t]: sig for t, sig in out.items()}
