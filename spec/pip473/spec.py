"""PIP-473, Metadata-Driven Transactions for Scalable Topics, as a state machine.

The document is `pip/pip-473.md` (seed 001); the shipped code's departures
and recovery facts are in protocol-notes.md. The action list, with the PIP
section each one implements and every place it lives (here, in reference/,
in the Z3 relation), is in ACTIONS.md beside this file (written from
catalog.py). The modules, by folder (tests/test_pip473.py checks the map):

    spec.py         this class: the bounds, `next`, the labels; the entry point
    catalog.py      the actions: parameters, flow, where each lives, PIP section, diagram messages
    variants.py     the variants as named changes (merged's, F1-F11), the flags they set
    properties.py   schema, observation, invariants, witnesses, predicates
    plan.py         the model's workload (writes, acks, plain sends) parsed from its bounds
    view.py         the state as a trace shows it (`state_vars`), every field named
    lemmas.py       the lemmas `txncheck prove` assumes, as predicates of the state
    ACTIONS.md      generated: the catalog and the variants' changes as tables

  protocol/       the components the PIP describes, named for the one each models:
    state.py        the state value (store, segments, participants, TC, clients, ghosts)
    store.py        headers, op records and the four secondary indexes (derived views)
    segments.py     segments, routing, split/merge in PIP-468 order, ledger trimming
    publish.py      appendBufferToTxn and the pending-ack appends (client side)
    publish_cache.py   a send's header read and its callback (bound check)
    publish_plain.py   a non-transactional send and its read-position sync
    coordinator.py  TC V5: newTxn, endTxn, finalize, timeout and GC sweeps, failover
    notify.py       watches / coalesced events, and materialization
    apply.py        a decision applied in the code's stages (bound apply = steps)
    buffer.py       MetadataTransactionBuffer: maxReadPosition, isTxnAborted, pruning
    pendingack.py   MetadataPendingAckStore: applying acks to the cursor
    recovery.py     participant crash and unload, recover()/replayAsync()
    dispatcher.py   the unchanged dispatcher

  reductions/     the reductions' contracts with the checker:
    footprints.py   what each action reads and writes (--por)
    symmetry.py     which txns are interchangeable, and renaming them (--symmetry)

  symbolic/       the hand-written Z3 relation `prove` uses (Pip473Relation), the
                  twin of the protocol modules: relation.py, relation_state.py
                  (the cells), relation_steps.py, relation_publish.py,
                  relation_recovery.py, relation_parts.py, relation_lemmas.py

Abstractions (each keeps the races the reviewers raised):
* One participant broker per segment hosts its transaction buffer and the
  pending-ack store of each subscription: one subscription per segment
  unless bound `subs = 2` adds a second, with its own cursor, dispatcher
  and pending-ack store (the ledger then trims at the slower cursor). The
  buffer and each store have their own header cache and event stream, as
  the merged code and the PIP's two components do; bound
  `participants = "joint"` makes them one, which is not a safe abstraction:
  it lets an ack's event evict the buffer's cache entry, which the code
  never does (two findings once rested on that), and it hid a stall of
  fixed (F5 kept the buffer's entry for the pending-ack store's op). Two
  subscriptions need split. A crash takes them all; in merged/fixed each
  store then replays on its own (`recoverAcks`), not inside the buffer's
  recovery, as the code's does.
* Delivery of a notification and the materialization it triggers are one
  step (`deliverEvent`); recovery reads its snapshot in one step, unless
  bound `recovery = "steps"` (merged/fixed) runs the buffer's loads in the
  code's order: the watermark, the aborted set, then the WRITE ops and
  their headers (recovery.py).
* The TC's decision CAS and, in merged/fixed, its listing of ops and append
  of events are one step unless bound `tc = "steps"` makes them the code's
  three (`tcList`, `tcPublish`); finalize and the client reply are separate
  steps that a TC failover can lose (the client then retries `endTxn`).
* A new subscription or reader from the earliest position is the derived
  view `skipped(seg, pos)` checked in every state, not extra state.
* Time is a logical clock of `ticks` units; notification delay is unbounded
  (the checker picks when `deliverEvent` runs). The standard models use
  ticks = timeout = retention = 0: a deadline or a retention window may pass
  at any moment, the most adversarial timing.

Pruning: scheduling restrictions that only shrink the state space, all
behind the bound `prune` (default true; `prune = false` enables each action
in every state). Each is a claim that it removes no behaviour a property can
see; tests/test_pruning_audit.py checks it at small bounds (same verdict and
shortest-trace length per property, same witnesses, pruned and not), and
models/pip473/fixed-crash-anywhere.toml checks `fixed` unpruned. The crash
rule was wrong before F4: a broker with empty caches but a send in flight
whose op landed after the GC could crash, and fixed then failed.
* `crash` is enabled only for a broker that holds something to lose (cached
  headers, pending events, aborted marks or in-memory acks); `unload` (bound
  `unloads`) likewise, or while a send of the closing instance can still act;
* `tick` only while the clock can still make a deadline or a retention
  window pass;
* the split/merge runs while a send of the plan is unfinished (sends are the
  only users of the segment layout) and starts while a txn is OPEN;
* `tcFailover` only while the TC has in-memory work to lose.
Not pruning, and not switched: txn ids are allocated in order (t2 after t1),
as the coordinator's counter does; txns whose clients run the same plan are
interchangeable clients, and either may take the next id (symmetry.py), so
`--symmetry` applies.

Variants: pip-text is the text; merged and fixed are lists of named
changes to flags that the action bodies read (`variants.MERGED`, and
`variants.FIXES`, F1-F11), each change described once there with the flags
it sets, the modules that read them, what it does and, for a fix, the model
that fails without it (ACTIONS.md prints the table; tests/test_pip473.py
drops each fix in turn and checks that model).

Recovery keeps its hold: a txn recovery finds OPEN is tracked at the
position RECOVERED (state.py), as Pulsar's TxnEntry.recoveryDiscovered, and a
later append of the same txn does not re-key it; re-keying released the hold
on the earlier entry (fixed failed MaxReadPositionSafe in 12 states).

Bound `apply` (merged/fixed): `atomic` (the default) joins an event's
header reads and each participant's apply with its metadata calls in the
event's step; `steps` runs them as the code does, each a step (apply.py):
the reads return one by one, the buffer's apply chain (`stateTail`) puts
the aborted record, CASes the watermark and deletes the WRITE ops, the
pending-ack store deletes its ACK ops after its handle applied them;
isTxnAborted answers from the in-memory aborted set. With `unloads`, the
closed instance (`S.zomb`) goes on with its reads and chain. Atomic is a
claim: docs/pip473.md's atomicity table says why each join is sound where
no instance is closed, and tests/test_apply_audit.py checks it at small
bounds.

Extra properties beyond the issue's six: NoOrphanOp (an op record of a
decided txn that no live participant will ever materialize: the GC re-drives
forever), NoMissedDecision (a participant pins the read position for a
decided txn with no event left to tell it, nor TC work that will publish one), NoAbortedAck and
AcksFixedAtDecision (acks), ParentFenced (PIP-468 order) and WatermarkSafe
(the persisted watermark is below every OPEN txn's entry: the next recovery
trusts it). Atomicity is
also available as its three clauses, NoAbortedDelivered, CommittedVisible
and NoLateAdmission, so a scenario model can isolate one. Every property has
a truth table in tests/test_pip473_truth_tables.py.
"""

