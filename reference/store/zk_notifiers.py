"""The store's change feed on ZooKeeper: one notifier per watch style.

ZooKeeper notifications carry no data and arrive on kazoo's threads. A
notifier only buffers them there; nothing acts on them. After each of its
own commits the store asks its notifier for the notification of exactly
that change (`change`), waiting at most `timeout` seconds, and hands the
`ChangeEvent` to its listeners in the driver's thread. Participants never act
when ZooKeeper delivers: the watch styles of `watches.py` turn the feed into
scheduler tasks, and the replay scheduler decides when each is processed,
so a spec trace maps onto the same order of steps as on the in-memory store.

What cannot be forced is reported, never papered over, as
`NotificationMissed` naming the path and versions.

* `OneShotNotifier` (`watches="oneshot"`, the default) watches the data tree
  with kazoo's `TreeCache` recipe, which uses standard one-shot watches (a
  data watch and a child watch per znode) and re-registers each one,
  re-reading the node, after every event. If the notification does not
  come, or the re-read shows a later version than the one committed (a
  change that landed between the event and the re-registration, which
  ZooKeeper does not notify), the commit is refused.
* `PersistentNotifier` (`watches="persistent"`) uses one persistent
  recursive watch (ZooKeeper 3.6+ `AddWatch`) on the data tree, added
  through `zk_persistent` since kazoo has no API for it. It is never
  re-registered, so no change can fall between an event and a
  re-registration; its events carry a path and a kind but no data or
  version. The commit's event is the record's path, created for version 0,
  changed for a later version, deleted for a delete. Events arrive in the
  server's order, one per change, so the notifier also keeps the last
  version each path was reported at: a commit that replaced a version the
  watch never reported, or an event for a record this store did not write,
  is a change that was not notified to it (another writer, or a write made
  while the session was reconnecting). (The check is by version: another
  session's delete and re-create that ends at the version last reported
  goes unseen.) The notification of the store's own write cannot be lost to
  a reconnection: the watch is re-added ahead of the requests queued while
  disconnected (see `zk_persistent`). The event's value is the committed
  one; its zxid is the multi's, from the reply header. A server older than
  3.6 answers AddWatch with UNIMPLEMENTED, refused in one line
  (`ZooKeeperUnsupported`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable, NamedTuple

from kazoo.client import KazooClient
from kazoo.exceptions import UnimplementedError
from kazoo.protocol.states import EventType
from kazoo.recipe.cache import TreeCache, TreeEvent

from .api import ChangeEvent
from .zk_codec import decode_record, encode_record
from .zk_errors import NotificationMissed, ZooKeeperUnavailable, ZooKeeperUnsupported
from .zk_persistent import PersistentWatches

Wait = Callable[[str, Any], Any]   # the store's bounded wait on one request


class Commit(NamedTuple):
    """One commit of the store, as its notification must show it."""
    path: str                # the record path
    kind: str                # "put" or "delete"
    version: int | None      # the record's new version (None for a delete)
    old: int | None          # the version it replaced (None for a create)
    value: dict | None       # the value written
    zxid: int                # the multi's zxid

    def describe(self) -> str:
        return f"{self.kind} {self.path}" + (f" (version {self.version})" if self.version is not None else "")


class Notifier:
    """Buffers a watch's events from kazoo's threads and hands out, one at a
    time, the event of the store's last commit."""

    style = ""

    def __init__(self, client: KazooClient, data: str, timeout: float, hosts: str) -> None:
        self.client = client
        self.data = data          # the znode of the store's data tree
        self.timeout = timeout
        self.hosts = hosts
        self._events: deque = deque()
        self._cv = threading.Condition()

    def start(self, wait: Wait) -> None:
        raise NotImplementedError

    def change(self, commit: Commit) -> ChangeEvent:
        """Wait for the notification of `commit`; NotificationMissed if it does not come as committed."""
        raise NotImplementedError

    def created_dir(self, zpath: str) -> None:
        """The store made an intermediate znode under the data tree."""

    def close(self) -> None:
        pass

    # kazoo's threads: buffer only
    def _on_event(self, event) -> None:
        with self._cv:
            self._events.append(event)
            self._cv.notify_all()

    def _on_fault(self, exc: Exception) -> None:
        self._on_event(exc)

    def _await(self, match: Callable[[Any], bool], what: str) -> Any:
        deadline = time.monotonic() + self.timeout
        with self._cv:
            while True:
                while self._events:
                    ev = self._events.popleft()
                    if isinstance(ev, Exception):
                        raise ZooKeeperUnavailable(f"the watch tree failed while waiting for {what}: {ev!r}")
                    if match(ev):
                        return ev
                left = deadline - time.monotonic()
                if left <= 0:
                    raise NotificationMissed(f"no ZooKeeper notification for {what} within {self.timeout:g}s")
                self._cv.wait(left)


_TREE_CHANGES = (TreeEvent.NODE_ADDED, TreeEvent.NODE_UPDATED, TreeEvent.NODE_REMOVED)
_TREE_WORD = {TreeEvent.NODE_ADDED: "created", TreeEvent.NODE_UPDATED: "changed", TreeEvent.NODE_REMOVED: "deleted"}


