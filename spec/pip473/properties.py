"""The schema the invariants range over, the observation of a state, the six
safety properties of issue 3 (plus NoOrphanOp), the reachability witnesses
and the named state predicates for temporal properties.

Every property is stated over representation types (Str, Int, Bool) so the
load-time sanity check can tell a real property from a vacuous one.
"""

from __future__ import annotations

from itertools import chain

import z3

from ..schema import Int, Str
from .protocol.buffer import is_txn_aborted, read_limit
from .protocol.pendingack import covers
from .protocol.state import (
    ABORTED, COMMITTED, GONE, NO_GC, NONE, READING, UNANSWERED, Header, OPEN, PLAIN, SEALED, TOLD_ABORTED,
    TOLD_COMMITTED, S,
)
from .protocol.store import header_state

NO_OPEN = 99  # firstopen() of a segment with no entry of an OPEN txn

# With two subscriptions an entry may be delivered twice, at different header
# states; `dlv` observes the worst, in this order (an OPEN or ABORTED delivery
# is never hidden).
DLV_ORDER = (OPEN, ABORTED, COMMITTED, NONE, GONE)


def worst_delivery(deliveries, seg, pos) -> str:
    """The worst header state any subscription delivered entry `pos` of `seg`
    at, "" if none: `deliveries` holds (seg, pos, state). A function of one
    key, so a derivation (ADR 0011) joins its answers into one value."""
    for st in DLV_ORDER:
        if (seg, pos, st) in deliveries:
            return st
    return ""


def worst_deliveries(seg_names, pos_names, deliveries) -> dict:
    """(seg, pos) -> the worst delivery of the entry, by name ("" if none:
    the symbol's default; every key is given, so that no path of a
    derivation branches on whether an entry was delivered)."""
    return {(seg, pos): worst_delivery(deliveries, j, i + 1)
            for j, seg in enumerate(seg_names) for i, pos in enumerate(pos_names)}


def declare(m) -> None:
    sc = m.schema
    sc.enum("Txn", m.txn_names)
    sc.enum("Seg", m.seg_names)
    sc.enum("Pos", m.pos_names)
    sc.enum("Cur", m.cur_names)   # a subscription's cursor on a segment (bound subs)
    S_, I_ = Str(), Int()
    f = {}
    f["hdr"] = sc.fun("hdr", "Txn", S_)
    f["fin"] = sc.set("fin", "Txn")
    f["fincnt"] = sc.fun("fincnt", "Txn", I_)
    f["decided"] = sc.fun("decided", "Txn", S_)
    f["told"] = sc.fun("told", "Txn", S_)
    f["late"] = sc.set("late", "Txn")
    f["opsleft"] = sc.fun("opsleft", "Txn", I_)
    f["gcops"] = sc.fun("gcops", "Txn", I_, default=0)
    f["gcunmat"] = sc.fun("gcunmat", "Txn", I_, default=0)
    f["entry"] = sc.fun("entry", ("Seg", "Pos"), S_, default="")
    f["dlv"] = sc.fun("dlv", ("Seg", "Pos"), S_, default="")
    f["skipped"] = sc.set("skipped", ("Seg", "Pos"))
    f["up"] = sc.set("up", "Seg")
    f["maxread"] = sc.fun("maxread", "Seg", I_)
    f["firstopen"] = sc.fun("firstopen", "Seg", I_)
    f["tracks"] = sc.set("tracks", ("Seg", "Txn"))
    f["pending"] = sc.set("pending", "Seg")
    f["pins"] = sc.set("pins", ("Seg", "Txn"))
    f["sealed"] = sc.set("sealed", "Seg")
    f["ackw"] = sc.set("ackw", ("Txn", "Cur", "Pos"))
    f["ackafter"] = sc.set("ackafter", ("Txn", "Cur", "Pos"))
    f["ackcover"] = sc.set("ackcover", ("Txn", "Cur", "Pos"))
    f["fenced"] = sc.set("fenced", ("Seg", "Pos"))
    f["ackop"] = sc.set("ackop", ("Txn", "Cur", "Pos"))
    f["acked"] = sc.set("acked", ("Cur", "Pos"))
    f["opon"] = sc.set("opon", ("Txn", "Seg"))
    f["inflight"] = sc.set("inflight", ("Txn", "Seg"))
    f["fanning"] = sc.set("fanning", "Txn")   # the TC has yet to list t's ops or publish its events
    f["wmark"] = sc.fun("wmark", "Seg", I_, default=-1)
    _build(m, sc, f)


