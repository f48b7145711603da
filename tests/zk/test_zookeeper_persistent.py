"""Persistent recursive watches (ZooKeeper 3.6+ AddWatch) on kazoo, which has
no API for them: the raw watch on a live server, the store's persistent
mode across reconnections, and replay of the PIP-473 corpus with it."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from kazoo.protocol.states import KazooState

from txncheck.checker.cli import main
from txncheck.counterexamples.replay import replay
from txncheck.reference.store import zk_persistent
from txncheck.reference.store.zk_persistent import PersistentWatches
from txncheck.reference.store.zookeeper import (NotificationMissed, ZooKeeperMetadataStore, ZooKeeperUnsupported,
                                                encode_record)
from txncheck.reference.zkserver import ZooKeeperServer

from ..helpers import ROOT
from .helpers import needs_zookeeper, pid_alive, raw_client

pytestmark = needs_zookeeper

CORPUS = sorted((ROOT / "counterexamples" / "pip473").glob("*.itf.json"))


def test_a_recursive_watch_reports_every_descendant_change_without_reregistration(zk_server):
    """Seven changes under the watched path, seven events in order; nothing
    re-registers in between. No child events (the server sends none to a
    recursive watch), nothing from outside the path. A one-shot watch on the
    same node still fires once, as kazoo delivers it."""
    with raw_client(zk_server.hosts) as c:
        c.ensure_path("/pw-demo/in")
        c.ensure_path("/pw-demo/out")
        events, oneshot, fired = [], [], threading.Event()
        added = PersistentWatches.of(c).add("/pw-demo/in", lambda ev: events.append((ev.type, ev.path)))
        assert added.get(timeout=5) is True
        c.create("/pw-demo/in/a", b"0")
        c.get("/pw-demo/in/a", watch=lambda ev: (oneshot.append(ev.type), fired.set()))
        c.create("/pw-demo/in/a/b", b"0")
        c.set("/pw-demo/in/a/b", b"1")
        c.set("/pw-demo/in/a", b"1")
        c.set("/pw-demo/in/a", b"2")
        c.create("/pw-demo/out/x", b"0")  # outside the watched path
        c.delete("/pw-demo/in/a/b")
        c.delete("/pw-demo/in/a")
        c.sync("/pw-demo")  # events precede the replies that follow them, and are routed synchronously
        assert events == [("CREATED", "/pw-demo/in/a"), ("CREATED", "/pw-demo/in/a/b"),
                          ("CHANGED", "/pw-demo/in/a/b"), ("CHANGED", "/pw-demo/in/a"),
                          ("CHANGED", "/pw-demo/in/a"), ("DELETED", "/pw-demo/in/a/b"),
                          ("DELETED", "/pw-demo/in/a")]
        assert fired.wait(5) and oneshot == ["CHANGED"]
        assert PersistentWatches.of(c).watched() == ["/pw-demo/in"]
        c.delete("/pw-demo", recursive=True)


def test_a_plain_persistent_watch_reports_its_own_node_and_its_children(zk_server):
    with raw_client(zk_server.hosts) as c:
        c.ensure_path("/pw-plain/n")
        events = []
        PersistentWatches.of(c).add("/pw-plain/n", lambda ev: events.append((ev.type, ev.path)),
                                    recursive=False).get(timeout=5)
        c.create("/pw-plain/n/k", b"0")
        c.set("/pw-plain/n/k", b"1")  # a grandchild's data: not this watch's
        c.set("/pw-plain/n", b"1")
        c.set("/pw-plain/n", b"2")
        c.sync("/pw-plain")
        assert events == [("CHILD", "/pw-plain/n"), ("CHANGED", "/pw-plain/n"), ("CHANGED", "/pw-plain/n")]
        c.delete("/pw-plain", recursive=True)


def test_a_server_without_add_watch_is_refused_in_one_line(zk_server, monkeypatch):
    """A server older than 3.6 answers AddWatch with UNIMPLEMENTED. The
    request is sent under an opcode this server does not know either, so
    the server's own UNIMPLEMENTED reply takes the path an old server's would."""
    monkeypatch.setattr(zk_persistent.AddWatch, "type", 999)
    with pytest.raises(ZooKeeperUnsupported, match="does not implement AddWatch.*3.6") as info:
        ZooKeeperMetadataStore(zk_server.hosts, watches="persistent")
    assert "\n" not in str(info.value)


def drop_connection(store):
    """Break the store's TCP connection as a network fault would; kazoo
    reconnects to the same server within the session."""
    store._client._connection._socket.shutdown(socket.SHUT_RDWR)


def suspended(client) -> threading.Event:
    ev = threading.Event()
    client.add_listener(lambda state: ev.set() if state == KazooState.SUSPENDED else None)
    return ev


def test_a_write_queued_while_disconnected_is_notified_after_a_restart(tmp_path):
    """The server is killed; a create is queued while the client is
    disconnected; the server restarts on its data dir. kazoo re-sends no
    watch, but the persistent watch is re-added ahead of the queued create,
    so the create is notified."""
    server = ZooKeeperServer(tmp_path).start()
    pids = [server.pid]
    try:
        # The session must outlive the restart: a restarted server expires a
        # session its client has not reached within the session timeout, and a
        # JVM starting on a loaded CI worker once took longer than 4 s. kazoo's
        # wait on a server still starting grows with it, hence the 60 s bound below.
        with raw_client(server.hosts, timeout=15,
                        connection_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.5}) as c:
            c.ensure_path("/pw-restart")
            events = []
            pw = PersistentWatches.of(c)
            pw.add("/pw-restart", lambda ev: events.append((ev.type, ev.path))).get(timeout=5)
            down = suspended(c)
            server.kill()
            assert down.wait(10) and not c.connected
            created = c.create_async("/pw-restart/queued", b"")  # waits in kazoo's queue
            server.start()
            pids.append(server.pid)
            assert created.get(timeout=60) == "/pw-restart/queued"
            c.set("/pw-restart/queued", b"1")
            c.sync("/pw-restart")
            assert events == [("CREATED", "/pw-restart/queued"), ("CHANGED", "/pw-restart/queued")]
            assert pw.reconnections == 1 and pw.failures == []
    finally:
        server.close()
    assert pids[1] != pids[0] and not any(pid_alive(p) for p in pids)


def test_the_store_goes_on_after_a_server_restart(tmp_path):
    """The same through the store: a put issued while the server is down
    completes after the restart and its notification feeds the listeners."""
    server = ZooKeeperServer(tmp_path).start()
    pids = [server.pid]
    store = ZooKeeperMetadataStore(server.hosts, watches="persistent", timeout=60, session_timeout=15)  # as above
    feed = []
    store.listen(lambda ev: feed.append((ev.kind, ev.path, ev.version)))
    try:
        store.put("/h/1", {"s": "OPEN"})
        down = suspended(store._client)
        server.kill()
        assert down.wait(10)
        restart = threading.Thread(target=server.start)
        restart.start()
        store.put("/h/1", {"s": "COMMITTED"})
        restart.join(30)
        pids.append(server.pid)
        store.put("/h/1/x", {"s": "NEW"})
        store.delete("/h/1/x")
        assert feed == [("put", "/h/1", 0), ("put", "/h/1", 1), ("put", "/h/1/x", 0), ("delete", "/h/1/x", None)]
        assert store.notifier.watches.reconnections == 1 and store.notifier.watches.failures == []
    finally:
        store.close()
        server.close()
    assert pids[1] != pids[0] and not any(pid_alive(p) for p in pids)


def test_a_change_in_the_reconnection_window_is_reported(zk_server):
    """Another session changes a record after the store's connection drops
    and before its watch is back: ZooKeeper never notifies that change. The
    store's next commit on the record replaces a version its watch never
    reported, and it says so rather than pass the commit on as if nothing
    had happened in between."""
    store = ZooKeeperMetadataStore(zk_server.hosts, watches="persistent", timeout=10)
    try:
        store.put("/h/1", {"s": "OPEN"})
        with raw_client(zk_server.hosts) as other:
            done = threading.Event()

            def in_the_window(state):  # kazoo's connection thread: reconnected, nothing sent yet
                if state == KazooState.CONNECTED and not done.is_set():
                    other.set(f"{store.root}/data/h/1", encode_record({"s": "OTHER"}, None))
                    done.set()

            store._client.add_listener(in_the_window)
            drop_connection(store)
            assert done.wait(10)
            with pytest.raises(NotificationMissed, match=r"replaced version 1, but the persistent watch last "
                                                         r"reported version 0.*reconnected"):
                store.put("/h/1", {"s": "COMMITTED"})
    finally:
        store.close()


def outcome(res):
    return (res.verdict, res.step, res.property, res.steps_run, res.note, res.diff)


@pytest.fixture
def persistent_factory(zk_server):
    stores = []

    def make():
        stores.append(ZooKeeperMetadataStore(zk_server.hosts, watches="persistent"))
        return stores[-1]

    def close_all():   # ZooKeeper admits 60 connections per client address
        while stores:
            stores.pop().close()

    make.close_all = close_all
    yield make
    close_all()


@pytest.mark.skipif(not CORPUS, reason="no PIP-473 counterexample corpus")
def test_every_trace_replays_the_same_with_persistent_watches(persistent_factory):
    """Every counterexample, on its own variant and on `fixed`, with point
    and one-shot participant watches: the same outcome as in memory."""
    for trace in CORPUS:
        meta = json.loads(trace.read_text())["#meta"]
        for variant, style in ((None, "point"), ("fixed", "point"), (None, "oneshot")):
            opts = {"watch_style": style}
            mem = replay(trace, variant=variant, bridge_options=opts)
            zk = replay(trace, variant=variant, bridge_options={**opts, "store": persistent_factory})
            persistent_factory.close_all()
            assert outcome(zk) == outcome(mem), (trace.name, variant, style)
            if variant is None and style == "point":
                assert (zk.verdict, zk.property) == ("reproduced", meta["property"]), trace.name


@pytest.mark.skipif(not CORPUS, reason="no PIP-473 counterexample corpus")
def test_cli_selects_persistent_watches(zk_server, capsys):
    trace = CORPUS[0]
    rc_mem = main(["replay", str(trace)])
    out_mem = capsys.readouterr().out
    rc = main(["replay", str(trace), "--store", "zookeeper", "--zk", zk_server.hosts, "--zk-watches", "persistent"])
    out = capsys.readouterr().out
    verdict = [x for x in out_mem.splitlines() if x.startswith(("reproduced", "not reproduced", "diverged"))]
    assert rc == rc_mem and verdict and verdict[0] in out.splitlines()
    assert f"(store: ZooKeeper at {zk_server.hosts}, persistent watches, " in out


@pytest.mark.skipif(not CORPUS, reason="no PIP-473 counterexample corpus")
def test_cli_zk_watches_without_the_zookeeper_store_exit_2(capsys):
    rc = main(["replay", str(CORPUS[0]), "--zk-watches", "persistent"])
    err = capsys.readouterr().err
    assert rc == 2 and err.strip() == "txncheck: error: --zk-watches needs --store zookeeper"


@pytest.mark.skipif(not CORPUS, reason="no PIP-473 counterexample corpus")
def test_cli_server_without_add_watch_exit_3_one_line(zk_server, capsys, monkeypatch):
    monkeypatch.setattr(zk_persistent.AddWatch, "type", 999)  # as in the store test above
    rc = main(["replay", str(CORPUS[0]), "--store", "zookeeper", "--zk", zk_server.hosts,
               "--zk-watches", "persistent"])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 3 and out == "" and len(lines) == 1, err
    assert lines[0].startswith("txncheck: error: ") and "does not implement AddWatch" in lines[0]
