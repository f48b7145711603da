"""A live ZooKeeper server for the tests in this folder: Debian's `zookeeper`
package on a free loopback port in a temporary data directory, started once
per session and always stopped. Tests skip (with the reason) only when the
package or java is absent."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from txncheck.reference.zkserver import ZooKeeperMissing, ZooKeeperServer, find_server


def _missing() -> str | None:
    try:
        find_server()
    except ZooKeeperMissing as exc:
        return str(exc)
    return None


MISSING = _missing()

try:
    import kazoo  # noqa: F401 -- the ZooKeeper client every test here needs
except ImportError:  # an install without the `zookeeper` extra: nothing here can run
    collect_ignore_glob = ["test_*.py"]

def pytest_itemcollected(item):
    """Every test here needs ZooKeeper: marked `zookeeper`."""
    item.add_marker(pytest.mark.zookeeper)


needs_zookeeper = pytest.mark.skipif(MISSING is not None, reason=f"ZooKeeper unavailable: {MISSING}")


def pid_alive(pid: int) -> bool:
    """True while `pid` runs and is not a zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextmanager
def raw_client(hosts, **options):
    """A plain kazoo client, always stopped."""
    from kazoo.client import KazooClient

    c = KazooClient(hosts=hosts, **options)
    c.start(timeout=5)
    try:
        yield c
    finally:
        c.stop()
        c.close()


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory):
    if MISSING is not None:
        pytest.skip(f"ZooKeeper unavailable: {MISSING}")
    server = ZooKeeperServer(tmp_path_factory.mktemp("zk"))
    server.start()
    pid = server.pid
    yield server
    server.close()
    assert not pid_alive(pid), f"the ZooKeeper JVM {pid} outlived the tests"


@pytest.fixture
def zk_store(zk_server):
    """A fresh store in its own namespace on the shared server."""
    from txncheck.reference.store.zookeeper import ZooKeeperMetadataStore

    store = ZooKeeperMetadataStore(zk_server.hosts)
    yield store
    store.close()


@pytest.fixture
def zk_factory(zk_server):
    """A store factory for the replay bridge; every store is closed afterwards."""
    from txncheck.reference.store.zookeeper import ZooKeeperMetadataStore

    stores = []

    def make():
        s = ZooKeeperMetadataStore(zk_server.hosts)
        stores.append(s)
        return s

    yield make
    for s in stores:
        s.close()
