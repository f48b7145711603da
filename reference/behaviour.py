"""The behaviours the reference implementation can run with.

`pip-text` follows PIP-473 as written; `merged` follows the code merged into
Pulsar where it departs from the text (protocol notes, points 1-4 and the
recovery notes); `fixed` is merged plus the changes the spec found
necessary (F1 validate after the op put, F2 watermark before the op put, F3
acks applied from the op records, F4 a missing header at recovery is
collected, not aborted, F5 a failed send drops a cache entry nothing else
holds, F6 dispatch waits for the buffer's recovery, F7 so does the read
position's sync after a normal publish, F8 an aborted record keeps no prune
key while an append of its txn is in flight, F9 a new coordinator re-drives
the fan-out of decided txns with op records left, F10 the next owner loads an unloaded segment
once its closed instance is done). Each difference is one flag, read in the
one method it changes; there is no second copy of any component.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Behaviour:
    name: str
    # Publish: WRITE op record (placeholder position) before the ledger append.
    op_before_append: bool
    # Participants learn decisions from a coalesced per-participant event
    # stream the coordinator appends to after its CAS, instead of point
    # watches on cached headers.
    notify_by_stream: bool
    # Durable per-segment aborted records; the dispatcher treats an unknown
    # txnId as visible (the text: as aborted).
    durable_aborted_records: bool
    # GC: leftover op records re-drive the fan-out and keep the header (the
    # text: force-delete them, then the header).
    gc_redrive: bool
    # Recovery cannot see positions (placeholders): OPEN txns hold the read
    # position at the persisted watermark, else the last confirmed entry.
    recovery_holds_read_position: bool
    # The TB persists its max read position as a per-segment watermark.
    durable_watermark: bool
    # Pending-ack commit applies the acks of the op records (text, fixed F3)
    # rather than only those held in memory (merged).
    acks_from_records: bool
    # F1: after the op put, a linearizable header read admits the write.
    validate_after_op: bool = False
    # F2: persist the watermark before a txn's first op on the segment.
    watermark_before_op: bool = False
    # F4: recovery reads a missing header as collected, not as ABORTED: it
    # deletes the txn's op records here and writes no aborted record.
    collected_not_aborted: bool = False
    # The decision CAS writes finalized_ms in the same header update (the
    # merged TransactionCoordinatorV5); the text sets it after the CAS.
    cas_finalizes: bool = False
    # The pending-ack store writes an ACK op with no check of the txn's state
    # (the merged MetadataPendingAckStore relies on the handle, which does
    # not read the header either), then adds the txn to its open set.
    acks_unchecked: bool = False
    # F5: a send that fails (op write error, TopicTerminated) drops the cache
    # entry when the buffer holds no op and no position of the txn here.
    drop_cache_on_failed_send: bool = False
    # The transaction buffer recovers asynchronously after a restart: until
    # then maxReadPosition is the constructor's LAC and the aborted set is
    # empty; dispatchers do not wait (the merged MetadataTransactionBuffer).
    async_recovery: bool = False
    # F6: until recovery completes, maxReadPosition is the earliest position.
    dispatch_waits_for_recovery: bool = False
    # F7: a non-transactional publish during that recovery moves and persists
    # nothing (merged: syncMaxReadPositionForNormalPublish is not gated on it).
    normal_publish_waits_for_recovery: bool = False
    # F8: an aborted record written while an append of its txn is in flight has
    # no prune key until that append lands or fails, and a later entry raises
    # the key (merged: `trackPosition` ignores a txn it no longer holds).
    rekey_late_entries: bool = False
    # endTxn as the merged TransactionCoordinatorV5 runs it: the header CAS,
    # then `listOpsByTxn`, then the publishes, each a task a failover loses
    # (a model's bound `tc = "steps"`; otherwise one step).
    tc_steps: bool = False
    # With tc_steps, each listed stream's publish a task of its own, in any
    # order (`fanOutEvents` fires them in parallel; a model's `tc = "publishes"`).
    tc_publishes: bool = False
    # The transaction buffer and each pending-ack store have their own header
    # cache, event stream and op records to delete, as in the merged code and
    # as the PIP names them (a model's bound `participants`, "split" by
    # default); False shares one, an abstraction the code does not have.
    split_participants: bool = True
    # The buffer's recovery as the code chains it: load the watermark (the
    # read position starts there), load the aborted set, then scan the WRITE
    # ops and read their headers, each a task (a model's bound `recovery =
    # "steps"`; otherwise one task loads everything).
    recovery_steps: bool = False
    # F9: a new coordinator, before it serves, re-drives the fan-out of every
    # decided txn whose op records remain (with tc_steps).
    takeover_redrive: bool = False
    # A decision applied as the merged code runs it (a model's bound `apply =
    # "steps"`): each reconcile header read, each metadata call of the
    # buffer's apply chain and the pending-ack store's ACK-op delete is a
    # task; a closed (unloaded) instance's such tasks go on (apply_chain.py).
    apply_steps: bool = False
    # F10: the next owner loads an unloaded segment only once the closed
    # instance has no task left (its sends, reads and apply chain are done).
    drain_closed: bool = False
    # F11: a header read's callback puts no entry for a txn the buffer applied
    # since the read was issued; it fails the send (check = steps in the model).
    stale_reads_fail: bool = False
    # A producer is added only once the segment's transaction buffer has
    # recovered, as `ServerCnx.handleProducer` did before apache/pulsar#21406
    # (a model's bound `producers = "gated"`; the code since gates no producer).
    producers_gated: bool = False
    retention_ms: int = 900_000
    sweep_period_ms: int = 10_000
    txn_timeout_ms: int = 30_000

    def with_(self, **changes) -> "Behaviour":
        return replace(self, **changes)


PIP_TEXT = Behaviour(
    "pip-text", op_before_append=False, notify_by_stream=False, durable_aborted_records=False,
    gc_redrive=False, recovery_holds_read_position=False, durable_watermark=False, acks_from_records=True,
    retention_ms=60_000,
)
MERGED = Behaviour(
    "merged", op_before_append=True, notify_by_stream=True, durable_aborted_records=True,
    gc_redrive=True, recovery_holds_read_position=True, durable_watermark=True, acks_from_records=False,
    cas_finalizes=True, acks_unchecked=True, async_recovery=True,
)
FIXED = MERGED.with_(name="fixed", acks_from_records=True, validate_after_op=True, watermark_before_op=True,
                     collected_not_aborted=True, acks_unchecked=False, drop_cache_on_failed_send=True,
                     dispatch_waits_for_recovery=True, normal_publish_waits_for_recovery=True,
                     rekey_late_entries=True, takeover_redrive=True, drain_closed=True,
                     stale_reads_fail=True)

BEHAVIOURS: dict[str, Behaviour] = {b.name: b for b in (PIP_TEXT, MERGED, FIXED)}


def behaviour(name: str) -> Behaviour:
    try:
        return BEHAVIOURS[name]
    except KeyError:
        raise ValueError(f"unknown behaviour {name!r} (known: {', '.join(BEHAVIOURS)})") from None
