"""The KRaft controller's offsets and its failover step (KIP-868 "Record
Visibility", "Controller Failover"), as Kafka's OffsetControlManager and
ActivationRecordsGenerator implement them.

The active controller replays each record when it appends it, so its
transaction start offset follows the whole log it wrote, committed or not.
On each committed batch its last stable offset becomes
`min(txnStart - 1, lastCommitted)` while a transaction is open, else
`lastCommitted`, and never moves back. Reads and write callbacks are
answered at the last stable offset.

A controller that loses leadership (QuorumController.renounce) calls
OffsetControlManager.deactivate(), which reverts the in-memory state to
the last stable offset but leaves `transactionStartOffset` as its own
appends set it (apache/kafka@1eb7644349cb OffsetControlManager.java
L260-L272, and the same at 3.6.0 to 3.9.0-rc3). As a standby it then
replays every record committed after the ones its listener was handed
while active; replaying a Begin while a start offset is set, or an End or
Abort while none is, throws (L382-L420), and the controller's fatal fault
handler ends the process (QuorumController.java L962-L981; SharedServer.scala
L225-L230 builds a process-terminating handler).
"""

from __future__ import annotations

from .records import ABORT, BEGIN, END, NORMAL, batch_end_offsets, flatten, is_data, open_txn


def stable_offset(last_committed: int, txn_start: int | None) -> int:
    if txn_start is None:
        return last_committed
    return min(txn_start - 1, last_committed)


def lso_after_commit(lso: int, log, hw: int, from_committed: bool = False) -> int:
    """OffsetControlManager.handleCommitBatch on the active controller, for
    the batch that brings the high watermark to `hw` batches. Kafka takes the
    open transaction from every record it appended (replayed at append
    time); `from_committed` takes it from the committed records only."""
    last_committed = batch_end_offsets(log)[hw - 1]
    txn = open_txn(flatten(log[:hw] if from_committed else log))
    return max(lso, stable_offset(last_committed, txn[1] if txn else None))


def lso_of_replayed_log(log) -> int:
    """A standby that replayed and committed `log` batch by batch."""
    lso, records = -1, []
    for batch in log:
        records.extend(batch)
        txn = open_txn(records)
        lso = max(lso, stable_offset(len(records) - 1, txn[1] if txn else None))
    return lso


def standby_replay(records, tso: int, txn: int, lo: int, hi: int) -> tuple[int, int, str]:
    """OffsetControlManager.replay of the Begin/End/Abort records at offsets
    [lo, hi) on a standby whose transaction start offset is `tso` (-1: none),
    that of transaction `txn`. Returns the new start offset, its transaction
    and the first replay error, "" if none."""
    for off in range(lo, hi):
        rec = records[off]
        if rec[0] == BEGIN:
            if tso != -1:
                return tso, txn, f"Begin at {off} while the transaction at {tso} was never closed"
            tso, txn = off, rec[1]
        elif rec[0] == END or rec[0] == ABORT:
            if tso == -1:
                return tso, txn, f"{'End' if rec[0] == END else 'Abort'} at {off} with no open transaction"
            tso = -1
    return tso, txn, ""


def deactivated(log, hw: int, resets: bool = False) -> tuple[int, int]:
    """(transaction start offset, its txn) of a controller that renounces with
    `log` appended and `hw` batches committed: deactivate() keeps the offset
    its appends set (`resets`: the candidate fix, the committed log's)."""
    txn = open_txn(flatten(log[:hw] if resets else log))
    return (txn[1], txn[0]) if txn else (-1, 0)


FROM_LOG = "log"  # activation_batch: the new leader's transaction start is the log's


def activation_batch(log, next_txn: int | None, with_record: bool = False,
                     believed=FROM_LOG) -> tuple[tuple, int | None]:
    """The new leader's first batch, and the transaction it leaves open.

    A transaction left open at the end of the log is aborted first
    ("Controller failover"). `next_txn` (bound bootstrap_reactivation):
    when no metadata record has been replayed yet, re-run the bootstrap in a
    new transaction whose Begin shares the batch with the Abort, as
    ActivationRecordsGenerator.recordsForEmptyLog's in-flight branch would
    (apache/kafka@1eb7644349cb L46-L67); here that is the workload's next
    transaction. Kafka never takes that branch: LogReplayTracker.replay marks
    the log non-empty on every replayed record, the Begin included (L70-L71,
    and the same at 3.6.0 to 3.9.0-rc3), so a controller that has a start
    offset has replayed a record. `believed`: (txn, offset) or None, the new
    leader's own transaction start when it differs from the log's (a former
    leader whose deactivate() kept a stale one). `with_record`: the Abort shares
    its batch with a metadata record written outside any transaction (n0),
    as Kafka 3.7-3.9's `[Abort, ZkMigrationStateRecord]` activation batch
    does during a ZK migration."""
    records = flatten(log)
    txn = open_txn(records) if believed == FROM_LOG else believed
    if txn is None:
        return (), None
    abort = ((ABORT, txn[0]), (NORMAL, 0)) if with_record else ((ABORT, txn[0]),)
    if next_txn is not None and not any(is_data(r) for r in records):
        return abort + ((BEGIN, next_txn),), next_txn
    return abort, None
