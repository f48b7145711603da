"""The dispatcher of one (segment, subscription) ("Components / Dispatcher":
unchanged by PIP-473). It reads the next entry when it is at or below the
transaction buffer's max read position, skips it when the txn is aborted,
and otherwise delivers it to the consumer.

`Consumer` is the client end: it outlives broker crashes and records every
message it received.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ledger import ManagedCursor, ManagedLedger
from .pending_ack import MetadataPendingAckStore
from .transaction_buffer import MetadataTransactionBuffer


@dataclass
class Consumer:
    subscription: str
    received: list[tuple[str, int, tuple]] = field(default_factory=list)  # (segment, entry, entry value)


class Dispatcher:
    def __init__(self, ledger: ManagedLedger, cursor: ManagedCursor, tb: MetadataTransactionBuffer,
                 consumer: Consumer, pending_ack: MetadataPendingAckStore) -> None:
        self.ledger = ledger
        self.cursor = cursor
        self.tb = tb
        self.consumer = consumer
        self.pending_ack = pending_ack

    def can_read(self) -> bool:
        """Nothing until the subscription's pending-ack store is ready (Pulsar's
        `PersistentSubscription.addConsumer` waits for the handle)."""
        pos = self.cursor.read_position
        return self.pending_ack.ready and pos <= self.ledger.last_confirmed and pos <= self.tb.get_max_read_position()

    def read_next(self) -> str | None:
        """Read one entry: "delivered", "skipped" (aborted txn or trimmed),
        or None when nothing is readable. Skipped entries are not acked
        here (the spec's dispatcher does not ack them either)."""
        if not self.can_read():
            return None
        pos = self.cursor.read_position
        self.cursor.read_position = pos + 1
        if pos < self.ledger.storage.first_retained:
            return "skipped"
        entry = self.ledger.read(pos)
        kind, txn, _ = entry
        if kind == "txn" and self.tb.is_txn_aborted(txn):
            return "skipped"
        self.consumer.received.append((self.ledger.name, pos, entry))
        return "delivered"
