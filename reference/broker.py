"""The participant broker of one segment: its managed-ledger handle, header
cache, transaction buffer, pending-ack stores and dispatchers. Everything
here is memory; `crash()` drops it, and `start()` rebuilds it from the
store and the ledger ("Recovery / Broker startup", `recover()` and
`replayAsync()`).

With `split_participants` (the merged code's `MetadataTransactionBuffer` and
`MetadataPendingAckStore` as separate components) each pending-ack store
has its own header cache and subscribes to its own (segment, subscription)
stream under its own owner name, and learns decisions on its own.
"""

from __future__ import annotations

from .dispatcher import Consumer, Dispatcher
from .env import Env
from .header_cache import TxnHeaderCache
from .ledger import LedgerStorage, ManagedLedger
from .pending_ack import MetadataPendingAckStore
from .records import (
    ABORTED, COMMITTED, OPEN, WRITES_BY_SEGMENT, header_path, ops_prefix, segment_events, subscription_events,
)
from .transaction_buffer import MetadataTransactionBuffer

# the scheduler tasks of a send (transaction_buffer.py): its steps, and its ledger add's callback
SEND_TASKS = ("publish", "append-callback")


class SegmentBroker:
    def __init__(self, segment: str, storage: LedgerStorage, env: Env, consumers: dict[str, Consumer]) -> None:
        self.segment = segment
        self.storage = storage
        self.env = env
        self.consumers = consumers
        self.owner = f"broker:{segment}"
        self.up = False
        self.unloads = 0   # topic unloads so far: names each closed instance
        self.closed = None   # the last closed instance: (its buffer, its pending-ack stores)

    def start(self, restart: bool = False) -> None:
        env = self.env
        self.ledger = ManagedLedger(self.storage, env.scheduler, self.owner)
        self.cache = TxnHeaderCache(env, self.owner, self.materialize)
        self.tb = MetadataTransactionBuffer(self.segment, self.ledger, env, self.owner, self.cache, self.materialize)
        self.pending_acks: dict[str, MetadataPendingAckStore] = {}
        self.dispatchers: dict[str, Dispatcher] = {}
        for sub in sorted(self.storage.cursors):
            cursor = self.ledger.open_cursor(sub)
            cache = self.cache
            if env.behaviour.split_participants:
                cache = TxnHeaderCache(env, self.pas_owner(sub),
                                       lambda txn, state, sub=sub: self.materialize_acks(sub, txn, state))
            self.pending_acks[sub] = MetadataPendingAckStore(self.segment, sub, cursor, env, self.owner, cache)
            consumer = self.consumers.setdefault(f"{self.segment}/{sub}", Consumer(sub))
            self.dispatchers[sub] = Dispatcher(self.ledger, cursor, self.tb, consumer, self.pending_acks[sub])
        self.up = True
        if env.behaviour.notify_by_stream:   # subscribe first: events during recovery wait for it
            steps = env.behaviour.apply_steps   # an event issues the header reads, each a task
            tb = self.tb
            env.streams.subscribe(self.owner, segment_events(self.segment),
                                  (lambda seq: tb.chain.reconcile()) if steps else self.cache.on_stream_event)
            for sub, pa in self.pending_acks.items():
                env.streams.subscribe(pa.cache.owner, subscription_events(self.segment, sub),
                                      pa.reconcile if steps else pa.cache.on_stream_event)
        if restart and env.behaviour.async_recovery:
            if self.pas_recovers:   # each store replays on its own, not inside the buffer's recovery
                for sub, pa in self.pending_acks.items():
                    pa.ready = False
                    env.scheduler.submit(("pas-recover", self.segment, sub),
                                         lambda sub=sub: self._replay_acks(sub), owner=self.pas_owner(sub))
            self.tb.start_recovering()
            if env.behaviour.recovery_steps:   # the code's chain: watermark, aborted set, then the rest
                env.scheduler.submit(("tb-recover-watermark", self.segment), self._load_watermark, owner=self.owner)
            else:
                env.scheduler.submit(("tb-recover", self.segment), self.recover, owner=self.owner)
        else:
            self.recover()

    @property
    def pas_recovers(self) -> bool:
        """The pending-ack stores replay on their own after a restart (split
        participants with the buffer's asynchronous recovery)."""
        b = self.env.behaviour
        return b.split_participants and b.async_recovery

    def _replay_acks(self, sub: str) -> None:
        """Subscription `sub`'s `replayAsync`, the task ("pas-recover", segment, sub)."""
        self.pending_acks[sub].replay(lambda txn, state: self.materialize_acks(sub, txn, state))

    def _load_watermark(self) -> None:
        self.tb.load_watermark()
        self.env.scheduler.submit(("tb-recover-aborted", self.segment), self._load_aborted, owner=self.owner)

    def _load_aborted(self) -> None:
        self.tb.load_aborted_records()
        self.env.scheduler.submit(("tb-recover", self.segment), self.recover, owner=self.owner)

    def recover(self) -> None:
        """Read the indexes for this segment and the headers they name: watch
        the OPEN txns, finish materializing the decided ones. After a restart
        with `pas_recovers` only the buffer's WRITE ops: each pending-ack
        store replays on its own (`_replay_acks`)."""
        env, store = self.env, self.env.store
        own = self.pas_recovers and not self.tb.ready   # a restart: the stores replay on their own
        self.tb.load_aborted_records()
        self.tb.recovered()
        writes: dict[str, list] = {}
        for (_, txn), path in store.scan(WRITES_BY_SEGMENT.name, (self.segment,), (self.segment,)):
            writes.setdefault(txn, []).append(store.get(path).value["position"])
        acked = {sub: set() if own else pa.open_txns() for sub, pa in self.pending_acks.items()}
        txns = set(writes).union(*acked.values())
        split = env.behaviour.split_participants
        decided = []
        for txn in sorted(txns, key=_txn_order):
            rec = store.get(header_path(txn))
            if rec is None and env.behaviour.collected_not_aborted:
                self._drop_ops(txn, writes_only=own)   # F4: an op put after the GC by a send never admitted
                continue
            state = rec.value["state"] if rec else None
            if state != OPEN:
                decided.append((txn, COMMITTED if state == COMMITTED else ABORTED))
                continue
            if not split or txn in writes:
                self.cache.add(txn)
            for sub, pa in self.pending_acks.items():
                if split and txn in acked[sub]:
                    pa.cache.add(txn)
            if txn in writes:
                self.tb.recover_positions(txn, writes[txn])
        for txn, state in decided:
            if split:   # each participant finishes what it holds
                for sub, pa in self.pending_acks.items():
                    if txn in acked[sub]:
                        pa.cache.add(txn)
                        self.materialize_acks(sub, txn, state)
                if txn not in writes:
                    continue
            if env.behaviour.apply_steps:   # applyHeaderForRecovery: a terminal entry, an abort marked at once
                if state == ABORTED:
                    self.tb.aborted.add(txn)
                self.tb.chain.enqueue(txn, state, found=True)
                continue
            self.cache.add(txn)
            self.materialize(txn, state)

    def _drop_ops(self, txn: str, writes_only: bool = False) -> None:
        store = self.env.store
        for path in store.children(ops_prefix(txn)):
            v = store.get(path).value
            if v["segment"] == self.segment and (v["kind"] == "write" or not writes_only):
                store.delete(path)

    def materialize(self, txn: str, state: str) -> None:
        """The participant applies a decision ("Notification mechanism"):
        pending acks, the buffer, then evicts the header and persists the
        read-position watermark."""
        if self.env.behaviour.apply_steps:   # the buffer's apply chain (split participants only)
            self.tb.chain.enqueue(txn, state)
            return
        if not self.env.behaviour.split_participants:
            for pa in self.pending_acks.values():
                pa.materialize(txn, state)
        self.tb.materialize(txn, state)
        self.cache.evict(txn)
        self.tb.after_materialize()

    def pas_owner(self, sub: str) -> str:
        return f"{self.owner}/{sub}"

    def materialize_acks(self, sub: str, txn: str, state: str) -> None:
        """split: one pending-ack store applies (or drops) the txn's acks and
        deletes its ACK op records, on its own event."""
        self.pending_acks[sub].apply_terminal(txn, state)

    def unload(self) -> None:
        """A topic unload (an ownership change): the buffer is closed, and
        its sends go on as tasks of the closed instance; everything else the
        broker holds goes, as in a crash, and the next owner starts anew
        (`start(restart=True)`)."""
        if not self.up:
            return
        self.unloads += 1
        closed = f"{self.owner}/closed{self.unloads}"
        self.tb.close(closed)
        for pa in self.pending_acks.values():
            pa.close(closed)
        self.closed = (self.tb, dict(self.pending_acks))   # what the abstraction reads of the closed instance
        self._go_down()

    def closing(self) -> bool:
        """The closed instance still has a task (a send, a read, an apply)."""
        return any(task.owner.startswith(f"{self.owner}/closed") for task in self.env.scheduler.pending())

    def closing_work(self) -> bool:
        """The closed instance still has a read, an apply or a delete in flight, not only its sends'
        tasks: a send's steps and its add's callback go on with the request, and once nothing else
        is left nothing reads the instance's memory again (its event subscriptions are closed)."""
        return any(task.owner.startswith(f"{self.owner}/closed") and task.label[0] not in SEND_TASKS
                   for task in self.env.scheduler.pending())

    def crash(self) -> None:
        if not self.up:
            return
        self.tb.fail_in_flight()
        self._go_down()

    def _go_down(self) -> None:
        """The broker's tasks and memory go (a crash, or after an unload closed the buffer)."""
        for pa in self.pending_acks.values():
            pa.fail_in_flight()
        self.env.forget(self.owner)
        for sub in self.pending_acks:
            self.env.forget(self.pas_owner(sub))
        for name in ("ledger", "cache", "tb", "pending_acks", "dispatchers"):
            self.__dict__.pop(name, None)
        self.up = False


def _txn_order(txn: str) -> tuple:
    return (len(txn), txn)
