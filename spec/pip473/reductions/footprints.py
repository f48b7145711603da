"""What each PIP-473 action reads and writes, for partial-order reduction
(`--por`, `Spec.footprints`). Over-approximated from the action bodies.

Two kinds of location (tuples compared by prefix, `reductions.locations`):
* state fields, named `_field` with the txn / segment / plan-operation
  names that index them: `("_ops", "t1", "s2")` is t1's op records on s2,
  `("_part", "s1", "cache")` one field of s1's participant broker,
  `("_part", "s1")` all of it (including whether it is up). A header is
  `born` (ever created: only newTxn changes it), `state` (state and
  deadline) and `fin` (finalization time); a client is `born` and `phase`.
  These decide dependence: every field an action may change is declared,
  and every field its guard or body reads (a field it only updates in
  place may be left out of the reads: two writers are dependent anyway).
* the schema symbols derived from a written field (`properties.observe`),
  so that a property reading them sees the action as visible. Each is
  spelled out to the symbol's full arity and tagged with the field it comes
  from: `("opsleft", "t1", "_ops/t1/s2")`. A property's read of
  `("opsleft", "t1")` still overlaps it, but two actions that change the
  same observation through disjoint fields stay independent: observations
  are functions of the fields, so actions that commute on the fields
  commute on them too.

Per-segment and per-txn precision comes from the plan: a participant only
ever holds the txns that send or ack on its segment. Actions the bounds
rule out (crash and recover without crashes or unloads, unload without
unloads, tcFailover without failovers, tick without ticks) are left out.
`tests/test_pip473_por.py` audits all of this on reachable states.
"""

from __future__ import annotations

from itertools import product

from ..protocol.state import SUB_FIELDS, SUB_NAMES

# schema symbols derived from each participant field (properties.observe)
_PART = {
    "up": ("up", "maxread", "tracks", "pending", "pins", "skipped"),
    "tpos": ("maxread", "tracks", "pins"),
    "hold": ("maxread",),
    "cache": ("tracks", "skipped"),
    "abrt": ("skipped",),
    "packs": (),
    "events": ("pending",),
    "acache": ("tracks",),
    "aevents": ("pending",),
    "packs2": (),
    "acache2": ("tracks",),
    "aevents2": ("pending",),
    "loaded": ("maxread", "skipped"),
    "wknown": (),
    "aready": ("pending",),
    "aready2": ("pending",),
}
_SIMPLE = {"_fincnt": "fincnt", "_decided": "decided", "_late": "late", "_dlv": "dlv",
           "_status": "sealed"}


