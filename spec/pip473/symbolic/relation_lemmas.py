"""Lemmas for proving PIP-473 `fixed` by induction (`txncheck prove`): facts
of every reachable state that its twelve safety properties need in order to
be inductive, found from the counterexamples to induction at the standard
bounds (models/pip473/fixed-standard.toml names the 46 it needs; with
non-transactional sends, EveryEntryIsASend and InitialEntry too). Each is
stated in the protocol's terms in docs/pip473.md ("Proved by induction"),
with the CTI its absence gives.

A lemma that reads a flag states the fixed code's behaviour (the decision's
CAS writes finalizedAt; F1 admits acks from the store; F2 persists the
watermark before the first op); the others read only the model's constants.
"""

from __future__ import annotations

import z3

from ...symbolic import schema_terms
from .relation_parts import E, ack_op_on, all_of, hst_is, stage_is, tracked, write_op_on
from .relation_state import NO_TAG, St
from .relation_steps import client_is
from ..lemmas import DERIVED_ONLY
from ..protocol.state import RECOVERED

Implies, And, Or, Not = z3.Implies, z3.And, z3.Or, z3.Not
FALSE = z3.BoolVal(False)


def state(rel) -> St:
    """The state in the state schema's own terms, for writing lemmas."""
    return St(schema_terms(rel.schema), rel.lay)


