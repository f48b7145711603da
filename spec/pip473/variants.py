"""The three variants, as named changes to flags read inside action bodies
(never copies of an action).

pip-text  the document as written: every flag off.
merged    pip-text plus the shipped code's departures (protocol-notes.md,
          "PIP-473 as written versus as merged"), its recovery facts and the
          merged-code mechanisms modelled so far: `MERGED` below.
fixed     merged plus F1-F11, the smallest change set found to make every
          safety property hold at the standard bounds, with crashes
          anywhere, (F10) across a topic unload whose closed instance
          keeps working, and (F11) with a send's header read and its
          callback as two steps: `FIXES` below, each with the model that fails
          without it (tests/test_pip473.py drops each in turn and checks
          that model).

A variant is its list of changes, so "fixed = merged + F1..F11" is true by
construction; ACTIONS.md prints the table (spec/pip473/catalog.py).
"""

from __future__ import annotations

from typing import NamedTuple


class Flags(NamedTuple):
    op_first: bool = False              # WRITE op record (placeholder position) before the ledger append
    durable_aborts: bool = False        # durable aborted records; an unknown txnId is visible
    coalesced: bool = False             # per-participant coalesced event stream, re-read every OPEN header
    gc_redrive: bool = False            # GC re-drives and keeps the header while ops remain
    merged_recovery: bool = False       # placeholder positions, hold at watermark or LAC, missing = ABORTED
    watermark: bool = False             # persisted per-segment maxReadPosition watermark
    memory_acks: bool = False           # commit applies only in-memory acks; replay re-seeds ids only
    validate_after_op: bool = False     # F1
    watermark_before_op: bool = False   # F2
    collected_not_aborted: bool = False  # F4
    cas_finalizes: bool = False         # the decision CAS also writes finalizedAt
    acks_unchecked: bool = False        # the ACK op is written with no check of the txn's state
    drop_failed: bool = False           # F5
    async_recovery: bool = False        # TB recovery in steps; dispatch does not wait for it
    dispatch_waits: bool = False        # F6
    sync_waits: bool = False            # F7
    rekey_late: bool = False            # F8
    takeover_redrive: bool = False      # F9 (tc = steps)
    drain_closed: bool = False          # F10 (unloads)
    stale_reads_fail: bool = False      # F11 (check = steps)


class Evidence(NamedTuple):
    """A model that fails when a fix is left out: its property and the
    length of the shortest counterexample. `only`: the flags left out, when
    not all the change's; `trace`: what that counterexample shows."""

    model: str
    property: str
    length: int
    only: tuple = ()
    trace: str = ""


class Change(NamedTuple):
    """One named change of a variant: the flags it sets, the module whose
    action bodies read them, and what it does. A fix also names the models
    that fail without it."""

    name: str
    sets: dict
    where: str
    what: str
    necessary: tuple = ()


# The merged code's departures from the text (protocol-notes.md).
MERGED = (
    Change("notes 1", {"op_first": True}, "publish",
           "the WRITE op record, with a placeholder position, is put before the ledger append; "
           "maxReadPosition is held while an append is in flight"),
    Change("notes 2", {"durable_aborts": True}, "buffer, notify",
           "durable per-segment aborted records; an unknown txnId is visible to the dispatcher"),
    Change("notes 3", {"coalesced": True}, "notify, coordinator",
           "after its CAS the TC appends one coalesced event per participant with an op; each event "
           "makes the participant re-read every OPEN header it caches (missing = ABORTED)"),
    Change("notes 4", {"gc_redrive": True}, "coordinator",
           "the GC sweep re-drives the fan-out and keeps the header while op records remain"),
    Change("recovery", {"merged_recovery": True}, "recovery",
           "recovery sees placeholder positions: a txn found OPEN holds maxReadPosition at the watermark, "
           "else at the current value; a missing header is ABORTED (with an aborted record)"),
    Change("watermark", {"watermark": True}, "buffer, publish, notify",
           "maxReadPosition is persisted as a per-segment watermark when it advances"),
    Change("pending-ack memory", {"memory_acks": True}, "pendingack, recovery",
           "the pending-ack handle applies only the acks it holds in memory; its replay re-seeds only "
           "the open txn ids"),
    Change("CAS finalizes", {"cas_finalizes": True}, "coordinator",
           "the decision CAS writes finalizedAt in the same header update"),
    Change("acks unchecked", {"acks_unchecked": True}, "publish",
           "the pending-ack store writes the ACK op with no check of the txn's state"),
    Change("async recovery", {"async_recovery": True}, "recovery, buffer",
           "the transaction buffer recovers asynchronously, in steps; dispatch does not wait for it"),
)