class _Fields:
    """Builds (reads, writes) pairs for one model instance."""

    def __init__(self, m) -> None:
        self.m = m
        self.schema = m.schema
        names = [w.name for w in m.writes] + [x.name for x in m.acks]
        self.pub_txn = {n: m.txn_names[m.op_txn[i]] for i, n in enumerate(names)}

    def _derived(self, loc: tuple) -> set[tuple]:
        """Schema locations (symbol, *prefix of elements) read off field `loc`."""
        f, *k = loc
        text = self.m.flags.durable_aborts is False    # pip-text: isTxnAborted reads headers and the cache
        if f == "_hdr":                                 # (txn, born | state | fin)
            t, part = k[:1], k[1:]
            out = set()
            if part != ["fin"]:
                out |= {("hdr", *t), ("firstopen",)} | ({("skipped",)} if text else set())
            if part in ([], ["fin"]):
                out.add(("fin", *t))
            return out
        if f == "_client":                              # (txn, born | phase)
            return {("told", *k[:1])}
        if f == "_ops":                                 # (txn, seg): the acks of every subscription
            return {("opsleft", *k[:1]), ("opon", *k)} | {("ackop", *k[:1], *c) for c in self._curs(k[1:])}
        if f == "_arec":                                # (seg, txn)
            return {("skipped", *k[:1])}
        if f in ("_ledger", "_retained"):
            return {("entry", *k), ("skipped", *k), ("maxread", *k), ("firstopen", *k), ("fenced", *k)}
        if f == "_fence":
            return {("fenced", *k)}
        if f == "_ackw":                                # (txn, seg, sub)
            return {(x, *k[:1], *c) for x in ("ackw", "ackafter", "ackcover") for c in self._curs(k[1:])}
        if f == "_cursor":                              # (seg, sub)
            return {("acked", *c) for c in self._curs(k)}
        if f == "_part":                                # (seg, field)
            fields = k[1:] or list(_PART)
            return {(x, *k[:1]) for fl in fields for x in _PART[fl]
                    if x != "skipped" or text or fl == "up"}
        if f == "_pubs":                                # inflight(txn of the operation, any segment)
            return {("inflight", self.pub_txn[k[0]])} if k else {("inflight",)}
        if f in _SIMPLE:
            return {(_SIMPLE[f], *k)}
        if f == "_gcsnap":
            return {("gcops", *k), ("gcunmat", *k)}
        if f == "_wmark":
            return {("wmark", *k)}
        if f == "_tcp" and self.m.tc_steps:              # (txn): fanning
            return {("fanning", *k)}
        return set()            # _now _seqs _rd _reshape _crashes _tcp _failovers _plain _unloads: not observed

    def _curs(self, k) -> list[tuple]:
        """The cursor names (sort Cur) a (seg, sub) prefix covers: () is every
        one, a segment alone each of its subscriptions'."""
        if not k:
            return [()]
        seg, subs = k[0], ([int(k[1])] if len(k) > 1 else range(self.m.subs))
        j = self.m.seg_names.index(seg)
        return [(self.m.cur_name[j, x],) for x in subs]

    def _expand(self, loc: tuple, tag: str) -> list[tuple]:
        sym = self.schema.symbols[loc[0]]
        rest = [self.schema.elements(d) for d in sym.domain[len(loc) - 1:]]
        return [(*loc, *more, tag) for more in product(*rest)]

    def fp(self, reads, writes) -> tuple[frozenset, frozenset]:
        """(reads, writes), the derived schema locations of the written fields
        added to the writes. A field an action only updates in place need not
        be listed as read: two writers of a field are dependent anyway; the
        reads that matter alone are the guard's (a disabled action's
        enablers are the writers of what it reads)."""
        writes = set(writes)
        out = set(writes)
        for w in writes:
            tag = "/".join(w)
            for d in self._derived(w):
                out.update(self._expand(d, tag))
        return frozenset(reads), frozenset(out)


def _part(g: str, *fields: str) -> set[tuple]:
    return {("_part", g, f) for f in fields}


def _subs(m) -> list[tuple[str, dict]]:
    """Per subscription: its index as a location element, and its field names."""
    return [(str(x), SUB_FIELDS[x]) for x in range(m.subs)]


def _materialize(m, g: str, t: str) -> tuple[set, set]:
    """notify.materialize(g, t): acks to a subscription's cursor or an aborted
    record / mark, forget t (cache, positions, hold, acks), delete t's ops on
    g, persist the watermark (from the ledger and the participant). Every
    subscription's pieces, an over-approximation for one's."""
    held = _part(g, "up", "cache", "tpos", "hold", "abrt")
    cursors = set()
    for x, f in _subs(m):
        held |= _part(g, f["packs"], f["acache"])
        cursors.add(("_cursor", g, x))
    reads = held | cursors | {("_ops", t, g), ("_ledger", g), ("_arec", g, t)}
    writes = held - _part(g, "up") | cursors | {("_arec", g, t), ("_ops", t, g), ("_wmark", g)}
    return reads, writes


def m_ops(m):
    """(name, txn index) of every plan operation, writes then acks."""
    return [(w.name, w.txn) for w in m.writes] + [(x.name, x.txn) for x in m.acks]


