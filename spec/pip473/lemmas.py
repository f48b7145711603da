"""PIP-473's lemmas for `txncheck prove`, as predicates of the state (`Spec.lemmas`).

Facts of every reachable state of `fixed` that its twelve safety properties
need in order to be inductive, found from the counterexamples to induction
at the standard bounds (models/pip473/fixed-standard.toml names the 46 it
needs; with non-transactional sends, EveryEntryIsASend and InitialEntry
too). docs/pip473.md ("Proved by induction") states each in words, with the
CTI its absence gives. A lemma that reads a flag states the fixed code's
behaviour (the decision's CAS writes finalizedAt; F1 admits acks from the
store; F2 persists the watermark before the first op); the others read only
the model's constants. The last two (DERIVED_ONLY) only the relation derived
from the spec's code needs.

Each is a function of the spec `m` (its plan, topology and flags) and a
state `s` (protocol/state.py's `S`); `lemmas(m)` gives those of m's variant
and bounds. The explicit engines never run them; `txncheck prove` runs them
on the symbolic state as it runs `next` (docs/adr/0011), so they keep to the
subset it follows: loops over the model's ranges and the state's tuples,
`all`/`any` with one `for`, membership tests of the elements a lemma is
about, `and`/`or` only in a condition (an `if`'s or a comprehension's), and
what a ledger or a participant (a `Part`, or None while its broker is down)
holds asked of a helper below, whose answer the deriver joins into one value.
"""

from __future__ import annotations

from functools import partial

from .protocol.state import (
    ABORTED, ABSENT, ACTIVE, APPENDED, C_ENDING, C_NONE, CHECKED, CLOSED, COMMITTED, CREATED, DONE, EMPTY_PART,
    GONE, NONE, OPEN, OPPUT, PLAIN, PUB_TODO, RECOVERED, REJECTED, SEALED, TERMINAL, TERMINATED, TODO,
    TOLD_ABORTED, TOLD_COMMITTED, TOLD_CONFLICT, TOLD_NOTFOUND, VALID, Header, Op,
)
from .protocol.store import header_state

LEMMAS: dict = {}   # name -> (predicate(m, s), when(m): whether m's variant and bounds have it, None: all)

UNLANDED = (CHECKED, OPPUT, VALID)   # a send past its header check, not landed (fixed's stages)
CLOSED_UNLANDED = (CLOSED[CHECKED], CLOSED[OPPUT], CLOSED[VALID])   # the same in a closed instance (unloads)


def lemma(fn=None, *, when=None):
    """Register `fn(m, s)` under its name, for the specs `m` where `when(m)` holds."""
    if fn is None:
        return lambda fn: lemma(fn, when=when)
    LEMMAS[fn.__name__] = (fn, when)
    return fn


def lemmas(m) -> dict:
    """name -> predicate of the state, for each lemma of m's variant and bounds."""
    return {name: partial(fn, m) for name, (fn, when) in LEMMAS.items() if when is None or when(m)}


# -- the model's constants ---------------------------------------------------------------------

def txns(m):
    return range(len(m.txn_names))


def segs(m):
    return range(len(m.seg_names))


def seg_txns(m):
    return [(j, t) for j in segs(m) for t in txns(m)]


def initial(m):
    """The segments that exist from the start (the reshape creates the others)."""
    return [j for j in segs(m) if j not in m.topo.children]


def writes(m):
    """The plan's sends: plan operations 0 .. W-1 (its acks follow)."""
    return range(len(m.writes))


def writes_of(m, t):
    return [k for k in writes(m) if m.writes[k].txn == t]


def plan_ops(m, t):
    """t's sends and acks."""
    return [k for k in range(len(m.op_txn)) if m.op_txn[k] == t]


def routes(m, k):
    """The segments whose key range holds send k's key."""
    return tuple(j for j, (lo, hi) in enumerate(m.topo.ranges) if lo <= m.writes[k].key < hi)


def budget(m):
    """Crashes and unloads the model allows (an unload takes a broker down as a crash does)."""
    return m.constants["crashes"] + m.constants["unloads"]


# -- the store ---------------------------------------------------------------------------------

