"""The abstraction function (`observe`: the implementation's values for the
spec's invariant symbols) and the refinement mapping (`spec_state`: the
implementation as a spec state, field by field)."""

from __future__ import annotations

from ...reference.records import OPEN, header_path, ops_prefix, segment_events, subscription_events
from ...spec.pip473.properties import worst_deliveries
from .conventions import FOUND, IN_FLIGHT, NO_GC, PLAIN, RECOVERED, SUBS, UNIT_MS, UNKEYED, is_decision
from .step import Bridge


def _cur(b: Bridge, seg: str, x: int) -> str:
    """The spec's name of subscription x's cursor on seg (sort Cur)."""
    return b.spec.cur_name[b.seg_names.index(seg), x]


def _subs(b: Bridge) -> tuple[str, ...]:
    """The implementation's subscriptions, in the spec's order."""
    return SUBS[:b.spec.subs]


def _ackcover(b: Bridge) -> set:
    """Positions each txn's written acks cover (a cumulative ack: its own
    and every earlier one), by the plan's kind of each ack."""
    cum = {(b.txn_names[a.txn], b.seg_names[a.seg], a.pos, a.sub) for a in b.spec.acks if a.cumulative}
    out = set()
    for t, seg, p, _, x in b.ackw:
        pos = b.pos_names.index(p) + 1
        for i in range(1, pos + 1) if (t, seg, pos, x) in cum else (pos,):
            out.add((t, _cur(b, seg, x), b.pos_names[i - 1]))
    return out


def observe(b: Bridge) -> dict:
    c = b.cluster
    store = c.store
    tn, sn, pn = b.txn_names, b.seg_names, b.pos_names
    hdr = {t: b.header(t) for t in tn}
    fin, opsleft = set(), {}
    opon, ackop = set(), set()
    for t in tn:
        tid = b.ids.get(t)
        rec = store.get(header_path(tid)) if tid else None
        if rec is not None and rec.value["finalized_ms"] is not None:
            fin.add(t)
        paths = store.children(ops_prefix(tid)) if tid else []
        opsleft[t] = len(paths)
        for p in paths:
            v = store.get(p).value
            opon.add((t, v["segment"]))
            if v["kind"] == "ack":
                ackop.add((t, _cur(b, v["segment"], SUBS.index(v["subscription"])), pn[v["position"]]))
    entry, skipped, acked = {}, set(), set()
    fenced = {(seg, pn[i]) for seg, n in b.fence.items() for i in range(n, len(c.ledgers[seg].entries))}
    up, pending, tracks, pins = set(), set(), set(), set()
    maxread, firstopen = {}, {}
    layout = c.controller.layout()
    wmark = {}
    for seg in sn:
        rec = store.get(f"/txn-watermark/{seg}")
        if rec is not None:
            wmark[seg] = rec.value["position"] + 1
        storage = c.ledgers.get(seg)
        broker = c.brokers.get(seg)
        live = broker is not None and broker.up
        first = 99
        for i, (kind, tid, _) in enumerate(storage.entries if storage else ()):
            if i < storage.first_retained:
                continue   # trimmed
            key = (seg, pn[i])
            if kind != "txn":
                entry[key] = "-"
                continue
            t = b.names[tid]
            entry[key] = t
            if first == 99 and hdr[t] == OPEN:
                first = i + 1
            if live and broker.tb.is_txn_aborted(tid):
                skipped.add(key)
        firstopen[seg] = first
        for x, sub in enumerate(_subs(b)):
            if storage is not None and sub in storage.cursors:
                cur = storage.cursors[sub]
                for i in range(len(pn)):
                    if i <= cur.mark_delete or i in cur.individually_acked:
                        acked.add((_cur(b, seg, x), pn[i]))
        if not live:
            maxread[seg] = -1
            continue
        up.add(seg)
        maxread[seg] = broker.tb.get_max_read_position() + 1
        if _pending(b, broker):
            pending.add(seg)
        for tid in broker.cache.open.union(*(pa.cache.open for pa in broker.pending_acks.values())):
            tracks.add((seg, b.names[tid]))
        for tid in set(broker.tb.first) | broker.tb.in_flight | broker.tb.recovery_discovered:  # pins
            tracks.add((seg, b.names[tid]))
            pins.add((seg, b.names[tid]))
    inflight = {(r.txn and b.names[r.txn], r.segment) for r in b.requests.values()
                if r.stage in IN_FLIGHT or r.stage == "read-applied"}   # F11: its callback will fail it
    if b.behaviour.apply_steps:   # a closed instance's read, queued apply or delete of a txn
        for seg, z in zip(sn, _closed(b, lambda tid: b.names[tid])):
            if z is not None:
                p = z[1]
                for t in (*p[16], *(c[0] for c in p[17] if c[0] != PLAIN), *p[18], *p[19]):
                    inflight.add((t, seg))   # reads, chain (its applies), areads, adel
    owed = [*c.scheduler.pending("tc-list"), *c.scheduler.pending("tc-publish"),
            *c.scheduler.pending("tc-publish-to")]
    return {
        "hdr": hdr,
        "fin": fin,
        "fincnt": dict(b.fincnt),
        "decided": dict(b.decided),
        "told": dict(b.client),
        "late": set(b.late),
        "opsleft": opsleft,
        "gcops": {t: g[0] for t, g in b.gcsnap.items()},
        "gcunmat": {t: g[1] for t, g in b.gcsnap.items()},
        "entry": entry,
        "dlv": worst_deliveries(sn, pn, frozenset((sn.index(seg), pn.index(p) + 1, st) for (seg, p), st in b.dlv)),
        "skipped": skipped,
        "up": up,
        "maxread": maxread,
        "firstopen": firstopen,
        "tracks": tracks,
        "pins": pins,
        "sealed": {seg for seg, info in layout.items() if info["state"] == "SEALED"},
        "pending": pending,
        "ackw": {(t, _cur(b, seg, x), p) for t, seg, p, _, x in b.ackw},
        "ackafter": {(t, _cur(b, seg, x), p) for t, seg, p, after, x in b.ackw if after},
        "ackcover": _ackcover(b),
        "fenced": fenced,
        "ackop": ackop,
        "acked": acked,
        "opon": opon,
        "fanning": {b.names[task.label[1]] for task in owed},
        "inflight": inflight,
        "wmark": wmark,
    }


