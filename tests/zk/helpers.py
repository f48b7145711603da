"""What the ZooKeeper tests share besides the server fixtures of conftest.py:
whether a server can start here, and small process and client helpers."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from txncheck.reference.zkserver import ZooKeeperMissing, find_server


def _missing() -> str | None:
    try:
        find_server()
    except ZooKeeperMissing as exc:
        return str(exc)
    return None


MISSING = _missing()

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
