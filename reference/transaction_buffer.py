"""`MetadataTransactionBuffer`: the transaction buffer of one segment
(PIP-473, "Components / MetadataTransactionBuffer"; "Flows / Publish").

It writes nothing to the data stream beyond the entries themselves. In
memory only, lost on a crash:
  * `first`: the first entry of each OPEN txn it tracks (pins the read position),
  * `last`: the last entry of each (Pulsar's `TxnEntry.lastPosition`), the
    prune key of the txn's aborted record,
  * `in_flight`: txns whose entry position is not known yet (merged: from
    the header read that caches the txn until its append lands; a failed op
    write or append leaves it),
  * `recovery_discovered`: txns recovery found OPEN with writes here, whose
    first entries it cannot know (merged: placeholder op positions); like
    Pulsar's `TxnEntry.recoveryDiscovered` (counted by
    `recoveryDiscoveredOpen`), each keeps the read position pinned until
    the txn is materialized, and a later append of it does not re-key it,
  * `hold`: the read position held while something is in flight or recovered,
  * `aborted`: txns it materialized as aborted (the text's in-memory marks;
    with durable aborted records, a mirror of them).

A transactional send is a `PublishRequest` that moves through stages, each a
scheduler task ("publish", segment, request id, stage):
  text     check -> append -> op
  merged   check -> [cache] -> op (placeholder position) -> append
  fixed    check -> [cache] -> op -> validate -> append
(`cache`: the callback of the header read a txn missing from the map needs)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .apply_chain import ApplyChain
from .env import Env
from .header_cache import TxnHeaderCache
from .ledger import ManagedLedger
from .records import ABORTED, COMMITTED, OPEN, WRITES_BY_SEGMENT, aborted_prefix, ops_prefix, watermark_path

CONFLICT = "TxnConflict"
OP_WRITE_FAILED = "MetadataStoreException"
TERMINATED = "TopicTerminated"
DISCONNECTED = "Disconnected"


@dataclass
class PublishRequest:
    """A send in flight on the broker; the client sees `result` in `done`."""

    rid: str
    txn: str
    payload: Any
    done: Callable[["PublishRequest"], None] = field(repr=False, default=lambda r: None)
    segment: str = ""             # where the producer routed it
    stage: str = "todo"           # todo read (read-applied: F11) checked op appended valid done rejected
    position: int | None = None   # the ledger entry once appended
    op_path: str | None = None    # the WRITE op record once put
    result: str | None = None
    op_write_fails: bool = False  # a metadata-store error injected for the op put (tests, replay)
    closed: bool = False          # its buffer instance was closed (a topic unload) while it ran
    answer: str | None = None     # merged: what its header read answered, for the read's callback

    def finish(self, stage: str, result: str | None = None) -> None:
        self.stage, self.result = stage, result
        self.done(self)


class MetadataTransactionBuffer:
    def __init__(self, segment: str, ledger: ManagedLedger, env: Env, owner: str, cache: TxnHeaderCache,
                 materialize: Callable[[str, str], None]) -> None:
        self.segment = segment
        self.ledger = ledger
        self.env = env
        self.owner = owner
        self.cache = cache
        self.b = env.behaviour
        self._materialize_participant = materialize
        self.first: dict[str, int] = {}
        self.last: dict[str, int] = {}
        self.in_flight: set[str] = set()
        self.recovery_discovered: set[str] = set()
        self.hold: int | None = None
        self.ready = True   # False while an asynchronous recovery runs
        self.loaded = 0     # recovery_steps: 1 once the watermark is loaded, 2 also the aborted set
        self.watermark_known = False   # recovery_steps: the watermark record's version is known
        self.aborted: set[str] = set()
        self.requests: dict[str, PublishRequest] = {}
        self.closed = False   # closeAsync (a topic unload): the sends it took go on
        self.chain = ApplyChain(self)   # apply_steps: the reconcile reads and `stateTail`

    # -- publish -------------------------------------------------------------------
    def append_buffer_to_txn(self, req: PublishRequest) -> None:
        self.requests[req.rid] = req
        self._next(req, "check", self._check)

    def _next(self, req: PublishRequest, stage: str, fn: Callable[[PublishRequest], None]) -> None:
        self.env.scheduler.submit(("publish", self.segment, req.rid, stage), lambda: fn(req), owner=self.owner)

    def _end(self, req: PublishRequest, stage: str, result: str | None = None) -> None:
        self.requests.pop(req.rid, None)
        req.finish(stage, result)

    def _check(self, req: PublishRequest) -> None:
        """Read the header, cache first: not OPEN (or missing) -> TxnConflict.
        merged (`readStateCacheFirst`): a txn not in the map is read from the
        store, and the read's callback (task "cache", `_cached`) makes its
        entry."""
        if self.b.op_before_append and req.txn not in self.cache:
            req.answer = self.cache.read(req.txn)   # getHeader: the store's state now
            req.stage = "read"
            self._next(req, "cache", self._cached)
            return
        if not self.cache.check_open(req.txn):
            self._end(req, "rejected", CONFLICT)
            return
        self._checked(req)

    def _cached(self, req: PublishRequest) -> None:
        """The read's callback: `putIfAbsent` of an entry of the state read
        (this map holds OPEN ones only: a terminal entry would answer a later
        check as a fresh read does), into this instance, closed or not. An
        OPEN entry with no position holds the read position (Pulsar's
        `recomputeMaxReadPositionLocked`) until its append lands."""
        if req.answer != OPEN or req.stage == "read-applied":   # F11: applied since the read
            self._end(req, "rejected", CONFLICT)
            return
        if req.txn not in self.cache:
            self.cache.add(req.txn)
            self._hold_for(req.txn)
        self._checked(req)

    def _checked(self, req: PublishRequest) -> None:
        req.stage = "checked"
        self._next(req, "op" if self.b.op_before_append else "append",
                   self._put_op if self.b.op_before_append else self._append)

    def _put_op(self, req: PublishRequest) -> None:
        txn = req.txn
        if req.op_write_fails:
            self._op_write_failed(req)
            return
        if self.b.watermark_before_op and not self.closed and not any(
                True for _ in self.env.store.scan(WRITES_BY_SEGMENT.name, (self.segment, txn), (self.segment, txn))):
            self._persist_watermark()  # F2: the txn's first op here; recovery can hold below its entry
        rec = self.env.store.create_sequential(
            ops_prefix(txn), {"kind": "write", "txn": txn, "segment": self.segment, "position": req.position},
            partition_key=txn)
        req.op_path = rec.path
        if self.b.op_before_append:
            if txn in self.cache:
                self._hold_for(txn)
            req.stage = "op"
            if self.b.validate_after_op:
                self._next(req, "validate", self._validate)
            else:
                self._next(req, "append", self._append)
        else:
            self._track(txn, req.position)  # the index now tells the TB where the txn starts
            self._end(req, "done")

    def _hold_for(self, txn: str) -> None:
        """txn's entry has no position yet: hold the read position."""
        if self.hold is None:
            self.hold = self._max_read_position()
        self.in_flight.add(txn)

    def _op_write_failed(self, req: PublishRequest) -> None:
        """The op put failed, so the send fails. The merged buffer keeps the
        cache entry its header read created (protocol notes); F5 drops it."""
        self._end(req, "rejected", OP_WRITE_FAILED)
        self._release_failed(req.txn)

    def _release_failed(self, txn: str) -> None:
        """F5: after a failed send, forget a txn this buffer holds nothing of
        (no op record here, no tracked position, no other send in progress):
        no event would clear it."""
        if not self.b.drop_cache_on_failed_send or txn not in self.cache:
            return
        if txn in self.first or txn in self.recovery_discovered:
            return
        if any(r.txn == txn and r.stage not in ("todo", "read") for r in self.requests.values()):
            return  # another send of the txn past its check: its op put tracks only a cached txn
            # (one whose header read is out makes the entry itself in the read's callback)
        store = self.env.store
        shared = not self.b.split_participants  # the pending-ack stores share this cache
        if any(v["segment"] == self.segment and (shared or v["kind"] == "write")
               for v in (store.get(p).value for p in store.children(ops_prefix(txn)))):
            return  # an op whose event reaches this cache
        self.cache.evict(txn)
        self.in_flight.discard(txn)   # the entry goes, and with it its hold
        self._release_hold()

    def _validate(self, req: PublishRequest) -> None:
        """F1: a linearizable header read admits the write; a decided header
        rejects it, deletes the op and materializes the decision read."""
        state = self.cache.read(req.txn)
        if state == OPEN:
            req.stage = "valid"
            self._next(req, "append", self._append)
            return
        self.env.store.delete(req.op_path)
        if req.txn in self.cache and not self.closed:
            self._materialize_participant(req.txn, COMMITTED if state == COMMITTED else ABORTED)
        self._end(req, "rejected", CONFLICT)

    def _append(self, req: PublishRequest) -> None:
        def added(pos: int | None, err: Exception | None) -> None:
            if err is not None:
                # merged: the entry stays, and holds the read position while it has no position
                if self.b.op_before_append and (req.txn in self.first or req.txn in self.recovery_discovered):
                    self.in_flight.discard(req.txn)
                    self._release_hold()
                if self.b.validate_after_op and req.op_path:
                    self.env.store.delete(req.op_path)
                if self.b.rekey_late_entries and req.txn in self.aborted:
                    self._rekey_aborted(req, None)
                self._end(req, "rejected", TERMINATED)
                self._release_failed(req.txn)
                return
            req.position = pos
            if self.b.op_before_append:
                # the callback chain (`appendToLedger`'s future, then trackPosition and the
                # client's answer) runs in the add's completion task: the task at the head of
                # the ledger's queue, so the ledger's next add completes after it
                req.stage = "added"
                self.env.scheduler.submit(("append-callback", self.segment, req.rid), lambda: self._added(req),
                                          owner=self.owner, queue=f"ledger:{self.ledger.name}", first=True)
                return
            if self.b.rekey_late_entries and req.txn in self.aborted:
                self._rekey_aborted(req, pos)
            req.stage = "appended"
            self._next(req, "op", self._put_op)

        self.ledger.async_add_entry(("txn", req.txn, req.payload), added)

    def _added(self, req: PublishRequest) -> None:
        """The callback of a send's ledger add (op before append): F8's
        re-key, `trackPosition`, the client's answer."""
        if self.b.rekey_late_entries and req.txn in self.aborted:
            self._rekey_aborted(req, req.position)
        self._track(req.txn, req.position)
        if req.closed:   # an unload closed the instance, and the producer's connection: the answer is lost
            self._end(req, "rejected", DISCONNECTED)
        else:
            self._end(req, "done")

    def close(self, owner: str) -> None:
        """closeAsync, on a topic unload. Pulsar's `internalAppend` checks
        `closed` only on entry, so the sends past it go on, now as the tasks
        of `owner` (a crash of the segment's next broker does not touch
        them): the op put still lands; the ledger handle is closed, so the
        append fails. With `apply_steps` its reconcile reads and apply chain
        go on as well (apply_chain.py), and a plain entry's add callback
        still to run, with its memory as it was and its ledger handle's last
        confirmed entry where the close left it; otherwise it applies no
        decision after the close."""
        self.closed = True
        for req in self.requests.values():
            req.closed = True
        self.env.scheduler.reassign(self.owner, owner, "publish", self.segment)
        self.chain.close(owner)   # apply_steps: its reads and apply chain go on too
        # an add's callback still to run runs here, off the next owner's ledger queue: a send's
        # always (its request goes on); a plain entry's with apply_steps (the instance's memory goes on)
        for kind in ("append-callback",) + (("plain-sync",) if self.b.apply_steps else ()):
            for task in self.env.scheduler.pending(kind, self.segment):
                if task.owner == self.owner:
                    task.owner, task.queue = owner, None
        self.owner = owner
        self.ledger.close()

    def fail_in_flight(self) -> None:
        """The broker is going away: every send it holds fails at the client."""
        for req in list(self.requests.values()):
            self._end(req, "rejected", DISCONNECTED)

    # -- the read position -------------------------------------------------------------
    def _track(self, txn: str, pos: int) -> None:
        if txn not in self.cache:
            return  # already materialized: nothing pins the read position
        self.in_flight.discard(txn)
        if txn not in self.recovery_discovered:  # its earliest entry is unknown: keep the pin
            self.first.setdefault(txn, pos)
            self.last[txn] = max(pos, self.last.get(txn, pos))
        self._release_hold()

    def _release_hold(self) -> None:
        if not self.in_flight and not self.recovery_discovered:
            self.hold = None

    def forget(self, txn: str) -> None:
        self.first.pop(txn, None)
        self.last.pop(txn, None)
        self.in_flight.discard(txn)
        self.recovery_discovered.discard(txn)
        self._release_hold()

    def start_recovering(self) -> None:
        """The constructor's maxReadPosition is the LAC, and it stays there
        until recovery completes (F6 gates the getter, not the field)."""
        self.ready = False
        self.hold = self.ledger.last_confirmed

    def load_watermark(self) -> None:
        """recovery_steps, step 1: the durable watermark; the read position
        starts there when it exists."""
        self.loaded = 1
        self.watermark_known = True
        self.chain.reload_watermark()
        rec = self.env.store.get(watermark_path(self.segment))
        if rec is not None:
            self.hold = rec.value["position"]

    def recovered(self) -> None:
        if self.loaded < 1:   # the watermark loads now (recovery in one task, or a first load)
            self.chain.reload_watermark()
        self.ready = True
        self.hold = None
        self.loaded = 0
        self.watermark_known = False

    def get_max_read_position(self) -> int:
        """What the dispatcher reads up to. F6: the earliest position (-1:
        nothing) until recovery completes, as the legacy buffer answers."""
        if not self.ready and self.b.dispatch_waits_for_recovery:
            return -1
        return self._max_read_position()

    def _max_read_position(self) -> int:
        """The maxReadPosition field: the entry before the first entry of the
        oldest OPEN txn, capped at the last confirmed entry, and no higher
        than a held value; what the watermark persists."""
        if not self.ready:
            return self.hold
        v = self.ledger.last_confirmed
        if self.first:
            v = min(v, min(self.first.values()) - 1)
        if self.hold is not None:
            v = min(v, self.hold)
        return v

    def sync_max_read_position_for_normal_publish(self) -> None:
        """The topic's add-complete callback for a non-transactional entry
        (Pulsar's `syncMaxReadPositionForNormalPublish`): recompute the read
        position and persist the watermark if it moved forward. merged: not
        gated on recovery, so a recovering buffer, which knows no txn yet,
        recomputes the LAC. F7: nothing until recovery completes."""
        if not self.b.durable_watermark:
            return
        rec = self.env.store.get(watermark_path(self.segment))
        if not self.ready:
            if self.b.normal_publish_waits_for_recovery:
                return
            self.hold = self.ledger.last_confirmed
            if self.b.recovery_steps and not self.b.apply_steps and not self.watermark_known and rec is not None:
                # the CAS expects no record, and one exists: it fails with a bad
                # version, and the buffer re-reads the record (Pulsar's
                # persistWatermarkIfAdvanced), so the next CAS can succeed
                self.watermark_known = True
                return
        if self.b.apply_steps:   # persistWatermarkIfAdvanced, chained on stateTail (apply_chain.py)
            if self.chain.queue or self.chain.advances():
                self.chain.enqueue_normal_publish()
            return
        position = self._max_read_position()
        if rec is None or position > rec.value["position"]:
            self.env.store.put(watermark_path(self.segment), {"position": position})

    def _persist_watermark(self) -> None:
        rec = self.env.store.put(watermark_path(self.segment), {"position": self._max_read_position()})
        self.chain.mirror, self.chain.version = rec.value["position"], rec.version   # what it wrote

    # -- the dispatcher's question -----------------------------------------------------
    def is_txn_aborted(self, txn: str) -> bool:
        if not self.ready and self.loaded < 2:
            return False   # the aborted set is not loaded yet
        if self.b.durable_aborted_records:
            return txn in self.aborted  # mirrors the durable records; unknown is visible
        if txn in self.aborted:
            return True
        if txn in self.cache:
            return False
        return self.cache.read(txn) not in (OPEN, COMMITTED)  # unknown ("retention horizon"): aborted

    # -- materialization -------------------------------------------------------------
    def applied(self, txn: str) -> None:
        """The entry of txn goes (`applyTerminalNow`). F11: a header read of
        txn this instance issued, whose callback has not run, is stale."""
        if self.b.stale_reads_fail:
            for r in self.requests.values():
                if r.txn == txn and r.stage == "read":
                    r.stage = "read-applied"

    def materialize(self, txn: str, state: str) -> None:
        """Commit: stop pinning the read position. Abort: remember the txn as
        aborted (durably in merged). Then delete this segment's WRITE ops."""
        if txn in self.cache:
            self.applied(txn)
        if state == ABORTED:
            self.aborted.add(txn)
            if self.b.durable_aborted_records:
                self.env.store.put(aborted_prefix(self.segment) + txn, {"txn": txn, "position": self.prune_key(txn)})
        self.forget(txn)
        for _, path in self.env.store.scan(WRITES_BY_SEGMENT.name, (self.segment, txn), (self.segment, txn)):
            self.env.store.delete(path)

    def prune_key(self, txn: str) -> int | None:
        """The key of txn's aborted record: its last entry this buffer
        tracked, else the LAC (`persistAbortedRecord`); F8: none while an
        append of it is in flight (keyed once that lands or fails)."""
        if self.b.rekey_late_entries and self._appending(txn):
            return None
        return self.last.get(txn, self.ledger.last_confirmed)

    def _appending(self, txn: str, but: PublishRequest | None = None) -> bool:
        """A request of txn here whose ledger append may still land (none
        once the buffer is closed: its ledger handle refuses them)."""
        if self.closed:
            return False
        stage = "valid" if self.b.validate_after_op else "op"
        return any(r is not but and r.txn == txn and r.stage in (stage, "added") for r in self.requests.values())

    def _rekey_aborted(self, req: PublishRequest, pos: int | None) -> None:
        """F8: the aborted record must outlive every readable entry of the
        txn. A record without a key (written while an append was in flight)
        gets one once no append of the txn is in flight: the entry's
        position, or the LAC when the append failed; a later entry raises it."""
        path = aborted_prefix(self.segment) + req.txn
        rec = self.env.store.get(path)
        if rec is None:
            return
        old = rec.value["position"]
        if self._appending(req.txn, but=req):
            new = None if old is None or (pos is not None and pos > old) else old
        elif old is None:
            new = self.ledger.last_confirmed if pos is None else pos
        else:
            new = old if pos is None else max(old, pos)
        if new != old:
            self.env.store.put(path, {"txn": req.txn, "position": new})

    def prune_aborted(self, first_retained: int) -> list[str]:
        """The periodic task (Pulsar's `pruneTrimmedAbortedTxns`): an aborted
        record goes once its key falls below the ledger's first retained entry."""
        pruned = []
        for path in self.env.store.children(aborted_prefix(self.segment)):
            v = self.env.store.get(path).value
            if v["position"] is not None and v["position"] < first_retained:
                self.env.store.delete(path)
                self.aborted.discard(v["txn"])
                pruned.append(v["txn"])
        return pruned

    def after_materialize(self) -> None:
        if self.b.durable_watermark:
            self._persist_watermark()

    # -- recovery ("Recovery / Broker startup") -------------------------------------
    def recover_positions(self, txn: str, positions: list[int | None]) -> None:
        """An OPEN txn with writes here, found by recovery."""
        if self.b.recovery_holds_read_position:
            rec = self.env.store.get(watermark_path(self.segment))
            held = rec.value["position"] if rec else self.ledger.last_confirmed
            self.hold = held if self.hold is None else min(self.hold, held)
            self.recovery_discovered.add(txn)
        else:
            self.first[txn] = min(p for p in positions if p is not None)

    def load_aborted_records(self) -> None:
        if self.loaded >= 2:
            return   # recovery_steps: loaded by its own step
        if not self.ready:
            self.loaded = 2
        if self.b.durable_aborted_records:
            for path in self.env.store.children(aborted_prefix(self.segment)):
                self.aborted.add(path.rsplit("/", 1)[1])
                v = self.env.store.get(path).value
                if self.b.rekey_late_entries and v["position"] is None:   # F8: no append survived the restart
                    self.env.store.put(path, {"txn": v["txn"], "position": self.ledger.last_confirmed})
