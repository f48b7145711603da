"""Lemmas for proving PIP-473 by induction (`txncheck prove`): facts of every
reachable state of `fixed` that its safety properties need in order to be
inductive, found from the counterexamples to induction. Each is stated in
the protocol's terms in docs/pip473.md ("What is proved"); a lemma that
reads a flag states the fixed code's behaviour.

The first group says the cells hold a state the spec can reach at all (the
encoding's shapes: a ledger is a prefix, a crashed participant holds
nothing, a send's record matches its stage); the second, the protocol's own
bookkeeping (who caches what, where an op record comes from); the last,
the reasons the properties hold.
"""

from __future__ import annotations

import z3

from ..symbolic import schema_terms
from .relation_parts import (
    E, ack_op_on, all_of, any_of, hst_is, held, is_txn_aborted, max_read, stage_is, tracked, write_op_on,
)
from .relation_state import DST, NO_TAG, REPLY, St
from .relation_steps import client_is
from .state import RECOVERED, UNKEYED

Implies, And, Or, Not = z3.Implies, z3.And, z3.Or, z3.Not


def state(rel) -> St:
    """The state in the state schema's own terms, for writing lemmas."""
    return St(schema_terms(rel.schema), rel.lay)


def lemmas(rel) -> dict:
    s = state(rel)
    lay = rel.lay
    m = lay.m
    f = m.flags
    T, J, W = range(lay.n), range(lay.nseg), range(lay.W)
    P = range(1, lay.L + 1)
    initial = [j for j in J if j < 2]
    children = list(m.topo.children)
    out = {}

    def each(terms):
        return all_of(list(terms))

    # -- the encoding's shapes ---------------------------------------------------------
    dec = lambda t, d: s.v("decided", t) == E(s, "Dec", d)
    stage = lambda k, *x: stage_is(s, k, *x)
    wtxn = lambda k: m.writes[k].txn
    cands = lambda k: [j for j, (lo, hi) in enumerate(m.topo.ranges) if lo <= m.writes[k].key < hi]
    reshape = s.v("reshape")
    status = lambda j, x: s.v("status", j) == E(s, "Status", x)

    # -- the encoding's shapes ---------------------------------------------------------
    out["HeaderFields"] = each(Implies(hst_is(s, t, "NONE", "GONE"), And(s.v("hdl", t) == 0, s.v("hfin", t) == -1))
                               for t in T)
    out["LedgerIsAPrefix"] = each(And((s.v("tag", j, i) != NO_TAG) == (i <= s.v("llen", j)),
                                      Implies(i <= s.v("llen", j), s.v("tag", j, i) >= -1))
                                  for j in J for i in P)
    out["BlankSend"] = each(Implies(stage(k, "todo"), And(s.v("pseg", k) == -1, s.v("ppos", k) == 0,
                                                          s.v("pseq", k) == -1, Not(s.v("opx", k))))
                            for k in range(lay.K))
    out["DownHoldsNothing"] = each(Implies(Not(s.v("up", j)), _blank_part(s, j)) for j in J)
    out["NothingTrimmed"] = each(s.v("retained", j) == 1 for j in J) if not m.trim else z3.BoolVal(True)

    # -- a txn's life ----------------------------------------------------------------------
    out["DecidedIsTheHeaders"] = each(And(
        dec(t, "undecided") == hst_is(s, t, "NONE", "OPEN"),
        Implies(hst_is(s, t, "COMMITTED"), dec(t, "COMMITTED")),
        Implies(hst_is(s, t, "ABORTED"), dec(t, "ABORTED"))) for t in T)
    if f.cas_finalizes:
        out["FinalizedAtTheDecision"] = each(And(
            Implies(hst_is(s, t, "NONE", "OPEN"), And(s.v("hfin", t) == -1, s.v("fincnt", t) == 0)),
            Implies(hst_is(s, t, "COMMITTED", "ABORTED"), And(s.v("hfin", t) >= 0, s.v("fincnt", t) == 1)),
            Implies(hst_is(s, t, "GONE"), s.v("fincnt", t) == 1)) for t in T)
    out["ClientFollowsTheHeader"] = each(And(
        client_is(s, t, "none") == hst_is(s, t, "NONE"),
        Implies(client_is(s, t, "told-committed"), dec(t, "COMMITTED")),
        Implies(client_is(s, t, "told-aborted"), dec(t, "ABORTED")),
        Implies(client_is(s, t, "told-notfound"), hst_is(s, t, "GONE")),
        Implies(client_is(s, t, "told-conflict"), Not(dec(t, "undecided")))) for t in T)
    out["TxnsStartInOrder"] = each(Implies(Not(hst_is(s, t, "NONE")), Not(hst_is(s, u, "NONE")))
                                   for t in T for u in m.started_before[t])
    out["SnapshotOfTheCollected"] = each(And(s.v("gcs", t) == hst_is(s, t, "GONE"),
                                             Implies(Not(s.v("gcs", t)), And(s.v("gcops", t) == 0,
                                                                             s.v("gcunmat", t) == 0)))
                                         for t in T)

    # -- sends and their op records -------------------------------------------------------
    out["SendsAfterNewTxn"] = each(Implies(Not(stage(k, "todo")), Not(hst_is(s, m.op_txn[k], "NONE")))
                                   for k in range(lay.K))
    out["SendsGoWhereTheyRoute"] = each(Implies(Not(stage(k, "todo")), Or([s.v("pseg", k) == j for j in cands(k)]))
                                        for k in W)
    out["AcksGoToTheirSegment"] = each(Implies(Not(stage(k, "todo")), And(
        s.v("pseg", k) == lay.ack_of[k].seg, s.v("ppos", k) == lay.ack_of[k].pos,
        stage(k, "done", "rejected"), (s.v("pseq", k) >= 1) == stage(k, "done"))) for k in range(lay.W, lay.K))
    out["SendStages"] = each(And(
        Implies(stage(k, "checked"), And(s.v("ppos", k) == 0, s.v("pseq", k) == -1)),
        Implies(stage(k, "op", "valid"), And(s.v("ppos", k) == 0, s.v("pseq", k) >= 1)),
        Implies(stage(k, "done"), And(s.v("ppos", k) >= 1, s.v("pseq", k) >= 1)),
        Implies(stage(k, "rejected"), s.v("ppos", k) == 0),
        Not(stage(k, "appended"))) for k in W) if f.validate_after_op else z3.BoolVal(True)
    out["SeqIsUnsetOrPositive"] = each(Or(s.v("pseq", k) == -1, s.v("pseq", k) >= 1) for k in range(lay.K))
    out["OpOfAPutSend"] = each(Implies(s.v("opx", k), And(s.v("pseq", k) >= 1, Not(stage(k, "checked"))))
                               for k in range(lay.K))
    out["SeqsCountThePuts"] = each(
        s.v("seqs", t) == 1 + z3.Sum([z3.If(s.v("pseq", k) >= 1, 1, 0) for k in lay.ops_of[t]] or [z3.IntVal(0)])
        for t in T)
    out["SeqsAreDistinct"] = each(Implies(And(s.v("pseq", k) >= 1, s.v("pseq", x) >= 1),
                                          s.v("pseq", k) != s.v("pseq", x))
                                  for t in T for k in lay.ops_of[t] for x in lay.ops_of[t] if k < x)
    out["SeqsBelowTheNext"] = each(s.v("pseq", k) < s.v("seqs", m.op_txn[k]) for k in range(lay.K))

    # -- the ledgers, the split and the dispatchers ------------------------------------------
    out["ReshapeOrder"] = each([
        Implies(reshape == 0, And([status(j, "ACTIVE") for j in initial] + [status(c, "ABSENT") for c in children])),
        Implies(reshape == 1, And([status(j, "ACTIVE") for j in initial] + [status(c, "CREATED") for c in children])),
        Implies(reshape == 2, And([status(j, "TERMINATED") for j in m.topo.parents]
                                  + [status(c, "CREATED") for c in children])),
        Implies(reshape == 3, And([status(j, "SEALED") for j in m.topo.parents]
                                  + [status(c, "ACTIVE") for c in children])),
    ] + [status(j, "ACTIVE") for j in initial if j not in m.topo.parents])
    out["InitialEntry"] = each(And(s.v("llen", j) >= 1, s.v("tag", j, 1) == -1, s.v("rd", j) >= 2) for j in initial)
    out["ChildrenStartEmpty"] = each(And(Implies(status(c, "ABSENT"), And(s.v("llen", c) == 0, s.v("rd", c) == 1,
                                                                              Not(s.v("up", c)))),
                                         Implies(Not(status(c, "ACTIVE")), s.v("llen", c) == 0))
                                     for c in children)
    out["FenceAtTermination"] = each(
        And([Implies(reshape >= 2, s.v("fence", j) == s.v("llen", j)) for j in m.topo.parents]
            + [Implies(reshape < 2, s.v("fence", j) == -1) for j in m.topo.parents]
            + [s.v("fence", j) == -1 for j in J if j not in m.topo.parents]) for _ in [0])
    out["ReadPositionInTheLedger"] = each(s.v("rd", j) <= s.v("llen", j) + 1 for j in J)
    out["EntriesAreLandedSends"] = each(
        Implies(And(i <= s.v("llen", j), s.v("tag", j, i) >= 0),
                Or([And(s.v("tag", j, i) == wtxn(k), stage(k, "done"), s.v("pseg", k) == j, s.v("ppos", k) == i)
                    for k in W if j in cands(k)] or [z3.BoolVal(False)]))
        for j in J for i in P)
    out["LandedSendsAreEntries"] = each(
        Implies(And(stage(k, "done"), s.v("pseg", k) == j),
                And(s.v("ppos", k) <= s.v("llen", j),
                    Or([And(s.v("ppos", k) == i, s.v("tag", j, i) == wtxn(k)) for i in P])))
        for k in W for j in cands(k))
    out["EveryEntryIsASend"] = z3.Sum([s.v("llen", j) for j in J]) == len(initial) + s.v("plain") + z3.Sum(
        [z3.If(stage(k, "done"), 1, 0) for k in W] or [z3.IntVal(0)])
    out["OneSendAPosition"] = each(Implies(And(stage(k, "done"), stage(x, "done")),
                                           Or(s.v("pseg", k) != s.v("pseg", x), s.v("ppos", k) != s.v("ppos", x)))
                                   for k in W for x in W if k < x)
    out["DeliveredOnceBehindTheReader"] = each(And(
        Implies(Or([s.v("dlv", j, i, d) for d in DST]), And(i < s.v("rd", j), s.v("tag", j, i) >= 0)),
        And([Not(And(s.v("dlv", j, i, a), s.v("dlv", j, i, b))) for a in DST for b in DST if a < b]))
        for j in J for i in P)

    # -- the participants --------------------------------------------------------------------
    out["AbsentIsDown"] = each(Implies(status(j, "ABSENT"), Not(s.v("up", j))) for j in J)
    out["RecoveryLoadsInOrder"] = each(And(
        Implies(s.v("ready", j), And(s.v("loaded", j) == 0, Not(s.v("wknown", j)))),
        Implies(Not(s.v("ready", j)), s.v("wknown", j) == (s.v("loaded", j) >= 1))) for j in J)
    if f.dispatch_waits:
        out["RecoveringBufferKnowsNothing"] = each(Implies(And(s.v("up", j), Not(s.v("ready", j))), And(
            [s.v("hold", j) == 0]
            + [Not(s.v(x, j, t)) for x in ("cache", "acache", "abrt") for t in T]
            + [Not(s.v("tpos", j, t, q)) for t in T for q in range(RECOVERED, lay.L + 1)]
            + [Not(s.v("packs", j, x)) for x in lay.packs])) for j in J)
    out["HoldOnlyWhileNeeded"] = each(Implies(s.v("ready", j), (s.v("hold", j) >= 0) == held(s, j)) for j in J)
    out["TrackedAreCached"] = each(Implies(tracked(s, j, t), s.v("cache", j, t)) for j in J for t in T)
    if f.durable_aborts:
        out["NoAbortedMarks"] = each(Not(s.v("abrt", j, t)) for j in J for t in T)
    if not f.memory_acks:
        out["NoAcksInMemory"] = each(Not(s.v("packs", j, x)) for j in J for x in lay.packs)
    out["TrackedPositionsAreEntries"] = each(Implies(s.v("tpos", j, t, q), And(q <= s.v("llen", j),
                                                                              s.v("tag", j, q) == t))
                                             for j in J for t in T for q in P)
    out["TrackedTxnsHaveOpsHere"] = each(Implies(tracked(s, j, t), write_op_on(s, t, j)) for j in J for t in T)
    out["InFlightHoldsAreSends"] = each(
        Implies(s.v("tpos", j, t, 0), Or([And(s.v("pseg", k) == j, stage(k, "op", "valid"))
                                           for k in W if wtxn(k) == t] or [z3.BoolVal(False)]))
        for j in J for t in T)
    out["CachedAcksHaveOps"] = each(Implies(s.v("acache", j, t), ack_op_on(s, t, j)) for j in J for t in T) \
        if m.split and f.validate_after_op else z3.BoolVal(True)
    out["EventsOnlyToTheLive"] = each(Implies(s.v("evf", j, x), s.v("up", j)) for j in J for x in lay.fields) \
        if lay.coalesced else z3.BoolVal(True)

    out["CollectedLeavesNoAdmittedOp"] = each(
        Implies(And(hst_is(s, m.op_txn[k], "GONE"), s.v("opx", k)), stage(k, "op", "rejected"))
        for k in range(lay.K))
    out["DecidedAndCachedHasNewsComing"] = each(
        Implies(And(Not(dec(t, "undecided")), s.v("up", j), s.v("cache", j, t)), Or(
            [s.v("evf", j, "events"), write_op_on(s, t, j)]
            + [And(s.v("pseg", k) == j, stage(k, "checked", "op", "valid")) for k in W if wtxn(k) == t]))
        for t in T for j in J) if lay.coalesced else z3.BoolVal(True)

    if not m.plain_keys:
        out["OnlyTheFirstEntryIsPlain"] = each(Implies(s.v("tag", j, i) == -1, z3.BoolVal(j in initial and i == 1))
                                               for j in J for i in P)
    out["DeliveredAtAHeaderState"] = each(Not(Or(s.v("dlv", j, i, "NONE"), s.v("dlv", j, i, "GONE")))
                                          for j in J for i in P)
    out["AbortedRecordsOfDecidedTxns"] = each(Implies(s.v("arec", j, t), Not(hst_is(s, t, "NONE", "OPEN")))
                                              for j in J for t in T)
    out["NoAbortedRecordHidesACommittedEntry"] = each(
        Implies(And(s.v("arec", j, t), Not(dec(t, "ABORTED"))), And([s.v("tag", j, i) != t for i in P]))
        for j in J for t in T)
    out["CollectedButCachedIsALateSend"] = each(
        Implies(And(hst_is(s, t, "GONE"), s.v("cache", j, t)),
                And(Or([And(s.v("pseg", k) == j, stage(k, "checked", "op")) for k in W if wtxn(k) == t]
                       or [z3.BoolVal(False)]),
                    And([s.v("tag", j, i) != t for i in P])))
        for j in J for t in T)
    out["NoAbortedRecordWhileACommittedSendMayLand"] = each(
        Implies(And(s.v("arec", j, t), Not(dec(t, "ABORTED"))),
                And([Not(And(s.v("pseg", k) == j, stage(k, "valid"))) for k in W if wtxn(k) == t]))
        for j in J for t in T)
    out["ReadEntriesWereResolved"] = each(
        Implies(And(s.v("tag", j, i) == t, i < s.v("rd", j)), And(
            Not(hst_is(s, t, "OPEN")),
            Implies(dec(t, "ABORTED"), s.v("arec", j, t)),
            Implies(dec(t, "COMMITTED"), s.v("dlv", j, i, "COMMITTED"))))
        for j in J for i in P for t in T)
    out["DeliveredEntriesAreCommitted"] = each(
        Implies(s.v("dlv", j, i, "COMMITTED"), Or([And(s.v("tag", j, i) == t, dec(t, "COMMITTED")) for t in T]))
        for j in J for i in P)
    out["AbortedEntriesStayPinnedUntilRecorded"] = each(
        Implies(And(s.v("up", j), s.v("tag", j, i) == t, dec(t, "ABORTED"), Not(s.v("arec", j, t))),
                max_read(s, j) < i)
        for j in J for i in P for t in T)
    acks_of = lambda x: [k for k in range(lay.W, lay.K)
                         if (lay.ack_of[k].txn, lay.ack_of[k].seg, lay.ack_of[k].pos, lay.ack_of[k].sub) == x]
    out["AckWrittenIsADoneAck"] = each(Or(s.v("ackw", x), s.v("ackwl", x)) == Or([stage(k, "done") for k in acks_of(x)])
                                       for x in lay.ackw)
    out["OpenTxnsKeepTheirOps"] = each(Implies(And(stage(k, "done"), hst_is(s, m.op_txn[k], "OPEN")), s.v("opx", k))
                                       for k in range(lay.K))
    def first_entry(j, t):
        v = z3.IntVal(0)
        for i in reversed(P):
            v = z3.If(s.v("tag", j, i) == t, i, v)
        return v

    out["OnlyTheFirstEntryIsTracked"] = each(Implies(s.v("tpos", j, t, q), first_entry(j, t) == q)
                                             for j in J for t in T for q in P)
    out["CachedTxnsPinTheirFirstEntry"] = each(
        Implies(And(s.v("up", j), s.v("ready", j), first_entry(j, t) > 0, s.v("cache", j, t)),
                Or(Or([And(first_entry(j, t) == q, s.v("tpos", j, t, q)) for q in P]),
                   And(s.v("tpos", j, t, RECOVERED), s.v("hold", j) < first_entry(j, t))))
        for j in J for t in T)
    out["UnresolvedEntriesAreCached"] = each(
        Implies(And(s.v("up", j), s.v("ready", j), first_entry(j, t) > 0,
                    Or(hst_is(s, t, "OPEN"), And(dec(t, "ABORTED"), Not(s.v("arec", j, t))))), s.v("cache", j, t))
        for j in J for t in T)
    out["InFlightSendsHaveALiveBroker"] = each(
        Implies(And(stage(k, "checked", "op", "valid"), s.v("pseg", k) == j), And(s.v("up", j), s.v("ready", j)))
        for k in W for j in cands(k))
    out["InFlightSendsOfOpenTxns"] = each(
        Implies(And(hst_is(s, wtxn(k), "OPEN"), s.v("pseg", k) == j), And(
            Implies(stage(k, "checked", "op", "valid"), s.v("cache", j, wtxn(k))),
            Implies(stage(k, "op", "valid"), And(s.v("opx", k), tracked(s, j, wtxn(k))))))
        for k in W for j in cands(k))
    out["HoldAndWatermarkWithinTheLedger"] = each(And(s.v("hold", j) <= s.v("llen", j), s.v("wmark", j) <= s.v("llen", j))
                                                  for j in J)
    out["RecoveredTxnsHoldTheirEntries"] = each(
        Implies(s.v("tpos", j, t, RECOVERED), And(s.v("hold", j) >= 0,
                                                  Implies(first_entry(j, t) > 0, s.v("hold", j) < first_entry(j, t))))
        for j in J for t in T)
    if f.watermark_before_op:
        out["WatermarkPersistedBeforeTheFirstOp"] = each(Implies(write_op_on(s, t, j), s.v("wmark", j) >= 0)
                                                         for j in J for t in T)
    out["AdmittedOpsAreCached"] = each(
        Implies(And(stage(k, "valid"), s.v("opx", k), s.v("pseg", k) == j),
                And(s.v("cache", j, wtxn(k)), tracked(s, j, wtxn(k))))
        for k in W for j in cands(k))
    out["DecidedOpsWillBeMaterialized"] = each(
        Implies(And(Not(dec(t, "undecided")), s.v("up", j), s.v("ready", j)), And(
            And([Implies(And(s.v("opx", k), s.v("pseg", k) == j, Not(stage(k, "op"))), s.v("cache", j, t))
                 for k in W if wtxn(k) == t]),
            Implies(ack_op_on(s, t, j), s.v("acache", j, t)),
            Implies(And(s.v("cache", j, t), write_op_on(s, t, j)), Or(s.v("evf", j, "events"), Or(
                [And(s.v("pseg", k) == j, stage(k, "op")) for k in W if wtxn(k) == t] or [z3.BoolVal(False)]))),
            Implies(s.v("acache", j, t), s.v("evf", j, "aevents"))))
        for j in J for t in T) if lay.coalesced and m.split else z3.BoolVal(True)
    out["MaterializedSendsAreForgotten"] = each(
        Implies(And(Not(dec(t, "undecided")), stage(k, "valid"), s.v("pseg", k) == j, Not(s.v("opx", k))),
                And(Not(s.v("cache", j, t)), Not(tracked(s, j, t))))
        for t in T for k in W if wtxn(k) == t for j in cands(k))
    out["CollectedTxnsPinNothing"] = each(
        Implies(hst_is(s, t, "GONE"), And([Not(s.v("tpos", j, t, q)) for q in range(RECOVERED, lay.L + 1) if q != 0]))
        for j in J for t in T)
    budget = m.constants["crashes"]
    out["RecoveredTrackingRestsOnOldOps"] = each(
        Implies(s.v("tpos", j, t, RECOVERED), And(s.v("crashes") < budget, Or(
            [And(s.v("opx", k), s.v("pseg", k) == j, stage(k, "rejected", "done")) for k in W if wtxn(k) == t]
            or [z3.BoolVal(False)])))
        for j in J for t in T)
    out["CachedForASend"] = each(
        Implies(s.v("cache", j, t), Or([And(s.v("pseg", k) == j, Or(stage(k, "checked", "op", "valid", "done"),
                                                                    And(stage(k, "rejected"), s.v("opx", k)))) for k in W
                                        if wtxn(k) == t and j in cands(k)] or [z3.BoolVal(False)]))
        for j in J for t in T)
    out["CachedKeepsTheAdmittedOps"] = each(
        Implies(And(s.v("cache", j, wtxn(k)), s.v("pseg", k) == j, stage(k, "valid", "done")), s.v("opx", k))
        for k in W for j in cands(k))
    out["MaterializedAbortsAreRecorded"] = each(
        Implies(And(dec(wtxn(k), "ABORTED"), stage(k, "valid", "done"), s.v("pseg", k) == j, Not(s.v("opx", k))),
                s.v("arec", j, wtxn(k)))
        for k in W for j in cands(k))
    if f.rekey_late:
        out["RecordsWaitForLandingAppends"] = each(
            Implies(And(s.v("arec", j, wtxn(k)), stage(k, "valid"), s.v("pseg", k) == j),
                    s.v("akey", j, wtxn(k)) == UNKEYED)
            for k in W for j in cands(k))
    out["CrashBudget"] = z3.Sum([z3.If(Or(And(Not(status(j, "ABSENT")), Not(s.v("up", j))),
                                         And(s.v("up", j), Not(s.v("ready", j)))), 1, 0) for j in J]) \
        + s.v("crashes") <= budget
    out["OpenTxnsWithOpsAreTracked"] = each(
        Implies(And(s.v("up", j), s.v("ready", j), hst_is(s, t, "OPEN"), write_op_on(s, t, j)),
                And(s.v("cache", j, t), tracked(s, j, t))) for j in J for t in T)
    out["AckOpsAreCached"] = each(
        Implies(And(s.v("up", j), s.v("ready", j), ack_op_on(s, t, j)), s.v("acache", j, t))
        for j in J for t in T) if m.split else z3.BoolVal(True)
    out["SendsToChildrenAfterTheSplit"] = each(
        Implies(And(Not(stage(k, "todo")), s.v("pseg", k) == c), reshape == 3) for k in W for c in children)

    # -- the coordinator ------------------------------------------------------------------------
    others = [x for x in lay.steps if x != "fin"]
    out["CoordinatorWork"] = each(And(
        [Not(s.v("tcp", t, x, r)) for x in others for r in REPLY] if not m.tc_steps else [z3.BoolVal(True)])
        for t in T)
    out["FinalizeAfterTheDecision"] = each(And(
        Implies(s.v("tcp", t, "fin", "COMMITTED"), And(dec(t, "COMMITTED"), client_is(s, t, "ending-commit"))),
        Implies(s.v("tcp", t, "fin", "ABORTED"), And(dec(t, "ABORTED"), client_is(s, t, "ending-abort"))),
        Implies(s.v("tcp", t, "fin", "none"), dec(t, "ABORTED"))) for t in T)
    return out


def _blank_part(s: St, j: int):
    lay = s.ctx
    terms = [s.v("hold", j) == -1, s.v("ready", j), s.v("loaded", j) == 0, Not(s.v("wknown", j))]
    for t in range(lay.n):
        terms += [Not(s.v(name, j, t)) for name in ("cache", "abrt", "acache")]
        terms += [Not(s.v("tpos", j, t, x)) for x in range(RECOVERED, lay.L + 1)]
    terms += [Not(s.v("packs", j, x)) for x in lay.packs]
    for fld in lay.fields:
        terms.append(Not(s.v("evf", j, fld)) if lay.coalesced else s.v("qlen", j, fld) == 0)
    return And(terms)
