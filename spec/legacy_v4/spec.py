"""legacy_v4: Pulsar's v4 transactions, with commit/abort markers in the data stream.

Source: PIP-473 (seeds/001), section "Background":
  * "Pulsar's existing transaction model": a log-backed coordinator (TC) with
    the states OPEN, COMMITTING, COMMITTED, ABORTING, ABORTED, TIME_OUT; on
    end it sends END_TXN_ON_PARTITION / END_TXN_ON_SUBSCRIPTION to every
    participant; each topic's TransactionBuffer (TB) writes a commit or abort
    *marker* as a regular entry of the topic's own ledger; the dispatcher reads
    up to maxReadPosition and skips data of aborted txns.
  * "Scalable topics": a split or merge seals a segment, whose ledger then
    accepts no writes.
  * "How the two interact", item 1: the marker write to a sealed segment is
    rejected, so end-txn stalls. This spec states that as the safety property
    `EndTxnNotStranded` and gives the liveness helper the predicates
    `EndRequested_<t>` / `EndCompleted_<t>`.

Field failures (shared/protocol-notes.md, "Pulsar v4 transaction failures
seen in the field") are variants, each changing one action's body:
  * `timeout-race`: the timeout tracker decides on a status read, then writes
    TIME_OUT without re-checking it, so TIME_OUT can land after COMMITTING.
  * `retry-strict`: after a TC restart the client retries its commit and the
    TC answers any end on a non-OPEN txn with an error ("expected COMMITTING
    but COMMITTED"), or with TransactionNotFound once it dropped the txn.
  * `default`: the fixed behaviour: the timeout's status write is a CAS from
    OPEN, and an end repeated in the txn's own direction is idempotent, also
    after the txn finished.
  * `current`: the coordinator and client as Pulsar ships them since
    apache/pulsar#13828 (merged 2022-01, release 2.9.3; in v2.10.0 and every
    later release). TransactionMetadataStoreService was read at v2.10.1 (in
    the copy Hongten/pulsar-2.10.1-code-study@c597d514dccc) and in a 2026
    copy (lhotari/pulsar@0ae21e220abf): the same endTransaction in both. The
    index's apache/pulsar copy (@0721fddbe79d, 2021) predates #13828; its
    unchanged parts are what the permalinks cite.
      - the timeout tracker aborts an OPEN txn itself
        (`endTransactionForTimeout`: OPEN -> ABORTING, a CAS from OPEN); no
        code path writes TIME_OUT;
      - an end retried in the txn's own direction while it is COMMITTING or
        ABORTING is accepted and re-driven (`fakeAsyncCheckTxnStatus`); once
        the txn is COMMITTED or ABORTED a retry gets InvalidTxnStatus, and
        once the TC dropped it (after it finished, or across a restart)
        TransactionNotFound. The TC drops a finished txn from `txnMetaMap`
        at once; the model lets that removal come any time after the final
        status (RemoveFinishedTxn);
      - the TC's retry timer: a fan-out attempt that fails with a retryable
        error re-drives the same request from `transactionOpRetryTimer`
        with the client's future, so the client is answered only when the
        end completes or fails for good (EndTxnRetryLater, RetryTimerFires);
      - the client's operation timeout (30 s by default; bound `op_timeout`):
        a client whose request gets no answer in time is told "timeout",
        neither success nor failure; the application then retries the end
        (ClientOpTimeout, then ClientRetryEndTxn), as apache/pulsar#19747
        describes.
    Known upstream: apache/pulsar#19747 (the client is told a committed txn
    failed); PIP-254, apache/pulsar#19744, proposes idempotent commit and
    abort, which `pip-254` models on this coordinator.
  * `retry-reply`: `current` before apache/pulsar#13828 (apache/pulsar@0721fddbe79d,
    releases up to 2.9.2): a fan-out attempt that fails with a retryable
    error also answers the client's request with that error at once, before
    the retry timer re-drives the end; the application then retries. It
    differs from `current` only there, and only there does it matter:
    without the client's operation timeout it fails CommitReplyTruthful
    and `current` does not (tests/test_legacy_v4.py).
  * `pip-254`: `current` with PIP-254's fix (apache/pulsar#19744, Solution 1):
    the TC keeps a finished txn's metadata (no RemoveFinishedTxn within the
    model's bounds) and answers an end repeated in the txn's own direction
    with success, also after it finished.
Properties, and why each can fail (tests/test_legacy_v4_truth.py holds a
truth table for each):
  * `EndTxnNotStranded` restates the document's own premise (a sealed
    segment rejects the marker): kept, on purpose, as the check that the
    model reaches the stall PIP-473 describes; its models are labelled as
    holding for the document's text.
  * `Atomicity`, `CommittingIsFinal` and `CommitReplyTruthful` hold or fail
    by each variant's definition of the timeout and retry steps: the
    variants are the mechanisms under test (timeout-race breaks the first
    two, retry-strict, retry-reply and current the third), so the properties stay as the
    observable symptoms of those field failures.
  * `ReadCommitted` fails with timeout-race (a consumer reads data the TC
    then aborts).

No pruning: every enabling condition is a rule of the protocol or a bound
(a txn writes at most once per segment, one split/merge budget).

Modelling choices (bounded, so every model is exhaustive):
  * a txn writes at most once to a segment and acks at most once per
    segment's subscription; registering the partition with the TC and the
    append are one step;
  * the pending-ack log is a sibling persistent topic, which a split does not
    seal, so END_TXN_ON_SUBSCRIPTION always succeeds;
  * a rejected marker write changes nothing (`MarkerRejected` is a
    self-loop): the TC keeps the txn in COMMITTING and retries.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from ..api import Bound, Spec
from ..api import replace_at as _put
from ..schema import Str

# Segment metadata states (PIP-468 split order, protocol-notes "Scalable topics").
UNBORN, ACTIVE, SEALED = "UNBORN", "ACTIVE", "SEALED"
# Coordinator statuses (PIP-473 Background); REMOVED: the TC dropped a finished txn.
OPEN, COMMITTING, ABORTING = "OPEN", "COMMITTING", "ABORTING"
COMMITTED, ABORTED, TIME_OUT, REMOVED = "COMMITTED", "ABORTED", "TIME_OUT", "REMOVED"
ENDING = (COMMITTING, ABORTING)
# Variants with the shipped coordinator's retry timer and timeout, and the client's operation timeout.
SHIPPED = ("current", "pip-254", "retry-reply")
# Variants whose TC answers InvalidTxnStatus once the txn finished, and drops a finished txn.
FORGETS = ("current", "retry-reply")
TERMINAL = (COMMITTED, ABORTED)
# Ledger entries: (kind, txn) with kind D (data), C (commit marker), A (abort marker).
DATA, COMMIT_MARKER, ABORT_MARKER = "D", "C", "A"


class V4State(NamedTuple):
    seg: tuple          # per segment: UNBORN | ACTIVE | SEALED
    ledger: tuple       # per segment: tuple of (kind, txn) entries
    read: tuple         # per segment: the dispatcher's read position
    status: tuple       # per txn: status in the TC's transaction log
    parts: tuple        # per txn: frozenset of partitions (segments) it wrote to
    subs: tuple         # per txn: frozenset of segments whose subscription holds its acks
    acked: tuple        # per txn: frozenset of ("p"|"s", seg) that answered END_TXN with OK
    asked: tuple        # per txn: what the client asked: "" | "commit" | "abort"
    result: tuple       # per txn: the answer the client got: "" | "ok" | "failed", or (SHIPPED) "timeout" | "error"
    live: tuple         # per txn: the TC holds the client's end request (will reply)
    redrive: frozenset  # current: txns whose end the TC's retry timer will re-drive
    timer: tuple        # per txn: timeout tracker: "idle" | "fired" | "done"
    outcome: tuple      # ghost per txn: "" | COMMITTED | ABORTED (first terminal status logged)
    committing: frozenset  # ghost: txns whose status was ever COMMITTING
    delivered: frozenset   # ghost: (txn, seg) whose data a consumer received
    splits: int         # splits left
    merges: int         # merges left
    restarts: int       # TC restarts left


class LegacyV4(Spec):
    name = "legacy_v4"
    variants = ("default", "timeout-race", "retry-strict", "current", "retry-reply", "pip-254")
    bounds = {
        "txns": Bound(1, "transactions", lo=1, hi=3),
        "segments": Bound(2, "segments ACTIVE at the start", lo=1, hi=3),
        "splits": Bound(1, "splits (each seals one segment and activates two children)", lo=0, hi=2),
        "merges": Bound(0, "merges (each seals two segments and activates one child)", lo=0, hi=1),
        "acks": Bound(False, "txns may also ack on each segment's subscription"),
        "timeout": Bound(False, "the TC's timeout tracker may time an OPEN txn out"),
        "restarts": Bound(0, "TC restarts (in-memory state and client connections lost)", lo=0, hi=2),
        "client_abort": Bound(False, "the client may ask for abort as well as commit"),
        "op_timeout": Bound(True, "the client's operation timeout may expire (current, retry-reply, pip-254)"),
    }
    symmetric_sorts = ("Txn",)

    # -- schema and properties ------------------------------------------------
    def setup(self) -> None:
        c = self.constants
        self.n_txn = c["txns"]
        self.n_seg = c["segments"] + 2 * c["splits"] + c["merges"]
        self.txn_names = tuple(f"t{i}" for i in range(1, self.n_txn + 1))
        self.seg_names = tuple(f"s{i}" for i in range(1, self.n_seg + 1))
        sc = self.schema
        sc.enum("Txn", self.txn_names)
        sc.enum("Seg", self.seg_names)
        seg_state = sc.fun("segState", "Seg", Str())
        status = sc.fun("status", "Txn", Str())
        outcome = sc.fun("outcome", "Txn", Str())
        asked = sc.fun("asked", "Txn", Str())
        result = sc.fun("result", "Txn", Str())
        partition = sc.set("partition", ("Txn", "Seg"))
        subscription = sc.set("subscription", ("Txn", "Seg"))
        part_acked = sc.set("partitionAcked", ("Txn", "Seg"))
        commit_marker = sc.set("commitMarker", ("Txn", "Seg"))
        abort_marker = sc.set("abortMarker", ("Txn", "Seg"))
        delivered = sc.set("delivered", ("Txn", "Seg"))
        ever_committing = sc.set("everCommitting", "Txn")
        S = z3.StringVal

        def is_(term, *values):
            return z3.Or([term == S(v) for v in values])

        # Background, item 1: once a participant that still owes its marker is
        # sealed, no step can ever finish the end-txn (sealing is permanent and
        # the marker append is the only way for that participant to answer).
        # So "no txn stays COMMITTING after every enabled step was taken" is
        # violated exactly when this state is reached.
        self.invariants["EndTxnNotStranded"] = sc.forall(("Txn", "Seg"), lambda t, s: z3.Not(z3.And(
            is_(status(t), *ENDING), partition(t, s), z3.Not(part_acked(t, s)), seg_state(s) == S(SEALED))))
        # A txn's markers agree: never a commit marker on one segment and an abort marker on another.
        self.invariants["Atomicity"] = sc.forall("Txn", lambda t: z3.Not(z3.And(
            sc.exists("Seg", lambda s: commit_marker(t, s)), sc.exists("Seg", lambda s: abort_marker(t, s)))))
        # Read committed: a consumer only receives data of a txn decided commit.
        self.invariants["ReadCommitted"] = sc.forall(("Txn", "Seg"), lambda t, s: z3.Implies(
            delivered(t, s), z3.Or(is_(status(t), COMMITTING, COMMITTED), outcome(t) == S(COMMITTED))))
        # Field failure: "a timeout set TIME_OUT after a commit had already set COMMITTING".
        self.invariants["CommittingIsFinal"] = sc.forall("Txn", lambda t: z3.Implies(
            ever_committing(t), is_(status(t), COMMITTING, COMMITTED, REMOVED)))
        # Field failure: a retried commit answered with an error although the txn committed.
        self.invariants["CommitReplyTruthful"] = sc.forall("Txn", lambda t: z3.Implies(
            asked(t) == S("commit"),
            z3.And(z3.Implies(result(t) == S("failed"), outcome(t) != S(COMMITTED)),
                   z3.Implies(result(t) == S("ok"), outcome(t) == S(COMMITTED)))))

        self.witnesses["Committed"] = sc.exists("Txn", lambda t: outcome(t) == S(COMMITTED))
        self.witnesses["Aborted"] = sc.exists("Txn", lambda t: outcome(t) == S(ABORTED))
        self.witnesses["SealedParticipant"] = sc.exists(("Txn", "Seg"), lambda t, s: z3.And(
            partition(t, s), seg_state(s) == S(SEALED)))
        self.witnesses["CommittedAfterSeal"] = sc.exists(("Txn", "Seg"), lambda t, s: z3.And(
            outcome(t) == S(COMMITTED), partition(t, s), seg_state(s) == S(SEALED)))
        self.witnesses["CommittedDelivered"] = sc.exists(("Txn", "Seg"), lambda t, s: z3.And(
            delivered(t, s), outcome(t) == S(COMMITTED)))
        self.witnesses["AckCommitted"] = sc.exists(("Txn", "Seg"), lambda t, s: z3.And(
            subscription(t, s), outcome(t) == S(COMMITTED)))
        self.witnesses["TimedOut"] = sc.exists("Txn", lambda t: status(t) == S(TIME_OUT))
        self.witnesses["ClientToldCommitted"] = sc.exists("Txn", lambda t: z3.And(
            asked(t) == S("commit"), result(t) == S("ok")))
        self.witnesses["ClientToldFailed"] = sc.exists("Txn", lambda t: result(t) == S("failed"))
        for t in sc.consts("Txn"):
            # For temporal properties: "end-txn, once requested, eventually completes".
            self.predicates[f"EndRequested_{t}"] = z3.Or(status(t) != S(OPEN), asked(t) != S(""))
            self.predicates[f"EndCompleted_{t}"] = outcome(t) != S("")
        self._build_actions()

    def _build_actions(self) -> None:
        T, G = range(self.n_txn), range(self.n_seg)
        tn, gn = self.txn_names, self.seg_names
        per_ts = lambda name: [[(name, (("txn", tn[t]), ("seg", gn[s]))) for s in G] for t in T]
        per_t = lambda name: [(name, (("txn", tn[t]),)) for t in T]
        self.a_publish = per_ts("Publish")
        self.a_ack = per_ts("AckInTxn")
        self.a_marker = per_ts("EndTxnOnPartition")
        self.a_rejected = per_ts("MarkerRejected")
        self.a_end_sub = per_ts("EndTxnOnSubscription")
        self.a_end = {d: [("EndTxn", (("txn", tn[t]), ("decision", d))) for t in T] for d in ("commit", "abort")}
        self.a_retry = per_t("ClientRetryEndTxn")
        self.a_op_timeout = per_t("ClientOpTimeout")
        self.a_retry_later = per_t("EndTxnRetryLater")
        self.a_timer_fires = per_t("RetryTimerFires")
        self.a_fire = per_t("TimeoutFires")
        self.a_timeout = per_t("TimeoutAbort")
        self.a_abort_timed_out = per_t("AbortTimedOut")
        self.a_complete = per_t("EndTxnComplete")
        self.a_remove = per_t("RemoveFinishedTxn")
        self.a_dispatch = [("Dispatch", (("seg", gn[s]),)) for s in G]
        self.a_split = [("Split", (("seg", gn[s]),)) for s in G]
        self.a_merge = {(a, b): ("Merge", (("seg", gn[a]), ("seg2", gn[b]))) for a in G for b in G if a < b}
        self.a_restart = ("TcRestart", ())

    # -- initial state --------------------------------------------------------
    def init_states(self):
        c = self.constants
        n, g = self.n_txn, self.n_seg
        active = c["segments"]
        yield V4State(
            seg=tuple(ACTIVE if i < active else UNBORN for i in range(g)),
            ledger=((),) * g,
            read=(0,) * g,
            status=(OPEN,) * n,
            parts=(frozenset(),) * n,
            subs=(frozenset(),) * n,
            acked=(frozenset(),) * n,
            asked=("",) * n,
            result=("",) * n,
            live=(False,) * n,
            redrive=frozenset(),
            timer=("idle",) * n,
            outcome=("",) * n,
            committing=frozenset(),
            delivered=frozenset(),
            splits=c["splits"],
            merges=c["merges"],
            restarts=c["restarts"],
        )

    # -- the coordinator's answer to an end request ---------------------------
    def _tc_end(self, s: V4State, t: int, d: str) -> V4State:
        """The TC handles endTxn(t, d), first try or retry (Background: TC state machine)."""
        st = s.status[t]
        if st == OPEN:
            new = COMMITTING if d == "commit" else ABORTING
            return s._replace(
                status=_put(s.status, t, new), acked=_put(s.acked, t, frozenset()),
                asked=_put(s.asked, t, d), live=_put(s.live, t, True),
                committing=s.committing | {t} if new == COMMITTING else s.committing)
        s = s._replace(asked=_put(s.asked, t, d))
        same = (st in (COMMITTING, COMMITTED)) if d == "commit" else (st in (ABORTING, ABORTED, TIME_OUT))
        if self.variant in FORGETS and st in TERMINAL:
            same = False  # InvalidTxnStatus once the txn finished
        if same and self.variant != "retry-strict":
            # Fixed: an end repeated in the txn's direction is the same request.
            if st in TERMINAL:
                return s._replace(result=_put(s.result, t, "ok"), live=_put(s.live, t, False))
            return s._replace(live=_put(s.live, t, True))
        # InvalidTxnStatus (other direction, or retry-strict), or TransactionNotFound (REMOVED).
        return s._replace(result=_put(s.result, t, "failed"), live=_put(s.live, t, False))

    # -- next-state relation --------------------------------------------------
    def next(self, s: V4State):
        c = self.constants
        variant = self.variant
        for t in range(self.n_txn):
            st = s.status[t]
            client_open = s.asked[t] == ""
            if st == OPEN and client_open:
                for g in range(self.n_seg):
                    # Background: a transactional send is a regular append to
                    # the segment's ledger (after addPartitionToTxn); a sealed
                    # (terminated) segment rejects it, so the producer moves on.
                    if s.seg[g] == ACTIVE and g not in s.parts[t]:
                        yield self.a_publish[t][g], s._replace(
                            parts=_put(s.parts, t, s.parts[t] | {g}),
                            ledger=_put(s.ledger, g, s.ledger[g] + ((DATA, t),)))
                    # Background: a transactional ack goes to the pending-ack
                    # store of (segment, subscription); consumers keep reading
                    # sealed segments until drained.
                    if c["acks"] and s.seg[g] != UNBORN and g not in s.subs[t]:
                        yield self.a_ack[t][g], s._replace(subs=_put(s.subs, t, s.subs[t] | {g}))
            if client_open and (s.parts[t] or s.subs[t]):
                # The client ends the txn (Background: the TC's OPEN -> COMMITTING/ABORTING).
                yield self.a_end["commit"][t], self._tc_end(s, t, "commit")
                if c["client_abort"]:
                    yield self.a_end["abort"][t], self._tc_end(s, t, "abort")
            elif variant in SHIPPED and s.asked[t]:
                if s.result[t] == "" and c["op_timeout"]:
                    # The client's operation timeout (30 s by default) expires: it
                    # stops waiting and reports a timeout; a later reply is dropped.
                    yield self.a_op_timeout[t], s._replace(result=_put(s.result, t, "timeout"),
                                                           live=_put(s.live, t, False))
                elif s.result[t] in ("timeout", "error"):
                    # The application retries the same end (apache/pulsar#19747).
                    yield self.a_retry[t], self._tc_end(s._replace(result=_put(s.result, t, "")), t, s.asked[t])
            elif s.asked[t] and s.result[t] == "" and not s.live[t]:
                # The client's connection to the TC was lost: it retries the same end.
                yield self.a_retry[t], self._tc_end(s, t, s.asked[t])
            # The timeout tracker (Background: TIME_OUT). It decides on a
            # status read and writes later: the two steps a race can separate.
            if c["timeout"]:
                if s.timer[t] == "idle" and st == OPEN:
                    yield self.a_fire[t], s._replace(timer=_put(s.timer, t, "fired"))
                elif s.timer[t] == "fired":
                    racy = variant == "timeout-race" and st in ENDING
                    if st == OPEN and variant in SHIPPED:
                        # endTransactionForTimeout: the TC aborts the txn itself, OPEN -> ABORTING.
                        yield self.a_timeout[t], s._replace(
                            status=_put(s.status, t, ABORTING), acked=_put(s.acked, t, frozenset()),
                            timer=_put(s.timer, t, "done"))
                    elif st == OPEN or racy:
                        yield self.a_timeout[t], s._replace(
                            status=_put(s.status, t, TIME_OUT), acked=_put(s.acked, t, frozenset()),
                            timer=_put(s.timer, t, "done"))
                    else:  # the status CAS from OPEN fails: nothing to time out
                        yield self.a_timeout[t], s._replace(timer=_put(s.timer, t, "done"))
            if st == TIME_OUT:
                # A timed-out txn is aborted: TIME_OUT -> ABORTING, fan-out again.
                yield self.a_abort_timed_out[t], s._replace(status=_put(s.status, t, ABORTING))
            if st in ENDING and t in s.redrive:
                # current: the TC's retry timer fires and re-drives the end (endTransaction again).
                yield self.a_timer_fires[t], s._replace(redrive=s.redrive - {t})
            elif st in ENDING:
                commit = st == COMMITTING
                done = s.acked[t]
                if variant in SHIPPED and s.live[t]:
                    # A fan-out attempt fails with a retryable error and arms the TC's
                    # retry timer. Since apache/pulsar#13828 the timer re-drives the
                    # request with the client's future, so the client waits on; before
                    # it (retry-reply) the TC also answered the client with the error,
                    # which says nothing of the outcome.
                    if variant == "retry-reply":
                        nxt = s._replace(result=_put(s.result, t, "error"), live=_put(s.live, t, False))
                    else:
                        nxt = s
                    yield self.a_retry_later[t], nxt._replace(redrive=s.redrive | {t})
                for g in s.parts[t]:
                    if ("p", g) in done:
                        continue
                    # END_TXN_ON_PARTITION: the segment's TB appends the marker to its own ledger.
                    if s.seg[g] == ACTIVE:
                        marker = (COMMIT_MARKER if commit else ABORT_MARKER, t)
                        yield self.a_marker[t][g], s._replace(
                            ledger=_put(s.ledger, g, s.ledger[g] + (marker,)),
                            acked=_put(s.acked, t, done | {("p", g)}))
                    else:
                        # Background item 1: the sealed segment rejects the
                        # write; the TC keeps the txn ending and retries.
                        yield self.a_rejected[t][g], s
                for g in s.subs[t]:
                    if ("s", g) not in done:
                        # END_TXN_ON_SUBSCRIPTION: the pending-ack store logs the
                        # decision in its sibling topic, which is never sealed.
                        yield self.a_end_sub[t][g], s._replace(acked=_put(s.acked, t, done | {("s", g)}))
                if len(done) == len(s.parts[t]) + len(s.subs[t]):
                    # Every participant answered: log COMMITTED/ABORTED, reply to the client.
                    final = COMMITTED if commit else ABORTED
                    nxt = s._replace(status=_put(s.status, t, final))
                    if s.outcome[t] == "":
                        nxt = nxt._replace(outcome=_put(s.outcome, t, final))
                    if s.live[t]:
                        ok = (s.asked[t] == "commit") == commit
                        nxt = nxt._replace(result=_put(s.result, t, "ok" if ok else "failed"),
                                           live=_put(s.live, t, False))
                    yield self.a_complete[t], nxt
            if st in TERMINAL and variant in ("retry-strict", *FORGETS):
                # v4 drops a finished txn's metadata from the TC's memory, so a
                # late retry meets TransactionNotFound (protocol-notes, v4 field failures).
                yield self.a_remove[t], s._replace(status=_put(s.status, t, REMOVED))

        for g in range(self.n_seg):
            # Dispatcher (Background: it "discovers committed/aborted state by
            # replaying these markers"): read up to maxReadPosition (just before the first
            # entry of the oldest txn with no marker yet on this segment) and
            # skip the data of txns the TB knows aborted (abort marker written).
            entries = s.ledger[g]
            pos = s.read[g]
            if pos < len(entries) and pos < _max_read_position(entries):
                kind, t = entries[pos]
                delivered = s.delivered
                if kind == DATA and (ABORT_MARKER, t) not in entries:
                    delivered = delivered | {(t, g)}
                yield self.a_dispatch[g], s._replace(read=_put(s.read, g, pos + 1), delivered=delivered)

        free = [g for g in range(self.n_seg) if s.seg[g] == UNBORN]
        if s.splits and len(free) >= 2:
            a, b = free[0], free[1]
            for g in range(self.n_seg):
                # Split (PIP-468 order, protocol-notes): create the children,
                # terminate the parent, then one CAS: parent SEALED, children ACTIVE.
                if s.seg[g] == ACTIVE:
                    seg = _put(_put(_put(s.seg, g, SEALED), a, ACTIVE), b, ACTIVE)
                    yield self.a_split[g], s._replace(seg=seg, splits=s.splits - 1)
        if s.merges and free:
            child = free[0]
            for (a, b), action in self.a_merge.items():
                # Merge (protocol-notes "Scalable topics"): terminates both
                # parents, activates one child.
                if s.seg[a] == ACTIVE and s.seg[b] == ACTIVE:
                    seg = _put(_put(_put(s.seg, a, SEALED), b, SEALED), child, ACTIVE)
                    yield action, s._replace(seg=seg, merges=s.merges - 1)

        if s.restarts:
            # TC restart (Background: the TC is "backed by a system topic"): the
            # log survives; client connections, fired timers and fan-out
            # progress are lost, and recovery re-drives the fan-out.
            yield self.a_restart, s._replace(
                live=(False,) * self.n_txn, redrive=frozenset(),
                timer=tuple("idle" if x == "fired" else x for x in s.timer),
                acked=tuple(frozenset() if st in ENDING else a for st, a in zip(s.status, s.acked)),
                restarts=s.restarts - 1)

    # -- observation ----------------------------------------------------------
    def observe(self, s: V4State):
        tn, gn = self.txn_names, self.seg_names
        commit_m, abort_m = set(), set()
        for g, entries in enumerate(s.ledger):
            for kind, t in entries:
                if kind == COMMIT_MARKER:
                    commit_m.add((tn[t], gn[g]))
                elif kind == ABORT_MARKER:
                    abort_m.add((tn[t], gn[g]))
        return {
            "segState": dict(zip(gn, s.seg)),
            "status": dict(zip(tn, s.status)),
            "outcome": dict(zip(tn, s.outcome)),
            "asked": dict(zip(tn, s.asked)),
            "result": dict(zip(tn, s.result)),
            "partition": {(tn[t], gn[g]) for t in range(self.n_txn) for g in s.parts[t]},
            "subscription": {(tn[t], gn[g]) for t in range(self.n_txn) for g in s.subs[t]},
            "partitionAcked": {(tn[t], gn[g]) for t in range(self.n_txn) for k, g in s.acked[t] if k == "p"},
            "commitMarker": commit_m,
            "abortMarker": abort_m,
            "delivered": {(tn[t], gn[g]) for t, g in s.delivered},
            "everCommitting": {tn[t] for t in s.committing},
        }

    def state_vars(self, s: V4State):
        tn, gn = self.txn_names, self.seg_names
        per_txn = lambda xs: dict(zip(tn, xs))
        per_seg = lambda xs: dict(zip(gn, xs))
        segset = lambda gs: frozenset(gn[g] for g in gs)
        return {
            "segState": per_seg(s.seg),
            "ledger": per_seg(tuple(tuple(f"{k}:{tn[t]}" for k, t in e) for e in s.ledger)),
            "readPosition": per_seg(s.read),
            "status": per_txn(s.status),
            "partitions": per_txn(tuple(segset(p) for p in s.parts)),
            "subscriptions": per_txn(tuple(segset(p) for p in s.subs)),
            "endAcked": per_txn(tuple(frozenset(f"{k}:{gn[g]}" for k, g in a) for a in s.acked)),
            "clientAsked": per_txn(s.asked),
            "clientResult": per_txn(s.result),
            "tcHoldsRequest": per_txn(s.live),
            "tcRetryTimer": per_txn(tuple(t in s.redrive for t in range(self.n_txn))),
            "timeoutTracker": per_txn(s.timer),
            "outcome": per_txn(s.outcome),
            "everCommitting": frozenset(tn[t] for t in s.committing),
            "delivered": frozenset(f"{tn[t]}@{gn[g]}" for t, g in s.delivered),
            "splitsLeft": s.splits,
            "mergesLeft": s.merges,
            "restartsLeft": s.restarts,
        }


def _max_read_position(entries: tuple) -> int:
    """The TB's maxReadPosition: the first data entry of a txn with no marker yet."""
    for i, (kind, t) in enumerate(entries):
        if kind == DATA and (COMMIT_MARKER, t) not in entries and (ABORT_MARKER, t) not in entries:
            return i
    return len(entries)