def op_record(m, s, k):
    """The op record plan operation k puts (store.put_op), at its Pub's segment and
    seq: a send's at its entry's position, or at the placeholder 0 where the op goes
    first (merged, fixed); an ack's at the acked position."""
    pub = s.pubs[k]
    if k < len(m.writes):
        return Op(m.writes[k].txn, pub.seq, "write", pub.seg, 0 if m.flags.op_first else pub.pos, False, 0)
    a = m.acks[k - len(m.writes)]
    return Op(a.txn, pub.seq, "ack", pub.seg, a.pos, a.cumulative, a.sub)


def has_op(m, s, k):
    """Plan operation k's op record is in the store."""
    return op_record(m, s, k) in s.ops


def write_op_on(m, s, t, j):
    return any(has_op(m, s, k) for k in writes_of(m, t) if s.pubs[k].seg == j)


def ack_op_on(m, s, t, j):
    return any(has_op(m, s, len(m.writes) + i) for i, a in enumerate(m.acks) if a.txn == t and a.seg == j)


def sends(m, s, t, j, stages):
    """Some send of t at segment j is at one of `stages`."""
    return any(s.pubs[k].stage in stages for k in writes_of(m, t) if s.pubs[k].seg == j)


def aborted_record(s, j, t):
    """t's durable aborted record on segment j (whatever its prune key)."""
    return any(x[:2] == (j, t) for x in s.arec)


# -- the ledgers -------------------------------------------------------------------------------

def first_entry(s, j, t):
    """The position of t's first entry in segment j's ledger, 0 if none."""
    for i, e in enumerate(s.ledger[j], 1):
        if e == t:
            return i
    return 0


def in_ledger(s, j, t):
    return t in s.ledger[j]


def well_formed(m, s, j):
    """Segment j's ledger is at most its longest, each entry a txn's or plain."""
    led = s.ledger[j]
    return len(led) <= len(m.pos_names) and all(e in (PLAIN, *txns(m)) for e in led)


def initial_entry(s, j):
    """Segment j's ledger starts with its plain entry, which the dispatcher has passed."""
    led = s.ledger[j]
    return len(led) >= 1 and led[0] == PLAIN and s.rd[j] >= 2


def plain_only_first(m, s, j):
    """No plain entry in segment j's ledger but an initial segment's first."""
    return PLAIN not in s.ledger[j][1 if j in initial(m) else 0:]


def entries_landed(m, s, j):
    """Each transactional entry of segment j is a done send of its txn that landed
    there, at that position."""
    for i, e in enumerate(s.ledger[j], 1):
        if e != PLAIN and not any((s.pubs[k].stage, s.pubs[k].seg, s.pubs[k].pos) == (DONE, j, i)
                                  for k in writes(m) if j in routes(m, k) and m.writes[k].txn == e):
            return False
    return True


def committed_entry(m, s, j, i):
    """Entry i of segment j's ledger is a committed txn's."""
    led = s.ledger[j]
    return 1 <= i <= len(led) and any(s.decided[t] == COMMITTED for t in txns(m) if led[i - 1] == t)


# -- the participants (a Part, or None while the broker is down) -------------------------------

def recovered(s, j):
    """Segment j's broker is up and its transaction buffer has recovered."""
    p = s.part[j]
    return p is not None and p.ready


def acks_recovered(s, j):
    """Segment j's broker is up and its pending-ack store has replayed."""
    p = s.part[j]
    return p is not None and p.aready


def restarting(s, j):
    """Segment j's broker is down, or up with its buffer still recovering."""
    p = s.part[j]
    return s.status[j] != ABSENT if p is None else not p.ready


def cached(s, j, t):
    """Segment j's buffer believes t OPEN (its header cache)."""
    p = s.part[j]
    return p is not None and t in p.cache


def ack_cached(s, j, t):
    """Segment j's pending-ack store believes t OPEN."""
    p = s.part[j]
    return p is not None and t in p.acache


def tracks(s, j, t, q):
    """Segment j's buffer tracks t at position q (0: in flight; RECOVERED)."""
    p = s.part[j]
    return p is not None and (t, q) in p.tpos


def tracked(s, j, t):
    """Segment j's buffer tracks t, anywhere: it pins maxReadPosition for t."""
    p = s.part[j]
    return p is not None and any(x[0] == t for x in p.tpos)


def tracked_at_first_entries(s, j):
    p = s.part[j]
    return p is None or all(q == first_entry(s, j, t) for t, q in p.tpos if q >= 1)


