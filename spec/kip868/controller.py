"""The KRaft controller's offsets and its failover step (KIP-868 "Record
Visibility", "Controller Failover"), as Kafka's OffsetControlManager and
ActivationRecordsGenerator implement them.

The active controller replays each record when it appends it, so its
transaction start offset follows the whole log it wrote, committed or not.
On each committed batch its last stable offset becomes
`min(txnStart - 1, lastCommitted)` while a transaction is open, else
`lastCommitted`, and never moves back. Reads and write callbacks are
answered at the last stable offset.
"""

from __future__ import annotations

from .records import ABORT, BEGIN, NORMAL, batch_end_offsets, flatten, is_data, open_txn


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


def activation_batch(log, next_txn: int | None, with_record: bool = False) -> tuple[tuple, int | None]:
    """The new leader's first batch, and the transaction it leaves open.

    A transaction left open at the end of the log is aborted first
    ("Controller failover"). When no metadata record has been replayed yet
    (the log is "empty": a bootstrap transaction was cut short before its
    first record committed), Kafka re-runs the bootstrap in a new
    transaction whose Begin shares the batch with the Abort; here that is
    the next transaction of the workload. `with_record`: the Abort shares
    its batch with a metadata record written outside any transaction (n0),
    as Kafka 3.7-3.9's `[Abort, ZkMigrationStateRecord]` activation batch
    does during a ZK migration."""
    records = flatten(log)
    txn = open_txn(records)
    if txn is None:
        return (), None
    abort = ((ABORT, txn[0]), (NORMAL, 0)) if with_record else ((ABORT, txn[0]),)
    if next_txn is not None and not any(is_data(r) for r in records):
        return abort + ((BEGIN, next_txn),), next_txn
    return abort, None
