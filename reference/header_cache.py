"""A broker's cache of txn headers, shared by its transaction buffer and
pending-ack store (with `split_participants`, one for each) ("Notification mechanism": the header cache "kept up to
date by point-watches on the headers it has cached").

It holds the txns the broker believes OPEN. It learns a decision either from
a watch on each cached header (one delivery per change, carrying the new
value) or, in the merged code, from a coalesced event stream that makes it
re-read every cached header (a missing header counts as ABORTED). Either
way it calls `on_decided(txn, COMMITTED | ABORTED)`; the broker materializes
and then evicts the entry.
"""

from __future__ import annotations

from typing import Callable

from .env import Env
from .records import ABORTED, COMMITTED, OPEN, header_path
from .store import ChangeEvent


class TxnHeaderCache:
    def __init__(self, env: Env, owner: str, on_decided: Callable[[str, str], None]) -> None:
        self.env = env
        self.owner = owner
        self.on_decided = on_decided
        self.open: set[str] = set()

    def __contains__(self, txn: str) -> bool:
        return txn in self.open

    def read(self, txn: str) -> str | None:
        """A read of the store itself (linearizable), bypassing the cache."""
        rec = self.env.store.get(header_path(txn))
        return rec.value["state"] if rec else None

    def check_open(self, txn: str) -> bool:
        """The publish-path check, cache first: a cached txn passes; otherwise
        the store's header must be OPEN, and is then cached and watched."""
        if txn in self.open:
            return True
        if self.read(txn) != OPEN:
            return False
        self.add(txn)
        return True

    def add(self, txn: str) -> None:
        if txn in self.open:
            return
        self.open.add(txn)
        if not self.env.behaviour.notify_by_stream:
            self.env.watches.watch(self.owner, header_path(txn), self._on_header_event)

    def evict(self, txn: str) -> None:
        self.open.discard(txn)
        if not self.env.behaviour.notify_by_stream:
            self.env.watches.unwatch(self.owner, header_path(txn))

    def _on_header_event(self, event: ChangeEvent) -> None:
        txn = event.path.rsplit("/", 1)[1]
        if self.env.watches.oneshot and txn in self.open:
            self.env.watches.watch(self.owner, event.path, self._on_header_event)
        if txn not in self.open:
            return
        if self.env.watches.oneshot:
            state = self.read(txn)  # a ZooKeeper event carries no data: read the header
        else:
            state = event.value["state"] if event.value is not None else None
        if state != OPEN:
            self.on_decided(txn, COMMITTED if state == COMMITTED else ABORTED)

    def on_stream_event(self, seq: int) -> None:
        for txn in sorted(self.open):
            state = self.read(txn)
            if state != OPEN:
                self.on_decided(txn, COMMITTED if state == COMMITTED else ABORTED)
