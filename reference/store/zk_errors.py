"""The ZooKeeper store's errors; replay reports each in one line (exit 3)."""

from __future__ import annotations


class ZooKeeperUnavailable(ConnectionError):
    """The server is unreachable, stopped answering, or the session is gone."""


class NotificationMissed(ZooKeeperUnavailable):
    """A change was committed but its notification could not be had as the
    driver needs it (missing, or coalesced by a one-shot watch)."""


class ZooKeeperUnsupported(ValueError):
    """A requested ZooKeeper feature the client library cannot reach."""