def within_ledger(s, j):
    """Segment j's hold and persisted watermark are at most its ledger's length."""
    return hold(s, j) <= len(s.ledger[j]) and s.wmark[j] <= len(s.ledger[j])


def hold(s, j):
    """Segment j's buffer's hold on maxReadPosition, -1 none (or the broker down)."""
    p = s.part[j]
    return -1 if p is None else p.hold


def knows_nothing(s, j):
    """Segment j's buffer, if up and recovering, caches, tracks and marks nothing."""
    p = s.part[j]
    return p is None or p.ready or not (p.cache or p.abrt or p.tpos)


def will_materialize(m, s, j, t):
    """Decided t at segment j's live broker: once its buffer has recovered, it caches
    t for each admitted WRITE op there, and with an op cached it has an event pending
    (or a send still to validate, which materializes it); once its pending-ack store
    has replayed, likewise for t's ACK ops there."""
    p = s.part[j]
    if p is None:
        return True
    if p.ready and (t not in p.cache and any(has_op(m, s, k) for k in writes_of(m, t)
                                             if s.pubs[k].seg == j and s.pubs[k].stage != OPPUT)
                    or t in p.cache and write_op_on(m, s, t, j) and not p.events
                    and not sends(m, s, t, j, (OPPUT,))):
        return False
    return not (p.aready and (ack_op_on(m, s, t, j) and t not in p.acache or t in p.acache and not p.aevents))


# -- a txn's life at the coordinator -----------------------------------------------------------

@lemma
def DecidedIsTheHeaders(m, s):
    # the first decision is recorded exactly when the header leaves OPEN, and a decided header
    # still holds it: the decision CAS is its only writer
    for t in txns(m):
        h = header_state(s, t)
        if (s.decided[t] == "") != (h in (NONE, OPEN)) or h in TERMINAL and s.decided[t] != h:
            return False
    return True


@lemma(when=lambda m: m.flags.cas_finalizes)
def FinalizedAtTheDecision(m, s):
    # the decision CAS writes finalizedAt (merged code): an OPEN header was never finalized, a
    # decided or collected one exactly once
    for t in txns(m):
        h, n = s.hdr[t], s.fincnt[t]
        if isinstance(h, Header):
            if h.state == OPEN and (h.fin_at != -1 or n != 0) or h.state in TERMINAL and (h.fin_at < 0 or n != 1):
                return False
        elif h == NONE and n != 0 or h == GONE and n != 1:
            return False
    return True


@lemma
def ClientFollowsTheHeader(m, s):
    # a client has a txn only once newTxn created its header; it was told COMMITTED or ABORTED
    # only of that decision, TransactionNotFound only after the GC, InvalidTxnStatus only for a
    # decided txn
    for t in txns(m):
        c, d, h = s.client[t], s.decided[t], header_state(s, t)
        if ((c == C_NONE) != (h == NONE) or c == TOLD_COMMITTED and d != COMMITTED
                or c == TOLD_ABORTED and d != ABORTED or c == TOLD_NOTFOUND and h != GONE
                or c == TOLD_CONFLICT and d == ""):
            return False
    return True


@lemma
def FinalizeAfterTheDecision(m, s):
    # the coordinator owes an answer only for a decided txn, to a client waiting for that
    # decision (a timeout's, with no client, only for an aborted one)
    for t in txns(m):
        for d in TERMINAL:
            if (t, "fin", d) in s.tcp and (s.decided[t] != d or s.client[t] != C_ENDING[d]):
                return False
        if (t, "fin", "") in s.tcp and s.decided[t] != ABORTED:
            return False
    return True


# -- sends, acks and their op records ----------------------------------------------------------

@lemma
def BlankSend(m, s):
    # a send or ack not started has no segment, position, seq or op record
    for k, pub in enumerate(s.pubs):
        if pub.stage == TODO and (pub != PUB_TODO or has_op(m, s, k)):
            return False
    return True


@lemma
def SendsAfterNewTxn(m, s):
    # sends and acks start after newTxn
    return all(header_state(s, m.op_txn[k]) != NONE for k, pub in enumerate(s.pubs) if pub.stage != TODO)


@lemma
def SendsGoWhereTheyRoute(m, s):
    # a send's segment holds its routing key (the parent, or the merge's child)
    return all(s.pubs[k].seg in routes(m, k) for k in writes(m) if s.pubs[k].stage != TODO)