def footprints(m) -> dict | None:
    if m.apply_steps or m.sync_steps or m.track_steps or m.tc_publishes:
        # not declared for these stages: --por explores every interleaving
        return None
    tn, sn, topo = m.txn_names, m.seg_names, m.topo
    F = _Fields(m)
    a, fp = m._a, {}

    def key_segs(key):
        return [sn[j] for j, (lo, hi) in enumerate(topo.ranges) if lo <= key < hi]

    # plan operations that may sit on each segment; txns whose entries may be in
    # its ledger; txns the segment's participant may ever hold (cache, positions,
    # marks, acks, op records: only through t's own sends and acks on it)
    on_seg = {g: set() for g in sn}
    writers = {g: set() for g in sn}
    held = {g: set() for g in sn}
    for w in m.writes:
        for g in key_segs(w.key):
            on_seg[g].add(w.name)
            writers[g].add(tn[w.txn])
            held[g].add(tn[w.txn])
    for ak in m.acks:
        on_seg[sn[ak.seg]].add(ak.name)
        held[sn[ak.seg]].add(tn[ak.txn])
    segs_of = {t: {g for g in sn if t in held[g]} for t in tn}
    # header_state(t) reads whether the header was ever created, and its state;
    # the decision CAS writes the state only (newTxn alone creates a header)
    seen = {t: {("_hdr", t, "born"), ("_hdr", t, "state")} for t in tn}
    every_state = set().union(*seen.values())
    cas = {t: ("_hdr", t, "state") for t in tn}

    for i, t in enumerate(tn):
        # notify.fanout: the participants of t's segments (coalesced: those with t's ops)
        pas = [f[x] for _, f in _subs(m) for x in ("acache", "aevents")]
        fan_r = {("_part", g, f) for g in segs_of[t] for f in ["up", "cache", "events"] + pas}
        fan_w = {("_part", g, f) for g in segs_of[t] for f in ["events"] + pas[1::2]}
        # coordinator.new_txn; ids in order: the guard reads the headers of
        # the txns of earlier plan classes (spec.started_before)
        reads = {("_client", t, "born"), ("_now",)} | {("_hdr", tn[u], "born") for u in m.started_before[i]}
        fp[a("newTxn", txn=t)] = F.fp(reads, {("_hdr", t), ("_client", t)})
        # coordinator.end_txn / timeout: the decision CAS, fan-out (lists the txn's ops)
        if m.tc_steps:   # the CAS alone; tcList and tcPublish do the rest
            decide_r, decide_w = seen[t] | {("_decided", t)}, {cas[t], ("_decided", t), ("_tcp", t)}
        else:
            decide_r = seen[t] | {("_decided", t), ("_ops", t)} | fan_r
            decide_w = {cas[t], ("_decided", t), ("_tcp", t)} | fan_w
        if m.flags.cas_finalizes:   # the CAS writes finalizedAt too
            decide_r |= {("_now",), ("_fincnt", t)}
            decide_w |= {("_hdr", t, "fin"), ("_fincnt", t)}
        # the stock client waits for the answers to its sends and acks, and aborts once one failed
        waits = {("_pubs", n) for n, x in m_ops(m) if x == m.txn_index[t]} if m.stock_client else set()
        for d in m.decisions + (("ABORTED",) if m.stock_client and "ABORTED" not in m.decisions else ()):
            fp[a("endTxn", txn=t, decision=d)] = F.fp(
                decide_r | waits | {("_client", t), ("_tcp", t)}, decide_w | {("_client", t, "phase")})
        fp[a("timeoutSweep", txn=t)] = F.fp(decide_r | {("_hdr", t), ("_now",)}, decide_w)
        # coordinator.finalize: finalized_ms, then the reply
        fp[a("tcFinalize", txn=t)] = F.fp(
            {("_hdr", t), ("_now",), ("_fincnt", t), ("_tcp", t)},
            {("_hdr", t, "fin"), ("_fincnt", t), ("_tcp", t), ("_client", t, "phase")})
        if m.tc_steps:   # coordinator.list_ops / publish_events
            fp[a("tcList", txn=t)] = F.fp({("_tcp", t), ("_ops", t)}, {("_tcp", t)})
            fp[a("tcPublish", txn=t)] = F.fp({("_tcp", t)} | fan_r, {("_tcp", t)} | fan_w)
        # coordinator.gc: re-drive, or force-delete and count unmaterialized participants
        fp[a("gcSweep", txn=t)] = F.fp(
            {("_hdr", t), ("_now",), ("_ops", t)} | fan_r | {("_part", g, "tpos") for g in segs_of[t]},
            {("_ops", t), cas[t], ("_hdr", t, "fin"), ("_gcsnap", t)} | fan_w)
    # Actions the bounds rule out are left out: their reads would only widen
    # the stubborn sets (a disabled action brings in every writer of its reads).
    if m.constants["ticks"] > 0:
        fp[a("tick")] = F.fp({("_now",), ("_hdr",)}, {("_now",)})
    if m.constants["failovers"] > 0:
        redrive = every_state | {("_ops",)} if m.tc_steps and m.flags.takeover_redrive else set()   # F9
        fp[a("tcFailover")] = F.fp({("_failovers",), ("_tcp",)} | redrive, {("_tcp",), ("_failovers",)})

    # publish.check / put_write_op / append / validate, per segment the key may route to
    for w in m.writes:
        t, k = tn[w.txn], w.name
        route = {("_status", g) for g in key_segs(w.key)}
        for g in key_segs(w.key):
            pub = {("_pubs", k)}
            # the header read makes the buffer's entry: it holds the read position (track_in_flight)
            fp[a("publishCheck", op=k, txn=t, seg=g)] = F.fp(
                pub | route | _part(g, "up", "cache", "tpos", "hold") | {("_client", t), ("_ledger", g)} | seen[t],
                pub | _part(g, "cache", "tpos", "hold") | {("_late", t)})
            track = _part(g, "cache", "tpos", "hold")
            if m.check_steps:   # publish_cache.cache_put: the read's callback makes the entry
                fp[a("publishCache", op=k, txn=t, seg=g)] = F.fp(
                    pub | track | _part(g, "up") | {("_ledger", g)}, pub | track)
            fp[a("publishPutOp", op=k, txn=t, seg=g)] = F.fp(
                pub | track | _part(g, "up") | {("_seqs", t), ("_ledger", g)},
                pub | track | {("_wmark", g), ("_seqs", t), ("_ops", t, g)})
            rekey = {("_arec", g, t)} if m.flags.rekey_late else set()   # F8
            fp[a("publishAppend", op=k, txn=t, seg=g)] = F.fp(
                pub | track | _part(g, "up") | {("_status", g), ("_ledger", g), ("_ops", t, g)} | rekey,
                pub | track | {("_ops", t, g), ("_ledger", g)} | rekey)
            mr, mw = _materialize(m, g, t)
            fp[a("publishValidate", op=k, txn=t, seg=g)] = F.fp(pub | mr | seen[t], pub | mw)
            if m.op_fail:
                fp[a("publishOpFails", op=k, txn=t, seg=g)] = F.fp(
                    pub | track | _part(g, "up") | {("_ops", t, g)}, pub | track)
    # publish.ack: the header check (cache, or the store in fixed), the op put, the handle's memory
    for i, ak in enumerate(m.acks):
        t, g, k, x, f = tn[ak.txn], sn[ak.seg], ak.name, str(ak.sub), SUB_FIELDS[ak.sub]
        own = {("_pubs", k), ("_seqs", t)} | _part(g, "cache", f["packs"], f["acache"])
        fp[m.ack_labels[i]] = F.fp(
            own | _part(g, "up", f["aready"]) | {("_client", t), ("_rd", g, x)} | seen[t],
            own | {("_late", t), ("_ops", t, g), ("_ackw", t, g, x)})

    # publish.plain: the sends go in order; route, append, sync the read position
    for k, key in enumerate(m.plain_keys):
        route = {("_status", g) for g in key_segs(key)} | {("_plain",)}
        for g in key_segs(key):
            sync = _part(g, "up", "tpos", "hold", "loaded", "wknown")
            fp[a("publishPlain", op=f"n{k + 1}", seg=g)] = F.fp(
                route | sync | {("_ledger", g), ("_wmark", g)},
                {("_plain",), ("_ledger", g), ("_wmark", g)} | _part(g, "hold", "wknown"))

    for g in sn:
        mat_r, mat_w = _part(g, "up"), set()
        for t in held[g]:
            r, w_ = _materialize(m, g, t)
            mat_r |= r | seen[t]
            mat_w |= w_
        whole = {("_status", g), ("_part", g)}
        # notify.deliver_event: re-reads the cached txns' headers, materializes
        fp[a("deliverEvent", seg=g)] = F.fp(whole | mat_r, mat_w | _part(g, "events"))
        if m.split:   # each pending-ack store's own events
            fp[a("deliverAckEvent", seg=g)] = F.fp(whole | mat_r, mat_w | _part(g, "aevents"))
        if m.subs > 1:
            fp[a("deliverAckEvent", seg=g, sub=SUB_NAMES[1])] = F.fp(whole | mat_r, mat_w | _part(g, "aevents2"))
        if m.constants["crashes"] > 0 or m.constants["unloads"] > 0:
            # recovery.recover: the segment's op indexes, the headers, watermark and LAC
            fp[a("recover", seg=g)] = F.fp(whole | mat_r | {("_wmark", g), ("_ledger", g)},
                                           mat_w | {("_part", g)})
            if m.flags.async_recovery:   # whether the buffer is ready counts as part of "up"
                fp[a("recoverComplete", seg=g)] = fp[a("recover", seg=g)]
            if m.pas_recovers:           # recovery.recover_acks: a store's ACK ops and their headers
                for x, f in _subs(m):
                    label = a("recoverAcks", seg=g, **({"sub": SUB_NAMES[int(x)]} if x != "0" else {}))
                    fp[label] = F.fp(whole | mat_r, mat_w | _part(g, f["aready"], f["acache"]))
            if m.recovery_steps:         # recovery.recover_watermark / recover_aborted (F8: re-keys)
                fp[a("recoverWatermark", seg=g)] = F.fp(_part(g, "up", "loaded", "hold") | {("_wmark", g)},
                                                        _part(g, "loaded", "hold", "wknown"))
                fp[a("recoverAborted", seg=g)] = F.fp(_part(g, "up", "loaded") | {("_arec", g), ("_ledger", g)},
                                                      _part(g, "loaded") | {("_arec", g)})
        # recovery.crash: the broker's memory, and the in-flight operations on the segment;
        # recovery.unload: the same, the in-flight sends closed rather than failed
        pubs = {("_pubs", k) for k in on_seg[g]}
        for name, left in (("crash", "_crashes"), ("unload", "_unloads")):
            if m.constants[left[1:]] > 0:
                fp[a(name, seg=g)] = F.fp(whole | {(left,)} | pubs, {("_part", g), (left,)} | pubs)
        # dispatcher.dispatch: maxReadPosition, isTxnAborted, the header of the entry's txn
        entry_txns = set().union(*(seen[t] | {("_decided", t)} for t in writers[g]))
        for x, f in _subs(m):
            label = a("dispatch", seg=g, **({"sub": SUB_NAMES[int(x)]} if x != "0" else {}))
            fp[label] = F.fp(
                {("_status", g), ("_rd", g, x), ("_ledger", g), ("_arec", g)}
                | _part(g, "up", "tpos", "hold", "abrt", "cache", "loaded", f["aready"]) | entry_txns,
                {("_rd", g, x), ("_dlv", g)})

    # segments.trim_ledger and buffer.prune_aborted (bound trim)
    if m.trim:
        for g in sn:
            fp[a("trimLedger", seg=g)] = F.fp({("_part", g, "up"), ("_cursor", g), ("_retained", g)},
                                              {("_retained", g)})
            fp[a("pruneAborted", seg=g)] = F.fp({("_part", g, "up"), ("_arec", g), ("_retained", g)},
                                                {("_arec", g)})

    # segments: split / merge (the guard reads the sends' stages and the headers)
    if topo.children:
        guard = {("_reshape",)} | {("_pubs", w.name) for w in m.writes} | every_state
        kids = {sn[c] for c in topo.children}
        olds = {sn[p] for p in topo.parents}
        fp[a("createChildren")] = F.fp(
            guard, {("_reshape",)} | {(f, c) for c in kids for f in ("_status", "_part", "_cursor", "_rd")})
        fp[a("terminateParents")] = F.fp(guard | {("_ledger", p) for p in olds},
                                         {("_reshape",)} | {(f, p) for p in olds for f in ("_status", "_fence")})
        fp[a("casSegmentMetadata")] = F.fp(guard, {("_reshape",)} | {("_status", x) for x in olds | kids})
    return fp
