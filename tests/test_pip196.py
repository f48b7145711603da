"""pip196 models (their verdicts and counts are the gate's, from each model's
[expect]): each corpus trace found again, state for state; and the orphaned segment checked on the
state graph: no step but a new aborted txn ever removes or lists it."""

from __future__ import annotations

import networkx as nx
import pytest

from txncheck.checker.invariants import check_sanity
from txncheck.checker.itf import read_trace
from txncheck.spec.api import SpecError
from txncheck.spec.pip196.spec import READY, Pip196

from .helpers import MODELS, ROOT
from .helpers import assert_trace_found_again, expected_violations, explore, report_cache

P196 = MODELS / "pip196"
CORPUS = ROOT / "counterexamples" / "pip196"

# stem -> (property, length): the [expect] of every model with a corpus trace
VIOLATIONS = expected_violations(P196)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return report_cache(tmp_path_factory.mktemp("pip196"), P196)


@pytest.mark.parametrize("stem", sorted(VIOLATIONS))
def test_corpus_trace_is_found_again(stem, reports):
    trace = read_trace(CORPUS / f"{stem}.itf.json")
    [v] = reports(stem).outcome.violations
    assert_trace_found_again(trace, v, "pip196", VIOLATIONS[stem][1])


def test_index_race_trace_loses_the_queued_segment():
    """pip-text: the index update runs with t1 sealed but its segment still
    queued; after the crash, t1 (marker in a live ledger) is forgotten."""
    trace = read_trace(CORPUS / "index-race-pip-text.itf.json")
    actions = [s["action"] for s in trace.steps]
    assert actions.index("TakeSnapshot") < actions.index("IndexWritten") < actions.index("Crash")
    assert "SegmentWritten" not in actions
    last = trace.states[-1]
    assert last["phase"] == "ready" and "t1" not in last["aborts"]
    assert last["topic"][1] == "A:t1@L0" and last["deletedLedgersBelow"] == 0


def test_early_publish_trace_moves_max_read_past_an_open_txn():
    trace = read_trace(CORPUS / "early-publish.itf.json")
    assert [s["action"] for s in trace.steps] == [
        "init", "TxnWrite", "Crash", "RecoverReadIndex", "Publish"]
    last = trace.states[-1]
    assert last["phase"] == "index-read" and last["topic"] == ("D:t1@L0", "N:-@L0")
    assert last["maxReadPosition"] == 2


def test_merged_guards_the_index_update_with_the_queue():
    """The same bounds under merged: the periodic index update never runs
    while a segment write is queued, so no abort is lost (exhaustive)."""
    spec = Pip196("merged", txns=2, capacity=1, ledgers=2, crashes=1)
    out = explore(spec, props={"RecoveredAbortsExact": spec.invariants["RecoveredAbortsExact"]})
    assert out.verdict == "ok"
    ex = out.exploration
    taken = [ex.states[i] for i, a in zip(ex.src, ex.act) if ex.actions[a][0] == "TakeSnapshot"]
    assert taken and not any(s.queue for s in taken)
    # while pip-text takes it with a segment write queued
    text = explore(Pip196("pip-text", txns=2, capacity=1, ledgers=2, crashes=0), props={}).exploration
    assert any(text.states[i].queue for i, a in zip(text.src, text.act) if text.actions[a][0] == "TakeSnapshot")


def _orphans(s):
    listed = {k for k, _ in s.index[0]} if s.index else set()
    return {k for k, _, _ in s.store} - listed


def test_an_unlisted_segment_is_replaced_by_a_later_seal_or_never():
    """Quiescent states with a stored segment no index lists. One whose key is
    at or above the worker's next sequence id (a crash between the segment
    write and the index update) is replaced or listed only through a later
    TxnEnd, and on some path it is. One below it (a recovery sealed an abort
    again under a new key: resealed-segment.toml) is never removed or listed."""
    spec = Pip196("merged", txns=2, capacity=1, ledgers=2, crashes=1)
    ex = explore(spec, props={}).exploration
    g, fps = ex.graph(), ex.fingerprints()
    idx = {fp: i for i, fp in enumerate(fps)}
    quiet = g.edge_subgraph([(u, v) for u, v, d in g.edges(data=True)
                             if any(not a.startswith("TxnEnd") for a in d["actions"])])
    orphaned = [i for i, s in enumerate(ex.states) if s.phase == READY and s.busy == "" and not s.queue
                and _orphans(s)]

    def cleaned(i, keys):
        t = ex.states[i]
        listed = {k for k, _ in t.index[0]} if t.index else set()
        stored = {k: txns for k, txns, _ in t.store}
        return any(k not in stored or k in listed for k in keys)

    ahead = [i for i in orphaned if min(_orphans(ex.states[i])) >= ex.states[i].seq]
    behind = [i for i in orphaned if max(_orphans(ex.states[i])) < ex.states[i].seq]
    assert sorted(ahead + behind) == orphaned and ahead and behind
    assert any(ex.states[i].trimmed == 0 for i in behind)  # a reseal alone, no trimming, orphans the older key
    reused = 0
    for i in ahead:
        keys = _orphans(ex.states[i])
        later = nx.descendants(quiet, fps[i]) if fps[i] in quiet else set()
        assert not any(cleaned(idx[x], keys) for x in later)
        reused += any(cleaned(idx[x], keys) for x in nx.descendants(g, fps[i]))
    assert reused > 0
    for i in behind:
        keys = _orphans(ex.states[i])
        assert not any(cleaned(idx[x], keys) for x in nx.descendants(g, fps[i]))


def test_the_orphan_segment_trace_ends_with_a_key_the_worker_writes_next():
    """The crash orphan of orphan-segment.toml: its key is the worker's next
    sequence id (recovery restarts it at the last indexed + 1), so the
    documented overwrite applies; the resealed segment's key is below it."""
    from txncheck.checker.invariants import compile_predicate
    from txncheck.checker.model import load_model

    for stem, reused in (("orphan-segment", True), ("resealed-segment", False)):
        spec = load_model(P196 / f"{stem}.toml").instantiate()
        ok = compile_predicate(spec.schema, spec.invariants["UnlistedKeyReused"])
        trace = read_trace(CORPUS / f"{stem}.itf.json")
        last = trace.states[-1]
        listed = {k for k, _ in last["indexRecord"][0]}
        orphans = {k for k, _, _ in last["segmentTopic"]} - listed
        assert orphans and all((int(k[1:]) >= last["sequenceId"]) is reused for k in orphans)


def test_every_property_passes_the_load_time_sanity_check():
    spec = Pip196("merged", txns=3, crashes=2, upgrade=True, publishes=1)
    check_sanity(spec.schema, {**spec.invariants, **spec.witnesses, **spec.predicates})


def test_bad_bounds_are_one_line_errors():
    with pytest.raises(SpecError, match="bound capacity = 0 is out of range"):
        Pip196("merged", capacity=0)
    with pytest.raises(SpecError, match="unknown variant"):
        Pip196("fixed")