@lemma
def AcksGoToTheirSegment(m, s):
    # a sent ack is at its own segment and position, done with a seq or rejected without one
    for i, a in enumerate(m.acks):
        pub = s.pubs[len(m.writes) + i]
        if pub.stage != TODO and ((pub.seg, pub.pos) != (a.seg, a.pos) or pub.stage not in (DONE, REJECTED)
                                  or (pub.seq >= 1) != (pub.stage == DONE)):
            return False
    return True


@lemma(when=lambda m: m.flags.validate_after_op)
def SendStages(m, s):
    # F1's pipeline: checked (no op yet), op put or validated (a seq, the placeholder position),
    # done (a seq and its ledger position), rejected (no position); never the text's appended;
    # a closed instance's send (bound unloads) as its live stage (its append fails: no position)
    for k in writes(m):
        st, _, pos, seq = s.pubs[k]
        if (st in (CHECKED, CLOSED[CHECKED]) and (pos != 0 or seq != -1)
                or st in (OPPUT, VALID, CLOSED[OPPUT], CLOSED[VALID]) and (pos != 0 or seq < 1)
                or st == DONE and (pos < 1 or seq < 1) or st == REJECTED and pos != 0 or st == APPENDED):
            return False
    return True


@lemma(when=lambda m: m.constants["unloads"] and m.flags.drain_closed)
def ClosedSendsAtAnUnloadedSegment(m, s):
    # F10: a closed instance's send runs only while its segment has no owner (the next one loads
    # after it ends), an unload was spent for it, and before its op put it has no op record
    for k in writes(m):
        pub = s.pubs[k]
        if pub.stage in CLOSED_UNLANDED and (not any(s.part[j] is None for j in segs(m) if pub.seg == j)
                                            or s.unloads >= m.constants["unloads"]
                                            or pub.stage == CLOSED[CHECKED] and has_op(m, s, k)):
            return False
    return True


@lemma
def OpOfAPutSend(m, s):
    # an op record exists only for a send past its header check, with the seq the store assigned
    for k, pub in enumerate(s.pubs):
        if has_op(m, s, k) and (pub.seq < 1 or pub.stage == CHECKED):
            return False
    return True


@lemma
def SeqsCountThePuts(m, s):
    # the txn's next seq is one more than the ops its sends put (/txn-op/<txn>/<seq> is sequential)
    return all(s.seqs[t] == 1 + sum(s.pubs[k].seq >= 1 for k in plan_ops(m, t)) for t in txns(m))


@lemma
def SeqsAreDistinct(m, s):
    # two op puts of one txn never share a seq
    for t in txns(m):
        ks = plan_ops(m, t)
        for x, k in enumerate(ks):
            if any(s.pubs[k].seq == s.pubs[y].seq for y in ks[x + 1:] if s.pubs[k].seq >= 1):
                return False
    return True


@lemma
def SeqsBelowTheNext(m, s):
    # every put seq is below the txn's next one
    return all(pub.seq < s.seqs[m.op_txn[k]] for k, pub in enumerate(s.pubs))


@lemma
def AckWrittenIsADoneAck(m, s):
    # an ack is in the ghost of written acks (before or after the decision) exactly when it is done
    for a in m.acks:
        written = any((a.txn, a.seg, a.pos, after, a.sub) in s.ackw for after in (False, True))
        done = any(s.pubs[len(m.writes) + i].stage == DONE for i, b in enumerate(m.acks)
                   if (b.txn, b.seg, b.pos, b.sub) == (a.txn, a.seg, a.pos, a.sub))
        if written != done:
            return False
    return True


@lemma
def OpenTxnsKeepTheirOps(m, s):
    # while a txn is OPEN its done sends and acks keep their op records: only materializing a
    # decision deletes them
    return all(has_op(m, s, k) for k, pub in enumerate(s.pubs)
               if pub.stage == DONE and header_state(s, m.op_txn[k]) == OPEN)


@lemma
def CollectedLeavesNoAdmittedOp(m, s):
    # after the GC deleted the header, an op record of the txn left is a late send's (or, with an
    # unload, a closed instance's send's), put after the collection and not admitted (F4), or one a
    # crash rejected
    return all(pub.stage in (OPPUT, REJECTED, CLOSED[OPPUT]) for k, pub in enumerate(s.pubs)
               if header_state(s, m.op_txn[k]) == GONE and has_op(m, s, k))


