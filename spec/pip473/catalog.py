"""One description per PIP-473 action: its parameters, the PIP flow it
belongs to, every place it lives, what it does, the section it cites, the
messages it stands for in a sequence diagram, and whether it deserves weak
fairness. From this table come ACTIONS.md (`python -m
txncheck.spec.pip473.catalog > spec/pip473/ACTIONS.md`; a test checks the file
is what it writes), the Mermaid routes (`Pip473.diagram`, drawn by
checker/render/mermaid.py) and the replay's parameter check
(counterexamples/replay_pip473/actions.py reads `ACTIONS`).

The places a row names: `impl`, the spec's function; `ref`, the reference
implementation's; `relation`, the hand-written Z3 relation's. The places
found by the action's name are not repeated here: its replay handler
(`HANDLERS` in counterexamples/replay_pip473/actions.py) and its footprints
(reductions/footprints.py). tests/test_pip473.py
(test_the_catalog_names_every_action_and_its_function and the two after it)
checks that each is there and is the one that runs the action.

Section references are to `pip/pip-473.md` (seed 001) unless marked "notes"
(`protocol-notes.md`, in the shared notes of the project, not in this
repository) or "PIP-468" (split/merge order, in the notes).
"""

from __future__ import annotations

from typing import NamedTuple

from .variants import BOUND_NEEDS, CHANGES, FIXES, MERGED

# Participants of the sequence diagram ({seg} is the step's segment).
CLIENT, TC, STORE, DISPATCHER = "Client", "TC", "Metadata Store", "Dispatcher"
TB, PAS = "TB {seg}", "PendingAck {seg}"


class Message(NamedTuple):
    """An arrow of the sequence diagram; the texts are formatted with the
    step's parameters as displayed."""

    sender: str
    receiver: str
    text: str
    dashed: bool = False


class Action(NamedTuple):
    name: str
    params: tuple          # ((name, type), ...) in label order
    flow: str              # a key of FLOWS
    impl: str              # module.function under spec/pip473 (protocol.coordinator.new_txn) that computes the step
    ref: str               # module.Class.method under reference/ that takes the step when replay drives it
    relation: str          # module.function under spec/pip473/symbolic that states the step for `prove`
                           # ("": the relation refuses the bounds that enable it)
    what: str
    cites: str
    messages: tuple
    fair: bool = False     # deserves weak fairness (liveness)
    optional: tuple = ()   # parameters a label may leave out: sub (sub1 unless named)


SEND = (("op", str), ("txn", str), ("seg", str))
SUB = (("sub", str),)
STAGE = (("seg", str), ("txn", str), ("closed", bool))   # closed: the step of an unloaded (closed) instance