def _build(m, sc, f) -> None:
    V = z3.StringVal
    hdr, decided, entry, dlv = f["hdr"], f["decided"], f["entry"], f["dlv"]
    up, tracks = f["up"], f["tracks"]
    name = dict(zip(sc.consts("Txn"), m.txn_names))

    def matlive(t):
        return sc.forall("Seg", lambda s: z3.Implies(up(s), z3.Not(tracks(s, t))))

    def entries_of(t, body):
        return sc.forall(("Seg", "Pos"), lambda s, p: z3.Implies(entry(s, p) == V(name[t]), body(s, p)))

    inv = m.invariants
    # Atomicity, and its three clauses as separate properties so that a
    # scenario model can isolate one.
    inv["NoAbortedDelivered"] = sc.forall("Txn", lambda t: entries_of(
        t, lambda s, p: z3.Implies(dlv(s, p) != V(""), decided(t) != V("ABORTED"))))
    # Per participant: no live transaction buffer hides an entry of a
    # committed txn, whatever the other participants have done.
    inv["CommittedVisible"] = sc.forall("Txn", lambda t: z3.Implies(
        decided(t) == V("COMMITTED"),
        entries_of(t, lambda s, p: z3.Implies(up(s), z3.Not(f["skipped"](s, p))))))
    inv["NoLateAdmission"] = sc.forall("Txn", lambda t: z3.Not(f["late"](t)))
    inv["Atomicity"] = z3.And(inv["NoAbortedDelivered"], inv["CommittedVisible"], inv["NoLateAdmission"])
    inv["NoLostCommittedAck"] = sc.forall(("Txn", "Cur", "Pos"), lambda t, s, p: z3.Implies(
        z3.And(f["ackw"](t, s, p), decided(t) == V("COMMITTED"), z3.Not(f["ackop"](t, s, p))),
        f["acked"](s, p)))
    # finalized_ms is written at most once (the ghost counts the writes, so a
    # finalize without its version guard breaks it), the header never leaves
    # its first decision, and the client is told that decision, not another.
    inv["SingleFinalization"] = sc.forall("Txn", lambda t: z3.And(
        f["fincnt"](t) <= 1,
        z3.Implies(z3.Or(hdr(t) == V("COMMITTED"), hdr(t) == V("ABORTED")), hdr(t) == decided(t)),
        z3.Implies(f["told"](t) == V("told-committed"), decided(t) == V("COMMITTED")),
        z3.Implies(f["told"](t) == V("told-aborted"), decided(t) == V("ABORTED"))))
    inv["ReadCommitted"] = sc.forall(("Seg", "Pos"), lambda s, p: z3.And(
        dlv(s, p) != V("OPEN"), dlv(s, p) != V("ABORTED")))
    # ReadCommitted's second clause alone: no entry is delivered once its txn
    # is aborted (a buffer that knows the abort hides it), so a model can tell
    # a lost abort from an entry delivered before its txn was decided.
    inv["AbortedStaysHidden"] = sc.forall(("Seg", "Pos"), lambda s, p: dlv(s, p) != V("ABORTED"))
    # The ghost gcsnap is what the store held when the header was deleted
    # (ops left, live participants still pinning the txn), recorded beside
    # the GC's own check, so a GC that skips its check breaks this.
    inv["GcSafety"] = sc.forall("Txn", lambda t: z3.Implies(
        hdr(t) == V("GONE"), z3.And(f["gcops"](t) == 0, f["gcunmat"](t) == 0, decided(t) != V(""))))
    inv["MaxReadPositionSafe"] = sc.forall("Seg", lambda s: z3.Implies(
        up(s), f["maxread"](s) < f["firstopen"](s)))
    # The persisted watermark (merged/fixed) says "everything up to here is
    # resolved"; the next recovery trusts it, so it must sit below the first
    # entry of every OPEN txn.
    inv["WatermarkSafe"] = sc.forall("Seg", lambda s: f["wmark"](s) < f["firstopen"](s))
    inv["NoOrphanOp"] = sc.forall(("Txn", "Seg"), lambda t, s: z3.Not(z3.And(
        f["opon"](t, s), decided(t) != V(""), up(s), z3.Not(tracks(s, t)),
        z3.Not(f["inflight"](t, s)), z3.Not(f["pending"](s)))))

    # Acks: every position the cursor covers is covered by an ack of a
    # committed txn (no ack of an aborted txn reaches the cursor), and no
    # ack op is written once the txn is decided (its acks are fixed then).
    inv["NoAbortedAck"] = sc.forall(("Cur", "Pos"), lambda s, p: z3.Implies(
        f["acked"](s, p), sc.exists("Txn", lambda t: z3.And(f["ackcover"](t, s, p), decided(t) == V("COMMITTED")))))
    inv["AcksFixedAtDecision"] = sc.forall(("Txn", "Cur", "Pos"), lambda t, s, p: z3.Not(f["ackafter"](t, s, p)))
    # PIP-468: a terminated parent takes no entry, so every message of a
    # parent comes before every message of its children.
    inv["ParentFenced"] = sc.forall(("Seg", "Pos"), lambda s, p: z3.Not(f["fenced"](s, p)))

    inv["NoMissedDecision"] = sc.forall(("Txn", "Seg"), lambda t, s: z3.Not(z3.And(
        decided(t) != V(""), up(s), f["pins"](s, t),
        z3.Not(f["inflight"](t, s)), z3.Not(f["pending"](s)), z3.Not(f["fanning"](t)))))

    w = m.witnesses
    w["DeliveredCommitted"] = sc.exists(("Seg", "Pos"), lambda s, p: dlv(s, p) == V("COMMITTED"))
    w["CommittedAckApplied"] = sc.exists(("Txn", "Cur", "Pos"), lambda t, s, p: z3.And(
        f["ackw"](t, s, p), decided(t) == V("COMMITTED"), z3.Not(f["ackop"](t, s, p)), f["acked"](s, p)))
    w["CommittedMaterializedEverywhere"] = sc.exists("Txn", lambda t: z3.And(
        decided(t) == V("COMMITTED"), matlive(t),
        sc.exists(("Seg", "Pos"), lambda s, p: z3.And(entry(s, p) == V(name[t]), up(s)))))
    w["ToldCommitted"] = sc.exists("Txn", lambda t: z3.And(
        f["told"](t) == V("told-committed"), f["fincnt"](t) == 1))
    w["HeaderCollected"] = sc.exists("Txn", lambda t: hdr(t) == V("GONE"))
    w["OpenEntryPinned"] = sc.exists("Seg", lambda s: z3.And(up(s), f["firstopen"](s) < NO_OPEN))
    w["AbortedEntrySkipped"] = sc.exists(("Txn", "Seg", "Pos"), lambda t, s, p: z3.And(
        entry(s, p) == V(name[t]), decided(t) == V("ABORTED"), f["skipped"](s, p)))
    w["SealedMidTxnMaterialized"] = sc.exists(
        ("Txn", "Seg", "Pos", "Seg", "Pos"), lambda t, sa, pa, sb, pb: z3.And(
            decided(t) == V("COMMITTED"), matlive(t), f["sealed"](sa), z3.Not(f["sealed"](sb)),
            up(sa), up(sb), entry(sa, pa) == V(name[t]), entry(sb, pb) == V(name[t]),
            z3.Not(f["skipped"](sa, pa)), z3.Not(f["skipped"](sb, pb))))
    w["TimedOut"] = sc.exists("Txn", lambda t: z3.And(decided(t) == V("ABORTED"), f["fin"](t)))

    pr = m.predicates
    for t in sc.consts("Txn"):
        n = name[t]
        pr[f"Started_{n}"] = hdr(t) != V("NONE")
        pr[f"Finalized_{n}"] = z3.And(z3.Or(hdr(t) == V("COMMITTED"), hdr(t) == V("ABORTED")), f["fin"](t))
        pr[f"Committed_{n}"] = decided(t) == V("COMMITTED")
        pr[f"Aborted_{n}"] = decided(t) == V("ABORTED")
        pr[f"Decided_{n}"] = decided(t) != V("")
        # every entry of t on a live segment is one its buffer hides (isTxnAborted)
        pr[f"AbortHidden_{n}"] = entries_of(t, lambda s, p: z3.Implies(up(s), f["skipped"](s, p)))
        pr[f"MaterializedByLive_{n}"] = matlive(t)
        pr[f"Collected_{n}"] = hdr(t) == V("GONE")
        pr[f"NoOpsLeft_{n}"] = f["opsleft"](t) == 0