# -- the ledgers, the merge and the dispatcher -------------------------------------------------

@lemma
def LedgerIsAPrefix(m, s):
    # a ledger is its entries up to its length, each a txn's or a plain one
    return all(well_formed(m, s, j) for j in segs(m))


@lemma
def InitialEntry(m, s):
    # each initial segment starts with its delivered plain entry
    return all(initial_entry(s, j) for j in initial(m))


@lemma(when=lambda m: not m.plain_keys)
def OnlyTheFirstEntryIsPlain(m, s):
    # without non-transactional sends, the initial entry is the only plain one
    return all(plain_only_first(m, s, j) for j in segs(m))


@lemma
def EveryEntryIsASend(m, s):
    # every other entry is a done send or a non-transactional send
    entries = sum(len(led) for led in s.ledger)
    return entries == len(initial(m)) + s.plain + sum(s.pubs[k].stage == DONE for k in writes(m))


@lemma
def EntriesAreLandedSends(m, s):
    # every transactional entry is a send of its txn that landed at that segment and position
    return all(entries_landed(m, s, j) for j in segs(m))


@lemma
def NothingTrimmed(m, s):
    # without trimming, nothing is trimmed
    return m.trim or all(r == 1 for r in s.retained)


# per reshape step (0 .. 3): a parent's status and a child's, in PIP-468's order
RESHAPE_STEPS = ((ACTIVE, ABSENT), (ACTIVE, CREATED), (TERMINATED, CREATED), (SEALED, ACTIVE))


@lemma
def ReshapeOrder(m, s):
    # the merge runs in PIP-468's order: children created, parents terminated, one CAS seals the
    # parents and activates the children; the other segments stay ACTIVE
    topo = m.topo
    for r, (parent, child) in enumerate(RESHAPE_STEPS):
        want = tuple(child if j in topo.children else parent if j in topo.parents else ACTIVE for j in segs(m))
        if s.reshape == r and s.status != want:
            return False
    return True


@lemma
def FenceAtTermination(m, s):
    # a terminated parent's fence is its length; nothing else is fenced
    for j in segs(m):
        fenced = j in m.topo.parents and s.reshape >= 2
        if fenced and s.fence[j] != len(s.ledger[j]) or not fenced and s.fence[j] != -1:
            return False
    return True


@lemma
def SendsToChildrenAfterTheSplit(m, s):
    # a send reaches a child only once the CAS made it ACTIVE (the reshape's last step)
    return all(s.reshape == 3 for k in writes(m) if s.pubs[k].stage != TODO and s.pubs[k].seg in m.topo.children)


@lemma
def DeliveredAtAHeaderState(m, s):
    # no entry is delivered at NONE or GONE (the ghost records the decision then)
    return all(st not in (NONE, GONE) for j, i, st in s.dlv)


@lemma
def DeliveredEntriesAreCommitted(m, s):
    # every delivered transactional entry is a committed txn's
    return all(committed_entry(m, s, j, i) for j, i, st in s.dlv if st == COMMITTED)


# -- the transaction buffer and the pending-ack store ------------------------------------------

@lemma
def InFlightSendsHaveALiveBroker(m, s):
    # a send between its header check and its landing is at a broker that is up and recovered:
    # a crash rejects the sends in flight, checks wait for recovery
    return all(all(recovered(s, j) for j in routes(m, k) if s.pubs[k].seg == j)
               for k in writes(m) if s.pubs[k].stage in UNLANDED)


@lemma
def InFlightSendsOfOpenTxns(m, s):
    # an OPEN txn's send in flight: its buffer caches the txn; past the op put, the op record is
    # there and the buffer tracks the txn (in flight, or at its first entry)
    for k in writes(m):
        t, pub = m.writes[k].txn, s.pubs[k]
        for j in routes(m, k):
            if pub.seg == j and header_state(s, t) == OPEN and (
                    pub.stage in UNLANDED and not cached(s, j, t)
                    or pub.stage in (OPPUT, VALID) and not (has_op(m, s, k) and tracked(s, j, t))):
                return False
    return True


