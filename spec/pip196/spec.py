"""pip196: the segmented transaction-buffer snapshot (PIP-196, seeds/004).

One topic's transaction buffer (TB) keeps the aborted-txn list and
maxReadPosition. PIP-196 persists that list as immutable *snapshot segments*
of fixed capacity, each carrying the position of its last abort marker, plus
an *index record* holding the segment list and the unsealed latest snapshot
(the aborts not yet in a segment, with maxReadPosition). Sections of the
document, and the shipped processor (`SnapshotSegmentAbortedTxnProcessorImpl`)
where the document is silent:

  * "Snapshot segment": `putAbortedTxnAndPosition` seals a segment when the
    unsealed list reaches capacity and queues a WriteSegment task.
  * "Snapshot topic" / "Snapshot segment index": the persistent worker writes
    the segment (key = sequence id), then, in a *separate* step, updates the
    index record; a crash can fall between the two. After a write or a
    delete the index is updated only if that task is the last one queued.
  * The periodic index update (`takeAbortedTxnsSnapshot`) runs only when the
    task queue is empty, otherwise it is cancelled (variant `merged`). The
    document's text does not order it against queued segment writes: variant
    `pip-text` lets it run while a sealed segment is still queued. This is
    the race between queued segment writes and the index update.
  * "Snapshot topic", deletion: once the ledger holding a segment's last
    abort marker is deleted, the TB drops that segment's txns and queues a
    DeleteSegment task (tombstone the key, then update the index).
  * "Workflow Overview", recovery: read the index, load the listed segments
    (one whose ledger is gone is skipped and the index rewritten), then replay
    the topic from the unsealed snapshot's maxReadPosition to the LAC.
  * "compatibility / Upgrade": with no index record, recover from the old
    single-snapshot topic, whose aborts become the unsealed list.
  * Variant `merged` also has the three mechanisms of the shipped
    TopicTransactionBuffer that the document does not describe (issue 43):
      - NoSnapshot: recovery that finds no index and no old snapshot does not
        replay the topic; it puts the read limit at the LAC and enters
        NoSnapshot (`noNeedToRecover`, `changeToNoSnapshotState`). A new topic
        starts there. NoSnapshot serves reads, so the properties that speak
        of a ready TB speak of it too.
      - The first snapshot: in NoSnapshot the first transactional append is
        queued and calls `takeFirstSnapshot()`, which writes the index record
        before the buffer turns Ready (`changeToReadyStateFromNoSnapshot`) and
        the append lands (TakeFirstSnapshot). So no transactional entry is
        ever in a topic that has no index: that is what makes skipping the
        replay safe.
      - The read limit comes from the buffer's own tracking (`ongoingTxns`,
        `updateMaxReadPosition`): the first position of the oldest txn the
        buffer knows is open, else the LAC. Every variant now computes it so;
        the never-crashed value `_first_open` is only the properties' ghost.
    The text's variants (`pip-text`, `early-publish`) keep a new topic ready
    and replay from the start when there is no index.
  * Bound `first_snapshot_window` (merged) splits the first snapshot into
    the steps of the code: appends queue while it is written, reads are held,
    an abort writes no marker (first_snapshot.py); off, the first snapshot is
    one step (TakeFirstSnapshot), which changes no verdict but
    NoEndedTxnHoldsRead's (tests/test_pip196_first_snapshot.py).
  * Non-transactional publishes may arrive while the TB recovers. Variant
    `early-publish` (a v4 field failure, protocol-notes.md) lets such a
    publish move maxReadPosition to the LAC before recovery has learned the
    open txns; `merged` leaves it to the replay.

Properties. The ghost is the topic itself: every marker ever appended is
kept (trimmed ledgers only hide entries), so the never-crashed buffer's
aborted set and maxReadPosition are functions of it.
  * `RecoveredAbortsExact`: a ready TB knows every aborted txn whose marker
    is still in a live ledger, and invents none.
  * `RecoveredMaxRead`: a ready TB's maxReadPosition is the never-crashed one.
    Every shipped model keeps it because the replay recomputes the limit
    from the entries it reads (`_first_open(ledger, start)`), and `start`,
    the index's maxReadPosition, is never past an open txn's first entry;
    it is kept as the guard of that replay start: an index captured past an
    open txn (a buggy snapshot) breaks it, as tests/test_pip196_truth.py
    shows from a hand-built recovering state.
  * `MaxReadNeverAhead`: ready or recovering, maxReadPosition never passes
    the first entry of an open txn.
  * `NoOrphanWhenQuiescent`: when the TB is ready and its worker idle with
    nothing queued, every stored segment is listed by the index record. The
    code documents that it does not hold (the `clearAllSnapshotSegments`
    javadoc, apache/pulsar@001c89c2cb1a: segment and index writes are not
    atomic, so topic deletion scans the segment topic); orphan-segment.toml
    is kept as that note.
  * `UnlistedKeyReused`: what the code expects of such a segment: its key is
    one the worker writes again (at or above its next sequence id), so the
    next sealed segment replaces it. A crash between a segment write and its
    index update keeps it (recovery restarts the sequence at the last
    indexed + 1); a recovery that seals an abort again does not, since the
    in-memory `indexes` is a map keyed by the marker position and the new
    key replaces the old one there (resealed-segment.toml).
  * `NoEndedTxnHoldsRead`: no txn whose end request completed on this topic
    holds maxReadPosition (first_snapshot.py; fails with the first-snapshot
    window, first-snapshot-window.toml).
  * `RecoveryNotStuck`: no shipped model reaches it; a hand-built index that
    lists a segment missing from the segment topic while its ledger lives
    does (tests/test_pip196_truth.py).

Pruning: bound `prune` (default true) enables the ledger rollover only while
the TB is ready and the current ledger holds an entry: an empty ledger, or
one rolled while the TB recovers, changes nothing the properties read but
multiplies states. With `prune = false` the rollover is enabled whenever a
ledger is left (compare `merged.toml` both ways: tests/test_pip196_truth.py).
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from ..api import Bound, Spec
from ..api import replace_at as _put
from ..schema import Bool, Int, Str
from . import first_snapshot
from .first_snapshot import FIRST

DATA, COMMIT, ABORT, PLAIN = "D", "C", "A", "N"  # PLAIN: a non-transactional publish
DOWN, READ, LOADED, READY, STUCK = "down", "index-read", "segments-loaded", "ready", "stuck"
NOSNAP = "no-snapshot"   # TopicTransactionBuffer's NoSnapshot state (variant merged)


class TBState(NamedTuple):
    # The original topic (durable). Position = index in `ledger`.
    ledger: tuple        # entries (kind, txn, ledger id)
    cur: int             # the ledger being written
    trimmed: int         # ledgers with id < trimmed are deleted (retention)
    # System topics (durable).
    store: frozenset     # snapshot-segment topic, one value per live key: (seq, txns, marker position)
    index: tuple | None  # index topic: (((seq, marker position), ...), unsealed txns, maxReadPosition)
    old: tuple | None    # the pre-PIP-196 snapshot topic: (aborted txns, maxReadPosition)
    # The broker's memory, lost on a crash.
    phase: str           # down | index-read | segments-loaded | ready | no-snapshot | stuck
    ongoing: tuple       # ongoingTxns: ((txn, first position), ...) the TB tracks, by position
    aborted: frozenset   # aborts: the in-memory aborted set
    unsealed: tuple      # unsealedTxnIds, in order (replay may repeat a txn, as the code does)
    sealed: tuple        # segmentIndex: ((marker position, txns), ...) for sealed segments
    indexes: tuple       # indexes: ((seq, marker position), ...) for segments written
    queue: tuple         # worker tasks: ("W", txns, position) | ("D", position)
    busy: str            # "" | "W" head written, index not yet | "D" head deleted, index not yet | "U" index update
    snap: tuple | None   # the (unsealed, maxReadPosition) captured by an in-flight index update
    seq: int             # the worker's next sequence id
    max_read: int        # maxReadPosition as a count of readable entries
    start: int           # recovery: where the replay starts
    to_load: tuple       # recovery: the index list read
    # Ghosts.
    recovered: bool      # some recovery completed
    deleted: bool        # some segment was deleted
    upgraded: bool       # recovered from the old snapshot topic
    published_recovering: bool  # a normal publish arrived while the TB recovered
    crashes: int         # crashes left
    # The first-snapshot window (first_snapshot.py); constant unless that bound is on.
    pending: tuple       # pendingAppendingTxnBufferTasks: ((kind, txn), ...), lost on a crash
    lwm: int             # the low water mark the TB recorded (lowWaterMarks), lost on a crash
    sent: frozenset      # txns whose send was made (the client's)
    tc_ended: frozenset  # ghost: txns the coordinator ended
    acked: frozenset     # ghost: txns whose end request on this topic completed (the coordinator is done here)


def _limit(ongoing: tuple, ledger: tuple) -> int:
    """maxReadPosition from the buffer's own tracking (updateMaxReadPosition):
    just before the first position of the oldest ongoing txn, else the LAC."""
    return ongoing[0][1] if ongoing else len(ledger)


def _track(ongoing: tuple, ledger: tuple, lo: int, aborted=frozenset()) -> tuple:
    """handleTransactionMessage / removeTxnAndUpdateMaxReadPosition over the
    entries [lo, end), starting from `ongoing`: an entry of a txn known
    aborted (its marker replayed earlier, or in a loaded segment) is not tracked."""
    first = dict(ongoing)
    aborted = set(aborted)
    for i in range(lo, len(ledger)):
        kind, t, _ = ledger[i]
        if kind == DATA:
            if t not in aborted:
                first.setdefault(t, i)
        elif kind != PLAIN:
            first.pop(t, None)
            if kind == ABORT:
                aborted.add(t)
    return tuple(sorted(first.items(), key=lambda x: x[1]))


def _first_open(ledger: tuple, lo: int) -> int:
    """maxReadPosition over entries [lo, end): just before the first data entry
    whose txn has no marker after it and no abort marker before it (an entry
    that lands after its txn's abort is aborted data); the LAC when there is none."""
    for i in range(lo, len(ledger)):
        kind, t, _ = ledger[i]
        if kind == DATA and not any(k != DATA and u == t for k, u, _ in ledger[i + 1:]) \
                and not any(k == ABORT and u == t for k, u, _ in ledger[:i]):
            return i
    return len(ledger)


class Pip196(Spec):
    name = "pip196"
    variants = ("merged", "pip-text", "early-publish")
    bounds = {
        "txns": Bound(2, "transactions the workload runs", lo=1, hi=4),
        "capacity": Bound(1, "aborted txns per snapshot segment", lo=1, hi=3),
        "ledgers": Bound(2, "ledgers the topic may roll over to", lo=1, hi=3),
        "crashes": Bound(1, "broker crashes", lo=0, hi=2),
        "commits": Bound(False, "txns may also commit (otherwise every txn aborts)"),
        "upgrade": Bound(False, "start from a topic with an old single snapshot and no index"),
        "publishes": Bound(0, "non-transactional publishes, which may arrive while the TB recovers", lo=0, hi=2),
        "prune": Bound(True, "roll the ledger over only when the TB is ready and the ledger holds an entry"),
        "first_snapshot_window": Bound(False, "merged: appends queue while the first snapshot is written, and "
                                              "abortTxn writes no marker until the TB is Ready"),
        "late_sends": Bound(False, "first_snapshot_window: the coordinator's abort may reach the topic before "
                                   "the txn's send"),
        "end_waits_first_snapshot": Bound(False, "first_snapshot_window: an end that finds the TB not Ready is "
                                                 "queued behind the pending appends (a candidate fix)"),
    }

    # -- schema and properties ------------------------------------------------
    def setup(self) -> None:
        c = self.constants
        first = 1 if not c["upgrade"] else 0   # t0: the txn aborted before the upgrade
        self.txn_ids = tuple(range(first, c["txns"] + 1))
        self.txn_names = tuple(f"t{i}" for i in self.txn_ids)
        self.workload = tuple(range(1, c["txns"] + 1))
        # Every seal consumes at least one abort per broker life; replay repeats them.
        self.n_seq = len(self.txn_ids) * (c["crashes"] + 1) + 1
        self.seq_names = tuple(f"k{i}" for i in range(self.n_seq))
        sc = self.schema
        sc.enum("Txn", self.txn_names)
        sc.enum("Seq", self.seq_names)
        ready = sc.var("ready", Bool())
        idle = sc.var("workerIdle", Bool())
        tb_aborted = sc.set("tbAborted", "Txn")
        aborted_live = sc.set("abortedLive", "Txn")
        aborted_ever = sc.set("abortedEver", "Txn")
        max_read = sc.var("maxReadPosition", Int())
        ghost_max_read = sc.var("ghostMaxReadPosition", Int())
        stored = sc.set("segmentStored", "Seq")
        listed = sc.set("segmentListed", "Seq")
        sc.var("phase", Str())
        no_snapshot = sc.var("noSnapshot", Bool())
        recovered = sc.var("recoveredOnce", Bool())
        deleted = sc.var("segmentDeleted", Bool())
        upgraded = sc.var("upgradedFromOldSnapshot", Bool())

        # "After recovering ... the transaction buffer will read the original
        # topic from the max read position of the latest segment to LAC":
        # the result must be the never-crashed buffer's.
        self.invariants["RecoveredAbortsExact"] = z3.Implies(ready, sc.forall("Txn", lambda t: z3.And(
            z3.Implies(aborted_live(t), tb_aborted(t)), z3.Implies(tb_aborted(t), aborted_ever(t)))))
        self.invariants["RecoveredMaxRead"] = z3.Implies(ready, max_read == ghost_max_read)
        # While the topic serves reads (ready or recovering), the dispatcher never
        # reads past an open txn's first entry (field failure, early-publish).
        self.invariants["MaxReadNeverAhead"] = z3.Implies(sc.var("serving", Bool()), max_read <= ghost_max_read)
        self.invariants["NoOrphanWhenQuiescent"] = z3.Implies(z3.And(ready, idle), sc.forall(
            "Seq", lambda k: z3.Implies(stored(k), listed(k))))
        # Recovery fails when a listed segment is missing while its ledger lives.
        self.invariants["RecoveryNotStuck"] = z3.Not(sc.var("recoveryStuck", Bool()))
        # What the code documents of a stored segment no index lists (the
        # clearAllSnapshotSegments javadoc: segment and index writes are not
        # atomic): its key is one the worker writes again, so the next sealed
        # segment with that sequence id replaces it.
        key, next_key = sc.fun("segmentKey", "Seq", Int(lo=0)), sc.var("nextSequenceId", Int(lo=0))
        self.invariants["UnlistedKeyReused"] = z3.Implies(z3.And(ready, idle), sc.forall(
            "Seq", lambda k: z3.Implies(z3.And(stored(k), z3.Not(listed(k))), key(k) >= next_key)))
        # No txn whose end the coordinator completed on this topic holds
        # maxReadPosition (first_snapshot.py).
        ongoing, tc_ended = sc.set("ongoingTxn", "Txn"), sc.set("endCompleted", "Txn")
        self.invariants["NoEndedTxnHoldsRead"] = z3.Implies(ready, sc.forall(
            "Txn", lambda t: z3.Not(z3.And(ongoing(t), tc_ended(t)))))

        some_listed = sc.exists("Seq", lambda k: listed(k))
        self.witnesses["SegmentListed"] = some_listed
        self.witnesses["TwoSegmentsListed"] = sc.count("Seq", lambda k: listed(k)) >= 2
        self.witnesses["RecoveredWithSegments"] = z3.And(ready, recovered, some_listed,
                                                         sc.exists("Txn", lambda t: tb_aborted(t)))
        self.witnesses["RecoveredAfterTrim"] = z3.And(ready, recovered, deleted)
        self.witnesses["SegmentDeleted"] = deleted
        self.witnesses["UpgradedWithAborts"] = z3.And(ready, upgraded, sc.exists("Txn", lambda t: tb_aborted(t)))
        self.witnesses["PublishedWhileRecovering"] = sc.var("publishedWhileRecovering", Bool())
        self.witnesses["NoSnapshotAfterCrash"] = z3.And(no_snapshot, sc.var("crashed", Bool()))
        self.witnesses["StoredNotListed"] = sc.exists("Seq", lambda k: z3.And(stored(k), z3.Not(listed(k))))
        self.witnesses["EndedWhileFirstSnapshotting"] = sc.var("endedWhileFirstSnapshotting", Bool())
        self.witnesses["PendingAppendLanded"] = sc.var("pendingAppendLanded", Bool())
        self._actions()

    def _actions(self) -> None:
        tn = dict(zip(self.txn_ids, self.txn_names))
        self.a_write = {t: ("TxnWrite", (("txn", tn[t]),)) for t in self.workload}
        self.a_end = {(t, d): ("TxnEnd", (("txn", tn[t]), ("decision", d)))
                      for t in self.workload for d in ("commit", "abort")}
        self.a = {n: (n, ()) for n in (
            "Rollover", "TrimLedger", "TrimExpiredSegments", "TakeSnapshot", "IndexWritten",
            "SegmentWritten", "SegmentIndexed", "SegmentDeleted", "IndexAfterDelete",
            "Crash", "RecoverReadIndex", "RecoverLoadSegments", "RecoverReplay", "Publish", "TakeFirstSnapshot",
            "FirstSnapshotWritten")}
        self.a_lwm_abort = {t: ("LowWaterMarkAbort", (("txn", tn[t]),)) for t in self.workload}
        self.a_end_retry = {t: ("TxnEndRetry", (("txn", tn[t]),)) for t in self.workload}

    # -- initial states -------------------------------------------------------
    def init_states(self):
        c = self.constants
        base = dict(
            cur=0, trimmed=0, store=frozenset(), index=None, old=None, aborted=frozenset(), unsealed=(), ongoing=(),
            sealed=(), indexes=(), queue=(), busy="", snap=None, seq=0, max_read=0, start=0, to_load=(),
            recovered=False, deleted=False, upgraded=False, published_recovering=False, crashes=c["crashes"],
            pending=(), lwm=0, sent=frozenset(), tc_ended=frozenset(), acked=frozenset())
        if not c["upgrade"]:
            # A new topic: recovery finds no snapshot and no index. The shipped
            # buffer then enters NoSnapshot (noNeedToRecover); the text's is ready.
            yield TBState(ledger=(), phase=NOSNAP if self.variant == "merged" else READY, **base)
            return
        # Upgrade: t0 wrote and aborted before the upgrade, in ledger 0. The old
        # snapshot was taken before or after its abort; the broker restarts
        # with segmented snapshots enabled and finds no index record.
        ledger = ((DATA, 0, 0), (ABORT, 0, 0))
        base["ledger"] = ledger
        for old in (((), 0), ((0,), 2)):
            yield TBState(**{**base, "old": old, "phase": DOWN})

    # -- the TB's in-memory processing (putAbortedTxnAndPosition) -------------
    def _put_aborted(self, s: TBState, t: int, pos: int) -> TBState:
        unsealed = s.unsealed + (t,)
        s = s._replace(aborted=s.aborted | {t}, unsealed=unsealed)
        if len(unsealed) >= self.constants["capacity"]:
            # Seal: remember the segment by its last marker position, queue the write.
            s = s._replace(unsealed=(), sealed=s.sealed + ((pos, unsealed),),
                           queue=s.queue + (("W", unsealed, pos),))
        return s

    def _write_index(self, s: TBState, snapshot: tuple) -> TBState:
        return s._replace(index=(s.indexes, snapshot[0], snapshot[1]))

    write_index = _write_index

    def append_data(self, s: TBState, t: int) -> TBState:
        """A transactional entry lands; handleTransactionMessage tracks its txn
        as ongoing unless it is ongoing already or known aborted."""
        ledger = s.ledger + ((DATA, t, s.cur),)
        ongoing = s.ongoing
        if t not in dict(ongoing) and t not in s.aborted:
            ongoing = ongoing + ((t, len(s.ledger)),)
        return s._replace(ledger=ledger, ongoing=ongoing, max_read=_limit(ongoing, ledger))

    def _marker(self, s: TBState, t: int, kind: str, lwm: int | None) -> TBState:
        """The commit/abort marker (an entry of the topic); an abort goes into the
        aborted list (putAbortedTxnAndPosition). With the first-snapshot window
        the buffer also records the coordinator's low water mark (handleLowWaterMark)."""
        pos = len(s.ledger)
        ledger = s.ledger + ((kind, t, s.cur),)
        ongoing = tuple(x for x in s.ongoing if x[0] != t)
        nxt = s._replace(ledger=ledger, ongoing=ongoing, max_read=_limit(ongoing, ledger))
        if kind == ABORT:
            nxt = self._put_aborted(nxt, t, pos)
        if t in s.tc_ended:
            nxt = nxt._replace(acked=s.acked | {t})
        if lwm is not None and self.constants["first_snapshot_window"]:
            nxt = nxt._replace(lwm=max(s.lwm, lwm))
        return nxt

    def abort_marker(self, s: TBState, t: int, lwm: int) -> TBState:
        return self._marker(s, t, ABORT, lwm)

    def commit_marker(self, s: TBState, t: int, lwm: int) -> TBState:
        return self._marker(s, t, COMMIT, lwm)

    # -- next-state relation --------------------------------------------------
    def next(self, s: TBState):
        c = self.constants
        ready = s.phase == READY
        if ready:
            yield from self._workload(s)
            yield from self._worker(s)
            if c["first_snapshot_window"]:
                yield from first_snapshot.low_water_mark_abort(self, s)
            if s.sealed and s.sealed[0][0] < len(s.ledger) and s.ledger[s.sealed[0][0]][2] < s.trimmed:
                # "Snapshot topic": the ledger of the segment's last abort marker is
                # gone, so its txns can no longer matter: drop them, queue the delete.
                pos, txns = s.sealed[0]
                yield self.a["TrimExpiredSegments"], s._replace(
                    aborted=s.aborted - set(txns), sealed=s.sealed[1:], queue=s.queue + (("D", pos),))
        elif s.phase in (NOSNAP, FIRST) and c["first_snapshot_window"]:
            yield from first_snapshot.window_steps(self, s)
        elif s.phase == NOSNAP:
            if self.workload:  # NoSnapshot holds no transactional entry: every txn is still to write
                # The first transactional append is queued and calls takeFirstSnapshot():
                # the index record (no segment, the unsealed list, maxReadPosition) is
                # written, then the buffer is Ready (changeToReadyStateFromNoSnapshot)
                # and the queued append proceeds as a TxnWrite.
                yield self.a["TakeFirstSnapshot"], self._write_index(s, (s.unsealed, s.max_read))._replace(phase=READY)
        elif s.phase != STUCK:
            yield from self._recovery(s)
        if c["end_waits_first_snapshot"] and s.phase in (READY, NOSNAP, FIRST):
            yield from first_snapshot.end_retries(self, s)
        if s.phase in (READY, NOSNAP, FIRST, READ, LOADED) and sum(e[0] == PLAIN for e in s.ledger) < c["publishes"]:
            # A non-transactional publish, accepted while the TB recovers too.
            # Ready, the TB moves maxReadPosition to the LAC if no txn is open;
            # recovering, it leaves it to the replay, except in early-publish
            # (protocol-notes, v4 field failures: "maxReadPosition was moved by
            # normal publishes before the transaction buffer finished recovery").
            ledger = s.ledger + ((PLAIN, -1, s.cur),)
            if ready or s.phase == NOSNAP:
                # syncMaxReadPositionForNormalPublish: the LAC if no txn is ongoing
                # (FirstSnapshotting: left as it is).
                max_read = _limit(s.ongoing, ledger)
            elif self.variant == "early-publish":
                max_read = len(ledger)
            else:
                max_read = s.max_read
            yield self.a["Publish"], s._replace(ledger=ledger, max_read=max_read,
                                                published_recovering=s.published_recovering or not ready)
        # Ledger rollover and retention trimming happen whatever the TB does.
        may_roll = not c["prune"] or (ready and bool(s.ledger) and s.ledger[-1][2] == s.cur)
        if s.cur + 1 < c["ledgers"] and may_roll:
            yield self.a["Rollover"], s._replace(cur=s.cur + 1)
        if s.trimmed < s.cur:
            # Retention deletes the oldest ledger once it was read past (below maxReadPosition).
            last = max((i for i, e in enumerate(s.ledger) if e[2] == s.trimmed), default=-1)
            if last < _first_open(s.ledger, 0):
                yield self.a["TrimLedger"], s._replace(trimmed=s.trimmed + 1)
        if s.crashes and s.phase != DOWN:
            yield self.a["Crash"], s._replace(
                phase=DOWN, aborted=frozenset(), unsealed=(), ongoing=(), sealed=(), indexes=(), queue=(), busy="",
                snap=None, seq=0, max_read=0, start=0, to_load=(), crashes=s.crashes - 1, pending=(), lwm=0)

    def _workload(self, s: TBState):
        """A ready buffer: each txn sends one entry, then the coordinator ends it."""
        c = self.constants
        lwm = first_snapshot.tc_low_water_mark(s.tc_ended, self.workload)
        for t in self.workload:
            if t not in s.sent:
                # A transactional send: one append; maxReadPosition stays before it
                # (internalAppendBufferToTxn rejects it at or below the low water mark).
                nxt = s._replace(sent=s.sent | {t})
                yield self.a_write[t], nxt if 0 < t <= s.lwm else self.append_data(nxt, t)
            if t not in s.tc_ended and (t in s.sent or c["late_sends"]):
                for d in (("commit", "abort") if c["commits"] and t in s.sent else ("abort",)):
                    ended = s._replace(tc_ended=s.tc_ended | {t})
                    yield self.a_end[(t, d)], self._marker(ended, t, COMMIT if d == "commit" else ABORT, lwm)

    def _worker(self, s: TBState):
        """The persistent worker: queued WriteSegment/DeleteSegment, one at a
        time, each followed by an index update if it is the last task queued;
        and the periodic index update of the unsealed snapshot."""
        if s.busy == "":
            if s.queue and s.queue[0][0] == "W":
                _, txns, pos = s.queue[0]
                # Write the segment under key sequenceID (compacted topic: replaces the key).
                store = frozenset(x for x in s.store if x[0] != s.seq) | {(s.seq, txns, pos)}
                yield self.a["SegmentWritten"], s._replace(store=store, busy="W")
            elif s.queue:
                pos = s.queue[0][1]
                seq = next((k for k, p in s.indexes if p == pos), None)
                store = frozenset(x for x in s.store if x[0] != seq)
                yield self.a["SegmentDeleted"], s._replace(store=store, busy="D", deleted=True)
            if not s.queue or self.variant == "pip-text":
                # takeAbortedTxnsSnapshot: capture (unsealed, maxReadPosition) now, write later.
                yield self.a["TakeSnapshot"], s._replace(busy="U", snap=(s.unsealed, s.max_read))
        elif s.busy == "U":
            yield self.a["IndexWritten"], self._write_index(s, s.snap)._replace(busy="", snap=None)
        elif s.busy == "W":
            _, txns, pos = s.queue[0]
            # indexes.put(abortedMarkerPersistentPosition, index): a map keyed by the
            # marker position, so a segment sealed again at a position (a recovery
            # replaying an abort already in a segment) replaces the older key.
            at = [i for i, (_, p) in enumerate(s.indexes) if p == pos]
            indexes = (_put(s.indexes, at[0], (s.seq, pos)) if at else s.indexes + ((s.seq, pos),))
            nxt = s._replace(indexes=indexes)
            if len(s.queue) == 1:  # updateIndexWhenExecuteTheLatestTask
                nxt = self._write_index(nxt, (s.unsealed, s.max_read))
            yield self.a["SegmentIndexed"], nxt._replace(queue=s.queue[1:], busy="", seq=s.seq + 1)
        elif s.busy == "D":
            pos = s.queue[0][1]
            nxt = s._replace(indexes=tuple(x for x in s.indexes if x[1] != pos))
            if len(s.queue) == 1:
                nxt = self._write_index(nxt, (s.unsealed, s.max_read))
            yield self.a["IndexAfterDelete"], nxt._replace(queue=s.queue[1:], busy="")

    def _recovery(self, s: TBState):
        if s.phase == DOWN:
            # Read the index record; with none, the upgrade path reads the old snapshot.
            if s.index is not None:
                listed, unsealed, max_read = s.index
                yield self.a["RecoverReadIndex"], s._replace(
                    phase=READ, unsealed=unsealed, start=max_read, to_load=listed)
            elif s.old is not None:
                aborts, max_read = s.old
                yield self.a["RecoverReadIndex"], s._replace(
                    phase=READ, unsealed=aborts, start=max_read, upgraded=True)
            elif self.variant == "merged":
                # No snapshot and no index: noNeedToRecover. No replay; the limit is
                # the LAC (updateMaxReadPositionAfterRecovery), state NoSnapshot.
                yield self.a["RecoverReadIndex"], s._replace(phase=NOSNAP, max_read=len(s.ledger))
            else:
                yield self.a["RecoverReadIndex"], s._replace(phase=READ, start=0)
        elif s.phase == READ:
            # Load each listed segment; one whose marker ledger is gone is skipped
            # (and the index rewritten); a missing one whose ledger lives fails recovery.
            stored = {k: (txns, pos) for k, txns, pos in s.store}
            aborted, sealed, indexes, invalid = set(), [], [], False
            for k, pos in s.to_load:
                if k in stored:
                    txns = stored[k][0]
                    aborted.update(txns)
                    sealed.append((pos, txns))
                    indexes.append((k, pos))
                elif s.ledger[pos][2] < s.trimmed:
                    invalid = True
                else:
                    yield self.a["RecoverLoadSegments"], s._replace(phase=STUCK)
                    return
            nxt = s._replace(phase=LOADED, aborted=frozenset(aborted) | set(s.unsealed),
                             sealed=tuple(sealed), indexes=tuple(indexes),
                             seq=(indexes[-1][0] + 1) if indexes else 0)
            if invalid:  # compensation: rewrite the index with the old snapshot, now
                nxt = self._write_index(nxt, (s.index[1], s.index[2]))
            yield self.a["RecoverLoadSegments"], nxt
        elif s.phase == LOADED:
            # Replay the topic from the snapshot's maxReadPosition to the LAC.
            lo = max(s.start, next((i for i, e in enumerate(s.ledger) if e[2] >= s.trimmed), len(s.ledger)))
            nxt = s
            for i in range(lo, len(s.ledger)):
                kind, t, _ = s.ledger[i]
                if kind == ABORT:
                    nxt = self._put_aborted(nxt, t, i)
            ongoing = _track((), s.ledger, lo, nxt.aborted)
            yield self.a["RecoverReplay"], nxt._replace(
                phase=READY, ongoing=ongoing, max_read=_limit(ongoing, s.ledger), start=0, to_load=(), recovered=True)

    # -- observation ----------------------------------------------------------
    def observe(self, s: TBState):
        tn = dict(zip(self.txn_ids, self.txn_names))
        ever = {t for k, t, _ in s.ledger if k == ABORT}
        live = {t for k, t, g in s.ledger if k == ABORT and g >= s.trimmed}
        listed = {f"k{k}" for k, _ in s.index[0]} if s.index else set()
        return {
            "ready": s.phase in (READY, NOSNAP),
            "ongoingTxn": {tn[t] for t, _ in s.ongoing},
            "endCompleted": {tn[t] for t in s.acked},
            "endedWhileFirstSnapshotting": any(k == first_snapshot.WRITE_TASK and t in s.tc_ended
                                               for k, t, _ in s.pending),
            "pendingAppendLanded": s.phase == READY and bool(s.index) and bool(s.sent) and not s.pending
                                   and self.constants["first_snapshot_window"],
            "segmentKey": {f"k{k}": k for k in range(self.n_seq)},
            "nextSequenceId": s.seq,
            "noSnapshot": s.phase == NOSNAP,
            "crashed": s.crashes < self.constants["crashes"],
            "workerIdle": s.busy == "" and not s.queue,
            "phase": s.phase,
            "recoveryStuck": s.phase == STUCK,
            "tbAborted": {tn[t] for t in s.aborted},
            "abortedLive": {tn[t] for t in live},
            "abortedEver": {tn[t] for t in ever},
            "maxReadPosition": 0 if s.phase == FIRST else s.max_read,  # getMaxReadPosition: EARLIEST
            "ghostMaxReadPosition": _first_open(s.ledger, 0),
            "serving": s.phase in (READY, NOSNAP, FIRST, READ, LOADED),
            "publishedWhileRecovering": s.published_recovering,
            "segmentStored": {self._seq_name(k) for k, _, _ in s.store},
            "segmentListed": listed,
            "recoveredOnce": s.recovered,
            "segmentDeleted": s.deleted,
            "upgradedFromOldSnapshot": s.upgraded,
        }

    def _seq_name(self, k: int) -> str:
        if k >= self.n_seq:
            raise AssertionError(f"sequence id {k} outgrew the Seq sort ({self.n_seq})")
        return f"k{k}"

    def state_vars(self, s: TBState):
        tn = dict(zip(self.txn_ids, self.txn_names))
        tn[-1] = "-"
        names = lambda ts: tuple(tn[t] for t in ts)
        return {
            "topic": tuple(f"{k}:{tn[t]}@L{g}" for k, t, g in s.ledger),
            "currentLedger": s.cur,
            "deletedLedgersBelow": s.trimmed,
            "segmentTopic": frozenset((f"k{k}", names(txns), pos) for k, txns, pos in s.store),
            "indexRecord": (tuple((f"k{k}", p) for k, p in s.index[0]), names(s.index[1]), s.index[2])
                           if s.index else "none",
            "oldSnapshot": (names(s.old[0]), s.old[1]) if s.old else "none",
            "phase": s.phase,
            "aborts": frozenset(tn[t] for t in s.aborted),
            "ongoingTxns": tuple(f"{tn[t]}@{p}" for t, p in s.ongoing),
            "unsealed": names(s.unsealed),
            "segmentIndex": tuple((p, names(txns)) for p, txns in s.sealed),
            "indexes": tuple((f"k{k}", p) for k, p in s.indexes),
            "taskQueue": tuple((x[0], names(x[1]), x[2]) if x[0] == "W" else x for x in s.queue),
            "workerBusy": s.busy,
            "capturedSnapshot": (names(s.snap[0]), s.snap[1]) if s.snap else "none",
            "sequenceId": s.seq,
            "maxReadPosition": s.max_read,
            "crashesLeft": s.crashes,
            "pendingAppends": tuple(f"{k}:{tn[t]}" for k, t, _ in s.pending),
            "lowWaterMark": s.lwm,
            "sent": frozenset(tn[t] for t in s.sent),
            "endedByCoordinator": frozenset(tn[t] for t in s.tc_ended),
            "endCompleted": frozenset(tn[t] for t in s.acked),
        }