def told(m, s: S) -> dict:
    """What each client was told; with replies = owed (a reduction), also
    the answer the TC owes it (tcFinalize would tell it that)."""
    out = dict(zip(m.txn_names, s.client))
    if m.owed:
        for (t, step, d) in s.tcp:
            if step == "fin" and d:
                out[m.txn_names[t]] = TOLD_COMMITTED if d == COMMITTED else TOLD_ABORTED
    return out


# The observation in parts: each computes some symbols from some fields of
# the state (`Spec.observation_parts`), so that the fingerprint search can
# remember each part's values, and each property's verdict, per combination
# of the fields it reads. `observe` is their union.


def _headers(m, s: S) -> dict:
    tn = m.txn_names
    return {"hdr": dict(zip(tn, (h.state if isinstance(h, Header) else h for h in s.hdr))),   # store.header_state
            "fin": {tn[t] for t, h in enumerate(s.hdr) if isinstance(h, Header) and h.fin_at >= 0}}


def _ops(m, s: S) -> dict:
    # each symbol one comprehension over the records, not one loop filling all three: the
    # derivation folds a comprehension into a formula, where a loop branches on each record
    tn, sn, pn, cn = m.txn_names, m.seg_names, m.pos_names, m.cur_name
    return {"opsleft": {n: sum(1 for o in s.ops if o.txn == t) for t, n in enumerate(tn)},
            "opon": {(tn[o.txn], sn[o.seg]) for o in s.ops},
            "ackop": {(tn[o.txn], cn[o.seg, o.sub], pn[o.pos - 1]) for o in s.ops if o.kind == "ack"}}