ACTIONS = (
    # -- the txn's life at the coordinator ------------------------------------------
    Action("newTxn", (("txn", str),), "txn", "protocol.coordinator.new_txn",
           "coordinator.TransactionCoordinatorV5.new_txn", "relation_steps.new_txn",
           "TC V5 creates `/txn/<txn>` OPEN with deadline `now+timeout`",
           "Components / TC V5 `newTxn`",
           (Message(CLIENT, TC, "newTxn → {txn}"), Message(TC, STORE, "create /txn/{txn} OPEN"))),
    Action("timeoutSweep", (("txn", str),), "txn", "protocol.coordinator.timeout",
           "coordinator.TransactionCoordinatorV5.abort_timed_out", "relation_steps.timeout",
           "abort an OPEN txn past its deadline (same CAS flow, then finalize)",
           "TC V5 Timeout sweep; `idx:txn-by-deadline`",
           (Message(TC, STORE, "timeout: CAS /txn/{txn} OPEN→ABORTED"),), fair=True),
    Action("tick", (), "txn", "spec.Pip473.next",
           "scheduler.Scheduler.advance", "relation_steps.tick",
           "logical clock advances one unit (bounded)", "(deadline / retention)",
           (Message(TC, TC, "tick (time passes)"),)),
    # -- publish ----------------------------------------------------------------------
    Action("publishCheck", SEND, "publish", "protocol.publish.check",
           "transaction_buffer.MetadataTransactionBuffer._check", "relation_publish.check",
           "broker reads the header, cache first; not OPEN or missing -> TxnConflict (op rejected); OPEN -> "
           "cached + point watch (pip-text); with bound `check = steps` (merged/fixed) a miss only reads, and "
           "the cache put is `publishCache`", "Flows / Publish; notes 1",
           (Message(CLIENT, TB, "send({txn}, {op})"), Message(TB, STORE, "read /txn/{txn}.state (cached)"))),
    Action("publishCache", SEND, "publish", "protocol.publish_cache.cache_put",
           "transaction_buffer.MetadataTransactionBuffer._cached", "",
           "merged/fixed, bound `check = steps`: the callback of a publishCheck's header read that answered "
           "OPEN: `putIfAbsent` of the OPEN entry (it holds the read position from now on), then the op put; "
           "a decision and its event can come between the read and this put, which then makes an OPEN entry "
           "no event will clear. After an unload it puts into the closed instance (stage `closed-read`). "
           "fixed F11: a read whose txn the instance applied since it was issued (stage `read-applied`) "
           "puts nothing and fails the send",
           "`MetadataTransactionBuffer.readStateCacheFirst` (L366-L377)",
           (Message(STORE, TB, "getHeader({txn}) returns: putIfAbsent OPEN", True),), fair=True),
    Action("publishPutOp", SEND, "publish", "protocol.publish.put_write_op",
           "transaction_buffer.MetadataTransactionBuffer._put_op", "relation_publish.put_write_op",
           "sequential put `/txn-op/<txn>/<seq>` kind=write (pip-text: real position; merged/fixed: placeholder)",
           "Data Model / Operation records",
           (Message(TB, STORE, "put /txn-op/{txn}/<seq> write {op}"),)),
    Action("publishValidate", SEND, "publish", "protocol.publish.validate",
           "transaction_buffer.MetadataTransactionBuffer._validate", "relation_publish.validate",
           "fixed only: linearizable header re-read after the op put; not OPEN -> delete own op, reject",
           "fixed change F1",
           (Message(TB, STORE, "re-read /txn/{txn} (validate)"),)),
    Action("publishAppend", SEND, "publish", "protocol.publish.append",
           "transaction_buffer.MetadataTransactionBuffer._append", "relation_publish.append",
           "managed-ledger append (sealed/terminated segment rejects)",
           "Components / MetadataTransactionBuffer `appendBufferToTxn`; notes 1",
           (Message(TB, TB, "asyncAddEntry({op}) to the ledger"),)),
    Action("publishTrack", SEND, "publish", "protocol.publish.track",
           "transaction_buffer.MetadataTransactionBuffer._added", "",
           "merged/fixed, bound `track = steps`: the callback of a send's ledger add: `trackPosition` of the "
           "entry's position (F8 re-keys the txn's aborted record), then the client's answer; it runs before "
           "the ledger's next add completes, and a crash before it leaves the entry in the ledger and fails "
           "the send; after an unload the closed instance runs it, and the answer is lost with the connection",
           "`MetadataTransactionBuffer.appendToLedger`, `trackPosition` (L398-L416)",
           (Message(TB, CLIENT, "send({txn}, {op}) ok: trackPosition"),), fair=True),
    Action("publishOpFails", SEND, "publish", "protocol.publish.op_fails",
           "transaction_buffer.MetadataTransactionBuffer._op_write_failed", "relation_publish.op_fails",
           "merged/fixed, bound `opfail`: the WRITE op put fails (a metadata-store error), the send is "
           "rejected; merged keeps the header read's cache entry, fixed F5 drops it when the broker holds "
           "nothing else of the txn", "notes \"Merged-code mechanisms\"",
           (Message(STORE, TB, "put /txn-op/{txn}/<seq> fails", True),
            Message(TB, CLIENT, "send({txn}, {op}) fails", True))),
    Action("publishPlain", (("op", str), ("seg", str)), "publish", "protocol.publish_plain.plain",
           "cluster.Cluster.publish", "relation_publish.plain",
           "bound `plain`: a non-transactional send (`n1, n2, ...`, in order), routed by key and appended; "
           "merged/fixed then run `syncMaxReadPositionForNormalPublish`: recompute maxReadPosition and "
           "persist the watermark if it advanced. merged: not gated on recovery (a recovering buffer knows "
           "no txn, so the recompute gives the LAC); fixed F7: nothing until recovery completes",
           "notes \"Merged-code mechanisms\"",
           (Message(CLIENT, TB, "send({op}), no txn"),
            Message(TB, STORE, "syncMaxReadPositionForNormalPublish: persist the watermark"))),
    Action("plainSync", (("seg", str), ("closed", bool)), "publish", "protocol.publish_plain.callback",
           "transaction_buffer.MetadataTransactionBuffer.sync_max_read_position_for_normal_publish", "",
           "bound `sync = steps`: the callback of a non-transactional entry's add, "
           "`syncMaxReadPositionForNormalPublish`, runs on the instance that added the entry (the closed one "
           "after an unload), before the ledger's next add completes; a crash before it drops it",
           "`MetadataTransactionBuffer.syncMaxReadPositionForNormalPublish` (L664-L679)",
           (Message(TB, STORE, "syncMaxReadPositionForNormalPublish: persist the watermark"),), fair=True),
    # -- ack --------------------------------------------------------------------------
    Action("appendAck", (("op", str), ("txn", str), ("seg", str), ("pos", int), ("cumulative", bool)), "ack",
           "protocol.publish.ack",
           "pending_ack.MetadataPendingAckStore._ack", "relation_publish.ack",
           "PendingAckStore `appendIndividualAck` / `appendCumulativeAck` of the ack's subscription (`sub`, "
           "named only for sub2, bound `subs`): header check (pip-text cache first; merged: none at all, the "
           "txn joins the store's open set; fixed: the store) + ack op record",
           "Components / MetadataPendingAckStore",
           (Message(CLIENT, PAS, "ack({txn}, {op}, {pos}, {cumulative})"),
            Message(PAS, STORE, "put /txn-op/{txn}/<seq> ack")), optional=SUB),
    Action("appendAckOpen", (("op", str), ("txn", str), ("seg", str), ("pos", int), ("cumulative", bool)), "ack",
           "protocol.publish.ack_open",
           "pending_ack.MetadataPendingAckStore._opened", "",
           "merged, bound `apply = steps`: the ack's op put completed; only now does the txn join the pending-ack "
           "store's open set and the handle's memory (`allOf(appends).thenRun(openTxns.add)`), and the client "
           "has its answer",
           "`MetadataPendingAckStore.appendAcks`",
           (Message(PAS, PAS, "openTxns.add({txn})"), Message(PAS, CLIENT, "ack({txn}, {op}) done", True)),
           fair=True, optional=SUB),
    # -- end-txn ----------------------------------------------------------------------
    Action("endTxn", (("txn", str), ("decision", str)), "end-txn", "protocol.coordinator.end_txn",
           "coordinator.TransactionCoordinatorV5.end_txn", "relation_steps.end_txn",
           "client END_TXN; TC does the single CAS OPEN->decision (merged/fixed: then lists ops and appends "
           "coalesced events in the same step, or, bound `tc = steps`, owes `tcList` and `tcPublish`); "
           "same-state retry is idempotent; other state -> InvalidTxnStatus; missing -> TransactionNotFound",
           "TC V5 `endTxn`; Flows / End-txn; notes 3",
           (Message(CLIENT, TC, "endTxn({txn}, {decision})"),
            Message(TC, STORE, "CAS /txn/{txn}.state OPEN→{decision}"))),
    Action("tcList", (("txn", str),), "end-txn", "protocol.coordinator.list_ops",
           "coordinator.TransactionCoordinatorV5._owe_fan_out", "relation_steps.list_ops",
           "bound `tc = steps` (merged/fixed): the TC lists the txn's op records (`listOpsByTxn`); the "
           "participants it will notify are those found now",
           "notes \"Merged-code mechanisms\"; `TransactionCoordinatorV5.fanOutEvents`",
           (Message(TC, STORE, "list /txn-op/{txn}/* (the participants to notify)"),), fair=True),
    Action("tcPublish", (("txn", str),), "end-txn", "protocol.coordinator.publish_events",
           "coordinator.TransactionCoordinatorV5._owe_fan_out", "relation_steps.publish_events",
           "bound `tc = steps`: the TC appends one coalesced event to each listed participant's stream, then "
           "owes the answer (`tcFinalize`)", "notes \"Merged-code mechanisms\"",
           (Message(TC, STORE, "publish the events of {txn} to the listed streams"),), fair=True),
    Action("tcPublishTo", (("txn", str), ("seg", str), ("to", str)), "end-txn", "protocol.coordinator.publish_one",
           "coordinator.TransactionCoordinatorV5._owe_publishes", "",
           "bound `tc = publishes`: one of the listed participants' publishes lands (`to` = buffer: the "
           "segment's event stream; acks: its subscription's); the TC answers (`tcFinalize`) once all have",
           "notes \"Merged-code mechanisms\"; `TransactionCoordinatorV5.fanOutEvents`",
           (Message(TC, STORE, "publish the event of {txn} to {seg}'s {to} stream"),), fair=True, optional=SUB),
    Action("tcFinalize", (("txn", str),), "end-txn", "protocol.coordinator.finalize",
           "coordinator.TransactionCoordinatorV5._owe_finalize", "relation_steps.finalize",
           "pip-text: TC sets `finalized_ms` on the header (version CAS), then acks the client; merged/fixed: "
           "the decision CAS already wrote `finalizedAt`, so only the answer", "TC V5 `endTxn`",
           (Message(TC, STORE, "set finalized_ms on /txn/{txn}"), Message(TC, CLIENT, "endTxn reply ({txn})", True)),
           fair=True),
    Action("deliverEvent", (("seg", str),), "end-txn", "protocol.notify.deliver_event",
           "broker.SegmentBroker.materialize", "relation.Pip473Relation._deliver",
           "the participant (TB + PendingAckStore of `seg`) receives its next notification and materializes "
           "(`notify.materialize`, GC phase 1): pip-text a point-watch event (in order, carries the new header "
           "value); merged/fixed a coalesced stream event that makes it re-read every OPEN header in its "
           "cache. Materialization = commit: evict, apply acks to the cursor; abort: mark aborted "
           "(merged/fixed: durable aborted record), drop acks; then delete the segment's own op records",
           "Notification mechanism; GC 1; notes 3",
           (Message(STORE, TB, "header watch / event fires", True),
            Message(STORE, PAS, "header watch / event fires", True),
            Message(TB, STORE, "materialize, delete own /txn-op records")), fair=True),
    Action("deliverAckEvent", (("seg", str),), "end-txn", "protocol.notify.deliver_event",
           "broker.SegmentBroker.materialize_acks", "relation.Pip473Relation._deliver",
           "bound `participants = split`: the pending-ack store of one subscription of the segment (`sub`, "
           "named only for sub2), a participant of its own with its own cache and stream, receives its next "
           "notification and materializes: commit applies its acks to the cursor, abort drops them; then it "
           "deletes its ACK op records (`deliverEvent` is then the transaction buffer's alone, deleting the "
           "WRITE ops)", "notes \"Merged-code mechanisms\" (two kinds of participant)",
           (Message(STORE, PAS, "subscription event fires", True),
            Message(PAS, STORE, "apply or drop the acks, delete own ack ops")), fair=True, optional=SUB),
    # -- bound apply = "steps": a decision applied in the code's stages (apply.py) ------
    Action("reconcileRead", STAGE, "end-txn", "protocol.apply.read_header",
           "apply_chain.ApplyChain._read", "",
           "bound `apply = steps`: a header read the buffer's reconcile issued (`deliverEvent`) returns; a "
           "decided (or missing: ABORTED) header enqueues the apply on the buffer's chain, whose in-memory "
           "part runs now if the chain is idle: the entry dropped, an abort added to the in-memory aborted "
           "set, maxReadPosition recomputed. `closed`: the closed instance's read, after an unload",
           "`MetadataTransactionBuffer.triggerReconcile`, `enqueueApplyTerminal`, `applyTerminalNow` (L419-L478)",
           (Message(STORE, TB, "getHeader({txn}) returns", True),), fair=True),
    Action("applyAbortedRecord", STAGE, "end-txn", "protocol.apply.put_aborted_record",
           "apply_chain.ApplyChain._record", "",
           "bound `apply = steps`: the head of the buffer's apply chain, an abort: its aborted record's put "
           "lands, keyed at the position its in-memory part captured (the txn's last entry, else the LAC)",
           "`MetadataTransactionBuffer.persistAbortedRecord` (L508-L510, L529-L541)",
           (Message(TB, STORE, "put aborted record of {txn}"),), fair=True),
    Action("applyWatermark", STAGE, "end-txn", "protocol.apply.cas_watermark",
           "apply_chain.ApplyChain._watermark", "",
           "bound `apply = steps`: the chain's watermark CAS lands: maxReadPosition persisted if above the "
           "stored watermark (a closed instance's is capped by its closed ledger handle)",
           "`MetadataTransactionBuffer.persistWatermarkIfAdvanced` (L511)",
           (Message(TB, STORE, "CAS the watermark"),), fair=True),
    Action("plainWatermark", (("seg", str), ("closed", bool)), "publish", "protocol.apply.cas_watermark",
           "apply_chain.ApplyChain._normal_watermark", "",
           "bound `apply = steps`: a non-transactional send's watermark CAS, chained on the buffer's "
           "`stateTail` behind the applies queued there, lands when the chain reaches it: maxReadPosition "
           "as it is then, persisted if above the watermark the instance knows; a lost CAS re-reads the "
           "record and is only logged",
           "`MetadataTransactionBuffer.syncMaxReadPositionForNormalPublish`, `persistWatermarkIfAdvanced` "
           "(L547-L596, L664-L679)",
           (Message(TB, STORE, "CAS the watermark (normal publish)"),), fair=True),
    Action("applyDeleteOps", STAGE, "end-txn", "protocol.apply.delete_write_ops",
           "apply_chain.ApplyChain._delete", "",
           "bound `apply = steps`: the chain's delete of the txn's WRITE ops on the segment lands; the next "
           "queued apply's in-memory part runs in the same callback",
           "`MetadataTransactionBuffer.applyTerminalNow` (L512-L514)",
           (Message(TB, STORE, "delete WRITE ops of {txn}"),), fair=True),
    Action("ackReconcileRead", STAGE, "end-txn", "protocol.apply.read_ack_header",
           "pending_ack.MetadataPendingAckStore._read", "",
           "bound `apply = steps`: a header read of the pending-ack store's reconcile returns; a decided one "
           "runs `applyTerminal`: the txn leaves the open set and the handle commits (acks to the cursor) "
           "or aborts at once, and the delete of its ACK ops is issued",
           "`MetadataPendingAckStore.triggerReconcile`, `applyTerminal`",
           (Message(STORE, PAS, "getHeader({txn}) returns", True),), fair=True),
    Action("ackDeleteOps", STAGE, "end-txn", "protocol.apply.delete_ack_ops",
           "pending_ack.MetadataPendingAckStore._delete_ops", "",
           "bound `apply = steps`: the pending-ack store's delete of the txn's ACK ops lands",
           "`MetadataPendingAckStore.applyTerminal` (`deleteAckOpsForSegmentSubscriptionAndTxn`)",
           (Message(PAS, STORE, "delete ACK ops of {txn}"),), fair=True),
    # -- dispatch ---------------------------------------------------------------------
    Action("dispatch", (("seg", str),), "dispatch", "protocol.dispatcher.dispatch",
           "dispatcher.Dispatcher.read_next", "relation.Pip473Relation._dispatch",
           "the dispatcher of one subscription (`sub`, named only for sub2; bound `subs`) reads the next "
           "entry if it is <= `getMaxReadPosition()`; skips it when `isTxnAborted`, else delivers it "
           "(recorded in the ghost history)", "Components / Dispatcher; Flows / Subscribe-dispatch",
           (Message(DISPATCHER, TB, "getMaxReadPosition / isTxnAborted"),
            Message(TB, DISPATCHER, "next entry", True)), optional=SUB),
    # -- recovery ---------------------------------------------------------------------
    Action("crash", (("seg", str),), "recovery", "protocol.recovery.crash",
           "broker.SegmentBroker.crash", "relation_recovery.crash",
           "the broker of `seg` crashes: TB/PAS caches, watches, pending events and in-flight publishes are lost",
           "Recovery",
           (Message(TB, PAS, "broker of {seg} crashes", True),)),
    Action("unload", (("seg", str),), "recovery", "protocol.recovery.unload",
           "broker.SegmentBroker.unload", "relation_recovery.unload",
           "merged/fixed, bound `unloads`: a topic unload (the segment's ownership changes): the buffer instance "
           "is closed and its memory, events and watches are gone, as in a crash, and the new owner loads the "
           "segment (`recover`); the sends the closed instance took go on (stage `closed-*`, "
           "`publish.closed_*`): their op puts still land, maybe after the new owner's recovery scan, their "
           "appends fail on the closed ledger",
           "`MetadataTransactionBuffer.internalAppend` (checks `closed` on entry only), `closeAsync`",
           (Message(TB, TB, "topic {seg} unloaded: buffer closed, a new owner loads it", True),)),
    Action("recover", (("seg", str),), "recovery", "protocol.recovery.recover",
           "broker.SegmentBroker.start", "relation_recovery.recover",
           "the broker is back. pip-text: `recover()` / `replayAsync()` in one step, as `recoverComplete`. "
           "merged/fixed: the transaction buffer is constructed (maxReadPosition = the LAC, the aborted set "
           "empty; fixed F6: getMaxReadPosition() answers the earliest position until recovery completes) "
           "and subscribes; dispatch runs, the buffer's publishes and events wait for its recovery; with "
           "split participants each pending-ack store replays on its own (`recoverAcks`), and its acks, "
           "events and dispatcher wait for that replay alone", "Recovery",
           (Message(TB, STORE, "recover(): read indexes and headers"),
            Message(PAS, STORE, "replayAsync(): scan ack ops")), fair=True),
    Action("recoverWatermark", (("seg", str),), "recovery", "protocol.recovery.recover_watermark",
           "transaction_buffer.MetadataTransactionBuffer.load_watermark", "relation_recovery.recover_watermark",
           "merged/fixed, bound `recovery = \"steps\"`: the recovering buffer loads the durable watermark; "
           "maxReadPosition starts there if it exists (fixed F6: the getter still answers the earliest "
           "position). Until this step a publish's watermark CAS expects no record and fails if one exists",
           "`MetadataTransactionBuffer.recover`, step 1",
           (Message(TB, STORE, "recovery: load the watermark"),), fair=True),
    Action("recoverAborted", (("seg", str),), "recovery", "protocol.recovery.recover_aborted",
           "transaction_buffer.MetadataTransactionBuffer.load_aborted_records", "relation_recovery.recover_aborted",
           "merged/fixed, bound `recovery = \"steps\"`: the recovering buffer loads the segment's aborted "
           "records; isTxnAborted answers from them from now on (fixed F8: waiting records are keyed at the LAC)",
           "`MetadataTransactionBuffer.recover`, step 2",
           (Message(TB, STORE, "recovery: load the aborted records"),), fair=True),
    Action("recoverComplete", (("seg", str),), "recovery", "protocol.recovery.recover_complete",
           "broker.SegmentBroker.recover", "relation_recovery.recover_complete_step",
           "merged/fixed: the buffer's recovery completes (with `recovery = \"steps\"`, after the two loads: "
           "the scan of the WRITE ops and the header reads, one step: it assumes they form one snapshot, see "
           "protocol.recovery.py): rebuild from the indexes and headers, finish "
           "materialization of decided txns; a txn found OPEN is tracked as RECOVERED (holds the read "
           "position, never re-keyed); fixed F4: a missing header's ops are deleted, no aborted record",
           "Components / `recover()`, `replayAsync()`; notes \"Recovery in the merged code\"",
           (Message(TB, STORE, "recovery completes: watermark, aborted records, ops, headers"),), fair=True),
    Action("recoverAcks", (("seg", str),), "recovery", "protocol.recovery.recover_acks",
           "pending_ack.MetadataPendingAckStore.replay", "relation_recovery.recover_acks",
           "merged/fixed, split participants: the pending-ack store of one subscription (`sub`, named only for "
           "sub2) replays on its own, independently of the buffer's recovery: it scans its ACK ops, reads their "
           "headers (missing = ABORTED), re-seeds its open set with the OPEN txns and applies the decided ones "
           "(commit or abort through the handle, then its ACK ops deleted); then the handle is ready: its acks, "
           "its events and a consumer's return (the dispatcher) wait until now",
           "Components / `replayAsync()`; `MetadataPendingAckStore.replayAsync`, "
           "`PersistentSubscription.addConsumer`",
           (Message(PAS, STORE, "replayAsync(): scan ack ops, read their headers"),
            Message(PAS, DISPATCHER, "handle ready: the consumer is let back in", True)), fair=True,
           optional=SUB),
    Action("tcFailover", (), "recovery", "protocol.coordinator.failover",
           "coordinator.TransactionCoordinatorV5.take_over", "relation_steps.failover",
           "the TC loses its in-memory state (pending finalize/replies); a new TC resumes from the store; "
           "fixed F9 (bound `tc = steps`): it first owes the fan-out (`tcList`) of every decided txn whose ops "
           "remain", "Recovery / TC failover",
           (Message(TC, TC, "failover: new TC resumes from the store"),)),
    # -- GC ---------------------------------------------------------------------------
    Action("gcSweep", (("txn", str),), "GC", "protocol.coordinator.gc",
           "coordinator.TransactionCoordinatorV5.collect", "relation_steps.gc",
           "GC phase 2, past retention: pip-text force-deletes leftover ops then deletes the header; "
           "merged/fixed re-drive the fan-out while ops remain, delete the header only when none remain "
           "(phase 1 is the participants' materialization, `deliverEvent`)",
           "Garbage collection 2; TC V5 GC sweep; notes 4",
           (Message(TC, STORE, "GC sweep: /txn-op/{txn}/* then the header"),), fair=True),
    Action("trimLedger", (("seg", str),), "GC", "protocol.segments.trim_ledger",
           "ledger.ManagedLedger.trim", "",
           "bound `trim` (merged/fixed): the managed ledger drops the entries its subscription acknowledged "
           "(the first retained position becomes the cursor's mark-delete + 1)",
           "notes \"Merged-code mechanisms\"",
           (Message(TB, TB, "ledger trims acknowledged entries"),)),
    Action("pruneAborted", (("seg", str),), "GC", "protocol.buffer.prune_aborted",
           "transaction_buffer.MetadataTransactionBuffer.prune_aborted", "",
           "bound `trim`: the buffer's periodic task deletes the aborted records whose prune key (the txn's "
           "last tracked position, else the LAC; fixed F8: none while an append of the txn is in flight, "
           "raised by a later entry) is below the first retained position; scan and deletes in one step",
           "notes \"Merged-code mechanisms\" (`pruneTrimmedAbortedTxns`)",
           (Message(TB, STORE, "prune aborted records keyed below the first retained entry"),)),
    # -- split / merge ------------------------------------------------------------------
    Action("createChildren", (), "split/merge", "protocol.segments.create_children",
           "segment_controller.SegmentController.create_children", "relation_recovery.create_children",
           "split/merge step 1+2: read the parents' subscriptions, create the children with cursors at earliest",
           "PIP-468 order (notes)",
           (Message(STORE, STORE, "split/merge: create children (cursors at earliest)"),)),
    Action("terminateParents", (), "split/merge", "protocol.segments.terminate_parents",
           "segment_controller.SegmentController.terminate", "relation_recovery.terminate_parents",
           "split/merge step 3: terminate the parent ledger(s); appends now fail with TopicTerminated",
           "PIP-468 order (notes)",
           (Message(STORE, STORE, "split/merge: terminate parent ledger(s)"),)),
    Action("casSegmentMetadata", (), "split/merge", "protocol.segments.cas_metadata",
           "segment_controller.SegmentController.seal", "relation_recovery.cas_metadata",
           "split/merge step 4: one CAS, parents SEALED, children ACTIVE", "PIP-468 order (notes)",
           (Message(STORE, STORE, "split/merge: CAS parents SEALED, children ACTIVE"),)),
)

