"""KIP-868: metadata transactions in KRaft (seeds/002_2ac48257c07e208f.txt),
with the details of Kafka's implementation from protocol-notes.md.

Code read: apache/kafka@1eb7644349cb (2024-10-25), the newest commit we could
read: 4.0 development trunk, after KAFKA-17713 (snapshot alignment) and
KAFKA-17613 (ZooKeeper migration removed), before the 4.0.0 release. Past
releases by tag: 3.6.0, 3.7.0, 3.8.0 and 3.9.0-rc3 (the last 3.9 tag we could
read); OffsetControlManager, LogReplayTracker and MetadataBatchLoader's
transaction handling are the same in all of them.

One controller at a time writes the metadata log. It runs a small workload:
`txns` transactions of `txn_records` records each and `normals` records
outside any transaction. A transaction is Begin, its records and End, cut
into Raft batches of at most `batch_records` records; Raft commits whole
batches in order (the high watermark). One broker's metadata loader follows
the committed log and publishes images. Up to `failovers` controller
failovers may cut the log back to any batch boundary at or after the high
watermark (uncommitted tail batches are lost), after which the new leader
aborts a dangling transaction. Up to `snapshots` snapshots are taken of the
broker's published image.

Variants (the candidate loader bug of protocol-notes.md):
  kafka-loader     the loader keeps its pending delta across an Abort, as
                   MetadataBatchLoader does;
  clearing-loader  the loader clears the delta when it replays the Abort.
  dropping-loader  a deliberately broken clearing loader that also clears the
                   delta on End, dropping every committed transaction: safe,
                   but it fails BrokerPublishesCommitted (completeness).

Properties, and why each can fail (tests/test_kip868_truth.py holds a truth
table for each and, for the ones a correct model cannot reach, the broken
mechanism that does):
  * BrokerSeesOnlyCommittedTxns, ControllerReadsOnlyCommittedTxns (safety)
    fail with kafka-loader and with the pipelined controller.
  * BrokerPublishesCommitted (completeness): once the loader has handled
    every committed batch, every committed record (of a committed
    transaction, or outside any) is in the published image. A loader that
    never publishes passes both safety properties and fails this one
    (dropping-loader).
  * TxnPublishedAtOnce fails for a loader that publishes inside a
    transaction.
  * SnapshotOutsideTxn: the snapshot's offset is not inside a transaction.
    It fails for a loader that publishes between a Begin and its first
    record (nothing uncommitted is exposed, so the two visibility properties
    still hold). Its former second half ("the snapshot holds committed
    records only") is dropped: a snapshot is a copy of the published image
    and a committed status never reverts, so it could fail only in a state
    after one that already violates BrokerSeesOnlyCommittedTxns.
  * IdleMeansNoOpenTxn fails when a failover leaves a transaction open
    without the new leader's Abort (a broken activation batch).
  * RecordsWellFormed fails when the activation batch repeats a Begin.
  * SnapshotBatchAligned fails with `snapshot_alignment` off, where a loader
    publishes at a Begin in the middle of a batch.
  * FormerLeaderReplaysCleanly fails with two controllers when a leadership
    change falls between the batch commits of a transaction.

No pruning: every enabling condition is a rule of the protocol (the writer
waits for its batch to commit unless `pipelined`, one transaction at a time,
snapshots only at batch-aligned images).

Bound `bootstrap_reactivation` (default false) makes a new leader that has
replayed no metadata record write Abort followed by the Begin of a new
transaction, as ActivationRecordsGenerator's in-flight bootstrap branch reads.
Kafka never takes that branch (controller.activation_batch says why), so it is
off: a new leader writes the Abort alone. Turning it on changes no verdict of
the shipped models (tests/test_kip868_models.py).

Bound `activation_record` (default false) makes the new leader's Abort share
its batch with a metadata record outside any transaction (n0), as the atomic
`[AbortTransactionRecord, ZkMigrationStateRecord]` activation batch of Kafka
3.7-3.9 does: a broker then replays the Abort and a plain record in one
batch, without lagging.

Bound `broker_restarts` (default 0) lets the broker restart and load the
latest snapshot ("Snapshots"): its image becomes the snapshot's records at
the snapshot's offset, and its loader carries on from the next batch; with
no snapshot it replays the log from the start.

Bound `pipelined` lets the controller append a batch before its previous
batches are committed, as Kafka does when one write event's records fill
several batches (the non-atomic bootstrap transaction). With it false (the
default) the writer waits for each batch to commit, as Kafka's ZK-migration
writer does. Bound `lso_from_committed` is a candidate fix for what that
shows: the last stable offset takes the open transaction from the committed
records rather than from every record appended.

Bound `whole_txn_append` appends all of a transaction's batches in one step,
cut at `batch_records` records, as QuorumController.appendRecords does for
one write event (the Kafka 4.x bootstrap: ActivationRecordsGenerator's
non-atomic [Begin, bootstrap records, End]); the batches still commit one by
one. A leadership change can then fall between their commits, not between
their appends.

Bound `snapshot_alignment` (default true) takes snapshots only at images
whose offset ends a batch (KAFKA-17713, apache/kafka#17398: in Kafka 4.0, not
in 3.9.0-rc3). `SnapshotBatchAligned` states that rule; with the bound false
it fails. A broker that loads an unaligned snapshot resumes at the batch that
holds the snapshot's next offset, replaying it whole (a choice of the model:
Raft expects the snapshot to end at a batch boundary, which is the property).
The model's batches never merge a transaction's Begin into a batch of earlier
records, as KRaft's accumulator may do with non-atomic appends: so the shipped
bounds publish an unaligned image only through the activation batches above.

Bound `controllers` (default 1). With 1, a failover hands the log to a new
leader whose in-memory state is the log's. With 2 the former leader stays: it
renounces (OffsetControlManager.deactivate(), controller.py), keeping the
transaction start offset its own appends set, and replays as a standby every
record committed after those its listener was handed while active.
`FormerLeaderReplaysCleanly` fails when that replay throws (a Begin while a
start offset is set, an End or Abort while none is), which ends the process.
A controller that throws restarts from the log; one that does not keeps its
start offset into its next term. Bound `deactivate_resets_txn` is a candidate
fix: deactivate() sets the start offset to the committed log's open
transaction.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from ..api import Bound, Spec
from ..schema import Bool, Int, Str
from . import controller, loader
from .loader import Loader
from .records import (
    MARKERS, NORMAL, RECORD, batch_end_offsets, flatten, marker_offsets, record_name, state_at,
    txn_script, txn_status,
)

STATUSES = ("none", "open", "committed", "aborted")


class KState(NamedTuple):
    log: tuple                 # Raft batches of records (records.py)
    hw: int                    # committed batches
    writing: tuple | None      # (txn, script records appended) while a transaction is being written
    next_txn: int              # the workload's next transaction
    next_normal: int           # the workload's next non-transactional record
    lso: int                   # the active controller's last stable offset
    failovers: int
    loader: Loader             # the broker's metadata loader
    snapshot: tuple | None     # (offset, records) of the latest snapshot
    snapshots: int             # snapshots taken
    restarts: int              # broker restarts done
    publishes: tuple           # ghost: per txn, images published that added its records
    former: tuple | None       # controllers = 2: the former leader, (start offset, its txn, records its listener had)


class Kip868(Spec):
    name = "kip868"
    variants = ("kafka-loader", "clearing-loader", "dropping-loader")
    bounds = {
        "txns": Bound(2, "metadata transactions the controller runs", lo=1, hi=3),
        "txn_records": Bound(2, "records in each transaction", lo=1, hi=3),
        "normals": Bound(1, "records written outside any transaction", lo=0, hi=2),
        "batch_records": Bound(2, "most records in one Raft batch", lo=1, hi=4),
        "failovers": Bound(1, "controller failovers", lo=0, hi=2),
        "snapshots": Bound(1, "snapshots of the broker's image", lo=0, hi=2),
        "pipelined": Bound(False, "the controller may append before its previous batch is committed"),
        "lso_from_committed": Bound(
            False, "the active controller's last stable offset follows the committed records only"),
        "activation_record": Bound(
            False, "the failover's Abort shares its batch with a plain metadata record (ZkMigrationStateRecord)"),
        "broker_restarts": Bound(0, "broker restarts, each loading the latest snapshot", lo=0, hi=2),
        "bootstrap_reactivation": Bound(
            False, "on a log with no metadata record yet, the new leader's first batch is Abort then Begin "
                   "(a branch Kafka never takes)"),
        "whole_txn_append": Bound(
            False, "one write event appends a transaction's batches (Kafka 4.x's bootstrap, appendRecords)"),
        "snapshot_alignment": Bound(True, "snapshots only at batch-aligned images (KAFKA-17713)"),
        "controllers": Bound(1, "controllers: with 2 the former leader deactivates and replays the new leader's "
                                "records", lo=1, hi=2),
        "deactivate_resets_txn": Bound(
            False, "deactivate() resets the transaction start offset to the committed log's (a candidate fix)"),
    }

    def __init__(self, variant: str = "kafka-loader", **constants) -> None:
        super().__init__(variant, **constants)

    # -- vocabulary and properties ---------------------------------------------
    def setup(self) -> None:
        c = self.constants
        self.ntxns = c["txns"]
        self.clearing = self.variant in ("clearing-loader", "dropping-loader")
        self.dropping = self.variant == "dropping-loader"
        self.scripts = {t: txn_script(t, c["txn_records"]) for t in range(1, self.ntxns + 1)}
        self.txn_names = tuple(f"t{t}" for t in range(1, self.ntxns + 1))
        txn_recs = [(RECORD, t, i) for t in range(1, self.ntxns + 1) for i in range(1, c["txn_records"] + 1)]
        normal_recs = [(NORMAL, n) for n in range(0 if c["activation_record"] else 1, c["normals"] + 1)]
        self.names = {r: record_name(r) for r in txn_recs + normal_recs}

        sc = self.schema
        sc.enum("Txn", self.txn_names)
        sc.enum("Rec", list(self.names.values()))
        status = sc.fun("status", "Txn", Str())            # in the committed log
        image = sc.set("broker_image", "Rec")              # the broker's published image
        view = sc.set("controller_view", "Rec")            # what controller reads return (at the LSO)
        sc.set("snapshot", "Rec")                         # shown in traces
        snap_in_txn = sc.var("snapshot_in_txn", Bool())
        pubs = sc.fun("publishes", "Txn", Int(lo=0))
        fault = sc.var("replay_fault", Str())
        idle = sc.var("controller_idle", Bool())
        failovers = sc.var("failovers", Int(lo=0, hi=c["failovers"]))
        snapped = sc.var("snapshot_taken", Bool())
        passed = sc.set("broker_passed", "Txn")           # the image offset is past the txn's End/Abort
        committed = sc.set("committed_records", "Rec")     # data records a reader may see: committed log only
        caught_up = sc.var("broker_caught_up", Bool())     # the loader handled every committed batch

        T = lambda t: sc.const("Txn", f"t{t}")
        R = lambda r: sc.const("Rec", self.names[r])
        is_ = lambda t, v: status(T(t)) == z3.StringVal(v)
        per_txn = {t: [r for r in txn_recs if r[1] == t] for t in range(1, self.ntxns + 1)}
        only_committed = lambda view_set: z3.And([
            z3.Implies(view_set(R(r)), is_(r[1], "committed")) for r in txn_recs])
        all_or_none = lambda view_set, t: z3.Or(
            z3.And([view_set(R(r)) for r in per_txn[t]]), z3.And([z3.Not(view_set(R(r))) for r in per_txn[t]]))

        # Record Visibility: brokers never expose partial or aborted transactions.
        self.invariants["BrokerSeesOnlyCommittedTxns"] = only_committed(image)
        # Record Visibility: nor does the controller to its clients.
        self.invariants["ControllerReadsOnlyCommittedTxns"] = only_committed(view)
        # A committed transaction's records are published all at once, by one image.
        self.invariants["TxnPublishedAtOnce"] = z3.And([
            z3.And(pubs(T(t)) <= 1, all_or_none(image, t)) for t in per_txn])
        # Record Visibility, completeness: a broker that has handled every
        # committed batch publishes every committed record.
        self.invariants["BrokerPublishesCommitted"] = z3.Implies(caught_up, z3.And([
            z3.Implies(committed(R(r)), image(R(r))) for r in txn_recs + normal_recs]))
        # Snapshots: taken at batch-aligned images outside transactions only.
        self.invariants["SnapshotOutsideTxn"] = z3.Not(snap_in_txn)
        # KAFKA-17713: Raft expects a snapshot's offset to end a record batch.
        self.invariants["SnapshotBatchAligned"] = sc.var("snapshot_aligned", Bool())
        # Controller Failover: a controller that lost leadership follows the new
        # leader's log; replaying it never throws (which ends the process).
        former_fault = sc.var("former_leader_fault", Str())
        self.invariants["FormerLeaderReplaysCleanly"] = former_fault == z3.StringVal("")
        # Nested Begin, End or Abort without Begin: replay errors.
        self.invariants["RecordsWellFormed"] = fault == z3.StringVal("")
        # Safety stand-in for "every transaction is eventually ended or aborted":
        # with no controller write in flight, no transaction is open.
        self.invariants["IdleMeansNoOpenTxn"] = z3.Implies(
            idle, sc.forall("Txn", lambda t: status(t) != z3.StringVal("open")))

        self.witnesses["TxnCommitted"] = sc.exists("Txn", lambda t: status(t) == z3.StringVal("committed"))
        self.witnesses["TxnAborted"] = sc.exists("Txn", lambda t: status(t) == z3.StringVal("aborted"))
        self.witnesses["FailoverHappened"] = failovers >= 1
        self.witnesses["BrokerPublishedTxn"] = z3.Or([image(R(r)) for r in txn_recs])
        self.witnesses["ControllerReadTxn"] = z3.Or([view(R(r)) for r in txn_recs])
        self.witnesses["BrokerMovedPastAbort"] = sc.exists(
            "Txn", lambda t: z3.And(status(t) == z3.StringVal("aborted"), passed(t)))
        self.witnesses["SnapshotTaken"] = snapped
        self.witnesses["BrokerLoadedSnapshot"] = sc.var("broker_loaded_snapshot", Bool())
        self.witnesses["FormerLeaderReplayedTxn"] = sc.var("former_leader_replayed_marker", Bool())

        in_txn = sc.exists("Txn", lambda t: status(t) == z3.StringVal("open"))
        self.predicates["InTxn"] = in_txn
        self.predicates["NoOpenTxn"] = z3.Not(in_txn)

    # -- the state machine -------------------------------------------------------
    def init_states(self):
        yield KState((), 0, None, 1, 1, -1, 0, loader.INITIAL, None, 0, 0, (0,) * self.ntxns, None)

    def next(self, s: KState):
        c = self.constants
        yield from self._controller_appends(s, c)
        # Raft: the high watermark passes the next batch; the active controller
        # advances its last stable offset (Record Visibility).
        if s.hw < len(s.log):
            hw = s.hw + 1
            yield ("CommitBatch", (("batch", hw),)), s._replace(
                hw=hw, lso=controller.lso_after_commit(s.lso, s.log, hw, c["lso_from_committed"]))
        if s.failovers < c["failovers"]:
            yield from self._failovers(s)
        yield from self._loader_commits(s)
        yield from self._snapshot(s, c)
        if s.restarts < c["broker_restarts"]:
            yield from self._broker_restart(s)

    def _controller_appends(self, s: KState, c):
        """Transactions in the KRaft Controller: Begin, records and End, in as
        many batches as the batch size needs, never interleaved with other
        records."""
        if not (c["pipelined"] or c["whole_txn_append"]) and s.hw < len(s.log):
            return
        cap = c["batch_records"]
        if s.writing is not None:
            t, k = s.writing
            script = self.scripts[t]
            for n in range(1, min(cap, len(script) - k) + 1):
                done = k + n == len(script)
                yield ("AppendTxnBatch", (("txn", f"t{t}"), ("records", n))), s._replace(
                    log=s.log + (script[k:k + n],), writing=None if done else (t, k + n))
            return
        if s.next_txn <= self.ntxns and c["whole_txn_append"]:
            # QuorumController.appendRecords: one write event cuts the records into
            # batches of maxRecordsPerBatch and appends them all.
            t = s.next_txn
            script = self.scripts[t]
            batches = tuple(script[k:k + cap] for k in range(0, len(script), cap))
            yield ("AppendTxn", (("txn", f"t{t}"), ("batches", len(batches)))), s._replace(
                log=s.log + batches, next_txn=t + 1)
        elif s.next_txn <= self.ntxns:
            t = s.next_txn
            script = self.scripts[t]
            for n in range(1, min(cap, len(script)) + 1):
                yield ("BeginTxn", (("txn", f"t{t}"), ("records", n))), s._replace(
                    log=s.log + (script[:n],), writing=None if n == len(script) else (t, n),
                    next_txn=t + 1)
        if s.next_normal <= c["normals"]:
            n = s.next_normal
            yield ("WriteRecord", (("record", f"n{n}"),)), s._replace(
                log=s.log + (((NORMAL, n),),), next_normal=n + 1)

    def _failovers(self, s: KState):
        """Controller Failover: the new leader keeps every committed batch and
        any prefix of the uncommitted tail, replays it, and aborts a
        transaction left open at the log's end before anything else. With two
        controllers the leaving one becomes the former leader (deactivate()),
        and the former leader, if it is the one taking over, brings its own
        transaction start unless its replay threw (it then restarted from the log)."""
        c = self.constants
        committed = len(flatten(s.log[: s.hw]))
        for kept in range(len(s.log) - s.hw + 1):
            log = s.log[: s.hw + kept]
            lso = controller.lso_of_replayed_log(log)
            nxt = s.next_txn if s.next_txn <= self.ntxns and c["bootstrap_reactivation"] else None
            believed = controller.FROM_LOG
            if s.former is not None:
                tso, txn, pos = s.former
                records = flatten(log)
                tso, txn, fault = controller.standby_replay(records, tso, txn, pos, len(records))
                if not fault:
                    believed = (txn, tso) if tso != -1 else None
            batch, reopened = controller.activation_batch(log, nxt, c["activation_record"], believed)
            t = s._replace(log=log + ((batch,) if batch else ()), hw=len(log), lso=lso,
                           failovers=s.failovers + 1, writing=None)
            if c["controllers"] == 2:
                tso, txn = controller.deactivated(s.log, s.hw, c["deactivate_resets_txn"])
                t = t._replace(former=(tso, txn, committed))
            if reopened is not None:
                t = t._replace(writing=(reopened, 1), next_txn=reopened + 1)
            yield ("ControllerFailover", (("kept_uncommitted", kept),)), t

    def _loader_commits(self, s: KState):
        """Record Visibility on the broker: one commit callback hands the
        loader every batch committed since the last one (any number of them),
        then the loader flushes."""
        ld = s.loader
        ends = batch_end_offsets(s.log)
        for n in range(1, s.hw - ld.loaded + 1):
            published: list = []
            new = ld
            for b in range(ld.loaded, ld.loaded + n):
                new = loader.load_batch(new, s.log[b], ends[b] - len(s.log[b]) + 1, self.clearing, published,
                                        self.dropping)
            new = loader.flush(new, ends[ld.loaded + n - 1], published)
            pubs = s.publishes
            for delta in published:
                touched = {r[1] for r in delta if r[0] == RECORD}
                if touched:
                    pubs = tuple(p + (i + 1 in touched) for i, p in enumerate(pubs))
            yield ("LoaderHandleCommit", (("batches", n),)), s._replace(loader=new, publishes=pubs)

    def _snapshot(self, s: KState, c):
        """Snapshots: the snapshot generator writes the published image, only
        when its offset is the end of a batch."""
        ld = s.loader
        if s.snapshots >= c["snapshots"] or ld.image_offset < 0:
            return
        if s.snapshot is not None and s.snapshot[0] >= ld.image_offset:
            return
        if c["snapshot_alignment"] and ld.image_offset not in batch_end_offsets(s.log[: ld.loaded]):
            return
        yield ("TakeSnapshot", (("offset", ld.image_offset),)), s._replace(
            snapshot=(ld.image_offset, ld.image), snapshots=s.snapshots + 1)

    def _broker_restart(self, s: KState):
        """Snapshots: a restarted broker loads the latest snapshot as its
        image and replays the committed batches after it."""
        if s.snapshot is None:
            ld, pubs = loader.INITIAL, (0,) * self.ntxns
        else:
            off, image = s.snapshot
            # the batches wholly at or before the snapshot's offset (all of them
            # up to it when the snapshot is batch-aligned)
            loaded = sum(1 for e in batch_end_offsets(s.log) if e <= off)
            ld = loader.INITIAL._replace(image=image, image_offset=off, loaded=loaded)
            pubs = tuple(int(any(r[0] == RECORD and r[1] == t for r in image)) for t in range(1, self.ntxns + 1))
        yield ("BrokerLoadsSnapshot", (("offset", ld.image_offset),)), s._replace(
            loader=ld, publishes=pubs, restarts=s.restarts + 1)

    # -- observation ---------------------------------------------------------------
    def observe(self, s: KState):
        records = flatten(s.log)
        committed = records[: batch_end_offsets(s.log)[s.hw - 1] + 1] if s.hw else ()
        status = txn_status(committed, self.ntxns)
        names = self.names
        markers = marker_offsets(records)
        ld = s.loader
        snap_in_txn, aligned = False, True
        if s.snapshot is not None:
            off = s.snapshot[0]
            snap_in_txn = any(b <= off and (e is None or off < e) for b, e in markers.values())
            aligned = off in batch_end_offsets(s.log)
        former_fault, former_marker = "", False
        if s.former is not None:
            tso, txn, pos = s.former
            hi = len(committed)
            former_fault = controller.standby_replay(records, tso, txn, pos, hi)[2]
            former_marker = any(r[0] in MARKERS for r in records[pos:hi])
        return {
            "status": dict(zip(self.txn_names, status)),
            "broker_image": {names[r] for r in ld.image},
            "controller_view": {names[r] for r in state_at(records, s.lso)},
            "snapshot": {names[r] for r in s.snapshot[1]} if s.snapshot else set(),
            "snapshot_in_txn": snap_in_txn,
            "snapshot_aligned": aligned,
            "former_leader_fault": former_fault,
            "former_leader_replayed_marker": former_marker and not former_fault,
            "publishes": dict(zip(self.txn_names, s.publishes)),
            "replay_fault": ld.fault,
            "controller_idle": s.writing is None and s.hw == len(s.log),
            "failovers": s.failovers,
            "snapshot_taken": s.snapshots > 0,
            "broker_passed": {f"t{t}" for t, (_, e) in markers.items() if e is not None and e <= ld.image_offset},
            "committed_records": {names[r] for r in committed
                                  if r[0] == NORMAL or r[0] == RECORD and status[r[1] - 1] == "committed"},
            "broker_caught_up": ld.loaded == s.hw,
            "broker_loaded_snapshot": s.restarts > 0 and s.snapshot is not None and ld.image_offset >= s.snapshot[0],
        }

    def state_vars(self, s: KState):
        ld = s.loader
        return {
            "log": tuple(tuple(record_name(r) for r in b) for b in s.log),
            "high_watermark": s.hw,
            "writing": f"t{s.writing[0]}:{s.writing[1]}" if s.writing else "",
            "next_txn": s.next_txn,
            "next_normal": s.next_normal,
            "last_stable_offset": s.lso,
            "failovers": s.failovers,
            "loader_txn_state": ld.txn_state,
            "loader_delta": frozenset(record_name(r) for r in ld.delta),
            "loader_pending": ld.pending,
            "broker_image": frozenset(record_name(r) for r in ld.image),
            "broker_image_offset": ld.image_offset,
            "loader_batches": ld.loaded,
            "replay_fault": ld.fault,
            "snapshot_offset": s.snapshot[0] if s.snapshot else -1,
            "snapshot": frozenset(record_name(r) for r in s.snapshot[1]) if s.snapshot else frozenset(),
            "publishes": dict(zip(self.txn_names, s.publishes)),
            "broker_restarts": s.restarts,
            "former_leader": (f"txnStart={s.former[0]}, listener at {s.former[2]}" if s.former else ""),
        }