def _gc(m, s: S) -> dict:
    gcops, gcunmat = {}, {}
    for t, g in enumerate(s.gcsnap):
        if g != NO_GC:
            gcops[m.txn_names[t]], gcunmat[m.txn_names[t]] = g
    return {"gcops": gcops, "gcunmat": gcunmat}


def _retained(s: S, j: int):
    return range(s.retained[j] - 1, len(s.ledger[j]))   # trimmed entries are gone


def _entries(m, s: S) -> dict:
    # one value per (segment, position), "" where none is retained: a loop over the retained
    # range would branch on each segment's range, and the derivation's paths multiply
    entry = {}
    for j in range(len(m.seg_names)):
        for i, pos in enumerate(m.pos_names):
            entry[m.seg_names[j], pos] = _entry_at(m, s, j, i)
    return {"entry": entry}


def _entry_at(m, s: S, j: int, i: int) -> str:
    led = s.ledger[j]
    if not s.retained[j] - 1 <= i < len(led):
        return ""
    return PLAIN if led[i] == PLAIN else m.txn_names[led[i]]


def _first_open(m, s: S) -> dict:
    return {"firstopen": {m.seg_names[j]: _first_open_of(s, j) for j in range(len(m.seg_names))}}


def _first_open_of(s: S, j: int) -> int:
    led = s.ledger[j]
    for i in _retained(s, j):
        tag = led[i]
        if tag != PLAIN and header_state(s, tag) == OPEN:
            return i + 1
    return NO_OPEN


def _skipped(m, s: S) -> dict:
    return {"skipped": {(m.seg_names[j], pos) for j in range(len(m.seg_names))
                        for i, pos in enumerate(m.pos_names) if _skipped_at(m, s, j, i)}}


def _skipped_at(m, s: S, j: int, i: int) -> bool:
    p, led = s.part[j], s.ledger[j]
    if p is None or not s.retained[j] - 1 <= i < len(led):
        return False
    tag = led[i]
    return tag != PLAIN and is_txn_aborted(m, s, j, p, tag)