class OneShotNotifier(Notifier):
    """ZooKeeper's standard one-shot watches, through kazoo's TreeCache."""

    style = "oneshot"
    _tree: TreeCache | None = None

    def start(self, wait: Wait) -> None:
        self._tree = TreeCache(self.client, self.data)
        self._tree.listen(self._on_event)
        self._tree.listen_fault(self._on_fault)
        self._tree.start()
        self._await(lambda ev: ev.event_type == TreeEvent.INITIALIZED, "the watch tree's initial load")

    def change(self, commit: Commit) -> ChangeEvent:
        zpath = self.data + commit.path
        want = TreeEvent.NODE_REMOVED if commit.kind == "delete" else (
            TreeEvent.NODE_ADDED if commit.version == 0 else TreeEvent.NODE_UPDATED)
        what = commit.describe()

        def match(ev) -> bool:
            if ev.event_type not in _TREE_CHANGES:
                return False  # connection state changes, the initial load
            nd = ev.event_data
            if not nd.data and ev.event_type != TreeEvent.NODE_REMOVED:
                return False  # an intermediate znode
            if nd.path != zpath:
                if nd.data:
                    raise NotificationMissed(f"while waiting for the notification of {commit.kind} {commit.path} "
                                             f"the watch tree reported a change of {nd.path[len(self.data):]} "
                                             "that this store did not make (another writer)")
                return False
            return True

        ev = self._await(match, what)
        nd = ev.event_data
        if ev.event_type != want or (commit.kind == "put" and nd.stat.version != commit.version):
            raise NotificationMissed(
                f"{commit.kind} {commit.path} committed version {commit.version}, but the one-shot watch's re-read "
                f"saw the node {_TREE_WORD[ev.event_type]} at version {nd.stat.version if nd.stat else None}: "
                "a change between the event and the re-registration was not notified")
        if commit.kind == "put":
            value, _ = decode_record(nd.data)
            return ChangeEvent(nd.stat.mzxid, commit.path, "put", commit.version, value)
        return ChangeEvent(self.client.last_zxid or 0, commit.path, "delete", None, None)

    def close(self) -> None:
        if self._tree is not None:
            self._tree.close()


class PersistentNotifier(Notifier):
    """One persistent recursive watch (ZooKeeper 3.6+) on the data tree."""

    style = "persistent"

    watches: PersistentWatches | None = None

    def __init__(self, client: KazooClient, data: str, timeout: float, hosts: str) -> None:
        super().__init__(client, data, timeout, hosts)
        self._new_dirs: set[str] = set()     # data directories the store made, their event still to come
        self._reported: dict[str, int] = {}  # record znode -> last version notified

    def start(self, wait: Wait) -> None:
        self.watches = PersistentWatches.of(self.client)
        try:
            wait(f"AddWatch {self.data}", self.watches.add(self.data, self._on_event))
        except UnimplementedError:
            raise ZooKeeperUnsupported(f"ZooKeeper at {self.hosts} does not implement AddWatch: persistent "
                                       "recursive watches need ZooKeeper 3.6+ (one-shot ones do not)") from None

    def created_dir(self, zpath: str) -> None:
        self._new_dirs.add(zpath)

    def change(self, commit: Commit) -> ChangeEvent:
        zpath = self.data + commit.path
        want = EventType.DELETED if commit.kind == "delete" else (
            EventType.CREATED if commit.version == 0 else EventType.CHANGED)
        what = commit.describe()
        pw = self.watches
        if pw.failures:
            where, exc = pw.failures[0]
            raise NotificationMissed(f"the persistent watch on {where} was not re-added after a reconnection "
                                     f"({exc!r}); changes since then may be unnotified ({what})")

        def match(ev) -> bool:
            if ev.type == EventType.CREATED and ev.path in self._new_dirs:
                self._new_dirs.discard(ev.path)
                return False  # an intermediate znode this store made
            if ev.path != zpath:
                raise NotificationMissed(f"while waiting for the notification of {what} the persistent watch "
                                         f"reported {ev.type.lower()} {ev.path[len(self.data):] or '/'}, a change "
                                         "this store did not make (another writer)")
            return True

        window = f" (the session reconnected {pw.reconnections} time(s))" if pw.reconnections else ""
        try:
            ev = self._await(match, what)
        except NotificationMissed as exc:
            exc.args = (exc.args[0] + window,)
            raise
        if ev.type != want:
            raise NotificationMissed(f"{what} committed, but the persistent watch's next event for it was "
                                     f"{ev.type.lower()}: the store and the watch disagree")
        last = self._reported.get(zpath, commit.old)
        if last != commit.old:
            raise NotificationMissed(f"{what} replaced version {commit.old}, but the persistent watch last reported "
                                     f"version {last}: a change in between was not notified (another writer, "
                                     "or one made while the session reconnected)" + window)
        if commit.version is None:
            self._reported.pop(zpath, None)
            return ChangeEvent(commit.zxid, commit.path, "delete", None, None)
        self._reported[zpath] = commit.version
        # the value as a reader would decode it (tuples and frozensets, not the caller's objects)
        value = decode_record(encode_record(commit.value, None))[0]
        return ChangeEvent(commit.zxid, commit.path, "put", commit.version, value)


NOTIFIERS: dict[str, type[Notifier]] = {n.style: n for n in (OneShotNotifier, PersistentNotifier)}
