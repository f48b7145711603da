"""An in-memory `MetadataStore`: a dict of versioned records plus sorted
secondary indexes. Single-threaded; every mutation is atomic with its index
updates and its change event, which is what Oxia gives per key."""

from __future__ import annotations

import bisect
from typing import Any, Callable, Mapping

from .api import NEW, BadVersion, ChangeEvent, Index, MetadataStore, Record


class InMemoryMetadataStore(MetadataStore):
    def __init__(self) -> None:
        self._records: dict[str, Record] = {}
        self._keys: list[str] = []  # sorted paths
        self._seq: dict[str, int] = {}
        self._indexes: dict[str, Index] = {}
        self._entries: dict[str, list[tuple[tuple, str]]] = {}  # sorted (key, path)
        self._listeners: list[Callable[[ChangeEvent], None]] = []
        self._zxid = 0

    # -- reads ------------------------------------------------------------------
    def get(self, path: str) -> Record | None:
        return self._records.get(path)

    def children(self, prefix: str) -> list[str]:
        i = bisect.bisect_left(self._keys, prefix)
        out = []
        while i < len(self._keys) and self._keys[i].startswith(prefix):
            out.append(self._keys[i])
            i += 1
        return out

    def by_partition(self, partition_key: str) -> list[Record]:
        return [r for k in self._keys if (r := self._records[k]).partition_key == partition_key]

    def scan(self, index: str, lo: tuple | None = None, hi: tuple | None = None) -> list[tuple[tuple, str]]:
        entries = self._entries[index]
        i = 0 if lo is None else bisect.bisect_left(entries, (lo, ""))
        out = []
        for key, path in entries[i:]:
            if hi is not None and key[:len(hi)] > hi:
                break
            out.append((key, path))
        return out

    # -- writes -----------------------------------------------------------------
    def put(self, path: str, value: Mapping[str, Any], *, expected_version: int | None = None,
            partition_key: str | None = None) -> Record:
        old = self._records.get(path)
        if expected_version is not None:
            actual = old.version if old else None
            if (expected_version == NEW and old is not None) or (
                    expected_version != NEW and actual != expected_version):
                raise BadVersion(path, expected_version, actual)
        rec = Record(path, dict(value), (old.version + 1) if old else 0,
                     partition_key if partition_key is not None else (old.partition_key if old else None))
        self._commit(path, old, rec)
        return rec

    def create_sequential(self, prefix: str, value: Mapping[str, Any], *,
                          partition_key: str | None = None) -> Record:
        n = self._seq.get(prefix, 0) + 1
        self._seq[prefix] = n
        return self.put(f"{prefix}{n:010d}", value, expected_version=NEW, partition_key=partition_key)

    def delete(self, path: str, *, expected_version: int | None = None) -> bool:
        old = self._records.get(path)
        if old is None:
            if expected_version is not None:
                raise BadVersion(path, expected_version, None)
            return False
        if expected_version is not None and old.version != expected_version:
            raise BadVersion(path, expected_version, old.version)
        self._commit(path, old, None)
        return True

    def _commit(self, path: str, old: Record | None, new: Record | None) -> None:
        for idx in self._indexes.values():
            if not path.startswith(idx.prefix):
                continue
            entries = self._entries[idx.name]
            if old is not None and (k := idx.key(old.value)) is not None:
                entries.remove((k, path))
            if new is not None and (k := idx.key(new.value)) is not None:
                bisect.insort(entries, (k, path))
        if new is None:
            del self._records[path]
            self._keys.pop(bisect.bisect_left(self._keys, path))
        else:
            if old is None:
                bisect.insort(self._keys, path)
            self._records[path] = new
        self._zxid += 1
        event = ChangeEvent(self._zxid, path, "put" if new else "delete",
                            new.version if new else None, dict(new.value) if new else None)
        for listener in list(self._listeners):
            listener(event)

    # -- indexes and the change feed --------------------------------------------
    def add_index(self, index: Index) -> None:
        if index.name in self._indexes:
            if self._indexes[index.name].prefix != index.prefix:
                raise ValueError(f"index {index.name} is already defined differently")
            return
        self._indexes[index.name] = index
        entries = [(k, p) for p in self.children(index.prefix)
                   if (k := index.key(self._records[p].value)) is not None]
        self._entries[index.name] = sorted(entries)

    def listen(self, listener: Callable[[ChangeEvent], None]) -> None:
        self._listeners.append(listener)
