"""`MetadataPendingAckStore`: transactional acks of one (segment,
subscription) (PIP-473, "Components / MetadataPendingAckStore").

An ack inside a txn is checked against the header and becomes an ACK op
record; the cursor moves only when the txn commits. On commit the text (and
the fixed code) applies the acks read back from the op records; the merged
handle applies only the acks it holds in memory, which a restart loses
(its replay re-seeds the txn ids, not the positions).

After a restart of a split participant in merged/fixed the store replays on
its own (`replay`, Pulsar's `replayAsync`), independently of the transaction
buffer's recovery; until it is done (`ready`) the handle queues acks, and
the broker lets no consumer back in (the dispatcher reads nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .env import Env
from .header_cache import TxnHeaderCache
from .ledger import ManagedCursor
from .records import ABORTED, ACKS_BY_SEGMENT_SUBSCRIPTION, COMMITTED, OPEN, ops_prefix
from .transaction_buffer import CONFLICT


@dataclass
class AckRequest:
    rid: str
    txn: str
    position: int
    cumulative: bool
    done: Callable[["AckRequest"], None] = field(repr=False, default=lambda r: None)
    segment: str = ""
    stage: str = "todo"
    op_path: str | None = None
    result: str | None = None


class MetadataPendingAckStore:
    def __init__(self, segment: str, subscription: str, cursor: ManagedCursor, env: Env, owner: str,
                 cache: TxnHeaderCache) -> None:
        self.segment = segment
        self.subscription = subscription
        self.cursor = cursor
        self.env = env
        self.owner = owner
        self.cache = cache
        self.b = env.behaviour
        self.held: dict[str, set[tuple[int, bool]]] = {}  # txn -> {(position, cumulative)} in memory
        self.ready = True   # False while its own replay runs (`replay`)
        self.queued: list[AckRequest] = []   # acks the handle holds until then
        self.in_flight: dict[str, AckRequest] = {}   # apply_steps: acks whose put is done, not answered yet

    def _key(self, txn: str) -> tuple:
        return (self.segment, self.subscription, txn)

    def append_ack(self, req: AckRequest) -> None:
        """appendIndividualAck / appendCumulativeAck: one task ("ack", segment,
        subscription, request id): the header check, then the op record.
        While the store replays, the handle holds the request (submitted once ready)."""
        if not self.ready:
            self.queued.append(req)
            return
        self.env.scheduler.submit(("ack", self.segment, self.subscription, req.rid), lambda: self._ack(req),
                                  owner=self.owner)

    def _ack(self, req: AckRequest) -> None:
        txn = req.txn
        if self.b.acks_unchecked and self.b.apply_steps:
            # appendAcks puts the op; once the put completes (allOf(appends).thenRun), a task of its own
            # ("ack-open", segment, subscription, request id), the txn joins the open set
            req.op_path = self._put_ack_op(req).path
            req.stage = "op"
            self.in_flight[req.rid] = req
            self.env.scheduler.submit(("ack-open", self.segment, self.subscription, req.rid),
                                      lambda: self._opened(req), owner=self.owner)
            return
        if self.b.acks_unchecked:
            ok = True  # merged: no header read; the txn joins the open set
            self.cache.add(txn)
        elif self.b.validate_after_op:
            ok = self.cache.read(txn) == OPEN  # fixed: a store read, not the cache
            if ok:
                self.cache.add(txn)
        else:
            ok = self.cache.check_open(txn)
        if not ok:
            req.stage, req.result = "rejected", CONFLICT
            req.done(req)
            return
        req.op_path = self._put_ack_op(req).path
        self._opened(req)

    def _put_ack_op(self, req: AckRequest):
        return self.env.store.create_sequential(
            ops_prefix(req.txn), {"kind": "ack", "txn": req.txn, "segment": self.segment,
                                  "subscription": self.subscription, "position": req.position,
                                  "cumulative": req.cumulative},
            partition_key=req.txn)

    def _opened(self, req: AckRequest) -> None:
        """The put completed: the txn is open here, the handle holds the ack, the client has its answer."""
        self.in_flight.pop(req.rid, None)
        self.cache.add(req.txn)
        if not self.b.acks_from_records:
            self.held.setdefault(req.txn, set()).add((req.position, req.cumulative))
        req.stage = "done"
        req.done(req)

    def _records(self, txn: str) -> list[str]:
        return [p for _, p in self.env.store.scan(ACKS_BY_SEGMENT_SUBSCRIPTION.name, self._key(txn), self._key(txn))]

    def materialize(self, txn: str, state: str) -> None:
        """Commit: apply the txn's acks to the cursor. Abort: drop them. Then
        range-delete this (segment, subscription)'s ACK op records (with
        `apply_steps`, a task of its own: ("pas-delete", segment,
        subscription, txn))."""
        held = self.held.pop(txn, set())
        paths = self._records(txn)
        if state == COMMITTED:
            if self.b.acks_from_records:
                acks = {(v["position"], v["cumulative"]) for v in (self.env.store.get(p).value for p in paths)}
            else:
                acks = held
            for pos, cumulative in sorted(acks):
                if cumulative:
                    self.cursor.mark_delete(pos)
                else:
                    self.cursor.individual_ack(pos)
        if self.b.apply_steps:
            self.env.scheduler.submit(("pas-delete", self.segment, self.subscription, txn),
                                      lambda: self._delete_ops(txn), owner=self.owner)
            return
        for p in paths:
            self.env.store.delete(p)

    def _delete_ops(self, txn: str) -> None:
        for p in self._records(txn):
            self.env.store.delete(p)

    # -- apply_steps: triggerReconcile and closeAsync, as the merged code runs them ------
    def apply_terminal(self, txn: str, state: str) -> None:
        """`applyTerminal`: the txn leaves the open set, the handle commits or
        aborts, the ACK ops are deleted."""
        self.materialize(txn, state)
        self.cache.evict(txn)

    def reconcile(self, seq: int = 0) -> None:
        """An event: read the header of every open txn, each a task
        ("pas-read", segment, subscription, txn); a decided one (missing:
        ABORTED) runs `applyTerminal` in the read's callback."""
        for txn in sorted(self.cache.open, key=lambda t: (len(t), t)):
            self.env.scheduler.submit(("pas-read", self.segment, self.subscription, txn),
                                      lambda txn=txn: self._read(txn), owner=self.owner)

    def _read(self, txn: str) -> None:
        state = self.cache.read(txn)
        if state != OPEN and txn in self.cache:
            self.apply_terminal(txn, COMMITTED if state == COMMITTED else ABORTED)

    def fail_in_flight(self) -> None:
        """The broker goes (a crash or an unload): an ack not answered yet fails at the client."""
        for req in self.in_flight.values():
            req.stage, req.result = "rejected", "Disconnected"
            req.done(req)
        self.in_flight.clear()

    def close(self, owner: str) -> None:
        """closeAsync sets `closed` and closes the event subscription only:
        its reads and ACK-op deletes in flight go on, as tasks of `owner`."""
        for prefix in ("pas-read", "pas-delete"):
            self.env.scheduler.reassign(self.owner, owner, prefix, self.segment, self.subscription)
        self.owner = owner

    def replay(self, materialize: Callable[[str, str], None]) -> None:
        """replayAsync: scan this (segment, subscription)'s ACK ops, read each
        txn's header (a missing one counts as ABORTED), re-seed the open set
        with the OPEN ones and apply the decided ones (`materialize`: the
        handle's commit or abort, then the ACK ops deleted); then the handle
        is ready and the acks it held are submitted."""
        for txn in sorted(self.open_txns(), key=lambda t: (len(t), t)):
            self.cache.add(txn)
            state = self.cache.read(txn)
            if state != OPEN:
                materialize(txn, COMMITTED if state == COMMITTED else ABORTED)
        self.ready = True
        queued, self.queued = self.queued, []
        for req in queued:
            self.append_ack(req)

    def open_txns(self) -> set[str]:
        """replayAsync: the txns with ACK ops here (ids only)."""
        lo = (self.segment, self.subscription)
        return {key[2] for key, _ in self.env.store.scan(ACKS_BY_SEGMENT_SUBSCRIPTION.name, lo, lo)}
