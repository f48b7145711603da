"""The ZooKeeper backend of the reference `MetadataStore`, on a live server:
the same contract as the in-memory store (checked operation by operation on
random programs), atomic index sidecars, the change feed, and the faults it
must report rather than hide."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from txncheck.reference.store import BadVersion, Index, InMemoryMetadataStore
from txncheck.reference.store.api import NEW
from txncheck.reference.store.zookeeper import (NotificationMissed, ZooKeeperMetadataStore, ZooKeeperUnavailable,
                                                decode_record, encode_record)
from txncheck.reference.zkserver import free_port

from .helpers import needs_zookeeper, raw_client

pytestmark = needs_zookeeper
STYLES = pytest.mark.parametrize("watches", ["oneshot", "persistent"])


BY_SEG = Index("by-seg", "/op/", lambda v: (v["seg"], v["n"]) if v["kind"] == "w" else None)

paths = st.sampled_from(["/op/a", "/op/b", "/op/x/c", "/h/1", "/h/2"])
values = st.fixed_dictionaries({"kind": st.sampled_from(["w", "a"]), "seg": st.sampled_from(["s1", "s2"]),
                                "n": st.integers(0, 3)})
versions = st.sampled_from([None, NEW, 0, 1, 2])
pkeys = st.sampled_from([None, "t1", "t2"])
ops = st.one_of(
    st.tuples(st.just("put"), paths, values, versions, pkeys),
    st.tuples(st.just("seq"), st.sampled_from(["/op/t1/", "/op/t2/"]), values, pkeys),
    st.tuples(st.just("delete"), paths, versions),
)


def run(store, op):
    try:
        if op[0] == "put":
            _, p, v, ver, pk = op
            r = store.put(p, v, expected_version=ver, partition_key=pk)
        elif op[0] == "seq":
            _, prefix, v, pk = op
            r = store.create_sequential(prefix, v, partition_key=pk)
        else:
            _, p, ver = op
            return store.delete(p, expected_version=ver)
        return (r.path, r.value, r.version, r.partition_key)
    except BadVersion as exc:
        return ("BadVersion", exc.path, exc.expected, exc.actual)


def snapshot(store):
    return {
        "children": store.children("/"),
        "ops": store.children("/op/"),
        "scan": store.scan("by-seg"),
        "scan-s1": store.scan("by-seg", ("s1",), ("s1",)),
        "t1": [(r.path, r.version) for r in store.by_partition("t1")],
        "t2": [(r.path, r.version) for r in store.by_partition("t2")],
        "records": [(r.path, r.value, r.version, r.partition_key) for r in map(store.get, store.children("/"))],
    }


@STYLES
@settings(max_examples=12, deadline=None)
@given(program=st.lists(ops, min_size=1, max_size=14))
def test_same_answers_as_the_in_memory_store(zk_server, watches, program):
    mem, zk = InMemoryMetadataStore(), ZooKeeperMetadataStore(zk_server.hosts, watches=watches)
    try:
        feeds = ([], [])
        for store, feed in zip((mem, zk), feeds):
            store.add_index(BY_SEG)
            store.listen(lambda ev, feed=feed: feed.append((ev.kind, ev.path, ev.version, ev.value)))
        for op in program:
            assert run(zk, op) == run(mem, op), op
        assert snapshot(zk) == snapshot(mem)
        assert feeds[1] == feeds[0]
    finally:
        zk.close()


def test_versions_are_znode_versions(zk_store, zk_server):
    zk_store.put("/a", {"x": 1}, expected_version=NEW)
    zk_store.put("/a", {"x": 2}, expected_version=0)
    with raw_client(zk_server.hosts) as raw:
        data, stat = raw.get(f"{zk_store.root}/data/a")
    assert stat.version == 1 and decode_record(data) == ({"x": 2}, None)


def test_an_index_added_late_covers_existing_records(zk_store):
    zk_store.put("/op/1", {"kind": "w", "seg": "s2", "n": 0})
    zk_store.put("/op/2", {"kind": "a", "seg": "s1", "n": 0})
    zk_store.add_index(BY_SEG)
    assert zk_store.scan("by-seg") == [(("s2", 0), "/op/1")]


@STYLES
def test_a_lost_cas_leaves_record_and_index_untouched(zk_server, monkeypatch, watches):
    """Two clients on one namespace. b reads version 0, a writes version 1,
    then b's multi (conditioned on version 0) is rejected whole: neither the
    record nor b's index entries change. b then hears a's change, which it did
    not make, and says so instead of passing it on as its own."""
    a = ZooKeeperMetadataStore(zk_server.hosts, watches=watches)
    b = ZooKeeperMetadataStore(zk_server.hosts, root=a.root, watches=watches)
    try:
        for s in (a, b):
            s.add_index(BY_SEG)
        a.put("/op/1", {"kind": "w", "seg": "s1", "n": 0})
        stale = b.get("/op/1")
        a.put("/op/1", {"kind": "w", "seg": "s2", "n": 0}, expected_version=0)
        real_get = b.get
        monkeypatch.setattr(b, "get", lambda p: stale if p == "/op/1" else real_get(p))
        with pytest.raises(BadVersion):
            b.put("/op/1", {"kind": "w", "seg": "s3", "n": 0}, expected_version=0)
        monkeypatch.setattr(b, "get", real_get)
        rec = a.get("/op/1")
        assert (rec.version, rec.value["seg"]) == (1, "s2")
        assert a.scan("by-seg") == [(("s2", 0), "/op/1")]
        with pytest.raises(NotificationMissed, match="another writer"):
            b.put("/op/2", {"kind": "a", "seg": "s1", "n": 0})
    finally:
        b.close(drop=False)
        a.close()


def test_concurrent_cas_writers_one_wins_and_the_index_agrees(zk_server):
    """Racing CAS increments from threads, each on its own session: every
    successful write is one multi, so the index holds exactly the last value."""
    root = ZooKeeperMetadataStore(zk_server.hosts)
    root.add_index(BY_SEG)
    root.put("/op/c", {"kind": "w", "seg": "s1", "n": 0})
    wins, losses = [], []

    def worker():
        raw = KazooClient(hosts=zk_server.hosts)
        raw.start(timeout=5)
        try:
            for _ in range(5):
                data, stat = raw.get(f"{root.root}/data/op/c")
                value, _ = decode_record(data)
                new = {**value, "n": (value["n"] + 1) % 4}
                tx = raw.transaction()
                tx.set_data(f"{root.root}/data/op/c", encode_record(new, None), version=stat.version)
                results = tx.commit()
                (losses if isinstance(results[0], Exception) else wins).append(stat.version)
        finally:
            raw.stop()
            raw.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(wins) + len(losses) == 15 and len(set(wins)) == len(wins)  # one winner per version
    try:
        rec = root.get("/op/c")
        assert rec.version == len(wins)
    finally:
        root.close()


@STYLES
def test_the_feed_waits_for_zookeepers_own_notification(zk_server, watches):
    store = ZooKeeperMetadataStore(zk_server.hosts, watches=watches)
    seen = []
    store.listen(lambda ev: seen.append((ev.kind, ev.path, ev.version, ev.zxid)))
    try:
        store.put("/h/1", {"s": "OPEN"})
        store.put("/h/1", {"s": "COMMITTED"})
        store.delete("/h/1")
        with raw_client(zk_server.hosts) as raw:
            raw.create(f"{store.root}/data/h/2", b"")
            _, stat = raw.get(f"{store.root}/data/h/2")
    finally:
        store.close()
    assert [s[:3] for s in seen] == [("put", "/h/1", 0), ("put", "/h/1", 1), ("delete", "/h/1", None)]
    zxids = [s[3] for s in seen]
    # ZooKeeper's own transaction ids, each before the next write's
    assert zxids == sorted(zxids) and len(set(zxids)) == 3 and zxids[-1] < stat.czxid


def test_one_shot_watches_miss_a_change_before_reregistration(zk_server):
    """ZooKeeper's standard watch fires once: a change that lands before the
    client re-registers is never notified. This is the behaviour the
    `zk-oneshot` spec flag would model."""
    fired = threading.Event()
    events = []
    with raw_client(zk_server.hosts) as c:
        c.ensure_path("/oneshot-demo")
        c.create("/oneshot-demo/h", b"0")

        def watcher(ev):
            events.append(ev.type)
            fired.set()

        c.get("/oneshot-demo/h", watch=watcher)
        c.set("/oneshot-demo/h", b"1")
        assert fired.wait(5)
        c.set("/oneshot-demo/h", b"2")  # between the event and the re-registration
        c.sync("/oneshot-demo/h")
        data, _ = c.get("/oneshot-demo/h", watch=watcher)  # re-register: reads 2, never told of it
        assert events == ["CHANGED"] and data == b"2"
        fired.clear()
        c.set("/oneshot-demo/h", b"3")
        assert fired.wait(5) and events == ["CHANGED", "CHANGED"]
        c.delete("/oneshot-demo", recursive=True)


def test_an_unknown_watch_style_is_refused_in_one_line():
    with pytest.raises(ValueError, match="unknown ZooKeeper watch style 'recursive'") as info:
        ZooKeeperMetadataStore("127.0.0.1:1", watches="recursive")
    assert "\n" not in str(info.value)


def test_unreachable_server_is_one_clear_error():
    port = free_port()  # nothing listens there
    with pytest.raises(ZooKeeperUnavailable, match=f"127.0.0.1:{port} is not reachable"):
        ZooKeeperMetadataStore(f"127.0.0.1:{port}", timeout=1)


def test_requests_are_bounded_when_the_server_dies(tmp_path):
    from txncheck.reference.zkserver import ZooKeeperServer

    from .helpers import pid_alive

    server = ZooKeeperServer(tmp_path).start()
    store = ZooKeeperMetadataStore(server.hosts, timeout=1)
    try:
        store.put("/a", {"x": 1})
        pid = server.pid
        server.kill()
        assert not pid_alive(pid)
        with pytest.raises(ZooKeeperUnavailable, match="did not answer|lost ZooKeeper"):
            store.put("/a", {"x": 2})
    finally:
        store.close()
        server.close()