def spec_state(b: Bridge) -> dict:
    """The implementation's state in the spec's representation, field by
    field (`state.S`), except the cursor, whose compaction of individual
    acks into the mark-delete position the spec does not model (its
    covered positions are the observed `acked`). Stricter than the
    observation: the conformance test compares these too."""
    c, store = b.cluster, b.cluster.store
    ti = {t: i for i, t in enumerate(b.txn_names)}
    si = {seg: j for j, seg in enumerate(b.seg_names)}
    idx = lambda tid: ti[b.names[tid]]  # noqa: E731
    hdr = []
    for t in b.txn_names:
        tid = b.ids.get(t)
        rec = store.get(header_path(tid)) if tid else None
        if tid is None:
            hdr.append("NONE")
        elif rec is None:
            hdr.append("GONE")
        else:
            v = rec.value
            fin = v["finalized_ms"]
            hdr.append((v["state"], v["timeout_ms"] // UNIT_MS, -1 if fin is None else fin // UNIT_MS))
    ops = set()
    for tid in b.ids.values():
        for path in store.children(ops_prefix(tid)):
            v = store.get(path).value
            pos = v["position"]
            ops.add((idx(tid), int(path.rsplit("/", 1)[1]), v["kind"], si[v["segment"]],
                     0 if pos is None else pos + 1, bool(v.get("cumulative", False)),
                     SUBS.index(v["subscription"]) if v["kind"] == "ack" else 0))
    arec = set()
    for p in store.children("/txn-aborted/"):
        key = store.get(p).value["position"]
        arec.add((si[p.split("/")[2]], idx(p.rsplit("/", 1)[1]), UNKEYED if key is None else key + 1))
    layout = c.controller.layout()
    wmark, status, ledger, part = [], [], [], []
    rds = [[] for _ in _subs(b)]
    for seg in b.seg_names:
        rec = store.get(f"/txn-watermark/{seg}")
        wmark.append(rec.value["position"] + 1 if rec else -1)
        storage = c.ledgers.get(seg)
        st = layout.get(seg, {}).get("state", "-")
        status.append("TERMINATED" if st == "ACTIVE" and storage and storage.terminated else st)
        ledger.append(tuple("-" if kind != "txn" else idx(tid)
                            for kind, tid, _ in (storage.entries if storage else ())))
        for rd, sub in zip(rds, _subs(b)):
            rd.append(storage.cursors[sub].read_position + 1 if storage else 1)
        broker = c.brokers.get(seg)
        part.append(_part(b, broker, idx) if broker is not None and broker.up else None)
    tcp = {(idx(task.label[1]), "fin", task.label[2]) for task in c.scheduler.pending("tc-finalize")}
    tcp |= {(idx(task.label[1]), "list", task.label[2]) for task in c.scheduler.pending("tc-list")}
    # the publish step's streams as the spec names them: a digit per segment's
    # (buffer's) stream, a letter per pending-ack store's when the two are split
    # (the second subscription's a capital)
    split = b.behaviour.split_participants
    streams = {segment_events(seg): str(j) for j, seg in enumerate(b.seg_names)}
    for base, sub in zip("aA", _subs(b)):
        streams |= {subscription_events(seg, sub): chr(ord(base) + j) if split else str(j)
                    for j, seg in enumerate(b.seg_names)}
    tcp |= {(idx(task.label[1]), "pub" + "".join(sorted({streams[x] for x in task.label[3]})), task.label[2])
            for task in c.scheduler.pending("tc-publish")}
    left: dict = {}   # tc = publishes: a work's streams still to publish
    for task in c.scheduler.pending("tc-publish-to"):
        left.setdefault((idx(task.label[1]), task.label[2]), set()).add(streams[task.label[3]])
    tcp |= {(t, "pub" + "".join(sorted(x)), answer) for (t, answer), x in left.items()}
    pubs = []
    for name in list(b.writes) + list(b.acks):
        req = b.requests.get(name)
        if req is None:
            pubs.append(("todo", -1, 0, -1))
            continue
        seq = int(req.op_path.rsplit("/", 1)[1]) if req.op_path else -1
        pos = (0 if req.position is None else req.position + 1)
        closed = getattr(req, "closed", False) and req.stage in IN_FLIGHT   # the spec's CLOSED stages
        if getattr(req, "closed", False) and req.stage == "rejected" and b.spec.stock_client:
            pubs.append(("todo", -1, 0, -1))   # its answer never came: the stock client resends it
            continue
        pubs.append(("closed-" + req.stage if closed else req.stage, si[req.segment], pos, seq))
    k = b.spec.constants
    return {
        "now": c.scheduler.now_ms // UNIT_MS, "hdr": tuple(hdr),
        "seqs": tuple(1 + b.ops_created[t] for t in b.txn_names),
        "ops": frozenset(ops), "arec": frozenset(arec), "wmark": tuple(wmark), "status": tuple(status),
        "ledger": tuple(ledger), "rd": tuple(rds[0]), "reshape": b.reshape, "part": tuple(part),
        "crashes": k["crashes"] - b.crashes, "tcp": frozenset(tcp),
        "failovers": k["failovers"] - b.failovers, "unloads": k["unloads"] - b.unloads,
        "client": tuple(b.client[t] for t in b.txn_names), "pubs": tuple(pubs),
        "fincnt": tuple(b.fincnt[t] for t in b.txn_names),
        "decided": tuple(b.decided[t] for t in b.txn_names),
        "late": frozenset(ti[t] for t in b.late),
        "dlv": frozenset((si[seg], b.pos_names.index(p) + 1, st) for (seg, p), st in b.dlv),
        "ackw": frozenset((ti[t], si[seg], b.pos_names.index(p) + 1, a, x) for t, seg, p, a, x in b.ackw),
        "gcsnap": tuple(b.gcsnap.get(t, NO_GC) for t in b.txn_names),
        "fence": tuple(b.fence.get(seg, -1) for seg in b.seg_names),
        "plain": b.plain_sent,
        "retained": tuple(c.ledgers[seg].first_retained + 1 if seg in c.ledgers else 1 for seg in b.seg_names),
        **({"rd2": tuple(rds[1])} if len(rds) > 1 else {}),
        **({"zomb": _closed(b, idx)} if b.behaviour.apply_steps else {}),
    }


def _events(b: Bridge, owner: str, idx) -> tuple:
    """The spec's `events` of one participant: a pending stream delivery, or its decision watches."""
    sched = b.cluster.scheduler
    if b.behaviour.notify_by_stream:
        return (True,) if any(task.label[:2] == ("stream", owner) for task in sched.pending("stream")) else ()
    return tuple((idx(task.payload.path.rsplit("/", 1)[1]),
                  task.payload.value["state"] if task.payload.value is not None else "GONE")
                 for task in sched.pending("watch", owner) if is_decision(task.payload))


def _part(b: Bridge, broker, idx) -> tuple:
    return _instance(b, broker.tb, broker.pending_acks, idx, broker.owner,
                     {sub: broker.pas_owner(sub) for sub in broker.pending_acks})


def _instance(b: Bridge, tb, pending_acks, idx, owner: str | None, pas_owners: dict) -> tuple:
    """A participant instance as the spec's `Part`: the live one (its events
    under `owner`), or a closed one (`owner` None: its subscriptions are
    closed, no event reaches it)."""
    split = b.behaviour.split_participants
    sched = b.cluster.scheduler
    per_sub = []   # (acache, aevents, packs, ready) of each subscription's pending-ack store
    for sub in _subs(b):
        pa = pending_acks[sub]
        per_sub.append((frozenset(idx(tid) for tid in pa.cache.open) if split else frozenset(),
                        _events(b, pas_owners[sub], idx) if split and owner else (),
                        frozenset((idx(tid), pos + 1, cum) for tid, held in pa.held.items() for pos, cum in held),
                        pa.ready))
    second = per_sub[1] if len(per_sub) > 1 else (frozenset(), (), frozenset(), True)
    steps = (frozenset(), (), frozenset(), frozenset(), -1, False)   # the spec's defaults, apply = atomic
    if b.behaviour.apply_steps:   # the reads, apply chain and deletes in flight, as the spec keeps them
        mine = [task for task in sched.pending() if task.owner == tb.owner]
        chain = tb.chain
        items = []
        for i, (tid, state, found) in enumerate(chain.queue):
            if tid is None:   # a normal publish's watermark CAS
                items.append((PLAIN, None, "watermark", None))
            elif i == 0 and chain.head is not None:
                stage, key = chain.head
                items.append((idx(tid), state, stage, UNKEYED if key is None else key + 1))
            elif (found or tid in tb.cache.open) and all(q[0] != tid for q in chain.queue[:i]):
                # (else a no-op when its turn comes: an earlier apply of it, or none, dropped the entry)
                items.append((idx(tid), state, "mem", FOUND if found else 0))
        store = b.cluster.store.get(f"/txn-watermark/{tb.segment}")
        steps = (frozenset(idx(t.label[2]) for t in mine if t.label[0] == "tb-read"), tuple(items),
                 frozenset(idx(t.label[3]) for t in mine if t.label[0] == "pas-read"),
                 frozenset(idx(t.label[3]) for t in mine if t.label[0] == "pas-delete"),
                 -1 if chain.mirror is None else chain.mirror + 1,
                 (-1 if store is None else store.version) != chain.version)
    aborted = b.behaviour.durable_aborted_records and not b.behaviour.apply_steps
    psync = any(task.owner == tb.owner for task in sched.pending("plain-sync", tb.segment))
    return (
        frozenset(idx(tid) for tid in tb.cache.open),
        frozenset({(idx(tid), p + 1) for tid, p in tb.first.items()} | {(idx(tid), 0) for tid in tb.in_flight}
                  | {(idx(tid), RECOVERED) for tid in tb.recovery_discovered}),
        frozenset() if aborted else frozenset(idx(tid) for tid in tb.aborted),
        per_sub[0][2], _events(b, owner, idx) if owner else (), -1 if tb.hold is None else tb.hold + 1, tb.ready,
        per_sub[0][0], per_sub[0][1], tb.loaded, tb.watermark_known, *second[:3], per_sub[0][3], second[3],
        *steps, psync,
    )


def _closed(b: Bridge, idx) -> tuple:
    """apply = steps: per segment, the unloaded instance with work left, as
    the spec's `S.zomb` keeps it: (its ledger's length at the close, its Part)."""
    out = []
    for seg in b.seg_names:
        broker = b.cluster.brokers.get(seg)
        if broker is None or broker.closed is None or not broker.closing_work():
            out.append(None)
            continue
        tb, pas = broker.closed
        out.append((tb.ledger.last_confirmed + 1, _instance(b, tb, pas, idx, None, {})))
    return tuple(out)


def _pending(b: Bridge, broker) -> bool:
    owners = {broker.owner} | {broker.pas_owner(sub) for sub in _subs(b)}
    for task in b.cluster.scheduler.pending():
        if task.owner not in owners:
            continue
        if task.label[0] in ("stream", "tb-recover", "tb-recover-watermark", "tb-recover-aborted", "pas-recover",
                             "tb-read", "tb-apply", "pas-read", "pas-delete") or (
                task.label[0] == "watch" and is_decision(task.payload)):
            return True   # an event to handle, a recovery or replay to finish, a read, apply or delete in flight
    return False

