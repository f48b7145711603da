"""The reference implementation's metadata store, watch styles, scheduler and ledger."""

from __future__ import annotations

import pytest

from txncheck.reference.ledger import LedgerStorage, ManagedLedger
from txncheck.reference.scheduler import Scheduler
from txncheck.reference.store import (BadVersion, Index, InMemoryMetadataStore, OneShotWatches, PointWatches,
                                      SequenceStreams)
from txncheck.reference.store.api import NEW


def test_versions_and_cas():
    st = InMemoryMetadataStore()
    r0 = st.put("/a", {"x": 1}, expected_version=NEW)
    assert r0.version == 0
    with pytest.raises(BadVersion):
        st.put("/a", {"x": 2}, expected_version=NEW)
    with pytest.raises(BadVersion):
        st.put("/a", {"x": 2}, expected_version=5)
    r1 = st.put("/a", {"x": 2}, expected_version=0)
    assert (r1.version, st.get("/a").value["x"]) == (1, 2)
    with pytest.raises(BadVersion):
        st.delete("/a", expected_version=0)
    assert st.delete("/a", expected_version=1) is True
    assert st.get("/a") is None and st.delete("/a") is False


def test_sequential_keys_and_partitions():
    st = InMemoryMetadataStore()
    paths = [st.create_sequential("/op/t1/", {"n": i}, partition_key="t1").path for i in range(12)]
    st.create_sequential("/op/t2/", {"n": 0}, partition_key="t2")
    assert paths == sorted(paths) and len(set(paths)) == 12
    assert paths[0].endswith("0000000001") and paths[-1].endswith("0000000012")
    assert st.children("/op/t1/") == paths
    assert [r.path for r in st.by_partition("t2")] == ["/op/t2/0000000001"]


def test_secondary_index_follows_the_record():
    st = InMemoryMetadataStore()
    st.add_index(Index("by-seg", "/op/", lambda v: (v["seg"],) if v["kind"] == "w" else None))
    st.put("/op/1", {"kind": "w", "seg": "s2"})
    st.put("/op/2", {"kind": "w", "seg": "s1"})
    st.put("/op/3", {"kind": "a", "seg": "s1"})
    assert st.scan("by-seg") == [(("s1",), "/op/2"), (("s2",), "/op/1")]
    assert st.scan("by-seg", ("s2",), ("s2",)) == [(("s2",), "/op/1")]
    st.put("/op/1", {"kind": "w", "seg": "s0"})  # re-keyed in the same commit
    st.delete("/op/2")
    assert st.scan("by-seg") == [(("s0",), "/op/1")]


def test_point_watches_are_late_and_in_order():
    st, sch = InMemoryMetadataStore(), Scheduler()
    w = PointWatches(st, sch)
    seen = []
    w.watch("b1", "/h", lambda ev: seen.append((ev.kind, ev.value and ev.value["s"])))
    st.put("/h", {"s": "OPEN"})
    st.put("/h", {"s": "COMMITTED"})
    st.delete("/h")
    assert seen == []  # nothing until the scheduler delivers
    assert len(sch.runnable()) == 1  # one queue per watcher: only its head may run
    sch.run_until_idle()
    assert seen == [("put", "OPEN"), ("put", "COMMITTED"), ("delete", None)]


def test_one_shot_watch_misses_a_change_before_reregistration():
    st, sch = InMemoryMetadataStore(), Scheduler()
    w = OneShotWatches(st, sch)
    seen = []
    w.watch("b1", "/h", lambda ev: seen.append(ev.version))
    st.put("/h", {"s": 1})
    st.put("/h", {"s": 2})  # the watch already fired once: this change is not notified
    sch.run_until_idle()
    assert seen == [0]
    w.watch("b1", "/h", lambda ev: seen.append(ev.version))
    st.put("/h", {"s": 3})
    sch.run_until_idle()
    assert seen == [0, 2]


def test_sequence_stream_coalesces_to_the_highest_sequence():
    st, sch = InMemoryMetadataStore(), Scheduler()
    streams = SequenceStreams(st, sch)
    got = []
    streams.subscribe("b1", "/ev/s1/", got.append)
    assert [streams.append("/ev/s1/", {}) for _ in range(3)] == [1, 2, 3]
    assert len(sch.pending("stream")) == 1
    sch.run_until_idle()
    assert got == [3]
    streams.drop_owner("b1")
    streams.append("/ev/s1/", {})
    assert sch.pending("stream") == []


def test_scheduler_timers_queues_and_crash():
    sch = Scheduler()
    order = []
    sch.call_at(30, ("late",), lambda: order.append("late"))
    sch.call_at(10, ("early",), lambda: order.append("early"), owner="b1")
    assert sch.advance_to(20) == 1 and sch.now_ms == 20
    assert [t.label for t in sch.runnable()] == [("timer", "early")]
    sch.submit(("x",), lambda: order.append("x"), owner="b1")
    assert sch.drop_owner("b1") == 2  # the fired timer's task and the other task
    sch.advance(10)
    sch.run_until_idle()
    assert order == ["late"]
    with pytest.raises(ValueError):
        sch.advance_to(5)


def test_ledger_appends_in_order_terminate_and_cursor():
    sch = Scheduler()
    storage = LedgerStorage("s1")
    ml = ManagedLedger(storage, sch, "b1")
    got = []
    for i in range(3):
        ml.async_add_entry(i, lambda pos, err: got.append((pos, err)))
    assert ml.last_confirmed == -1
    sch.run(sch.runnable()[0])
    ml.terminate()
    sch.run_until_idle()
    assert got[0] == (0, None) and all(p is None and err is not None for p, err in got[1:])
    assert ml.last_confirmed == 0
    storage.terminated = False
    for i in range(4):
        ml.add_entry_now(i)
    cur = ml.open_cursor("sub")
    cur.individual_ack(2)
    assert cur.is_acked(2) and not cur.is_acked(1)
    cur.individual_ack(0)
    cur.individual_ack(1)
    assert cur.state.mark_delete == 2 and cur.state.individually_acked == set()
    cur.mark_delete(4)
    assert ml.trim() == 5
