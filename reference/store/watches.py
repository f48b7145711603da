"""Watch delivery styles over a store's change feed. Each delivery is a task
on the scheduler, so the driver decides when a participant hears of a change.

* `PointWatches` -- persistent watches on single keys (Oxia notifications):
  every change is delivered, late but in order per watcher, and carries the
  new value.
* `OneShotWatches` -- ZooKeeper's standard watches: a watch fires once and
  is gone; the watcher must re-register, and a change that lands before the
  re-registration is never notified.
* `SequenceStreams` -- Oxia's sequential keys with coalesced notifications:
  "multiple updates may be collapsed into a single event with the highest
  sequence; callers must treat the stream as monotonic but not exhaustive."

A watcher is an `owner` (one broker's store session). Several in-process
listeners of one owner may watch the same key; one change is then one
delivery task that calls each of them, as a client library fans a
notification out. `drop_owner` forgets a crashed owner's registrations; the
scheduler forgets its queued deliveries.
"""

from __future__ import annotations

from typing import Callable

from ..scheduler import Scheduler
from .api import ChangeEvent, MetadataStore

Listener = Callable[[ChangeEvent], None]


class PointWatches:
    oneshot = False

    def __init__(self, store: MetadataStore, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self._watches: dict[str, dict[str, list[Listener]]] = {}  # path -> owner -> listeners
        store.listen(self._on_change)

    def watch(self, owner: str, path: str, listener: Listener) -> None:
        listeners = self._watches.setdefault(path, {}).setdefault(owner, [])
        if listener not in listeners:
            listeners.append(listener)

    def unwatch(self, owner: str, path: str) -> None:
        self._watches.get(path, {}).pop(owner, None)

    def watching(self, owner: str, path: str) -> bool:
        return bool(self._watches.get(path, {}).get(owner))

    def drop_owner(self, owner: str) -> None:
        for by_owner in self._watches.values():
            by_owner.pop(owner, None)

    def _on_change(self, event: ChangeEvent) -> None:
        by_owner = self._watches.get(event.path, {})
        for owner, listeners in list(by_owner.items()):
            if self.oneshot:
                del by_owner[owner]
            self.scheduler.submit(("watch", owner, event.path), _fan_out(list(listeners), event),
                                  owner=owner, queue=f"watch:{owner}", payload=event)


class OneShotWatches(PointWatches):
    oneshot = True


class SequenceStreams:
    """Subscribers to the sequential keys under a prefix. At most one delivery
    per subscriber is pending; later appends raise its sequence in place."""

    def __init__(self, store: MetadataStore, scheduler: Scheduler) -> None:
        self.store = store
        self.scheduler = scheduler
        self._subs: dict[tuple[str, str], Callable[[int], None]] = {}  # (owner, prefix) -> listener
        self._pending: dict[tuple[str, str], int] = {}  # coalesced highest sequence
        store.listen(self._on_change)

    def append(self, prefix: str, value: dict, partition_key: str | None = None) -> int:
        rec = self.store.create_sequential(prefix, value, partition_key=partition_key)
        return int(rec.path[len(prefix):])

    def subscribe(self, owner: str, prefix: str, listener: Callable[[int], None]) -> None:
        self._subs[(owner, prefix)] = listener

    def drop_owner(self, owner: str) -> None:
        for key in [k for k in self._subs if k[0] == owner]:
            del self._subs[key]
            self._pending.pop(key, None)

    def pending_sequence(self, owner: str, prefix: str) -> int | None:
        return self._pending.get((owner, prefix))

    def _on_change(self, event: ChangeEvent) -> None:
        if event.kind != "put":
            return
        for (owner, prefix) in list(self._subs):
            if not event.path.startswith(prefix):
                continue
            tail = event.path[len(prefix):]
            if not tail.isdigit():
                continue
            key = (owner, prefix)
            seq = int(tail)
            if key in self._pending:
                self._pending[key] = max(self._pending[key], seq)  # coalesced
                continue
            self._pending[key] = seq
            self.scheduler.submit(("stream", owner, prefix), lambda key=key: self._deliver(key),
                                  owner=owner, queue=f"stream:{owner}:{prefix}")

    def _deliver(self, key: tuple[str, str]) -> None:
        seq = self._pending.pop(key, None)
        listener = self._subs.get(key)
        if seq is not None and listener is not None:
            listener(seq)


def _fan_out(listeners: list[Listener], event: ChangeEvent) -> Callable[[], None]:
    def deliver() -> None:
        for listener in listeners:
            listener(event)
    return deliver