def _fenced(m, s: S) -> dict:
    return {"fenced": {(m.seg_names[j], pos) for j in range(len(m.seg_names))
                       for i, pos in enumerate(m.pos_names) if _fenced_at(s, j, i)}}


def _fenced_at(s: S, j: int, i: int) -> bool:
    return 0 <= s.fence[j] <= i < len(s.ledger[j])


def _sealed(m, s: S) -> dict:
    return {"sealed": {m.seg_names[j] for j, st in enumerate(s.status) if st == SEALED}}


def _acked(m, s: S) -> dict:
    acked = set()
    for x, cursors in enumerate((s.cursor, s.cursor2) if s.cursor2 else (s.cursor,)):
        for j, cursor in enumerate(cursors):
            if cursor[0] > 0 or cursor[1]:   # else no position is covered
                for i, pos in enumerate(m.pos_names):
                    if covers(cursor, i + 1):
                        acked.add((m.cur_name[j, x], pos))
    return {"acked": acked}


def _participation(p) -> tuple:
    """A segment's broker `p` (None: none up): (up, pending, the txns it
    tracks, the txns it pins)."""
    if p is None:
        return False, False, frozenset(), frozenset()
    # an event to handle, a recovering buffer or store that will read its ops and headers,
    # or (apply = steps) header reads, an apply chain or an ACK-op delete in flight
    pending = bool(p.events or p.aevents or p.aevents2 or not (p.ready and p.aready and p.aready2) or (
        p.reads or p.chain or p.areads or p.adel))
    pins = frozenset(t for t, _ in p.tpos)
    return True, pending, p.cache | p.acache | p.acache2 | pins, pins


def _participants(m, s: S) -> dict:
    # each symbol one comprehension over the segments' summaries, where a loop filling the
    # four sets would branch on every segment and every txn it tracks (the derivation's paths)
    tn, sn = m.txn_names, m.seg_names
    per = [_participation(p) for p in s.part]
    both = [(j, t) for j in range(len(sn)) for t in range(len(tn))]
    return {"up": {sn[j] for j, x in enumerate(per) if x[0]},
            "pending": {sn[j] for j, x in enumerate(per) if x[1]},
            "tracks": {(sn[j], tn[t]) for j, t in both if t in per[j][2]},
            "pins": {(sn[j], tn[t]) for j, t in both if t in per[j][3]}}


def _max_read(m, s: S) -> dict:
    """What each dispatcher reads up to: `getMaxReadPosition()` (F6 gates it)."""
    return {"maxread": {m.seg_names[j]: -1 if p is None else read_limit(m, s, j, p) for j, p in enumerate(s.part)}}


def _in_flight(m, s: S) -> dict:
    # a closed instance's send counts too: it may still delete its op; and (apply =
    # steps) a closed instance's read, apply or delete of the txn's ops there
    # (check = steps: a send whose header read is out puts the entry and its op next)
    out = {(m.txn_names[m.op_txn[k]], m.seg_names[pub.seg]) for k, pub in enumerate(s.pubs)
           if pub.stage in UNANSWERED or pub.stage in READING}
    for j, z in enumerate(s.zomb):
        if z is not None:
            p = z[1]
            for t in chain(p.reads, (c[0] for c in p.chain if c[0] != PLAIN), p.areads, p.adel):
                out.add((m.txn_names[t], m.seg_names[j]))
    return {"inflight": out}


def _acks_written(m, s: S) -> dict:
    tn, cn, pn = m.txn_names, m.cur_name, m.pos_names
    # positions each txn's written acks cover: its own, and below a cumulative one
    cumulative = {(a.txn, a.seg, a.pos, a.sub) for a in m.acks if a.cumulative}
    ackcover = set()
    for (t, j, pos, _, x) in s.ackw:
        for i in range(1, pos + 1) if (t, j, pos, x) in cumulative else (pos,):
            ackcover.add((tn[t], cn[j, x], pn[i - 1]))
    return {"ackw": {(tn[t], cn[j, x], pn[pos - 1]) for (t, j, pos, _, x) in s.ackw},
            "ackafter": {(tn[t], cn[j, x], pn[pos - 1]) for (t, j, pos, after, x) in s.ackw if after},
            "ackcover": ackcover}


