"""The fingerprint search (checker/engines/parallel/: `--fingerprints`, and
`--workers N`): its visited set in a numpy table, its states as rows of
field numbers, its levels spilled to disk, its parent pointers on disk; and
that it explores what the exact bfs explores, with the same counterexamples."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.encoding import field_fingerprint as fingerprint
from txncheck.checker.engines.parallel import records, worker
from txncheck.checker.engines.parallel.records import Fields, Level, rows_of
from txncheck.checker.engines.parallel.table import ZERO, FingerprintTable, contains_in, open_shared
from txncheck.spec.classic.twophase import TwoPhase
from txncheck.spec.pip473.spec import Pip473

from .helpers import MODELS
from .helpers import explore

fps64 = st.integers(min_value=0, max_value=2**64 - 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(fps64, max_size=300), max_size=12))
def test_the_table_agrees_with_a_set(batches):
    table, ref = FingerprintTable(log2=12), set()
    for batch in batches:
        batch = list(dict.fromkeys(batch))  # add() takes distinct fingerprints
        if 0 in batch and int(ZERO) in batch:  # 0 is stored as ZERO: the two collide (table.py)
            batch.remove(int(ZERO))
        new = table.add(np.array(batch, dtype=np.uint64))
        keyed = [x or int(ZERO) for x in batch]
        assert new.tolist() == [x not in ref for x in keyed]
        ref.update(keyed)
        assert len(table) == len(ref)
    probe = list(ref)[:50] + [1, 2, 3]
    assert table.contains(np.array(probe, dtype=np.uint64)).tolist() == [x in ref for x in probe]


def test_the_table_grows_and_keeps_what_it_holds():
    table = FingerprintTable()
    rng = np.random.default_rng(7)
    held = rng.integers(1, 2**63, 50_000, dtype=np.uint64)
    for part in np.array_split(held, 7):
        table.add(part)
    assert len(table) == 50_000 and table.capacity >= 50_000 / 0.7
    assert table.contains(held).all()
    assert not table.contains(held + np.uint64(1)).any()


def test_a_shared_table_is_read_by_a_forked_process():
    table = FingerprintTable(shared=True)
    held = np.arange(1, 5000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C1)
    table.add(held)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reads the slots through /proc, as a worker does
        view = open_shared(table.path, table.log2)
        ok = contains_in(view, held).all() and not contains_in(view, held + np.uint64(1)).any()
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 1) == b"1"
    table.close()


def _states(spec, n):
    seen = list(dict.fromkeys(spec.init_states()))
    i = 0
    while i < len(seen) and len(seen) < n:
        seen.extend(t for _, t in spec.next(seen[i]) if t not in seen)
        i += 1
    return seen


@pytest.mark.parametrize("spec", [TwoPhase(rm=3), Pip473("fixed", txns=1, writes="t1:0", acks="t1:s1:1:ind")],
                         ids=["twophase", "pip473"])
def test_a_row_gives_back_its_state_and_its_fingerprint(spec):
    fields = Fields()
    for s in _states(spec, 400):
        row = fields.row(s)
        back = fields.state(row)
        assert back == s and type(back) is type(s)
        assert fields.fingerprint(row) == fingerprint(s)
        for _, t in spec.next(s):  # a successor numbered from its parent's row, as the search does
            assert fields.row(t, s, row) == fields.row(t)


def test_a_state_that_is_not_a_tuple_is_a_row_of_one_field():
    fields = Fields()
    for s in (7, frozenset({1, 2}), "x"):
        row = fields.row(s)
        assert len(row) == 2 and fields.state(row) == s and fields.fingerprint(row) == fingerprint(s)


def test_a_level_spills_to_disk_and_reads_back_what_it_held(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "CHUNK", 8)
    fields = Fields()
    states = _states(TwoPhase(rm=3), 100)
    level = Level(str(tmp_path), "t", keep=16, trail=True)
    for k, s in enumerate(states):
        level.append(fields.row(s), fingerprint(s), k, k % 5)
    level.close()
    assert level.files > 0 and any(p.suffix == ".rows" for p in tmp_path.iterdir())
    back, pf, aids = [], [], []
    for chunk in level:
        back += [fields.state(r) for r in rows_of(chunk, fields.widths)]
        pf += list(chunk.pfps)
        aids += list(chunk.aids)
    assert back == states and pf == list(range(len(states))) and aids == [k % 5 for k in range(len(states))]
    assert not any(tmp_path.iterdir()), "a level's files are removed once read"


def test_a_damaged_spill_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "CHUNK", 8)
    fields = Fields()
    level = Level(str(tmp_path), "t", keep=0)
    for s in _states(TwoPhase(rm=3), 20):
        level.append(fields.row(s), fingerprint(s))
    level.close()
    path = next(tmp_path.iterdir())
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(OSError, match="damaged"):
        list(level)


@pytest.fixture
def spill_everything(monkeypatch):
    """Chunks of 16 states, every chunk to disk, a level joins the visited
    set 5 fingerprints at a time (workers), a growing table moves 64 slots
    at a time: the search's paths for large levels run on small models."""
    from txncheck.checker.engines.parallel import coordinator, table

    monkeypatch.setattr(records, "CHUNK", 16)
    monkeypatch.setattr(worker, "KEEP", 0)
    monkeypatch.setattr(coordinator, "JOIN", 5)
    monkeypatch.setattr(table, "GROW", 64)


