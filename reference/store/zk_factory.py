"""ZooKeeper stores for a replay run: a factory the replay bridge calls once
per cluster it builds, on a server given as HOST:PORT or on a private one
started on loopback for the run. Everything opened is closed on exit, and a
private server is stopped and its data directory removed."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Callable, Iterator

from ..zkserver import ZooKeeperServer
from .zookeeper import ZooKeeperMetadataStore

_HOSTPORT = re.compile(r"^[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")


def check_hosts(hosts: str) -> str:
    """A HOST:PORT[,HOST:PORT...] string, or ValueError in one line."""
    parts = hosts.split(",")
    for p in parts:
        if not _HOSTPORT.match(p) or not 0 < int(p.rsplit(":", 1)[1]) < 65536:
            raise ValueError(f"--zk {hosts!r}: expected HOST:PORT (e.g. 127.0.0.1:2181)")
    return hosts


class StoreFactory:
    def __init__(self, hosts: str, timeout: float, watches: str) -> None:
        self.hosts, self.timeout, self.watches = hosts, timeout, watches
        self.stores: list[ZooKeeperMetadataStore] = []
        self.description = f"ZooKeeper at {hosts}"

    def __call__(self) -> ZooKeeperMetadataStore:
        store = ZooKeeperMetadataStore(self.hosts, timeout=self.timeout, watches=self.watches)
        self.stores.append(store)
        return store

    @property
    def requests(self) -> int:
        return sum(s.requests for s in self.stores)

    def close(self) -> None:
        for s in self.stores:
            s.close()
        self.stores.clear()


@contextmanager
def zookeeper_stores(hosts: str | None = None, *, timeout: float = 5.0,
                     watches: str = "oneshot") -> Iterator[Callable[[], ZooKeeperMetadataStore]]:
    """Yield a store factory; with no `hosts`, on a private loopback server."""
    server = None
    if hosts is None:
        server = ZooKeeperServer().start()
        hosts = server.hosts
    factory = StoreFactory(check_hosts(hosts), timeout, watches)
    if server is not None:
        factory.description = f"private ZooKeeper at {hosts}"
    try:
        yield factory
    finally:
        factory.close()
        if server is not None:
            server.close()
