"""The managed ledger of one segment: append, last confirmed entry (LAC),
terminate (seal), trimming, and cursors with mark-delete and individual acks.

`LedgerStorage` is the durable part (what BookKeeper and the ledger's own
metadata keep across a broker crash); `ManagedLedger` and `ManagedCursor`
are a broker's handles on it and die with the broker. Positions are entry
ids in one ledger, from 0; an empty ledger has LAC -1.

Appends are asynchronous: `async_add_entry` queues the write on the
scheduler and completes, in order, when the driver runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .scheduler import Scheduler


class ManagedLedgerTerminated(Exception):
    """The ledger is sealed: no more appends."""


class ManagedLedgerAlreadyClosed(Exception):
    """This handle was closed (a topic unload): its appends fail."""


@dataclass
class CursorState:
    mark_delete: int = -1                   # every entry <= this is acknowledged
    individually_acked: set[int] = field(default_factory=set)  # acked entries above it
    # The dispatcher's next read. Kept with the cursor so that a broker
    # restart resumes where dispatch stopped instead of redelivering (the
    # spec's abstraction; Pulsar would redeliver unacked entries).
    read_position: int = 0


@dataclass
class LedgerStorage:
    name: str
    entries: list[Any] = field(default_factory=list)
    terminated: bool = False
    first_retained: int = 0  # entries below were trimmed
    cursors: dict[str, CursorState] = field(default_factory=dict)


class ManagedCursor:
    def __init__(self, ledger: "ManagedLedger", name: str) -> None:
        self.ledger = ledger
        self.name = name

    @property
    def state(self) -> CursorState:
        return self.ledger.storage.cursors[self.name]

    @property
    def read_position(self) -> int:
        return self.state.read_position

    @read_position.setter
    def read_position(self, value: int) -> None:
        self.state.read_position = value

    def mark_delete(self, position: int) -> None:
        st = self.state
        if position > st.mark_delete:
            st.mark_delete = position
            st.individually_acked = {p for p in st.individually_acked if p > position}
            self._compact()

    def individual_ack(self, position: int) -> None:
        st = self.state
        if position > st.mark_delete:
            st.individually_acked.add(position)
            self._compact()

    def is_acked(self, position: int) -> bool:
        st = self.state
        return position <= st.mark_delete or position in st.individually_acked

    def _compact(self) -> None:
        st = self.state
        while st.mark_delete + 1 in st.individually_acked:
            st.mark_delete += 1
            st.individually_acked.discard(st.mark_delete)


class ManagedLedger:
    def __init__(self, storage: LedgerStorage, scheduler: Scheduler, owner: str) -> None:
        self.storage = storage
        self.scheduler = scheduler
        self.owner = owner
        self.cursors: dict[str, ManagedCursor] = {}
        self.closed = False   # a topic unload closed this handle (the next owner opens its own)
        self._closed_at = -1  # its last confirmed entry when it was closed

    def close(self) -> None:
        """A topic unload closes this handle: it refuses appends, and its last
        confirmed entry stays where it was (the next owner appends through a
        handle of its own)."""
        self._closed_at = self.last_confirmed
        self.closed = True

    @property
    def name(self) -> str:
        return self.storage.name

    @property
    def last_confirmed(self) -> int:
        return self._closed_at if self.closed else len(self.storage.entries) - 1

    @property
    def terminated(self) -> bool:
        return self.storage.terminated

    def async_add_entry(self, data: Any, callback: Callable[[int | None, Exception | None], None]) -> None:
        if self.closed:
            callback(None, ManagedLedgerAlreadyClosed(self.name))
            return

        def complete() -> None:
            if self.storage.terminated:
                callback(None, ManagedLedgerTerminated(self.name))
                return
            self.storage.entries.append(data)
            callback(len(self.storage.entries) - 1, None)

        self.scheduler.submit(("ledger-add", self.name), complete, owner=self.owner, queue=f"ledger:{self.name}")

    def add_entry_now(self, data: Any) -> int:
        """A synchronous append, for setups and tests."""
        if self.storage.terminated:
            raise ManagedLedgerTerminated(self.name)
        self.storage.entries.append(data)
        return len(self.storage.entries) - 1

    def read(self, position: int) -> Any:
        if position < self.storage.first_retained or position > self.last_confirmed:
            raise IndexError(f"{self.name}: no entry {position}")
        return self.storage.entries[position]

    def terminate(self) -> int:
        """Seal the ledger; returns the last position it holds."""
        self.storage.terminated = True
        return self.last_confirmed

    def open_cursor(self, name: str, *, earliest: bool = True) -> ManagedCursor:
        if name not in self.storage.cursors:
            start = -1 if earliest else self.last_confirmed
            self.storage.cursors[name] = CursorState(mark_delete=start, read_position=start + 1)
        cur = self.cursors.get(name)
        if cur is None:
            cur = self.cursors[name] = ManagedCursor(self, name)
        return cur

    def trim(self) -> int:
        """Drop entries every cursor has acknowledged; returns first_retained."""
        if self.storage.cursors:
            low = min(c.mark_delete for c in self.storage.cursors.values()) + 1
            self.storage.first_retained = max(self.storage.first_retained, low)
        return self.storage.first_retained