BY_NAME = {a.name: a for a in ACTIONS}


class Flow(NamedTuple):
    name: str
    section: str       # of the PIP
    text: str


# The PIP's flows, in the document's order; each action names its flow.
FLOWS = (
    Flow("txn", "Components / TC V5", "a txn is created, times out, and time passes"),
    Flow("publish", "Flows / Publish", "a transactional send through its stages (publish.STEPS), and a plain one"),
    Flow("ack", "Components / MetadataPendingAckStore", "a transactional ack of one subscription"),
    Flow("end-txn", "Flows / End-txn; Notification mechanism",
         "the decision CAS, the fan-out of events, and each participant's materialization "
         "(notify.materialize: GC phase 1, whose other half is the TC's sweep, `gcSweep`)"),
    Flow("dispatch", "Flows / Subscribe-dispatch", "a dispatcher reads up to maxReadPosition, skipping aborted entries"),
    Flow("recovery", "Recovery", "a participant broker crashes, or its topic is unloaded, and recovers (its buffer "
         "and each pending-ack store on their own); the TC fails over"),
    Flow("GC", "Garbage collection",
         "phase 2: the TC's sweep (coordinator.gc), which deletes a header once phase 1, the participants' "
         "materialization (notify.materialize, run by `deliverEvent`, `deliverAckEvent`, "
         "`publishValidate`, `recoverComplete` and `recoverAcks`), has deleted every op; and the ledger's "
         "trimming with the pruning of aborted records"),
    Flow("split/merge", "PIP-468 order (notes)", "the segment controller's split or merge, in four steps"),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """spec/pip473/ACTIONS.md."""
    out = [
        "# PIP-473 spec: actions, parameters, predicates (stable names)",
        "",
        "Generated from `catalog.py` and `variants.py` beside this file "
        "(`python -m txncheck.spec.pip473.catalog > spec/pip473/ACTIONS.md`); edit those, not this file.",
        "",
        "Section references are to `pip/pip-473.md` (seed 001) unless marked",
        "\"notes\" (`protocol-notes.md`, the project's shared notes on the merged code, not part of this",
        "repository) or \"PIP-468\" (split/merge order, in the notes).",
        "Every action is `(name, ((param, value), ...))`; the params below are listed",
        "in the order they appear. Txn ids are `t1, t2, ...`; segments `s1, s2` (initial),",
        "`s3` (`s4`) (children); `op` names a client operation of the model's plan",
        "(`w1, w2, ...` writes, `a1, a2, ...` acks, `n1, n2, ...` non-transactional sends).",
        "",
        "Where each action lives: `function` under `spec/pip473/`, `reference` under `reference/` (what",
        "replay drives), `Z3 relation` under `spec/pip473/symbolic/` (none: the relation refuses the bounds",
        "that enable the action). Its replay handler is the entry of its name in `HANDLERS`",
        "(`counterexamples/replay_pip473/actions.py`), its footprints are in `reductions/footprints.py`.",
        "",
        "| action | params | flow | function | reference | Z3 relation | what it does | cites |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a in ACTIONS:
        params = ", ".join([p for p, _ in a.params] + [f"{p}?" for p, _ in a.optional])
        rel = f"`{a.relation}`" if a.relation else "none"
        out.append(f"| `{a.name}` | {params} | {a.flow} | `{a.impl}` | `{a.ref}` | {rel} | {_cell(a.what)} "
                   f"| {_cell(a.cites)} |")
    out += ["", "## Flows", "",
            "From each flow of the PIP to the actions that implement it (and their functions, in "
            "`spec/pip473/`).", "",
            "| flow | PIP section | actions | what |", "|---|---|---|---|"]
    for f in FLOWS:
        acts = ", ".join(f"`{a.name}` (`{a.impl}`)" for a in ACTIONS if a.flow == f.name)
        out.append(f"| {f.name} | {_cell(f.section)} | {acts} | {_cell(f.text)} |")
    out += ["", "## Variants", "",
            "A variant is a list of named changes (`variants.py`): pip-text has none, merged the first "
            "table's, fixed merged's and F1-F11. A fix names the model that fails without it.", "",
            "| change | variant | flags | where | what | fails without it |", "|---|---|---|---|---|---|"]
    for variant, changes in (("merged", MERGED), ("fixed", FIXES)):
        for c in changes:
            flags = ", ".join(f"{k} = {v}" for k, v in c.sets.items())
            why = "; ".join(f"{e.model}.toml: {e.property} in {e.length} states"
                            + (f" (only {', '.join(e.only)} left out)" if e.only else "")
                            + (f": {e.trace}" if e.trace else "") for e in c.necessary)
            out.append(f"| {c.name} | {variant} | {flags} | {c.where} | {_cell(c.what)} | {_cell(why)} |")
    out += ["", "Bounds only some variants read (a model that sets one for another variant is refused):", ""]
    for name, (flag, want) in BOUND_NEEDS.items():
        which = ", ".join(v for v in CHANGES if _flags(v, flag) == want)
        out.append(f"- `{name}`: {which} ({flag} = {want})")
    out += ["", *TAIL]
    return "\n".join(out) + "\n"


def _flags(variant: str, flag: str):
    from .variants import VARIANTS

    return getattr(VARIANTS[variant], flag)


TAIL = [
    "A new subscription / reader reading from the earliest position is the derived",
    "view `skipped(seg, pos)`: what the segment's live transaction buffer would hide",
    "right now (checked in every state by Atomicity), so it needs no extra state.",
    "",
    "Named state predicates (`self.predicates`), for each txn `t` (t1, t2, ...):",
    "`Started_<t>`, `Finalized_<t>`, `Committed_<t>`, `Aborted_<t>`, `Decided_<t>`, `AbortHidden_<t>`, `MaterializedByLive_<t>`,",
    "`Collected_<t>`, `NoOpsLeft_<t>`.",
    "",
    "Actions that deserve weak fairness (liveness): "
    + ", ".join(f"`{a.name}`" for a in ACTIONS if a.fair) + " (and `tick` if the property needs time to pass).",
    "",
    "Pruning rules, all behind the bound `prune` (see spec.py's docstring;",
    "`prune = false` enables each in every state, and tests/test_pruning_audit.py",
    "checks that they change no verdict at small bounds): `crash` only for a broker",
    "holding cached headers, events, aborted marks or in-memory acks, `unload` also while a",
    "send of the closing instance can still act; `tick` only",
    "while a deadline or retention window can still pass; the split/merge steps",
    "only while a send of the plan is unfinished, starting while a txn is OPEN;",
    "`tcFailover` only while the TC has in-memory work. Not a pruning rule: `newTxn` in id order across",
    "plans (txns whose clients run the same plan may start in any order; see",
    "`symmetry.py`).",
    "",
    "Watch semantics (bound `watches`, point-watch variant only): `point` (default)",
    "queues every header change, in order, with its value; `zk-oneshot` models a",
    "ZooKeeper one-shot watch: `fanout` queues nothing for a txn that already has an",
    "event pending at that participant, and `deliverEvent` reads the header's current",
    "state (the event carries no data) before re-registering. See",
    "`models/pip473/zk-oneshot.toml`.",
]


if __name__ == "__main__":
    print(markdown(), end="")
