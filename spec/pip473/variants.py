"""The three variants as flags read inside action bodies (never copies).

pip-text  the document as written.
merged    the four departures of the shipped code (protocol-notes.md, "PIP-473
          as written versus as merged"), its recovery facts and the
          merged-code mechanisms modelled so far.
fixed     merged plus the smallest change set found to make every safety
          property hold at the standard bounds and with crashes anywhere:
          F1-F9 (see spec.py's docstring, and tests/test_pip473.py for the
          model that fails without each).
"""

from __future__ import annotations

from typing import NamedTuple


class Flags(NamedTuple):
    op_first: bool              # notes 1: WRITE op record (placeholder position) before the ledger append
    durable_aborts: bool        # notes 2: durable aborted records; an unknown txnId is visible
    coalesced: bool             # notes 3: per-participant coalesced event stream, re-read every OPEN header
    gc_redrive: bool            # notes 4: GC re-drives and keeps the header while ops remain
    merged_recovery: bool       # notes "Recovery": placeholder positions, hold at watermark or LAC, missing = ABORTED
    watermark: bool             # notes: persisted per-segment maxReadPosition watermark
    memory_acks: bool           # notes "pending-ack store": commit applies only in-memory acks; replay re-seeds ids only
    validate_after_op: bool     # fixed F1: linearizable header re-read after the op put admits the write
    watermark_before_op: bool   # fixed F2: persist the watermark before a txn's first op on the segment
    collected_not_aborted: bool  # fixed F4: recovery deletes the op of a collected (missing) header, marks nothing
    cas_finalizes: bool          # merged-code mechanism: the decision CAS also writes finalizedAt
    acks_unchecked: bool         # merged-code mechanism: the ACK op is written with no check of the txn's state
    drop_failed: bool            # fixed F5: a failed send drops the cache entry when the broker holds nothing of the txn
    async_recovery: bool         # merged-code mechanism: TB recovery in steps; dispatch does not wait for it
    dispatch_waits: bool         # fixed F6: maxReadPosition is the earliest position until TB recovery completes
    sync_waits: bool             # fixed F7: a non-transactional publish during TB recovery moves and persists nothing
    rekey_late: bool             # fixed F8: an entry of an aborted txn that lands late raises its record's prune key
    takeover_redrive: bool = False  # fixed F9 (tc = steps): a new TC re-drives the fan-out of decided txns with ops left


VARIANTS = {
    "pip-text": Flags(False, False, False, False, False, False, False, False, False, False, False, False, False,
                      False, False, False, False),
    "merged": Flags(True, True, True, True, True, True, True, False, False, False, True, True, False, True, False,
                    False, False),
    "fixed": Flags(True, True, True, True, True, True, False, True, True, True, True, False, True, True, True,
                   True, True, True),
}
