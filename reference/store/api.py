"""The `MetadataStore` interface PIP-473 relies on ("Data Model", the note on
metadata-store backends): versioned records with CAS, partition-key
co-location, server-assigned sequential keys, secondary indexes with range
scans, and a change feed that watch styles are built on.

Backends implement this class; everything above it (the transaction buffer,
the pending-ack store, the coordinator) sees only these methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Mapping

# expected_version for a put that must create the record
NEW = -1


class BadVersion(Exception):
    """A CAS lost: the record's version is not the expected one."""

    def __init__(self, path: str, expected: int | None, actual: int | None) -> None:
        super().__init__(f"{path}: expected version {expected}, found {actual}")
        self.path, self.expected, self.actual = path, expected, actual


@dataclass(frozen=True)
class Record:
    path: str
    value: Mapping[str, Any]
    version: int
    partition_key: str | None = None


@dataclass(frozen=True)
class Index:
    """A secondary index over the records under `prefix`: `key(value)` is the
    index key (a tuple), or None when the record is not indexed. The store
    keeps it in step with the record, atomically."""

    name: str
    prefix: str
    key: Callable[[Mapping[str, Any]], tuple | None]


@dataclass(frozen=True)
class ChangeEvent:
    """One committed change, in store order (`zxid`)."""

    zxid: int
    path: str
    kind: str  # "put" | "delete"
    version: int | None  # the new version; None after a delete
    value: Mapping[str, Any] | None = None  # the new value (Oxia notifications carry it)


class MetadataStore(ABC):
    @abstractmethod
    def get(self, path: str) -> Record | None: ...

    @abstractmethod
    def put(self, path: str, value: Mapping[str, Any], *, expected_version: int | None = None,
            partition_key: str | None = None) -> Record:
        """Write `value`; with `expected_version` a CAS (NEW: must not exist)."""

    @abstractmethod
    def create_sequential(self, prefix: str, value: Mapping[str, Any], *,
                          partition_key: str | None = None) -> Record:
        """Create `<prefix><seq>` with a server-assigned, increasing `<seq>`."""

    @abstractmethod
    def delete(self, path: str, *, expected_version: int | None = None) -> bool:
        """Delete; False when absent. A CAS when `expected_version` is given."""

    @abstractmethod
    def children(self, prefix: str) -> list[str]:
        """Paths that start with `prefix`, in key order."""

    @abstractmethod
    def by_partition(self, partition_key: str) -> list[Record]:
        """Every record co-located under `partition_key`, in key order."""

    @abstractmethod
    def add_index(self, index: Index) -> None: ...

    @abstractmethod
    def scan(self, index: str, lo: tuple | None = None, hi: tuple | None = None) -> list[tuple[tuple, str]]:
        """(key, path) pairs of `index` with lo <= key <= hi, in key order."""

    @abstractmethod
    def listen(self, listener: Callable[[ChangeEvent], None]) -> None:
        """Raw change feed, called synchronously on each commit. Watch styles
        (`watches.py`) turn it into late, in-order or coalesced delivery."""
