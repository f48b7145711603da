"""A `MetadataStore` on a real ZooKeeper server, through kazoo.

Layout, under a per-store namespace `<root>` (default `/txncheck/<random>`):

    <root>/data/<path>            the records: one znode per record path; the
                                  znode holds {"v": value, "pk": partition key}
                                  as tagged JSON, and its znode version is the
                                  record's version (0 on create, +1 per write).
                                  Intermediate znodes are empty and are not
                                  records.
    <root>/index/<name>/<entry>   secondary-index sidecar: one empty znode per
                                  (index key, record path), its name the
                                  base64url of both, so a scan is one
                                  get_children and a sort.
    <root>/partition/<pk>/<path>  the partition-key sidecar, the same way.
    <root>/seq/<prefix>           the counter of a sequential prefix.

Atomicity. Every write is one ZooKeeper `multi`: the record's create,
set_data or delete -- conditioned on the znode version read just before --
together with the deletes and creates of its index and partition entries
(and, for a sequential key, the counter's conditioned set_data). ZooKeeper
applies a multi all or nothing, so no reader ever sees an index entry
without its record or a record without its entries. If another writer got
in between the read and the multi, the version check fails and the whole
multi is rolled back: a CAS raises `BadVersion`, an unconditional write
reads again and retries.

Sequential keys are a counter with CAS, not sequential znodes: a multi
cannot use the name ZooKeeper assigns to a sequential znode in a later
operation of the same multi, and the index entries name the record path.
The counter gives `<prefix><n:010d>` with n = 1, 2, ... as the in-memory
store does.

Change feed. After each of its own commits the store waits (bounded) for
the notification of exactly that change and only then hands it to its
`listen()` listeners, in the driver's thread. How it gets that notification
depends on the watch style: `zk_notifiers` has one notifier per style,
`watches="oneshot"` (kazoo's TreeCache over standard one-shot watches, the
default) and `watches="persistent"` (one persistent recursive watch,
ZooKeeper 3.6+). A change that cannot be notified as committed raises
`NotificationMissed`.

Modules: `zk_codec` (values as tagged JSON, znode names), `zk_errors`,
`zk_notifiers` (the change feed), `zk_persistent` (AddWatch on kazoo).

Faults. Every request waits at most `timeout` seconds. A server that does
not answer, a lost connection during a request (whose outcome is then
unknown) or an expired session raise `ZooKeeperUnavailable`, a
`ConnectionError`; replay turns it into one line and exit 3. A request
issued while kazoo is reconnecting waits for the reconnection, so a server
restarted within the session timeout is survived.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Callable, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import (BadVersionError, ConnectionClosedError, ConnectionLoss, NoNodeError, NodeExistsError,
                              NotEmptyError, RolledBackError, SessionExpiredError)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KazooState

from .api import NEW, BadVersion, ChangeEvent, Index, MetadataStore, Record
from .zk_codec import decode_record, encode_record, from_znode_name, znode_name
from .zk_errors import NotificationMissed, ZooKeeperUnavailable, ZooKeeperUnsupported
from .zk_notifiers import NOTIFIERS, Commit

# the store's errors and record codec are imported from here by its callers
__all__ = ["ZooKeeperMetadataStore", "WATCH_STYLES", "ZooKeeperUnavailable", "NotificationMissed",
           "ZooKeeperUnsupported", "encode_record", "decode_record"]

WATCH_STYLES = tuple(NOTIFIERS)  # "oneshot" (the default), "persistent"
_RETRIES = 20
# kazoo logs reconnects at WARNING; without a handler Python would print them to stderr
logging.getLogger("kazoo").addHandler(logging.NullHandler())


def _check_path(path: str) -> None:
    if not path.startswith("/") or path.endswith("/") or "//" in path:
        raise ValueError(f"bad record path {path!r}")


class ZooKeeperMetadataStore(MetadataStore):
    def __init__(self, hosts: str, *, root: str | None = None, watches: str = "oneshot",
                 timeout: float = 5.0, session_timeout: float = 10.0) -> None:
        if watches not in WATCH_STYLES:
            raise ValueError(f"unknown ZooKeeper watch style {watches!r} (known: {', '.join(WATCH_STYLES)})")
        self.hosts = hosts
        self.root = root or f"/txncheck/{uuid.uuid4().hex[:12]}"
        self.timeout = timeout
        self._data = self.root + "/data"
        self._indexes: dict[str, Index] = {}
        self._listeners: list[Callable[[ChangeEvent], None]] = []
        self._dirs: set[str] = set()
        self._expired = False
        self._committed: tuple = (None, None, 0)  # the last commit: (old version, value, zxid)
        self.requests = 0  # ZooKeeper requests issued (a cost figure)
        self._client = KazooClient(hosts=hosts, timeout=session_timeout, command_retry=None,
                                   connection_retry={"max_tries": -1, "delay": 0.05, "backoff": 1.5,
                                                     "max_delay": 0.5})
        # the change feed: one notifier per watch style (zk_notifiers)
        self.notifier = NOTIFIERS[watches](self._client, self._data, timeout, hosts)
        try:
            self._client.start(timeout=timeout)
        except KazooTimeoutError:
            self._client.close()
            raise ZooKeeperUnavailable(f"ZooKeeper at {hosts} is not reachable "
                                       f"(no session within {timeout:g}s)") from None
        self._client.add_listener(self._on_state)
        self.watch_style = watches
        try:
            for d in ("data", "index", "partition", "seq"):
                self._ensure_dir(f"{self.root}/{d}")
            self.notifier.start(self._wait)
        except BaseException:
            self.close(drop=False)
            raise

    # -- requests with a bound ----------------------------------------------------------
    def _wait(self, what: str, async_result) -> Any:
        self.requests += 1
        if self._expired:
            raise ZooKeeperUnavailable(f"the ZooKeeper session at {self.hosts} expired; watches may have missed "
                                       f"changes, so the replay cannot go on ({what})")
        try:
            return async_result.get(timeout=self.timeout)
        except KazooTimeoutError:
            raise ZooKeeperUnavailable(f"ZooKeeper at {self.hosts} did not answer {what} "
                                       f"within {self.timeout:g}s") from None
        except (ConnectionLoss, ConnectionClosedError, SessionExpiredError) as exc:
            raise ZooKeeperUnavailable(f"lost ZooKeeper at {self.hosts} during {what} "
                                       f"({type(exc).__name__}); the outcome of that request is unknown") from None

    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self._expired = True

    def _ensure_dir(self, zpath: str) -> None:
        if zpath in self._dirs:
            return
        parts = zpath.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/" + "/".join(parts[:i])
            if p in self._dirs:
                continue
            try:
                self._wait(f"create {p}", self._client.create_async(p, b""))
                if p.startswith(self._data + "/"):
                    self.notifier.created_dir(p)
            except NodeExistsError:
                pass
            self._dirs.add(p)

    def _z(self, path: str) -> str:
        return self._data + path

    # -- reads (from the server, not from the watch tree) -------------------------------
    def get(self, path: str) -> Record | None:
        try:
            data, stat = self._wait(f"get {path}", self._client.get_async(self._z(path)))
        except NoNodeError:
            return None
        if not data:
            return None  # an intermediate znode
        value, pk = decode_record(data)
        return Record(path, value, stat.version, pk)

    def _get_many(self, paths: list[str]) -> list[Record]:
        pending = [(p, self._client.get_async(self._z(p))) for p in paths]
        out = []
        for p, a in pending:
            try:
                data, stat = self._wait(f"get {p}", a)
            except NoNodeError:
                continue
            if data:
                value, pk = decode_record(data)
                out.append(Record(p, value, stat.version, pk))
        return out

    def _list(self, zpath: str) -> list[str]:
        try:
            return self._wait(f"get_children {zpath}", self._client.get_children_async(zpath))
        except NoNodeError:
            return []

    def children(self, prefix: str) -> list[str]:
        top = prefix.rsplit("/", 1)[0]
        frontier, found = [top], []
        while frontier:
            listed = [(p, self._client.get_children_async(self._z(p) if p else self._data)) for p in frontier]
            frontier = []
            for p, a in listed:
                try:
                    names = self._wait(f"get_children {p or '/'}", a)
                except NoNodeError:
                    continue
                for n in names:
                    child = f"{p}/{n}"
                    if child.startswith(prefix):
                        frontier.append(child)
                        found.append(child)
        return sorted(r.path for r in self._get_many(found))

    def by_partition(self, partition_key: str) -> list[Record]:
        names = self._list(f"{self.root}/partition/{znode_name(partition_key)}")
        return self._get_many(sorted(from_znode_name(n) for n in names))

    def scan(self, index: str, lo: tuple | None = None, hi: tuple | None = None) -> list[tuple[tuple, str]]:
        if index not in self._indexes:
            raise KeyError(index)
        entries = sorted((tuple(k), p) for k, p in map(from_znode_name, self._list(f"{self.root}/index/{index}")))
        out = []
        for key, path in entries:
            if lo is not None and (key, path) < (lo, ""):
                continue
            if hi is not None and key[:len(hi)] > hi:
                break
            out.append((key, path))
        return out

    # -- writes: one multi each ---------------------------------------------------------
    def _sidecars(self, tx, path: str, old: Record | None, new: Record | None) -> None:
        for idx in self._indexes.values():
            if not path.startswith(idx.prefix):
                continue
            ok = idx.key(old.value) if old is not None else None
            nk = idx.key(new.value) if new is not None else None
            if ok == nk:
                continue
            base = f"{self.root}/index/{idx.name}/"
            if ok is not None:
                tx.delete(base + znode_name([ok, path]))
            if nk is not None:
                tx.create(base + znode_name([nk, path]), b"")
        opk = old.partition_key if old is not None else None
        npk = new.partition_key if new is not None else None
        if opk != npk:
            if opk is not None:
                tx.delete(f"{self.root}/partition/{znode_name(opk)}/{znode_name(path)}")
            if npk is not None:
                self._ensure_dir(f"{self.root}/partition/{znode_name(npk)}")
                tx.create(f"{self.root}/partition/{znode_name(npk)}/{znode_name(path)}", b"")

    def _commit(self, tx, what: str) -> list | None:
        """The multi's results, or None when its first `guarded` op lost a race."""
        results = self._wait(what, tx.commit_async())
        errors = [r for r in results if isinstance(r, Exception)]
        if not errors:
            self._zxid = self._client.last_zxid or 0  # the multi's own: set from its reply header
            return results
        real = [r for r in errors if not isinstance(r, RolledBackError)]
        if real and isinstance(real[0], (BadVersionError, NodeExistsError, NoNodeError)) and \
                isinstance(results[0], Exception) and not isinstance(results[0], RolledBackError):
            return None  # the record (or counter) changed under us
        if any(isinstance(r, NotEmptyError) for r in real):
            raise ValueError(f"{what}: the znode has children; a record path cannot also be a directory")
        raise RuntimeError(f"{what}: the multi failed on a sidecar entry ({real[0]!r}); the index is "
                           "inconsistent with its records")

    def put(self, path: str, value: Mapping[str, Any], *, expected_version: int | None = None,
            partition_key: str | None = None) -> Record:
        _check_path(path)
        data_value = dict(value)
        for _ in range(_RETRIES):
            old = self.get(path)
            actual = old.version if old else None
            if expected_version is not None and (old is not None if expected_version == NEW
                                                 else actual != expected_version):
                raise BadVersion(path, expected_version, actual)
            pk = partition_key if partition_key is not None else (old.partition_key if old else None)
            rec = Record(path, data_value, actual + 1 if old else 0, pk)
            tx = self._client.transaction()
            if old is None:
                self._ensure_dir(self._z(path).rsplit("/", 1)[0])
                tx.create(self._z(path), encode_record(data_value, pk))
            else:
                tx.set_data(self._z(path), encode_record(data_value, pk), version=old.version)
            self._sidecars(tx, path, old, rec)
            if self._commit(tx, f"put {path}") is not None:
                self._committed = (actual, data_value, self._zxid)
                self._notify(path, "put", rec.version)
                return rec
            if expected_version is not None:
                now = self.get(path)
                raise BadVersion(path, expected_version, now.version if now else None)
        raise RuntimeError(f"put {path}: lost {_RETRIES} races in a row")

    def create_sequential(self, prefix: str, value: Mapping[str, Any], *,
                          partition_key: str | None = None) -> Record:
        counter = f"{self.root}/seq/{znode_name(prefix)}"
        for _ in range(_RETRIES):
            try:
                data, stat = self._wait(f"get {counter}", self._client.get_async(counter))
                n = int(data) + 1
            except NoNodeError:
                n, stat = 1, None
            path = f"{prefix}{n:010d}"
            _check_path(path)
            rec = Record(path, dict(value), 0, partition_key)
            tx = self._client.transaction()
            if stat is None:
                tx.create(counter, str(n).encode())
            else:
                tx.set_data(counter, str(n).encode(), version=stat.version)
            self._ensure_dir(self._z(path).rsplit("/", 1)[0])
            tx.create(self._z(path), encode_record(rec.value, partition_key))
            self._sidecars(tx, path, None, rec)
            if self._commit(tx, f"create {path}") is not None:
                self._committed = (None, rec.value, self._zxid)
                self._notify(path, "put", 0)
                return rec
        raise RuntimeError(f"create_sequential {prefix}: lost {_RETRIES} races in a row")

    def delete(self, path: str, *, expected_version: int | None = None) -> bool:
        _check_path(path)
        for _ in range(_RETRIES):
            old = self.get(path)
            if old is None:
                if expected_version is not None:
                    raise BadVersion(path, expected_version, None)
                return False
            if expected_version is not None and old.version != expected_version:
                raise BadVersion(path, expected_version, old.version)
            tx = self._client.transaction()
            tx.delete(self._z(path), version=old.version)
            self._sidecars(tx, path, old, None)
            if self._commit(tx, f"delete {path}") is not None:
                self._committed = (old.version, None, self._zxid)
                self._notify(path, "delete", None)
                return True
            if expected_version is not None:
                now = self.get(path)
                raise BadVersion(path, expected_version, now.version if now else None)
        raise RuntimeError(f"delete {path}: lost {_RETRIES} races in a row")

    # -- indexes -------------------------------------------------------------------------
    def add_index(self, index: Index) -> None:
        known = self._indexes.get(index.name)
        if known is not None:
            if known.prefix != index.prefix:
                raise ValueError(f"index {index.name} is already defined differently")
            return
        self._indexes[index.name] = index
        base = f"{self.root}/index/{index.name}"
        self._ensure_dir(base)
        have = set(self._list(base))
        for rec in self._get_many(self.children(index.prefix)):
            k = index.key(rec.value)
            if k is not None and znode_name([k, rec.path]) not in have:
                try:
                    self._wait(f"create index entry of {rec.path}",
                               self._client.create_async(f"{base}/{znode_name([k, rec.path])}", b""))
                except NodeExistsError:
                    pass

    # -- the change feed -----------------------------------------------------------------
    def listen(self, listener: Callable[[ChangeEvent], None]) -> None:
        self._listeners.append(listener)

    def _notify(self, path: str, kind: str, version: int | None) -> None:
        """Wait for the notification of the commit just made, then feed it to the listeners."""
        old, value, zxid = self._committed
        change = self.notifier.change(Commit(path, kind, version, old, value, zxid))
        for listener in list(self._listeners):
            listener(change)

    def _drop(self, zpath: str) -> None:
        for n in self._list(zpath):
            self._drop(f"{zpath}/{n}")
        self._wait(f"delete {zpath}", self._client.delete_async(zpath))

    # -- lifecycle -----------------------------------------------------------------------
    def close(self, drop: bool = True) -> None:
        """Stop watching and end the session; with `drop`, delete the namespace
        first (best effort: a dead server leaves it). Idempotent."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self.notifier.close()
        if drop and self._client.connected:
            try:
                self._drop(self.root)
            except (ZooKeeperUnavailable, NoNodeError, NotEmptyError):
                pass  # cleanup of a namespace must not mask the caller's outcome
        self._client.stop()
        self._client.close()