@pytest.mark.parametrize("spec", [
    TwoPhase(rm=3), Pip473("fixed", txns=1, writes="t1:0", acks="t1:s1:1:ind", reshape="none", crashes=1),
    Pip473("merged", txns=2, writes="t1:0", acks="", reshape="none", crashes=0, failovers=1, decisions="both")],
    ids=["twophase", "pip473-fixed", "pip473-merged"])
def test_the_fingerprint_search_counts_as_bfs(spec, spill_everything):
    props = {} if spec.variant == "merged" else None  # merged violates some: count the whole space
    exact = explore(spec, props=props, keep_graph=False)
    fp = explore(spec, props=props, keep_graph=False, options={"fingerprints": True})
    assert (fp.verdict, fp.distinct_states, fp.states_generated, fp.depth) == (
        exact.verdict, exact.distinct_states, exact.states_generated, exact.depth)
    assert fp.coverage == exact.coverage
    assert fp.extra["search"]["level_disk_bytes"] > 0  # the levels went to disk and came back


@pytest.mark.parametrize("model", ["classic/diehard.toml", "pip473/orphan-op.toml", "pip473/late-write-merged.toml"])
def test_the_fingerprint_search_finds_bfs_counterexample(model, spill_everything):
    """In one process it reports the counterexample bfs reports: the same
    states and actions, rebuilt from the parent pointers on disk."""
    from txncheck.checker.api import check_model

    exact = check_model(MODELS / model, keep_graph=False).outcome
    fp = check_model(MODELS / model, keep_graph=False, options={"fingerprints": True}).outcome
    assert [v.property for v in fp.violations] == [v.property for v in exact.violations]
    assert fp.violations[0].path == exact.violations[0].path
    # and counts what bfs has counted when it stops
    assert (fp.distinct_states, fp.states_generated, fp.depth, fp.coverage, fp.witnesses_found) == (
        exact.distinct_states, exact.states_generated, exact.depth, exact.coverage, exact.witnesses_found)


def test_a_deadlock_is_the_state_of_its_level(spill_everything):
    from txncheck.spec.classic.diehard import DieHard

    o = explore(DieHard(), props={}, deadlock=True, keep_graph=False, options={"fingerprints": True})
    e = explore(DieHard(), props={}, deadlock=True, keep_graph=False)
    assert [v.path for v in o.violations] == [v.path for v in e.violations]
    assert (o.distinct_states, o.states_generated, o.coverage) == (e.distinct_states, e.states_generated, e.coverage)


def test_the_workers_share_each_level(monkeypatch):
    """The first split deals the level's rows, not its chunks, and the
    quotas and moves keep both workers' parts of every later level within
    a third of each other."""
    from txncheck.checker.engines import parallel

    monkeypatch.setattr(parallel.coordinator, "SPLIT_AT", 50)
    o = explore(TwoPhase(rm=5), keep_graph=False, options={"workers": 2})
    assert (o.distinct_states, o.states_generated, o.depth) == (8832, 58146, 17)
    levels = [lv["states"] for lv in o.extra["workers"]["levels"] if sum(lv["states"]) >= 200]
    assert levels and all(min(s) >= 0.33 * max(s) for s in levels), levels
