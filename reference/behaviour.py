"""The behaviours the reference implementation can run with.

`pip-text` follows PIP-473 as written; `merged` follows the code merged into
Pulsar where it departs from the text (../shared/protocol-notes.md, points
1-4 and the recovery notes). Each difference is one flag, read in the one
method it changes; there is no second copy of any component.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Behaviour:
    name: str
    # Publish path: put the WRITE op record before the ledger append (merged)
    # or after it (text, "Flows / Publish").
    op_before_append: bool
    # Participants learn decisions from point watches on cached headers (text,
    # "Notification mechanism") or from a coalesced per-participant event
    # stream the coordinator appends to after its CAS (merged).
    notify_by_stream: bool
    # Dispatcher: an unknown txnId counts as aborted (text, "Recovery") or as
    # visible, with durable per-segment aborted records (merged).
    unknown_txn_visible: bool
    # GC sweep: force-delete leftover op records (text, "Garbage collection")
    # or re-drive the fan-out and keep the header (merged).
    gc_force_delete: bool
    # Pending-ack commit applies acks read back from the op records (text,
    # MetadataPendingAckStore table) or only the acks held in memory (merged).
    acks_from_records: bool
    # The TB persists a per-segment max-read watermark (merged).
    durable_watermark: bool
    retention_ms: int = 900_000
    sweep_period_ms: int = 10_000
    txn_timeout_ms: int = 30_000

    def with_(self, **changes) -> "Behaviour":
        return replace(self, **changes)


PIP_TEXT = Behaviour(
    "pip-text", op_before_append=False, notify_by_stream=False, unknown_txn_visible=False,
    gc_force_delete=True, acks_from_records=True, durable_watermark=False, retention_ms=60_000,
)
MERGED = Behaviour(
    "merged", op_before_append=True, notify_by_stream=True, unknown_txn_visible=True,
    gc_force_delete=False, acks_from_records=False, durable_watermark=True,
)

BEHAVIOURS: dict[str, Behaviour] = {b.name: b for b in (PIP_TEXT, MERGED)}


def behaviour(name: str) -> Behaviour:
    try:
        return BEHAVIOURS[name]
    except KeyError:
        raise ValueError(f"unknown behaviour {name!r} (known: {', '.join(BEHAVIOURS)})") from None
