"""A live ZooKeeper server for the tests in this folder: Debian's `zookeeper`
package on a free loopback port in a temporary data directory, started once
per session and always stopped. Tests skip (with the reason) only when the
package or java is absent."""

from __future__ import annotations

import pytest

from txncheck.reference.zkserver import ZooKeeperServer

from .helpers import MISSING, pid_alive

try:
    import kazoo  # noqa: F401 -- the ZooKeeper client every test here needs
except ImportError:  # an install without the `zookeeper` extra: nothing here can run
    collect_ignore_glob = ["test_*.py"]


def pytest_itemcollected(item):
    """Every test here needs ZooKeeper: marked `zookeeper`."""
    item.add_marker(pytest.mark.zookeeper)


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