@lemma
def CachedForASend(m, s):
    # a buffer caches a txn only for a send of it there: checked, in flight, done, or rejected by a
    # crash with its op left
    for j, t in seg_txns(m):
        mine = [k for k in writes_of(m, t) if j in routes(m, k)]
        if cached(s, j, t) and not (
                any(s.pubs[k].stage in (*UNLANDED, DONE) for k in mine if s.pubs[k].seg == j)
                or any(has_op(m, s, k) for k in mine if s.pubs[k].seg == j and s.pubs[k].stage == REJECTED)):
            return False
    return True


@lemma
def CachedKeepsTheAdmittedOps(m, s):
    # while a buffer caches a txn, the op records of its admitted sends there remain:
    # materialization deletes both at once
    for k in writes(m):
        pub = s.pubs[k]
        if pub.stage in (VALID, DONE) and not has_op(m, s, k) and any(
                cached(s, j, m.writes[k].txn) for j in routes(m, k) if pub.seg == j):
            return False
    return True


@lemma
def TrackedAreCached(m, s):
    # a buffer tracks (pins maxReadPosition for) only txns it caches
    return all(cached(s, j, t) for j, t in seg_txns(m) if tracked(s, j, t))


@lemma
def OpenTxnsWithOpsAreTracked(m, s):
    # a recovered buffer caches and tracks every OPEN txn with a WRITE op there
    for j, t in seg_txns(m):
        if recovered(s, j) and header_state(s, t) == OPEN and write_op_on(m, s, t, j) and not (
                cached(s, j, t) and tracked(s, j, t)):
            return False
    return True


@lemma
def OnlyTheFirstEntryIsTracked(m, s):
    # a tracked position is the txn's first entry there: later appends never re-key it
    return all(tracked_at_first_entries(s, j) for j in segs(m))


@lemma
def CachedTxnsPinTheirFirstEntry(m, s):
    # a cached txn with an entry pins maxReadPosition below its first entry: tracked there, or
    # found OPEN by recovery with the hold below it
    for j, t in seg_txns(m):
        first = first_entry(s, j, t)
        if recovered(s, j) and first > 0 and cached(s, j, t) and not (
                tracks(s, j, t, first) or tracks(s, j, t, RECOVERED) and hold(s, j) < first):
            return False
    return True


@lemma
def HoldAndWatermarkWithinTheLedger(m, s):
    # the hold and the persisted watermark never pass the ledger's end (each is a value
    # maxReadPosition had)
    return all(within_ledger(s, j) for j in segs(m))


@lemma(when=lambda m: m.flags.watermark_before_op)
def WatermarkPersistedBeforeTheFirstOp(m, s):
    # F2: a segment with a WRITE op has a persisted watermark (but for the op of a closed
    # instance's send, which F2 does not cover: its append will fail, and F10 keeps the next
    # owner's recovery from reading the segment until the send has ended and deleted its op)
    for k in writes(m):
        pub = s.pubs[k]
        if has_op(m, s, k) and pub.stage not in CLOSED_UNLANDED and not all(
                s.wmark[j] >= 0 for j in segs(m) if pub.seg == j):
            return False
    return True


@lemma(when=lambda m: m.split)
def AckOpsAreCached(m, s):
    # a pending-ack store whose own replay is done counts every txn with an ACK op there among its
    # open ones
    return all(ack_cached(s, a.seg, a.txn) for i, a in enumerate(m.acks)
               if has_op(m, s, len(m.writes) + i) and acks_recovered(s, a.seg))


@lemma(when=lambda m: m.split and m.flags.validate_after_op)
def CachedAcksHaveOps(m, s):
    # F1 puts the ack's op in the step that admits it: the store's open txns all have an ACK op there
    return all(ack_op_on(m, s, t, j) for j, t in seg_txns(m) if ack_cached(s, j, t))


# -- decisions reach the participants ----------------------------------------------------------

@lemma(when=lambda m: m.flags.coalesced and m.split)
def DecidedOpsWillBeMaterialized(m, s):
    # for a decided txn at a live broker, its admitted WRITE ops are still cached by the buffer
    # once it has recovered, and its ACK ops by the store once the store's own replay is done,
    # and each has an event pending (or, for the buffer, a send still to validate, which
    # materializes it)
    return all(will_materialize(m, s, j, t) for j, t in seg_txns(m) if s.decided[t] != "")