# (fields read, the part): every symbol of the schema comes from one part
PARTS = (
    (("hdr",), _headers),
    (("fincnt",), lambda m, s: {"fincnt": dict(zip(m.txn_names, s.fincnt))}),
    (("decided",), lambda m, s: {"decided": dict(zip(m.txn_names, s.decided))}),
    (("client", "tcp"), lambda m, s: {"told": told(m, s)}),
    (("tcp",), lambda m, s: {"fanning": {m.txn_names[t] for (t, step, _) in s.tcp if step != "fin"}}),
    (("late",), lambda m, s: {"late": {m.txn_names[t] for t in s.late}}),
    (("ops",), _ops),
    (("gcsnap",), _gc),
    (("ledger", "retained"), _entries),
    (("ledger", "retained", "hdr"), _first_open),
    (("ledger", "retained", "part", "arec", "hdr"), _skipped),
    (("ledger", "fence"), _fenced),
    (("status",), _sealed),
    (("cursor", "cursor2"), _acked),
    (("part",), _participants),
    (("part", "ledger"), _max_read),
    (("pubs", "zomb"), _in_flight),
    (("ackw",), _acks_written),
    (("dlv",), lambda m, s: {"dlv": worst_deliveries(m.seg_names, m.pos_names, s.dlv)}),
    (("wmark",), lambda m, s: {"wmark": {m.seg_names[j]: w for j, w in enumerate(s.wmark) if w >= 0}}),
)


def observe(m, s: S) -> dict:
    out: dict = {}
    for _, part in PARTS:
        out.update(part(m, s))
    return out


# Each property and state predicate in one sentence, in Pulsar's terms, for
# the finding reports (`Spec.property_text`, checker/reports/explain.py).
PROPERTY_TEXT = {
    "Atomicity": "no entry of an aborted transaction is delivered, no live transaction buffer hides an entry of a "
                 "committed one, and no send or ack is admitted after the coordinator decided its transaction",
    "NoAbortedDelivered": "no consumer receives an entry of a transaction that aborted",
    "CommittedVisible": "no live transaction buffer filters out (`isTxnAborted`) an entry of a committed transaction",
    "NoLateAdmission": "no send or ack of a transaction is admitted after the coordinator decided it",
    "NoLostCommittedAck": "a committed transaction's ack reaches the subscription's cursor before its ACK op record "
                          "is deleted",
    "NoAbortedAck": "every position a cursor covers was acknowledged by a committed transaction",
    "AcksFixedAtDecision": "no ACK op record is written after its transaction was decided",
    "SingleFinalization": "a header never leaves its first decision, `finalizedAt` is written once, and the client "
                          "is told the decision that was made",
    "ReadCommitted": "no consumer receives an entry of a transaction that is still OPEN or was aborted",
    "AbortedStaysHidden": "no consumer receives an entry after its transaction aborted",
    "GcSafety": "the GC deletes a header only once the transaction is decided and no op record and no live "
                "participant that holds it remain",
    "MaxReadPositionSafe": "a live buffer's `getMaxReadPosition()` is below the first entry of every OPEN "
                           "transaction on its segment",
    "WatermarkSafe": "the persisted watermark is below the first entry of every OPEN transaction on its segment "
                     "(the next recovery trusts it)",
    "ParentFenced": "no entry lands in a parent segment after it was terminated",
    "NoOrphanOp": "every op record of a decided transaction is held by a live participant that will delete it, or "
                  "by a send still running, or has an event pending",
    "NoMissedDecision": "a participant that pins the read position for a decided transaction has an event pending, "
                        "a send of it running, or a fan-out the coordinator still owes",
    # state predicates (the temporal properties' parts), per txn
    "Started": "the transaction's header exists",
    "Finalized": "the header is decided and finalized",
    "Committed": "the transaction committed",
    "Aborted": "the transaction aborted",
    "Decided": "the coordinator decided the transaction",
    "AbortHidden": "every live transaction buffer filters out (`isTxnAborted`) each entry of the transaction",
    "MaterializedByLive": "no live participant holds the transaction any more (each applied its decision)",
    "Collected": "the GC deleted the transaction's header",
    "NoOpsLeft": "no op record of the transaction is left",
}
