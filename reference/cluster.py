"""One simulated PIP-473 deployment: a metadata store, a coordinator, and a
participant broker per segment of one scalable topic, all on one
deterministic scheduler. Its methods are what clients and operators do:
send, ack, end a txn, crash a broker, split the topic, let time pass. Each
returns at once; the work is queued on the scheduler, and the client's
answer lands in the request object when the tasks have run.
"""

from __future__ import annotations

from itertools import count
from typing import Any

from .behaviour import Behaviour, behaviour as lookup
from .broker import SegmentBroker
from .coordinator import TransactionCoordinatorV5
from .dispatcher import Consumer
from .env import Env
from .ledger import LedgerStorage
from .pending_ack import AckRequest
from .segment_controller import SegmentController
from .store import MetadataStore
from .transaction_buffer import PublishRequest


class Cluster:
    def __init__(self, behaviour: Behaviour | str, ranges: dict[str, tuple[int, int]],
                 subscriptions: list[str] = ("sub",), *, store: MetadataStore | None = None,
                 watch_style: str = "point", topic: str = "topic", seed_entries: bool = False) -> None:
        b = lookup(behaviour) if isinstance(behaviour, str) else behaviour
        kw = {"watch_style": watch_style}
        if store is not None:
            kw["store"] = store
        self.env = Env(b, **kw)
        self.ledgers: dict[str, LedgerStorage] = {}
        self.consumers: dict[str, Consumer] = {}
        self.controller = SegmentController(self.env, topic, self.ledgers)
        self.controller.create_topic(ranges, list(subscriptions))
        if seed_entries:  # one plain entry per segment, already delivered
            for seg, storage in self.ledgers.items():
                storage.entries.append(("plain", None, "seed"))
                for cur in storage.cursors.values():
                    cur.read_position = 1
        self.brokers: dict[str, SegmentBroker] = {}
        for seg in ranges:
            self._start_broker(seg)
        self.tc = TransactionCoordinatorV5(self.env)
        self._ids = count(1)

    @property
    def scheduler(self):
        return self.env.scheduler

    @property
    def store(self):
        return self.env.store

    def _start_broker(self, seg: str, restart: bool = False) -> SegmentBroker:
        broker = self.brokers.get(seg)
        if broker is None:
            broker = self.brokers[seg] = SegmentBroker(seg, self.ledgers[seg], self.env, self.consumers)
        broker.start(restart=restart)
        return broker

    # -- client operations -----------------------------------------------------------
    def send(self, key: int, txn: str, payload: Any = None) -> PublishRequest | None:
        """A transactional send, routed by key; None when no segment is ACTIVE
        for the key or its broker is down."""
        seg = self.controller.route(key)
        if seg is None or not self.brokers[seg].up:
            return None
        req = PublishRequest(f"w{next(self._ids)}", txn, payload, segment=seg)
        self.brokers[seg].tb.append_buffer_to_txn(req)
        return req

    def publish(self, key: int, payload: Any = None) -> str | None:
        """A non-transactional send, routed by key: the ledger append (the
        task ("ledger-add", segment)), whose completion callback syncs the
        buffer's read position (the task ("plain-sync", segment), at the
        head of the ledger's queue: the ledger's next add completes after
        it, while the metadata store's callbacks and a crash may come
        first). Returns the segment, or None when no segment is ACTIVE for
        the key or its broker is down."""
        seg = self.controller.route(key)
        if seg is None or not self.brokers[seg].up:
            return None
        broker = self.brokers[seg]
        if self.env.behaviour.producers_gated and not broker.tb.ready:
            return None   # handleProducer adds the producer only once the buffer has recovered

        def added(pos: int | None, err: Exception | None) -> None:
            if err is None and broker.up:
                tb = broker.tb
                self.scheduler.submit(("plain-sync", seg), tb.sync_max_read_position_for_normal_publish,
                                      owner=tb.owner, queue=f"ledger:{broker.ledger.name}", first=True)

        broker.ledger.async_add_entry(("plain", None, payload), added)
        return seg

    def ack(self, segment: str, txn: str, position: int, cumulative: bool = False,
            subscription: str = "sub") -> AckRequest:
        req = AckRequest(f"a{next(self._ids)}", txn, position, cumulative, segment=segment)
        self.brokers[segment].pending_acks[subscription].append_ack(req)
        return req

    def dispatch(self, segment: str, subscription: str = "sub") -> str | None:
        return self.brokers[segment].dispatchers[subscription].read_next()

    # -- faults, topology and time ---------------------------------------------------
    def crash(self, segment: str) -> None:
        self.brokers[segment].crash()

    def unload(self, segment: str) -> None:
        """A topic unload: the segment's buffer is closed while its sends go on;
        `restart` is the next owner's load."""
        self.brokers[segment].unload()

    def restart(self, segment: str) -> bool:
        """After a crash or an unload. merged/fixed: the buffer's recovery then
        runs as the task ("tb-recover", segment); with `recovery_steps`, after
        the tasks ("tb-recover-watermark", segment) and ("tb-recover-aborted",
        segment). F10 (`drain_closed`): False, and nothing is loaded, while
        an unloaded instance of the segment still has a task."""
        broker = self.brokers.get(segment)
        if self.env.behaviour.drain_closed and broker is not None and broker.closing():
            return False
        self._start_broker(segment, restart=True)
        return True

    def split(self, parents: list[str], children: dict[str, tuple[int, int]]) -> None:
        self.create_children(parents, children)
        self.controller.terminate(parents)
        self.controller.seal(parents, list(children))

    def create_children(self, parents: list[str], children: dict[str, tuple[int, int]]) -> None:
        for child in self.controller.create_children(parents, children):
            self._start_broker(child)

    def trim(self, segment: str) -> int:
        """Ledger trimming, then the buffer's pruning of aborted records."""
        first = self.trim_ledger(segment)
        self.prune_aborted(segment)
        return first

    def trim_ledger(self, segment: str) -> int:
        """Drop the entries every cursor acknowledged; the first retained entry."""
        return self.brokers[segment].ledger.trim()

    def prune_aborted(self, segment: str) -> list[str]:
        """The buffer's periodic task: delete the aborted records keyed below
        the ledger's first retained entry (merged and fixed)."""
        broker = self.brokers[segment]
        if not self.env.behaviour.durable_aborted_records:
            return []
        return broker.tb.prune_aborted(broker.ledger.storage.first_retained)

    def tc_failover(self) -> None:
        self.tc.failover()
        self.tc = TransactionCoordinatorV5(self.env)
        self.tc.take_over()

    def run_until_idle(self) -> int:
        return self.env.scheduler.run_until_idle()