# The fixes: merged plus these is `fixed`.
FIXES = (
    Change("F1", {"validate_after_op": True, "acks_unchecked": False}, "publish",
           "admission moves after the op put: a linearizable header re-read (not the cache) admits the "
           "write; a decided header rejects it, and the broker deletes its op and materializes the "
           "decision it read. Acks read the header from the store in the same step as their op put",
           (Evidence("fixed", "Atomicity", 4),
            Evidence("fixed", "NoMissedDecision", 6, ("validate_after_op",),
                     "a send checked before the commit puts its op and appends after it; its buffer tracks the "
                     "txn as OPEN for good"))),
    Change("F2", {"watermark_before_op": True}, "publish",
           "the segment's watermark is persisted before a txn's first op on the segment, so recovery, "
           "which cannot know the placeholder's position, holds the read position below the entry",
           (Evidence("fixed", "MaxReadPositionSafe", 11),)),
    Change("F3", {"memory_acks": False}, "pendingack",
           "the pending-ack store applies the acks of the op records (as the text's range query does), "
           "so a replayed store still applies a committed txn's acks",
           (Evidence("fixed", "NoLostCommittedAck", 7),)),
    Change("F4", {"collected_not_aborted": True}, "recovery",
           "a missing header is a collected txn, not an aborted one: recovery deletes its op records on "
           "the segment and writes no aborted record. Safe only with F1: the GC deletes a header only "
           "once no op is left, so such an op was put after the collection by a send F1 never admitted; "
           "without F1 a send admitted from the cache may append an entry of the collected txn",
           (Evidence("fixed-crash-anywhere", "Atomicity", 16),)),
    Change("F5", {"drop_failed": True}, "buffer",
           "a failed send (an op write error, or TopicTerminated from a terminated parent) drops the "
           "buffer's cache entry for the txn when the buffer holds no op of it, no tracked position and no "
           "other send of it in progress: no event would ever clear it. Only an op whose event reaches the "
           "buffer counts: with split participants an ACK op's event goes to the pending-ack store",
           (Evidence("fixed-split-liveness", "Materialized", 11),)),
    Change("F6", {"dispatch_waits": True}, "buffer",
           "until the buffer's recovery completes, getMaxReadPosition() answers the earliest position "
           "(a gate on the getter, as the legacy buffer has: the field itself moves as in merged), so "
           "nothing is dispatched meanwhile",
           (Evidence("tb-recovery-dispatch-fixed", "ReadCommitted", 10),)),
    Change("F7", {"sync_waits": True}, "publish",
           "a non-transactional send during the buffer's recovery neither moves maxReadPosition nor "
           "persists the watermark; the completion of recovery computes both",
           (Evidence("tb-recovery-publish-fixed", "WatermarkSafe", 10, (),
                     "the publish persists the LAC, past the OPEN entry, as the watermark the next recovery "
                     "trusts"),)),
    Change("F8", {"rekey_late": True}, "buffer, publish, recovery",
           "an aborted record written while an append of its txn is in flight has no prune key until "
           "that append lands (its position) or fails (the LAC); a later entry raises the key; a "
           "restart keys a waiting record at the LAC",
           (Evidence("prune-after-trim-fixed", "ReadCommitted", 15),)),
    Change("F9", {"takeover_redrive": True}, "coordinator",
           "with tc = steps, a new TC re-drives the fan-out of every decided txn whose ops remain "
           "(`idx:txn-by-final-state`) before it serves",
           (Evidence("tc-failover-fanout-fixed", "NoMissedDecision", 8),)),
    Change("F10", {"drain_closed": True}, "recovery",
           "on a topic unload the new owner loads the segment only once the closed instance is done: its "
           "sends past their check have failed and deleted their ops (F1), its reconcile reads have "
           "returned and its apply chain is empty (`closeAsync` completes then, and the topic's close, "
           "which the ownership release waits for, waits for it)",
           (Evidence("fixed-unload", "GcSafety", 12, (),
                     "a closed send's op lands before the new owner's scan, F1 deletes it after, and no event "
                     "ever tells the new buffer of the decision"),
            Evidence("unload-abort-fixed", "Atomicity", 19, (),
                     "the closed instance's abort lands between the new owner's scans, and the entry is "
                     "delivered after its recovery"))),
    Change("F11", {"stale_reads_fail": True}, "apply, notify, publish_cache",
           "a header read's callback puts no entry for a txn the buffer applied since the read was "
           "issued: the send fails (TxnConflict), as a read of the decided header would answer. Without "
           "it the callback's `putIfAbsent` puts an OPEN entry back after the apply dropped the terminal "
           "one (apache/pulsar#25960), and no event will clear it. In Pulsar, for example, "
           "`applyTerminalNow` would keep a terminal entry while a read of the txn is out, instead of "
           "dropping it at once",
           (Evidence("late-cache-put-fixed", "GcSafety", 12, (),
                     "the second send's callback puts an OPEN entry back after the apply dropped it; no event "
                     "will clear it, and the GC collects the header while the buffer tracks the txn"),)),
)


def apply(flags: Flags, changes) -> Flags:
    for c in changes:
        flags = flags._replace(**c.sets)
    return flags


CHANGES = {"pip-text": (), "merged": MERGED, "fixed": MERGED + FIXES}
VARIANTS = {name: apply(Flags(), changes) for name, changes in CHANGES.items()}


def without(variant: str, name: str, only: tuple = ()) -> Flags:
    """The variant's flags with one of its changes left out (`only`: those
    of its flags alone)."""
    (change,) = [c for c in CHANGES[variant] if c.name == name]
    rest = apply(Flags(), [c for c in CHANGES[variant] if c.name != name])
    return rest if not only else VARIANTS[variant]._replace(**{f: getattr(rest, f) for f in only})


# Bounds that only some variants read: bound -> (flag, value the flag must
# have). A model that sets one of them away from its default for a variant
# that ignores it gets an error (spec.py `setup`), not a silently dropped bound.
BOUND_NEEDS = {
    "opfail": ("op_first", True),         # only an op put before the append can fail on its own
    "trim": ("durable_aborts", True),     # trimming prunes aborted records
    "tc": ("coalesced", True),            # the text's TC publishes no events
    "recovery": ("async_recovery", True),  # the text recovers in one step
    "watches": ("coalesced", False),      # header watches: the point-watch variant only
    "unloads": ("op_first", True),        # the text's send appends first: a closed ledger leaves nothing
    "apply": ("coalesced", True),         # the text's point watches apply a decision in one step
    "check": ("op_first", True),          # readStateCacheFirst is the merged code's; the text caches and watches
    "sync": ("watermark", True),          # the text's normal publish syncs nothing
    "track": ("op_first", True),          # the text appends first; its callback puts the op (publishPutOp)
    "producers": ("async_recovery", True),  # the text's buffer recovers in one step
}