def lemmas(rel) -> dict:
    s = state(rel)
    lay = rel.lay
    m = lay.m
    f = m.flags
    T, J, W, K = range(lay.n), range(lay.nseg), range(lay.W), range(lay.K)
    P = range(1, lay.L + 1)
    initial = [j for j in J if j < 2]
    children, parents = list(m.topo.children), list(m.topo.parents)
    reshape = s.v("reshape")
    dec = lambda t, d: s.v("decided", t) == E(s, "Dec", d)
    stage = lambda k, *x: stage_is(s, k, *x)
    status = lambda j, x: s.v("status", j) == E(s, "Status", x)
    wtxn = lambda k: m.writes[k].txn
    routes = lambda k: [j for j, (lo, hi) in enumerate(m.topo.ranges) if lo <= m.writes[k].key < hi]
    sends = lambda t, j, cond: Or([And(s.v("pseg", k) == j, cond(k)) for k in W if wtxn(k) == t] or [FALSE])

    def each(terms):
        return all_of(list(terms))

    def first_entry(j, t):
        """The position of t's first entry in segment j's ledger, 0 if none."""
        v = z3.IntVal(0)
        for i in reversed(P):
            v = z3.If(s.v("tag", j, i) == t, i, v)
        return v

    out = {}
    # -- a txn's life at the coordinator ----------------------------------------------------
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
    out["FinalizeAfterTheDecision"] = each(And(
        Implies(s.v("tcp", t, "fin", "COMMITTED"), And(dec(t, "COMMITTED"), client_is(s, t, "ending-commit"))),
        Implies(s.v("tcp", t, "fin", "ABORTED"), And(dec(t, "ABORTED"), client_is(s, t, "ending-abort"))),
        Implies(s.v("tcp", t, "fin", "none"), dec(t, "ABORTED"))) for t in T)

    # -- sends, acks and their op records ----------------------------------------------------
    out["BlankSend"] = each(Implies(stage(k, "todo"), And(s.v("pseg", k) == -1, s.v("ppos", k) == 0,
                                                          s.v("pseq", k) == -1, Not(s.v("opx", k)))) for k in K)
    out["SendsAfterNewTxn"] = each(Implies(Not(stage(k, "todo")), Not(hst_is(s, m.op_txn[k], "NONE"))) for k in K)
    out["SendsGoWhereTheyRoute"] = each(Implies(Not(stage(k, "todo")), Or([s.v("pseg", k) == j for j in routes(k)]))
                                        for k in W)
    out["AcksGoToTheirSegment"] = each(Implies(Not(stage(k, "todo")), And(
        s.v("pseg", k) == lay.ack_of[k].seg, s.v("ppos", k) == lay.ack_of[k].pos,
        stage(k, "done", "rejected"), (s.v("pseq", k) >= 1) == stage(k, "done"))) for k in range(lay.W, lay.K))
    if f.validate_after_op:
        out["SendStages"] = each(And(
            Implies(stage(k, "checked"), And(s.v("ppos", k) == 0, s.v("pseq", k) == -1)),
            Implies(stage(k, "op", "valid"), And(s.v("ppos", k) == 0, s.v("pseq", k) >= 1)),
            Implies(stage(k, "done"), And(s.v("ppos", k) >= 1, s.v("pseq", k) >= 1)),
            Implies(stage(k, "rejected"), s.v("ppos", k) == 0),
            # bound unloads: a closed instance's send, as its live stage (its append fails: no position)
            Implies(stage(k, "closed-checked"), And(s.v("ppos", k) == 0, s.v("pseq", k) == -1)),
            Implies(stage(k, "closed-op", "closed-valid"), And(s.v("ppos", k) == 0, s.v("pseq", k) >= 1)),
            Not(stage(k, "appended"))) for k in W)
    if m.constants["unloads"] and f.drain_closed:
        # F10: a closed instance's send runs only while its segment has no owner (the next one loads after it
        # ends), an unload was spent for it, and before its put it has no op record
        closed = lambda k: stage(k, "closed-checked", "closed-op", "closed-valid")
        out["ClosedSendsAtAnUnloadedSegment"] = each(Implies(closed(k), And(
            Or([And(s.v("pseg", k) == j, Not(s.v("up", j))) for j in J]),
            s.v("unloads") < m.constants["unloads"],
            Implies(stage(k, "closed-checked"), Not(s.v("opx", k))))) for k in W)
    out["OpOfAPutSend"] = each(Implies(s.v("opx", k), And(s.v("pseq", k) >= 1, Not(stage(k, "checked")))) for k in K)
    out["SeqsCountThePuts"] = each(
        s.v("seqs", t) == 1 + z3.Sum([z3.If(s.v("pseq", k) >= 1, 1, 0) for k in lay.ops_of[t]] or [z3.IntVal(0)])
        for t in T)
    out["SeqsAreDistinct"] = each(Implies(And(s.v("pseq", k) >= 1, s.v("pseq", x) >= 1), s.v("pseq", k) != s.v("pseq", x))
                                  for t in T for k in lay.ops_of[t] for x in lay.ops_of[t] if k < x)
    out["SeqsBelowTheNext"] = each(s.v("pseq", k) < s.v("seqs", m.op_txn[k]) for k in K)
    acks_at = lambda x: [k for k in range(lay.W, lay.K)
                         if (lay.ack_of[k].txn, lay.ack_of[k].seg, lay.ack_of[k].pos, lay.ack_of[k].sub) == x]
    out["AckWrittenIsADoneAck"] = each(Or(s.v("ackw", x), s.v("ackwl", x)) == Or([stage(k, "done") for k in acks_at(x)])
                                       for x in lay.ackw)
    out["OpenTxnsKeepTheirOps"] = each(Implies(And(stage(k, "done"), hst_is(s, m.op_txn[k], "OPEN")), s.v("opx", k))
                                       for k in K)
    out["CollectedLeavesNoAdmittedOp"] = each(
        Implies(And(hst_is(s, m.op_txn[k], "GONE"), s.v("opx", k)), stage(k, "op", "rejected", "closed-op"))
        for k in K)

    # -- the ledgers, the merge and the dispatcher ------------------------------------------------
    out["LedgerIsAPrefix"] = each(And((s.v("tag", j, i) != NO_TAG) == (i <= s.v("llen", j)),
                                      Implies(i <= s.v("llen", j), s.v("tag", j, i) >= -1)) for j in J for i in P)
    out["InitialEntry"] = each(And(s.v("llen", j) >= 1, s.v("tag", j, 1) == -1, s.v("rd", j) >= 2) for j in initial)
    if not m.plain_keys:
        out["OnlyTheFirstEntryIsPlain"] = each(Implies(s.v("tag", j, i) == -1, z3.BoolVal(j in initial and i == 1))
                                               for j in J for i in P)
    out["EveryEntryIsASend"] = z3.Sum([s.v("llen", j) for j in J]) == len(initial) + s.v("plain") + z3.Sum(
        [z3.If(stage(k, "done"), 1, 0) for k in W] or [z3.IntVal(0)])
    out["EntriesAreLandedSends"] = each(
        Implies(And(i <= s.v("llen", j), s.v("tag", j, i) >= 0),
                Or([And(s.v("tag", j, i) == wtxn(k), stage(k, "done"), s.v("pseg", k) == j, s.v("ppos", k) == i)
                    for k in W if j in routes(k)] or [FALSE]))
        for j in J for i in P)
    out["NothingTrimmed"] = each(s.v("retained", j) == 1 for j in J) if not m.trim else z3.BoolVal(True)
    out["ReshapeOrder"] = each([
        Implies(reshape == 0, And([status(j, "ACTIVE") for j in initial] + [status(c, "ABSENT") for c in children])),
        Implies(reshape == 1, And([status(j, "ACTIVE") for j in initial] + [status(c, "CREATED") for c in children])),
        Implies(reshape == 2, And([status(j, "TERMINATED") for j in parents] + [status(c, "CREATED") for c in children])),
        Implies(reshape == 3, And([status(j, "SEALED") for j in parents] + [status(c, "ACTIVE") for c in children])),
    ] + [status(j, "ACTIVE") for j in initial if j not in parents])
    out["FenceAtTermination"] = each(
        [Implies(reshape >= 2, s.v("fence", j) == s.v("llen", j)) for j in parents]
        + [Implies(reshape < 2, s.v("fence", j) == -1) for j in parents]
        + [s.v("fence", j) == -1 for j in J if j not in parents])
    out["SendsToChildrenAfterTheSplit"] = each(
        Implies(And(Not(stage(k, "todo")), s.v("pseg", k) == c), reshape == 3) for k in W for c in children)
    out["DeliveredAtAHeaderState"] = each(Not(Or(s.v("dlv", j, i, "NONE"), s.v("dlv", j, i, "GONE")))
                                          for j in J for i in P)
    out["DeliveredEntriesAreCommitted"] = each(
        Implies(s.v("dlv", j, i, "COMMITTED"), Or([And(s.v("tag", j, i) == t, dec(t, "COMMITTED")) for t in T]))
        for j in J for i in P)

    # -- the transaction buffer and the pending-ack store ----------------------------------------
    out["InFlightSendsHaveALiveBroker"] = each(
        Implies(And(stage(k, "checked", "op", "valid"), s.v("pseg", k) == j), And(s.v("up", j), s.v("ready", j)))
        for k in W for j in routes(k))
    out["InFlightSendsOfOpenTxns"] = each(
        Implies(And(hst_is(s, wtxn(k), "OPEN"), s.v("pseg", k) == j), And(
            Implies(stage(k, "checked", "op", "valid"), s.v("cache", j, wtxn(k))),
            Implies(stage(k, "op", "valid"), And(s.v("opx", k), tracked(s, j, wtxn(k))))))
        for k in W for j in routes(k))
    out["CachedForASend"] = each(
        Implies(s.v("cache", j, t), Or([And(s.v("pseg", k) == j, Or(stage(k, "checked", "op", "valid", "done"),
                                                                    And(stage(k, "rejected"), s.v("opx", k))))
                                        for k in W if wtxn(k) == t and j in routes(k)] or [FALSE]))
        for j in J for t in T)
    out["CachedKeepsTheAdmittedOps"] = each(
        Implies(And(s.v("cache", j, wtxn(k)), s.v("pseg", k) == j, stage(k, "valid", "done")), s.v("opx", k))
        for k in W for j in routes(k))
    out["TrackedAreCached"] = each(Implies(tracked(s, j, t), s.v("cache", j, t)) for j in J for t in T)
    out["OpenTxnsWithOpsAreTracked"] = each(
        Implies(And(s.v("up", j), s.v("ready", j), hst_is(s, t, "OPEN"), write_op_on(s, t, j)),
                And(s.v("cache", j, t), tracked(s, j, t))) for j in J for t in T)
    out["OnlyTheFirstEntryIsTracked"] = each(Implies(s.v("tpos", j, t, q), first_entry(j, t) == q)
                                             for j in J for t in T for q in P)
    out["CachedTxnsPinTheirFirstEntry"] = each(
        Implies(And(s.v("up", j), s.v("ready", j), first_entry(j, t) > 0, s.v("cache", j, t)),
                Or(Or([And(first_entry(j, t) == q, s.v("tpos", j, t, q)) for q in P]),
                   And(s.v("tpos", j, t, RECOVERED), s.v("hold", j) < first_entry(j, t))))
        for j in J for t in T)
    out["HoldAndWatermarkWithinTheLedger"] = each(
        And(s.v("hold", j) <= s.v("llen", j), s.v("wmark", j) <= s.v("llen", j)) for j in J)
    if f.watermark_before_op:
        # (a closed instance's send puts its op without F2's watermark: its append will fail, and F10 keeps
        # the next owner's recovery from reading the segment until the send has ended and deleted its op)
        live_op = lambda t, j: Or([And(s.v("opx", k), s.v("pseg", k) == j,
                                       Not(stage(k, "closed-checked", "closed-op", "closed-valid")))
                                   for k in lay.ops_of[t] if k < lay.W] or [FALSE])
        out["WatermarkPersistedBeforeTheFirstOp"] = each(Implies(live_op(t, j), s.v("wmark", j) >= 0)
                                                         for j in J for t in T)
    if m.split:
        out["AckOpsAreCached"] = each(Implies(And(s.v("up", j), s.v("aready", j), ack_op_on(s, t, j)),
                                              s.v("acache", j, t)) for j in J for t in T)
        if f.validate_after_op:
            out["CachedAcksHaveOps"] = each(Implies(s.v("acache", j, t), ack_op_on(s, t, j)) for j in J for t in T)

    # -- decisions reach the participants -------------------------------------------------------
    if lay.coalesced and m.split:
        out["DecidedOpsWillBeMaterialized"] = each(
            Implies(And(Not(dec(t, "undecided")), s.v("up", j)), And(
                Implies(s.v("ready", j), And(
                    And([Implies(And(s.v("opx", k), s.v("pseg", k) == j, Not(stage(k, "op"))), s.v("cache", j, t))
                         for k in W if wtxn(k) == t]),
                    Implies(And(s.v("cache", j, t), write_op_on(s, t, j)),
                            Or(s.v("evf", j, "events"), sends(t, j, lambda k: stage(k, "op")))))),
                Implies(s.v("aready", j), And(    # the pending-ack store, once its own replay is done
                    Implies(ack_op_on(s, t, j), s.v("acache", j, t)),
                    Implies(s.v("acache", j, t), s.v("evf", j, "aevents"))))))
            for j in J for t in T)
    out["MaterializedAbortsAreRecorded"] = each(
        Implies(And(dec(wtxn(k), "ABORTED"), stage(k, "valid", "done"), s.v("pseg", k) == j, Not(s.v("opx", k))),
                s.v("arec", j, wtxn(k)))
        for k in W for j in routes(k))
    out["AbortedRecordsOfDecidedTxns"] = each(Implies(s.v("arec", j, t), Not(hst_is(s, t, "NONE", "OPEN")))
                                              for j in J for t in T)
    out["NoAbortedRecordHidesACommittedEntry"] = each(
        Implies(And(s.v("arec", j, t), Not(dec(t, "ABORTED"))), And([s.v("tag", j, i) != t for i in P]))
        for j in J for t in T)
    out["NoAbortedRecordWhileACommittedSendMayLand"] = each(
        Implies(And(s.v("arec", j, t), Not(dec(t, "ABORTED"))), Not(sends(t, j, lambda k: stage(k, "valid"))))
        for j in J for t in T)

    # -- crash and recovery --------------------------------------------------------------------
    budget = m.constants["crashes"] + m.constants["unloads"]   # an unload takes a broker down as a crash does
    out["CrashBudget"] = z3.Sum([z3.If(Or(And(Not(status(j, "ABSENT")), Not(s.v("up", j))),
                                         And(s.v("up", j), Not(s.v("ready", j)))), 1, 0) for j in J]) \
        + s.v("crashes") + (s.v("unloads") if m.constants["unloads"] else 0) <= budget
    out["RecoveringBufferKnowsNothing"] = each(Implies(And(s.v("up", j), Not(s.v("ready", j))), And(
        [Not(s.v(x, j, t)) for x in ("cache", "abrt") for t in T]
        + [Not(s.v("tpos", j, t, q)) for t in T for q in range(RECOVERED, lay.L + 1)])) for j in J)
    out["RecoveredTxnsHoldTheirEntries"] = each(
        Implies(s.v("tpos", j, t, RECOVERED), And(s.v("hold", j) >= 0,
                                                  Implies(first_entry(j, t) > 0, s.v("hold", j) < first_entry(j, t))))
        for j in J for t in T)
    out["RecoveredTrackingRestsOnOldOps"] = each(
        Implies(s.v("tpos", j, t, RECOVERED), And(s.v("crashes") < budget,
                                                  sends(t, j, lambda k: And(s.v("opx", k), stage(k, "rejected", "done")))))
        for j in J for t in T)

    # -- the derived relation's own (lemmas.py, DERIVED_ONLY) ------------------------------------
    # True here: these cells hold only the plan's op records (EveryOpIsAPlanPut), and the proof
    # holds without keeping an unused segment's broker as created (UnusedSegmentsKeepAnIdleBroker);
    # named so that one [prove] list serves both relations until this one goes (issue 52)
    for name in DERIVED_ONLY:
        out[name] = z3.BoolVal(True)
    return out
