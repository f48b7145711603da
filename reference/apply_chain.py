"""How `MetadataTransactionBuffer` applies a decision when each metadata call
is a step of its own (behaviour `apply_steps`), read from
apache/pulsar@ec708a8 `MetadataTransactionBuffer.java`:

* `triggerReconcile` reads the header of every txn its map holds OPEN, each
  read a task ("tb-read", segment, txn); a decided header (a missing one
  counts as ABORTED) calls `enqueueApplyTerminal`.
* `enqueueApplyTerminal` chains `applyTerminalNow` on `stateTail`; it runs
  when the chain before it completes, at once on an idle chain.
* `applyTerminalNow`, under the lock: no entry, nothing to do; else take the
  entry's last position (the prune key), mark it, add an abort to
  `abortedTxns`, recompute maxReadPosition, drop the entry. Then, each a
  task ("tb-apply", segment, txn, stage): `persistAbortedRecord` (an abort
  only), `persistWatermarkIfAdvanced`, `deleteWriteOpsForSegmentAndTxn`. A
  failed call fails the apply (the `exceptionally` of the chain logs it) and
  the chain goes on with the next apply: the later calls of that apply never
  run.
* `persistWatermarkIfAdvanced`: nothing unless maxReadPosition is above the
  watermark the buffer knows; else a CAS on the version it knows; a lost CAS
  re-reads the record and fails.
* `syncMaxReadPositionForNormalPublish` (a non-transactional entry added)
  chains `persistWatermarkIfAdvanced` on `stateTail` too: on an idle chain
  it finds nothing to do at once or its CAS is a task ("tb-apply", segment,
  NORMAL, "watermark"); behind queued applies it waits its turn. A lost CAS
  re-reads the record and is only logged.
* `closeAsync` sets `closed` and closes the event subscription; it waits for
  neither the reads in flight nor the chain, and neither checks `closed`:
  their tasks go on, owned by the closed instance.
"""

from __future__ import annotations

from .records import ABORTED, OPEN, WRITES_BY_SEGMENT, aborted_prefix, watermark_path
from .store import BadVersion
from .store.api import NEW


NORMAL = "normal-publish"   # the txn slot of a normal publish's watermark CAS in the chain


class ApplyChain:
    def __init__(self, tb) -> None:
        self.tb = tb
        self.queue: list[tuple] = []   # (txn, state, entry made by recovery), or (None, None, False): a
        # normal publish's watermark CAS
        self.mirror: int | None = None    # the watermark this buffer knows (none until recovery
        self.version = NEW                # loads it), and its record's version
        self.head: tuple | None = None    # the head apply's stage in flight and its prune key

    def _submit(self, label: tuple, fn) -> None:
        tb = self.tb
        tb.env.scheduler.submit(label, fn, owner=tb.owner)

    def close(self, owner: str) -> None:
        """closeAsync: the reads and the chain go on as tasks of `owner`."""
        sched = self.tb.env.scheduler
        for prefix in ("tb-read", "tb-apply"):
            sched.reassign(self.tb.owner, owner, prefix, self.tb.segment)

    # -- the watermark's version ------------------------------------------------
    def reload_watermark(self) -> None:
        rec = self.tb.env.store.get(watermark_path(self.tb.segment))
        self.mirror, self.version = (None, NEW) if rec is None else (rec.value["position"], rec.version)

    def advances(self) -> bool:
        """persistWatermarkIfAdvanced's check: maxReadPosition above the watermark it knows."""
        return self.mirror is None or self.tb._max_read_position() > self.mirror

    def persist_watermark(self) -> bool:
        """persistWatermarkIfAdvanced: False when its CAS lost."""
        desired = self.tb._max_read_position()
        if self.mirror is not None and desired <= self.mirror:
            return True
        try:
            rec = self.tb.env.store.put(watermark_path(self.tb.segment), {"position": desired},
                                        expected_version=self.version)
        except BadVersion:
            self.reload_watermark()
            return False
        self.mirror, self.version = desired, rec.version
        return True

    # -- triggerReconcile ---------------------------------------------------------
    def reconcile(self) -> None:
        """An event: read the header of every txn held OPEN, each a task."""
        tb = self.tb
        for txn in sorted(tb.cache.open, key=lambda t: (len(t), t)):
            self._submit(("tb-read", tb.segment, txn), lambda txn=txn: self._read(txn))

    def _read(self, txn: str) -> None:
        state = self.tb.cache.read(txn)
        if state != OPEN:
            self.enqueue(txn, ABORTED if state is None else state)

    # -- stateTail --------------------------------------------------------------
    def enqueue_normal_publish(self) -> None:
        """A non-transactional entry's `persistWatermarkIfAdvanced`, chained."""
        self.queue.append((None, None, False))
        if len(self.queue) == 1:
            self._apply_now()

    def enqueue(self, txn: str, state: str, found: bool = False) -> None:
        self.queue.append((txn, state, found))
        if len(self.queue) == 1:
            self._apply_now()

    def _apply_now(self) -> None:
        """applyTerminalNow's locked part for the head of the chain."""
        tb = self.tb
        while self.queue:
            txn, state, found = self.queue[0]
            if txn is None:   # a normal publish's: its CAS in flight
                self._stage(NORMAL, "watermark", self._normal_watermark, None)
                return
            if not found and txn not in tb.cache:   # no entry: applied already
                self.queue.pop(0)
                continue
            key = tb.prune_key(txn)
            if state == ABORTED:
                tb.aborted.add(txn)
            tb.applied(txn)
            tb.cache.evict(txn)
            tb.forget(txn)
            first = ("record", self._record) if state == ABORTED else ("watermark", self._watermark)
            self._stage(txn, first[0], lambda f=first[1]: f(txn, key), key)
            return

    def _stage(self, txn: str, stage: str, fn, key) -> None:
        self.head = (stage, key)
        self._submit(("tb-apply", self.tb.segment, txn, stage), fn)

    def _record(self, txn: str, key) -> None:
        tb = self.tb
        tb.env.store.put(aborted_prefix(tb.segment) + txn, {"txn": txn, "position": key})
        self._stage(txn, "watermark", lambda: self._watermark(txn, key), key)

    def _watermark(self, txn: str, key) -> None:
        tb = self.tb
        if not tb.b.durable_watermark or self.persist_watermark():
            self._stage(txn, "delete", lambda: self._delete(txn), key)
        else:   # the apply failed: the chain goes on, this txn's ops stay
            self._next()

    def _normal_watermark(self) -> None:
        if not self.persist_watermark() and not self.tb.ready:
            self.tb.watermark_known = True   # it re-read the record's version
        self._next()

    def _delete(self, txn: str) -> None:
        store = self.tb.env.store
        for _, path in store.scan(WRITES_BY_SEGMENT.name, (self.tb.segment, txn), (self.tb.segment, txn)):
            store.delete(path)
        self._next()

    def _next(self) -> None:
        self.queue.pop(0)
        self.head = None
        self._apply_now()