@lemma
def MaterializedAbortsAreRecorded(m, s):
    # an aborted txn whose admitted send's op was deleted (materialized) has its durable aborted
    # record on that segment
    for k in writes(m):
        t, pub = m.writes[k].txn, s.pubs[k]
        if s.decided[t] == ABORTED and pub.stage in (VALID, DONE) and not has_op(m, s, k) and not all(
                aborted_record(s, j, t) for j in routes(m, k) if pub.seg == j):
            return False
    return True


@lemma
def AbortedRecordsOfDecidedTxns(m, s):
    # aborted records exist only for decided or collected txns
    return all(header_state(s, t) not in (NONE, OPEN) for j, t, key in s.arec)


@lemma
def NoAbortedRecordHidesACommittedEntry(m, s):
    # an aborted record of a txn that did not abort (a committed txn whose late send a buffer
    # rejected after the GC) covers no entry of it
    return not any(in_ledger(s, j, t) for j, t in seg_txns(m)
                   if aborted_record(s, j, t) and s.decided[t] != ABORTED)


@lemma
def NoAbortedRecordWhileACommittedSendMayLand(m, s):
    # nor may a validated send of that txn still land on that segment
    return not any(sends(m, s, t, j, (VALID,)) for j, t in seg_txns(m)
                   if aborted_record(s, j, t) and s.decided[t] != ABORTED)


# -- crash and recovery ------------------------------------------------------------------------

@lemma
def CrashBudget(m, s):
    # brokers down or recovering never outnumber the crashes and unloads spent
    left = s.crashes + (s.unloads if m.constants["unloads"] else 0)
    return sum(restarting(s, j) for j in segs(m)) + left <= budget(m)


@lemma
def RecoveringBufferKnowsNothing(m, s):
    # a recovering buffer caches, tracks and marks nothing (the pending-ack store, which replays on
    # its own, may)
    return all(knows_nothing(s, j) for j in segs(m))


@lemma
def RecoveredTxnsHoldTheirEntries(m, s):
    # a txn recovery found OPEN keeps a hold, below its first entry
    for j, t in seg_txns(m):
        first = first_entry(s, j, t)
        if tracks(s, j, t, RECOVERED) and (hold(s, j) < 0 or first > 0 and hold(s, j) >= first):
            return False
    return True


@lemma
def RecoveredTrackingRestsOnOldOps(m, s):
    # such a txn has a WRITE op there from before the crash (a send done, or rejected by the
    # crash), and a crash was spent
    for j, t in seg_txns(m):
        if tracks(s, j, t, RECOVERED) and (s.crashes >= budget(m) or not any(
                has_op(m, s, k) for k in writes_of(m, t)
                if s.pubs[k].seg == j and s.pubs[k].stage in (REJECTED, DONE))):
            return False
    return True


# -- what the derived relation needs besides ---------------------------------------------------
# The relation derived from the spec's code (ADR 0011) has a cell for every place of the shape the
# spec's states take, and that shape's ranges as the invariant's Types clause. The hand-written
# relation's cells hold only the plan's op records (the first lemma), and its ranges are the
# model's, where the shape's may say that an unused segment's broker never restarts (the second).
DERIVED_ONLY = ("EveryOpIsAPlanPut", "UnusedSegmentsKeepAnIdleBroker")


@lemma
def EveryOpIsAPlanPut(m, s):
    # every op record in the store is the one a send or ack of the plan put, at the seq and
    # segment its Pub records
    return all(any(o == op_record(m, s, k) for k in plan_ops(m, o.txn)) for o in s.ops)


def used(m, j):
    """Some send, ack or non-transactional send of the plan can reach segment j."""
    lo, hi = m.topo.ranges[j]
    return any(lo <= key < hi for key in [w.key for w in m.writes] + list(m.plain_keys)) or any(
        a.seg == j for a in m.acks)


def idle(s, j):
    """Segment j's broker is as created: up and empty (or absent, a child before the reshape)."""
    p = s.part[j]
    return s.status[j] == ABSENT if p is None else p == EMPTY_PART


@lemma
def UnusedSegmentsKeepAnIdleBroker(m, s):
    # with pruning a broker crashes or unloads only holding something: at a segment the plan
    # never reaches it stays as created (stated for every model, true by default without
    # pruning, so that a model proving with another's [prove] lemmas finds it)
    return not m.prune or all(idle(s, j) for j in segs(m) if not used(m, j))
