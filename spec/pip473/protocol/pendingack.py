"""MetadataPendingAckStore, one per (segment, subscription) (Components table).

Commit applies the txn's acks to the cursor (individual ack or cumulative
markDelete), abort drops them; then the ops are range-deleted. pip-text and
fixed read the acks from `idx:acks-by-segment-subscription` filtered to the
txn; the merged handle applies only the acks it holds in memory, and its
replay re-seeds only the set of open txn ids (notes, "The pending-ack store").

Replay (`replayAsync`, merged/fixed with split participants) is the store's
own recovery, independent of the transaction buffer's: `recovery.recover_acks`.
"""

from __future__ import annotations

from .state import SUB_FIELDS, S
from .store import acks_by_segment_subscription


def acks_to_apply(m, s: S, j: int, packs, t: int, sub: int = 0) -> list[tuple[int, bool]]:
    if m.flags.memory_acks:
        return [(pos, cum) for (tt, pos, cum) in packs if tt == t]
    return [(o.pos, o.cumulative) for o in acks_by_segment_subscription(s, j, sub) if o.txn == t]


def apply_to_cursor(cursor: tuple, acks) -> tuple:
    md, ind = cursor
    for pos, cum in acks:
        if cum:
            md = max(md, pos)
        else:
            ind = ind | {pos}
    return (md, frozenset(p for p in ind if p > md))


def covers(cursor: tuple, pos: int) -> bool:
    md, ind = cursor
    return pos <= md or pos in ind


def pas_ready(m, p, sub: int = 0) -> bool:
    """Whether subscription `sub`'s pending-ack store has finished its replay.
    merged/fixed with split participants: its own flag (`recover_acks`);
    otherwise the store recovers with the buffer (`Part.ready`)."""
    return getattr(p, SUB_FIELDS[sub]["aready"]) if m.pas_recovers else p.ready