from __future__ import annotations

from functools import partial

from ..api import Bound, Spec, SpecError
from . import catalog
from .lemmas import lemmas
from .plan import parse_acks, parse_plain, parse_writes
from .properties import PARTS, PROPERTY_TEXT, declare, observe
from .protocol import apply, publish, publish_plain, recovery, segments
from .protocol import coordinator as tc
from .protocol.buffer import prune_aborted
from .protocol.dispatcher import dispatch
from .protocol.notify import deliver_event
from .protocol.state import (
    ABSENT, ABORTED, COMMITTED, OPEN, C_ENDING, C_NONE, C_OPEN, EMPTY_PART, NO_GC, NONE, PLAIN, PUB_TODO,
    SUB_NAMES, S,
)
from .protocol.store import header_state
from .reductions.footprints import footprints
from .reductions.symmetry import getter, op_slots, permute, plan_classes, signatures
from .variants import BOUND_NEEDS, VARIANTS
from .view import LEGEND, state_vars


class Pip473(Spec):
    name = "pip473"
    variants = ("pip-text", "merged", "fixed")
    symmetric_sorts = ("Txn",)
    diagram = {a.name: a.messages for a in catalog.ACTIONS}
    diagram_participants = (catalog.CLIENT, catalog.TC, catalog.STORE)
    diagram_order = ("TB ", "PendingAck ", catalog.DISPATCHER)
    # What `observe` (properties.py) reads. Not the clock, the seqs, the
    # read positions, the reshape step, the budgets (crashes, failovers,
    # unloads), the TC's in-memory work or the count of plain sends:
    # properties see those only through their effects.
    observed_fields = ("hdr", "ops", "arec", "wmark", "ledger", "status", "cursor", "part", "pubs",
                       "client", "fincnt", "decided", "late", "dlv", "ackw", "gcsnap", "fence", "retained", "tcp",
                       "cursor2", "zomb")
    bounds = {
        "txns": Bound(2, "number of transactions (t1, t2, ...)", lo=1, hi=3),
        "writes": Bound("t1:0", "transactional sends, txn:routing-key each (keys 0..3)"),
        "acks": Bound("t1:s1:1:ind t2:s2:1:cum", "transactional acks, txn:segment:position:ind|cum"),
        "plain": Bound("", "non-transactional sends, a routing key each (keys 0..3), sent in order"),
        "reshape": Bound("merge", "one split or merge during the run", choices=("none", "merge", "split")),
        "decisions": Bound("commit", "what clients ask endTxn for", choices=("commit", "abort", "both")),
        "client": Bound("stock", "stock = the Java client (TransactionImpl, ProducerImpl): it sends endTxn only "
                        "once every send and ack of the txn has its answer, aborts instead of committing once "
                        "one failed, sends nothing after endTxn, and resends a send whose answer an unload cut "
                        "off to the new owner; permissive = sends and acks may still arrive at a broker after "
                        "endTxn (a broker that goes on with a send the client gave up on, a client that does "
                        "not track its sends), and a failed send does not force an abort",
                        choices=("permissive", "stock")),
        "crashes": Bound(1, "participant broker crashes", lo=0, hi=2),
        "failovers": Bound(1, "TC failovers", lo=0, hi=2),
        "unloads": Bound(0, "merged/fixed: topic unloads (a segment's ownership changes): the buffer instance "
                         "is closed and a new owner loads the segment, while the sends the closed instance took "
                         "go on (their op puts land, their appends fail)",
                         lo=0, hi=2),
        "apply": Bound("atomic", "merged/fixed: how a participant applies a decision; atomic = an event's header "
                       "reads, the buffer's apply and the pending-ack store's, with their metadata calls, in "
                       "the event's step; steps = the code's stages, each a step: each header read returns, "
                       "the buffer's apply chain (its in-memory part, the aborted record's put, the "
                       "watermark CAS, the WRITE ops' delete) and the store's ACK-op delete; isTxnAborted "
                       "answers from the in-memory aborted set; and an unloaded instance's reads and chain go "
                       "on after its close (needs participants = split and subs = 1)",
                       choices=("atomic", "steps")),
        "check": Bound("atomic", "merged/fixed: a send's header check on a cache miss "
                       "(`readStateCacheFirst`); atomic = the read and its callback's cache put in one step "
                       "(publishCheck); steps = the read, whose answer is the header then, and the put "
                       "(publishCache) a step of its own, so a decision and its event can fall between them "
                       "and the put leave an OPEN entry no event will clear; after an unload the put lands in "
                       "the closed instance (docs/pip473.md, the atomicity table; tests/test_check_audit.py)",
                       choices=("atomic", "steps")),
        "sync": Bound("atomic", "merged/fixed: a non-transactional entry's add and its callback "
                      "(`syncMaxReadPositionForNormalPublish`); atomic = one step (publishPlain); steps = the "
                      "callback a step of its own (plainSync), before the ledger's next add completes: an "
                      "apply, a recovery's completion or a crash can come between (a crash: it never runs); "
                      "after an unload it runs on the closed instance (docs/pip473.md, the atomicity table; "
                      "tests/test_sync_audit.py)",
                      choices=("atomic", "steps")),
        "track": Bound("atomic", "merged/fixed: a transactional entry's add and its callback "
                       "(`trackPosition`, then the client's answer); atomic = one step (publishAppend); steps = "
                       "the callback a step of its own (publishTrack), before the ledger's next add completes: "
                       "a crash between them leaves the entry in the ledger and fails the send at the client; "
                       "after an unload the closed instance runs it and the answer is lost (the stock client "
                       "resends) (docs/pip473.md, the atomicity table; tests/test_sync_audit.py)",
                       choices=("atomic", "steps")),
        "producers": Bound("ungated", "merged/fixed: who may publish a non-transactional entry while the "
                           "segment's transaction buffer recovers; ungated = any producer (Pulsar's broker since "
                           "apache/pulsar#21406 makes no producer wait for the buffer); gated = none, as "
                           "`ServerCnx.handleProducer` did before it (docs/pip473.md, the producer gate)",
                           choices=("ungated", "gated")),
        "ticks": Bound(0, "logical clock units; 0 = deadlines and retention may pass at any moment", lo=0, hi=4),
        "timeout": Bound(0, "txn timeout, in clock units", lo=0, hi=4),
        "retention": Bound(0, "GC retention window after finalization, in clock units", lo=0, hi=4),
        "trim": Bound(False, "merged/fixed: the ledger trims what its subscription acknowledged, and the "
                      "buffer prunes the aborted records keyed below the first retained entry"),
        "opfail": Bound(False, "merged/fixed: an op write may fail (a metadata-store error); the send is "
                        "rejected and, in merged, the header read's cache entry stays"),
        "tc": Bound("atomic", "merged/fixed: the coordinator's endTxn; atomic = the header CAS, the op listing "
                    "and the event publish in one step; steps = three steps, as the merged code runs them, so "
                    "a TC failover can fall between them; publishes = steps, and each listed participant's "
                    "publish a step of its own (fanOutEvents fires them in parallel), so a failover can also "
                    "leave some participants told and others not", choices=("atomic", "steps", "publishes")),
        "recovery": Bound("atomic", "merged/fixed: the transaction buffer's asynchronous recovery after a "
                          "restart; atomic = its loads happen when it completes; steps = the code's order, "
                          "each a step: the watermark, the aborted set, then the WRITE ops and their headers",
                          choices=("atomic", "steps")),
        "participants": Bound("split", "a segment's transaction buffer and its subscription's pending-ack "
                              "store: split = two, each with its own cache and events, deleting its own op "
                              "records (the PIP's two components and the merged code); joint = one "
                              "participant, one header cache, one event stream, which is not a safe "
                              "abstraction: it invents runs and hides others",
                              choices=("joint", "split")),
        "subs": Bound(1, "subscriptions per segment, each with its own cursor, dispatcher and pending-ack "
                      "store (2 needs participants = split); acks name theirs, sub1 unless told",
                      lo=1, hi=2),
        "prune": Bound(True, "scheduling restrictions that only shrink the state space (see the module "
                       "docstring); false enables crash, tick, the reshape and tcFailover in every state", ),
        "replies": Bound("sent", "merged/fixed: the TC's answer to endTxn; sent = a step (tcFinalize) that a "
                         "failover can lose; owed = a reduction: no such step, the properties read an owed "
                         "answer as told, and a counterexample gets its tcFinalize step back",
                         choices=("sent", "owed"), reduction=True),
        "watches": Bound("point", "header watches (point-watch variants only): point = every change is "
                         "notified in order with its value; zk-oneshot = a ZooKeeper one-shot watch: it fires "
                         "once, the participant reads the header when it handles the event and re-registers, "
                         "so changes in between are not notified", choices=("point", "zk-oneshot")),
    }

    def setup(self) -> None:
        c = self.constants
        self.flags = VARIANTS[self.variant]
        for name in self.ignored_bounds(self.variant, c):
            flag, want = BOUND_NEEDS[name]
            raise SpecError(f"bound {name} = {c[name]!r} has no effect on variant {self.variant} "
                            f"(it needs {flag} = {want}: spec/pip473/variants.py); "
                            f"leave it at its default {self.bounds[name].default!r}")
        self.prune = c["prune"]
        if c["replies"] == "owed" and not self.flags.cas_finalizes:
            raise SpecError("bound replies = \"owed\" is for merged and fixed: in pip-text tcFinalize also "
                            "sets finalized_ms")
        self.owed = c["replies"] == "owed"
        self.stock_client = c["client"] == "stock"
        self.op_fail = c["opfail"] and self.flags.op_first
        self.trim = c["trim"] and self.flags.durable_aborts
        self.tc_steps = c["tc"] in ("steps", "publishes") and self.flags.coalesced
        self.tc_publishes = c["tc"] == "publishes" and self.flags.coalesced
        if self.tc_publishes and c["participants"] != "split":
            raise SpecError("bound tc = \"publishes\" needs participants = \"split\": a shared participant's "
                            "two streams would be one publish in the spec and two in the code")
        self.split = c["participants"] == "split"
        self.subs = c["subs"]
        if self.subs > 1 and not self.split:
            raise SpecError("bound subs = 2 needs participants = \"split\": each subscription has its own "
                            "pending-ack store")
        self.recovery_steps = c["recovery"] == "steps" and self.flags.async_recovery
        # the pending-ack stores replay on their own, not inside the buffer's recovery (recovery.recover_acks)
        self.pas_recovers = self.split and self.flags.async_recovery
        self.apply_steps = c["apply"] == "steps" and self.flags.coalesced
        self.check_steps = c["check"] == "steps" and self.flags.op_first
        self.sync_steps = c["sync"] == "steps" and self.flags.watermark
        self.track_steps = c["track"] == "steps" and self.flags.op_first
        self.producers_gated = c["producers"] == "gated" and self.flags.async_recovery
        if self.apply_steps and (not self.split or self.subs > 1):
            raise SpecError("bound apply = \"steps\" needs participants = \"split\" and subs = 1")
        self.oneshot = c["watches"] == "zk-oneshot" and not self.flags.coalesced
        self.topo = segments.TOPOLOGIES[c["reshape"]]
        self.timeout, self.retention = c["timeout"], c["retention"]
        n = c["txns"]
        nseg = len(self.topo.ranges)
        self.writes = parse_writes(c["writes"], n, segments.KEYS)
        self.plain_keys = parse_plain(c["plain"], segments.KEYS)
        self.acks = parse_acks(c["acks"], n, 2, 1 + len(self.writes) + len(self.plain_keys), self.subs)
        self.op_txn = tuple(w.txn for w in self.writes) + tuple(a.txn for a in self.acks)
        self.txn_names = tuple(f"t{i + 1}" for i in range(n))
        self.seg_names = tuple(f"s{j + 1}" for j in range(nseg))
        # a ledger holds every send once, and (track = steps, the stock client) once more each send an
        # unload answered after its add landed: the producer resends it to the next owner
        resent = c["unloads"] if self.track_steps and self.stock_client else 0
        self.pos_names = tuple(f"p{i + 1}" for i in range(1 + len(self.writes) + len(self.plain_keys) + resent))
        # a cursor is named for its segment, the second subscription's with its name too
        self.cur_name = {(j, x): g if x == 0 else f"{g}/{SUB_NAMES[x]}"
                         for j, g in enumerate(self.seg_names) for x in range(self.subs)}
        self.cur_names = tuple(self.cur_name[j, x] for x in range(self.subs) for j in range(nseg))
        self.txn_index = {name: i for i, name in enumerate(self.txn_names)}
        self.classes = plan_classes(self.writes, self.acks, n)
        self.op_slots = op_slots(self.writes, self.acks, n)
        # newTxn order: every txn of an earlier plan class first (the counter)
        first = {t: c[0] for c in self.classes for t in c}
        self.symmetric_txns = tuple(t for c in self.classes if len(c) > 1 for t in c)
        self.started_before = tuple(tuple(u for u in range(n) if first[u] < first[t]) for t in range(n))
        # per interchangeable txn: a getter of its plan operations' Pubs (symmetry.signatures)
        self.sig_pubs = tuple((t, getter(self.op_slots[t])) for t in self.symmetric_txns)
        self.decisions = {"commit": (COMMITTED,), "abort": (ABORTED,), "both": (COMMITTED, ABORTED)}[c["decisions"]]
        self._actions: dict = {}
        self._renamings: dict = {}  # symmetry.permute's tables, per renaming
        # The labels of the commonest actions, made once: next is the hot path.
        a = self._a
        self.txn_labels = {name: tuple(a(name, txn=x) for x in self.txn_names)
                           for name in ("newTxn", "tcFinalize", "tcList", "tcPublish", "timeoutSweep", "gcSweep")}
        self.seg_labels = {name: tuple(a(name, seg=x) for x in self.seg_names)
                           for name in ("recover", "recoverWatermark", "recoverAborted", "recoverComplete",
                                        "recoverAcks", "deliverEvent", "deliverAckEvent", "crash", "unload",
                                        "dispatch",
                                        "trimLedger", "pruneAborted")}
        # the second subscription's actions name it (the first's keep their one-subscription labels)
        self.seg_labels.update({(name, 1): tuple(a(name, seg=x, sub=SUB_NAMES[1]) for x in self.seg_names)
                                for name in ("recoverAcks", "deliverAckEvent", "dispatch")})
        # tc = publishes: one publish per listed stream (coordinator.pub_targets)
        self.publish_labels = {
            (t, (j, f)): a("tcPublishTo", txn=x, seg=g, to="buffer" if f == "events" else "acks",
                           **({"sub": SUB_NAMES[1]} if f == "aevents2" else {}))
            for t, x in enumerate(self.txn_names) for j, g in enumerate(self.seg_names)
            for f in ("events", "aevents", "aevents2")}
        self.end_labels = {(t, d): a("endTxn", txn=x, decision=d)
                           for t, x in enumerate(self.txn_names) for d in (COMMITTED, ABORTED)}
        self.ack_labels = tuple(a("appendAck", op=ak.name, txn=self.txn_names[ak.txn], seg=self.seg_names[ak.seg],
                                  pos=ak.pos, cumulative=ak.cumulative,
                                  **({"sub": SUB_NAMES[ak.sub]} if ak.sub else {}))
                                for ak in self.acks)
        self.ack_open_labels = tuple(("appendAckOpen",) + label[1:] for label in self.ack_labels)
        declare(self)
        # the lemmas `txncheck prove` may assume, as predicates of the state (lemmas.py)
        self.lemmas.update(lemmas(self))

    @classmethod
    def ignored_bounds(cls, variant: str, constants) -> list[str]:
        """The bounds in `constants` set away from their default that
        `variant` never reads (variants.BOUND_NEEDS)."""
        flags = VARIANTS[variant]
        return [name for name, (flag, want) in BOUND_NEEDS.items()
                if constants.get(name, cls.bounds[name].default) != cls.bounds[name].default
                and getattr(flags, flag) != want]

    def _a(self, name: str, **params):
        key = (name, tuple(params.items()))
        a = self._actions.get(key)
        if a is None:
            a = self._actions[key] = key
        return a

    def init_states(self):
        n, nseg = len(self.txn_names), len(self.seg_names)
        status = segments.initial_status(self.topo)
        yield S(
            now=0, hdr=(NONE,) * n, seqs=(1,) * n, ops=frozenset(), arec=frozenset(),
            wmark=(-1,) * nseg, status=status,
            ledger=tuple((PLAIN,) if st != ABSENT else () for st in status),
            cursor=((0, frozenset()),) * nseg,
            rd=tuple(2 if st != ABSENT else 1 for st in status),  # the plain entry is already delivered
            reshape=0,
            part=tuple(EMPTY_PART if st != ABSENT else None for st in status),
            crashes=self.constants["crashes"], tcp=frozenset(), failovers=self.constants["failovers"],
            unloads=self.constants["unloads"], zomb=(None,) * nseg if self.apply_steps else (),
            client=(C_NONE,) * n, pubs=(PUB_TODO,) * len(self.op_txn),
            fincnt=(0,) * n, decided=("",) * n, late=frozenset(), dlv=frozenset(), ackw=frozenset(),
            gcsnap=(NO_GC,) * n, fence=(-1,) * nseg, plain=0, retained=(1,) * nseg,
            **({"cursor2": ((0, frozenset()),) * nseg, "rd2": tuple(2 if st != ABSENT else 1 for st in status)}
               if self.subs > 1 else {}),
        )

    def next(self, s: S):
        a = self._a
        tn, sn = self.txn_names, self.seg_names
        by_txn, by_seg = self.txn_labels, self.seg_labels
        # TC V5 newTxn: ids come from a counter, in order; clients with the
        # same plan are interchangeable, so any of them may take the next id.
        for t in range(len(tn)):
            if s.client[t] == C_NONE and all(s.hdr[u] != NONE for u in self.started_before[t]):
                yield by_txn["newTxn"][t], tc.new_txn(self, s, t)
        # Publish and acks (client operations of the plan).
        for k, w in enumerate(self.writes):
            pub = s.pubs[k]
            if pub.stage in ("done", "rejected"):
                continue
            seg = sn[pub.seg] if pub.seg >= 0 else "-"
            for label, fn in publish.STEPS[pub.stage]:
                t2 = fn(self, s, k)
                if t2 is not None:
                    if label == "publishCheck":
                        seg = sn[t2.pubs[k].seg]
                    yield a(label, op=w.name, txn=tn[w.txn], seg=seg), t2
        if s.plain < len(self.plain_keys):
            t2 = publish_plain.plain(self, s, s.plain)
            if t2 is not None:
                j = next(j for j in range(len(sn)) if t2.ledger[j] != s.ledger[j])
                yield a("publishPlain", op=f"n{s.plain + 1}", seg=sn[j]), t2
        for k, ak in enumerate(self.acks):
            t2 = publish.ack(self, s, k)
            if t2 is not None:
                yield self.ack_labels[k], t2
            elif self.apply_steps:
                t2 = publish.ack_open(self, s, k)
                if t2 is not None:
                    yield self.ack_open_labels[k], t2
        # Client endTxn (and its retry after a TC failover lost the answer).
        # The stock client first waits for the answers to its sends and acks.
        # The stock client also aborts once a send or ack of the txn failed (TransactionImpl.commit).
        for t in range(len(tn)):
            cl = s.client[t]
            failed = False
            if self.stock_client and cl == C_OPEN:
                stages = [s.pubs[k].stage for k in self.op_slots[t]]
                if any(x not in ("done", "rejected") for x in stages):
                    continue
                failed = "rejected" in stages
            if cl == C_OPEN:
                for d in (ABORTED,) if failed else self.decisions:
                    yield self.end_labels[t, d], tc.end_txn(self, s, t, d)
            elif cl in C_ENDING.values() and not any(x[0] == t for x in s.tcp):
                d = COMMITTED if cl == C_ENDING[COMMITTED] else ABORTED
                yield self.end_labels[t, d], tc.end_txn(self, s, t, d)
        for (t, step, d) in sorted(s.tcp):
            if step == "fin":
                if not self.owed:
                    yield by_txn["tcFinalize"][t], tc.finalize(self, s, t, d)
            elif step == tc.LIST:
                yield by_txn["tcList"][t], tc.list_ops(self, s, t, d)
            elif self.tc_publishes:
                for target in tc.pub_targets(step):
                    yield self.publish_labels[t, target], tc.publish_one(self, s, t, step, target, d)
            else:
                yield by_txn["tcPublish"][t], tc.publish_events(self, s, t, step, d)
        for t in tc.timeout_candidates(self, s):
            yield by_txn["timeoutSweep"][t], tc.timeout(self, s, t)
        for t in tc.gc_candidates(self, s):
            yield by_txn["gcSweep"][t], tc.gc(self, s, t)
        # Time only matters while it can make an OPEN txn time out (retention
        # counts from the finalization time, which is at most `now`).
        if s.now < self.constants["ticks"] and (not self.prune or any(
                isinstance(h, tuple) and (h.state == OPEN and h.deadline > s.now or h.fin_at >= 0
                                          and h.fin_at + self.retention > s.now) for h in s.hdr)):
            yield a("tick"), s._replace(now=s.now + 1)
        if s.failovers > 0 and (s.tcp or not self.prune):
            yield a("tcFailover"), tc.failover(self, s)
        # Participants: notifications, crash, recovery.
        for j, p in enumerate(s.part):
            if s.status[j] == ABSENT:
                continue
            if self.apply_steps:   # a closed instance's reads and apply chain go on (apply.py)
                z = s.zomb[j]
                if z is not None:
                    for name, t, t2 in apply.steps(self, s, j, closed=True):
                        yield a(name, seg=sn[j], **({} if t is None else {"txn": tn[t]}), closed=True), t2
                    if z[1].psync:
                        yield a("plainSync", seg=sn[j], closed=True), publish_plain.callback(self, s, j, True)
            if p is None:
                if not (self.flags.drain_closed and recovery.closing(self, s, j)):   # F10
                    yield by_seg["recover"][j], recovery.recover(self, s, j)
                continue
            if not p.ready:
                if self.recovery_steps and p.loaded < 2:
                    if p.loaded == 0:
                        yield by_seg["recoverWatermark"][j], recovery.recover_watermark(self, s, j)
                    else:
                        yield by_seg["recoverAborted"][j], recovery.recover_aborted(self, s, j)
                else:
                    yield by_seg["recoverComplete"][j], recovery.recover_complete(self, s, j)
            elif p.events:
                yield by_seg["deliverEvent"][j], deliver_event(self, s, j)
            if self.apply_steps:
                for name, t, t2 in apply.steps(self, s, j, closed=False):
                    yield a(name, seg=sn[j], **({} if t is None else {"txn": tn[t]}), closed=False), t2
            if p.psync:
                yield a("plainSync", seg=sn[j], closed=False), publish_plain.callback(self, s, j)
            # each pending-ack store: its own replay, then its events (pas_ready)
            if self.pas_recovers:
                if not p.aready:
                    yield by_seg["recoverAcks"][j], recovery.recover_acks(self, s, j)
                elif p.aevents:
                    yield by_seg["deliverAckEvent"][j], deliver_event(self, s, j, acks=True)
                if not p.aready2:
                    yield by_seg["recoverAcks", 1][j], recovery.recover_acks(self, s, j, 1)
                elif p.aevents2:
                    yield by_seg["deliverAckEvent", 1][j], deliver_event(self, s, j, acks=True, sub=1)
            elif p.ready:
                if p.aevents:
                    yield by_seg["deliverAckEvent"][j], deliver_event(self, s, j, acks=True)
                if p.aevents2:
                    yield by_seg["deliverAckEvent", 1][j], deliver_event(self, s, j, acks=True, sub=1)
            # A crash only matters when the broker holds something to lose; an
            # unload also while a send of the closing instance can still act.
            # (with durable aborted records the in-memory set is the records', reloaded by recovery)
            holds = not self.prune or (p.cache or p.events or p.abrt and not self.flags.durable_aborts or p.packs
                                       or p.acache or p.aevents or p.packs2 or p.acache2 or p.aevents2
                                       or p.reads or p.chain or p.areads or p.adel or p.psync)
            if s.crashes > 0 and holds:
                yield by_seg["crash"][j], recovery.crash(self, s, j)
            if s.unloads > 0 and (holds or any(pub.seg == j and pub.stage in recovery.TAKEN for pub in s.pubs)) and (
                    not self.apply_steps or s.zomb[j] is None):   # one closed instance at a time
                yield by_seg["unload"][j], recovery.unload(self, s, j)
        # Ledger trimming and the pruning of aborted records.
        if self.trim:
            for j in range(len(sn)):
                if s.status[j] != ABSENT:
                    for name, fn in (("trimLedger", segments.trim_ledger), ("pruneAborted", prune_aborted)):
                        t2 = fn(self, s, j)
                        if t2 is not None:
                            yield by_seg[name][j], t2
        # Split / merge, PIP-468 order.
        # It runs while a send of the plan is unfinished (the only client of the
        # segment layout) and starts while a txn is OPEN: the case PIP-473 is about.
        if self.topo.children and s.reshape < 3 and (not self.prune or any(
                s.pubs[k].stage not in ("done", "rejected") for k in range(len(self.writes)))):
            if s.reshape == 0 and (not self.prune or OPEN in [header_state(s, t) for t in range(len(tn))]):
                yield a("createChildren"), segments.create_children(self.topo, s)
            elif s.reshape == 1:
                yield a("terminateParents"), segments.terminate_parents(self.topo, s)
            elif s.reshape == 2:
                yield a("casSegmentMetadata"), segments.cas_metadata(self.topo, s)
        # Dispatcher.
        for j in range(len(sn)):
            if s.status[j] != ABSENT and s.rd[j] <= len(s.ledger[j]):
                t2 = dispatch(self, s, j)
                if t2 is not None:
                    yield by_seg["dispatch"][j], t2
            if self.subs > 1 and s.status[j] != ABSENT and s.rd2[j] <= len(s.ledger[j]):
                t2 = dispatch(self, s, j, 1)
                if t2 is not None:
                    yield by_seg["dispatch", 1][j], t2

    # The finding reports' words (checker/reports/explain.py): each property in
    # one sentence, the trace's fields in Pulsar's names, and the client a run needs.
    property_text = PROPERTY_TEXT
    legend = LEGEND
    report_bounds = {"client": {
        "stock": "the stock Java client: `TransactionImpl` ends a txn only once every send and ack has its "
                 "answer, and aborts it when one failed; its producer resends a send an unload cut off",
        "permissive": "not the stock Java client: a send or ack reaches a broker after `endTxn`, or a txn "
                      "commits although a send failed (a client that does not wait for its sends' answers, "
                      "or a broker still processing a send its client gave up on)"}}

    def observe(self, s: S):
        return observe(self, s)

    def state_vars(self, s: S):
        """The state with every field named (view.py), for traces."""
        return state_vars(self, s)

    def observation_parts(self):
        return [(fields, partial(part, self)) for fields, part in PARTS]

    def complete_trace(self, path, prop):
        """replies = owed: a counterexample whose last state owes its client
        an answer that the property reads (SingleFinalization) ends with that
        answer, as in a run with replies = sent."""
        if not self.owed or not path or prop != "SingleFinalization":
            return path
        last = path[-1][1]
        for (t, step, d) in sorted(last.tcp):
            if step == "fin" and d and last.decided[t] != d:  # told what was not decided
                return path + [(self.txn_labels["tcFinalize"][t], tc.finalize(self, last, t, d))]
        return path

    def symmetry_classes(self, sort: str):
        """Txns with the same plan (symmetry.py)."""
        return tuple(tuple(self.txn_names[t] for t in c) for c in self.classes)

    def permute(self, s: S, mapping) -> S:
        return permute(self, s, mapping)

    def symmetry_signatures(self, s: S, sort: str):
        return signatures(self, s)

    def footprints(self):
        """Reads and writes per action, for --por (footprints.py)."""
        return footprints(self)
