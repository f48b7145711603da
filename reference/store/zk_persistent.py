"""Persistent and persistent recursive watches (ZooKeeper 3.6+) on kazoo,
which has no API for them (kazoo 2.11; python-zk/kazoo#715 is unmerged).

Three pieces, none of which forks kazoo:

- `AddWatch`, a request in the shape of kazoo's own (protocol/serialization.py):
  opcode 106, body `string path, int mode` (0 persistent, 1 persistent
  recursive), an empty reply. It goes through the client's request queue
  (`KazooClient._call`), so it is ordered with every other request of the
  session. A pre-3.6 server answers UNIMPLEMENTED (kazoo's
  `UnimplementedError`).
- Routing. kazoo's connection hands every notification frame to
  `ConnectionHandler._read_watch_event`, which only pops one-shot watchers;
  a persistent watch's events would be dropped. `PersistentWatches` wraps
  that method on the client's connection object: it decodes the frame
  itself (`Watch.deserialize` is pure), passes the event to the persistent
  watchers whose path matches, then calls kazoo's method unchanged. A
  recursive watch matches its path and every descendant and takes created,
  deleted and data-changed events (the server sends it no child events; a
  child event on such a path belongs to a one-shot child watch). A plain
  persistent watch matches its own path and all four kinds.
  Callbacks run on kazoo's connection thread, in the server's order, before
  the reply that follows the event is read: they must only record the event.
- Reconnection. Watches live on the server's connection, and kazoo 2.11
  re-sends none (it forgets its one-shot watchers on a connection loss). On
  every return to CONNECTED the watches are added again. kazoo calls state
  listeners on its connection thread before it sends anything queued, so the
  re-adds are put at the head of the queue: a request the caller queued
  while disconnected reaches the server after its watch is back, and its
  change is notified. Changes made by other sessions while disconnected are
  not notified; `reconnections` counts the windows so that a caller can say
  so, and a re-add that fails is kept in `failures`.
"""

from __future__ import annotations

import logging
import threading
from collections import namedtuple
from typing import Callable

from kazoo.protocol.serialization import Watch, int_struct, write_string
from kazoo.protocol.states import EVENT_TYPE_MAP, EventType, KazooState, WatchedEvent

PERSISTENT, PERSISTENT_RECURSIVE = 0, 1
_RECURSIVE_KINDS = frozenset((EventType.CREATED, EventType.DELETED, EventType.CHANGED))
log = logging.getLogger(__name__)


class AddWatch(namedtuple("AddWatch", "path mode")):
    type = 106

    def serialize(self) -> bytearray:
        b = bytearray()
        b.extend(write_string(self.path))
        b.extend(int_struct.pack(self.mode))
        return b

    @classmethod
    def deserialize(cls, buffer, offset) -> bool:
        return True


def _chroot(client, path: str) -> str:
    if not client.chroot:
        return path
    return client.chroot if path == "/" else client.chroot + path


class PersistentWatches:
    """The persistent watches of one `KazooClient`; get it with `of(client)`."""

    def __init__(self, client) -> None:
        self.client = client
        self._watches: dict[str, tuple[int, list[Callable[[WatchedEvent], None]]]] = {}
        self._lock = threading.Lock()
        self.reconnections = 0
        self.failures: list[tuple[str, BaseException]] = []
        conn = client._connection
        kazoo_read = conn._read_watch_event

        def read_watch_event(buffer, offset):
            self._route(buffer, offset)
            return kazoo_read(buffer, offset)

        conn._read_watch_event = read_watch_event
        client.add_listener(self._on_state)

    @classmethod
    def of(cls, client) -> "PersistentWatches":
        """The one instance installed on `client` (installing it once)."""
        pw = getattr(client, "_txncheck_persistent_watches", None)
        if pw is None:
            pw = cls(client)
            client._txncheck_persistent_watches = pw
        return pw

    def add(self, path: str, callback: Callable[[WatchedEvent], None], *, recursive: bool = True):
        """Register `callback` and send AddWatch; returns kazoo's async result
        (True once the server has the watch). `path` is chroot-relative."""
        mode = PERSISTENT_RECURSIVE if recursive else PERSISTENT
        full = _chroot(self.client, path)
        with self._lock:
            known = self._watches.get(full)
            if known is not None and known[0] != mode:
                raise ValueError(f"{path} already has a {'non-' if recursive else ''}recursive persistent watch")
            self._watches.setdefault(full, (mode, []))[1].append(callback)
        result = self.client.handler.async_result()
        self.client._call(AddWatch(full, mode), result)
        return result

    def watched(self) -> list[str]:
        with self._lock:
            return sorted(self.client.unchroot(p) for p in self._watches)

    # -- the connection thread -----------------------------------------------------------
    def _route(self, buffer, offset) -> None:
        try:
            frame, _ = Watch.deserialize(buffer, offset)
        except Exception:  # kazoo's own method will fail on it the same way
            return
        kind = EVENT_TYPE_MAP.get(frame.type)
        if kind is None or kind == EventType.NONE or self.client._stopped.is_set():
            return
        with self._lock:
            targets = [cb for wpath, (mode, cbs) in self._watches.items()
                       if frame.path == wpath
                       or (mode == PERSISTENT_RECURSIVE and frame.path.startswith(wpath.rstrip("/") + "/"))
                       if mode == PERSISTENT or kind in _RECURSIVE_KINDS
                       for cb in cbs]
        if not targets:
            return
        event = WatchedEvent(kind, self.client._state, self.client.unchroot(frame.path))
        for cb in targets:
            try:
                cb(event)
            except Exception:  # never let a callback kill kazoo's connection loop
                log.exception("persistent watch callback failed on %s", event)

    def _on_state(self, state: str) -> None:
        if state != KazooState.CONNECTED:
            return
        with self._lock:
            watches = [(p, mode) for p, (mode, _) in self._watches.items()]
        if not watches:
            return
        self.reconnections += 1
        conn = self.client._connection
        first = threading.current_thread() is conn._connection_routine
        for path, mode in reversed(watches) if first else watches:
            result = self.client.handler.async_result()
            result.rawlink(lambda r, path=path: self._readded(path, r))
            if first:  # ahead of whatever was queued while disconnected; one wake byte per request
                self.client._queue.appendleft((AddWatch(path, mode), result))
                conn._write_sock.send(b"\0")
            else:
                self.client._call(AddWatch(path, mode), result)
                self.failures.append((path, RuntimeError("re-added behind requests queued while disconnected")))

    def _readded(self, path: str, result) -> None:
        if not result.successful():
            self.failures.append((path, result.exception))
