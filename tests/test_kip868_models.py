"""KIP-868 models (their verdicts and counts are the gate's, from each
model's [expect]): each counterexample in the corpus found again and replayed
step by step."""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.encoding import fingerprint
from txncheck.checker.invariants import compile_checker, compile_predicate
from txncheck.checker.itf import read_trace
from txncheck.checker.model import load_model
from txncheck.spec.kip868.spec import Kip868

from .helpers import MODELS, ROOT
from .helpers import expected_violations, report_cache

KIP = MODELS / "kip868"
CORPUS = ROOT / "counterexamples" / "kip868"

# stem -> (property, length): the [expect] of every model with a corpus trace
VIOLATIONS = expected_violations(KIP)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return report_cache(tmp_path_factory.mktemp("kip868"), KIP)


@pytest.mark.parametrize("stem", sorted(VIOLATIONS))
def test_corpus_trace_is_found_again(stem, reports):
    committed = read_trace(CORPUS / f"{stem}.itf.json")
    fresh = read_trace(reports(stem).outcome.violations[0].trace_file)
    assert committed.meta["property"] == VIOLATIONS[stem][0]
    assert committed.meta["variant"] == fresh.meta["variant"]
    assert committed.meta["bounds"] == fresh.meta["bounds"]
    assert committed.length == VIOLATIONS[stem][1]
    assert [s["action"] for s in committed.steps] == [s["action"] for s in fresh.steps]
    assert [s["params"] for s in committed.steps] == [s["params"] for s in fresh.steps]
    assert [s["fingerprint"] for s in committed.steps] == [s["fingerprint"] for s in fresh.steps]


def replay(spec, trace):
    """Follow the trace's actions through the spec; return the states reached."""
    [s] = list(spec.init_states())
    states = [s]
    for step in trace.steps[1:]:
        want = (step["action"], tuple(sorted(step["params"].items())))
        succ = [t for (name, params), t in spec.next(s) if (name, tuple(sorted(params))) == want]
        assert succ, f"step {step['index']}: {want} is not enabled"
        s = succ[0]
        states.append(s)
    return states


@pytest.mark.parametrize("stem", sorted(VIOLATIONS))
def test_corpus_trace_replays_in_the_spec(stem):
    trace = read_trace(CORPUS / f"{stem}.itf.json")
    spec = load_model(KIP / f"{stem}.toml").instantiate()
    states = replay(spec, trace)
    assert [f"{fingerprint(s):016x}" for s in states] == [s["fingerprint"] for s in trace.steps]
    bad = compile_predicate(spec.schema, spec.invariants[trace.meta["property"]])
    assert not bad(spec.observe(states[-1]))
    assert all(bad(spec.observe(s)) for s in states[:-1])


@pytest.mark.parametrize("stem", ["kafka-loader", "kafka-loader-record-after-abort"])
def test_clearing_loader_survives_the_kafka_loader_traces(stem):
    """The same steps under the clearing loader: the broker publishes nothing aborted."""
    trace = read_trace(CORPUS / f"{stem}.itf.json")
    m = load_model(KIP / f"{stem}.toml")
    spec = Kip868("clearing-loader", **m.constants)
    states = replay(spec, trace)
    check = compile_checker(spec.schema, spec.invariants)
    assert all(check(spec.observe(s)) is None for s in states)
    last = states[-1]
    assert not any(r[0] == "R" for r in last.loader.image)  # no record of the aborted t1
    assert last.loader.image_offset >= 2                       # and the offset moved past the Abort


def test_z3_evaluation_agrees_on_a_kip868_model():
    path = KIP / "clearing-loader-record-after-abort.toml"
    fast = check_model(path).outcome
    slow = check_model(path, z3_eval=True).outcome
    assert (slow.verdict, slow.distinct_states, slow.states_generated, slow.depth) == \
        (fast.verdict, fast.distinct_states, fast.states_generated, fast.depth)
    v_fast = check_model(KIP / "kafka-loader.toml").outcome.violations[0]
    v_slow = check_model(KIP / "kafka-loader.toml", z3_eval=True).outcome.violations[0]
    assert (v_slow.property, v_slow.length) == (v_fast.property, v_fast.length)


SMALL = sorted(p.stem for p in KIP.glob("*.toml") if load_model(p).expect.get("distinct", 10**9) < 5000)
LARGE = sorted(p.stem for p in KIP.glob("*.toml") if p.stem not in SMALL)


def _verdict_both_ways(stem):
    """The model's verdict and shortest trace with bootstrap_reactivation as
    shipped (off) and on: the [Abort, Begin] batch of a branch Kafka never takes."""
    from .helpers import explore

    m = load_model(KIP / f"{stem}.toml")
    out = []
    for on in (False, True):
        spec = Kip868(m.variant, **{**m.constants, "bootstrap_reactivation": on})
        o = explore(spec, props=m.selected_properties(spec))
        out.append((o.verdict, [(v.property, v.length) for v in o.violations], o))
    return out


@pytest.mark.parametrize("stem", SMALL)
def test_bootstrap_reactivation_changes_no_verdict(stem):
    off, on = _verdict_both_ways(stem)
    assert off[:2] == on[:2]


@pytest.mark.slow
@pytest.mark.parametrize("stem", LARGE)
def test_bootstrap_reactivation_changes_no_verdict_large(stem):
    off, on = _verdict_both_ways(stem)
    assert off[:2] == on[:2]


def test_bootstrap_reactivation_batch_is_reached_only_when_on():
    """The new leader's Abort+Begin batch occurs with the bound on, never off."""
    from .helpers import explore

    def reached(on):
        spec = Kip868("clearing-loader", txns=2, txn_records=1, normals=0, batch_records=2, failovers=1,
                      snapshots=0, bootstrap_reactivation=on)
        states = explore(spec, props={}).exploration.states
        return any(((("A", 1), ("B", 2)) in s.log) for s in states)

    assert reached(True) and not reached(False)


def test_an_unaligned_snapshot_fails_a_property_not_the_checker():
    """KAFKA-17713 removed: with snapshot_alignment off, a snapshot at a
    mid-batch image (published at a Begin that is not first in its batch)
    fails SnapshotBatchAligned; a broker that restarts from such a snapshot
    is a state like any other, not a crash of the checker."""
    from .helpers import explore

    bounds = dict(txns=2, txn_records=1, normals=0, batch_records=2, failovers=1, snapshots=1,
                  bootstrap_reactivation=True, broker_restarts=1)
    aligned = Kip868("clearing-loader", **bounds)
    assert explore(aligned).verdict == "ok"
    spec = Kip868("clearing-loader", snapshot_alignment=False, **bounds)
    out = explore(spec)
    [v] = out.violations
    assert (v.property, v.length) == ("SnapshotBatchAligned", 6) and v.path[-1][0][0] == "TakeSnapshot"
    others = {k: f for k, f in spec.invariants.items() if k != "SnapshotBatchAligned"}
    assert explore(spec, props=others).coverage["BrokerLoadsSnapshot"]["distinct"] > 0


def test_the_former_leader_throws_on_its_own_batch_or_on_the_new_leaders_abort():
    """two-controllers-bootstrap: the trace (the new leader kept the second
    batch) ends with the former leader replaying End with no open
    transaction; the other cut (the second batch lost, the new leader's Abort
    committed) throws on the Abort."""
    trace = read_trace(CORPUS / "two-controllers-bootstrap.itf.json")
    assert [s["action"] for s in trace.steps] == ["init", "AppendTxn", "CommitBatch", "ControllerFailover"]
    spec = load_model(KIP / "two-controllers-bootstrap.toml").instantiate()
    states = replay(spec, trace)
    assert spec.observe(states[-1])["former_leader_fault"] == "End at 3 with no open transaction"
    [cut] = [t for (name, params), t in spec.next(states[2]) if name == "ControllerFailover"
             and dict(params)["kept_uncommitted"] == 0]
    [committed] = [t for (name, _), t in spec.next(cut) if name == "CommitBatch"]
    assert spec.observe(cut)["former_leader_fault"] == ""
    assert spec.observe(committed)["former_leader_fault"] == "Abort at 2 with no open transaction"


def test_the_fix_survives_two_leadership_changes():
    """deactivate() resetting the start offset to the committed log's: no
    replay fault and every property with two failovers (the former leader
    takes over again)."""
    from .helpers import explore

    m = load_model(KIP / "two-controllers-bootstrap-fixed.toml")
    spec = Kip868(m.variant, **{**m.constants, "failovers": 2})
    out = explore(spec, witnesses={"W": spec.witnesses["FormerLeaderReplayedTxn"]})
    assert out.verdict == "ok" and out.witnesses_found == {"W": True}


def test_dropping_loader_keeps_every_safety_property():
    """Completeness is what catches a loader that drops committed records:
    without BrokerPublishesCommitted the dropping loader passes."""
    m = load_model(KIP / "dropping-loader.toml")
    spec = m.instantiate()
    safety = {k: v for k, v in spec.invariants.items() if k != "BrokerPublishesCommitted"}
    from .helpers import explore

    out = explore(spec, props=safety)
    assert out.verdict == "ok" and out.distinct_states > 1000


def test_activation_record_needs_no_lagging_broker():
    """Kafka 3.7-3.9's [Abort, ZkMigrationStateRecord] batch: a broker that
    handles each batch in its own commit callback (no lagging) still
    publishes the aborted records with the Kafka loader, not with the clearing one."""
    from txncheck.spec.kip868 import loader

    trace = read_trace(CORPUS / "kafka-loader-activation-record.itf.json")
    assert trace.states[-1]["log"][-1] == ("Abort(t1)", "n0")
    for clearing, leaks in ((False, True), (True, False)):
        ld, published = loader.INITIAL, []
        for base, batch in ((0, (("B", 1), ("R", 1, 1))), (2, (("A", 1), ("N", 0)))):
            ld = loader.flush(loader.load_batch(ld, batch, base, clearing, published), base + 1, published)
        assert (("R", 1, 1) in ld.image) is leaks and ("N", 0) in ld.image


def test_a_leaked_snapshot_brings_aborted_records_back():
    """A broker that loads a snapshot holding an aborted record exposes it
    again: the snapshot load is checked by BrokerSeesOnlyCommittedTxns."""
    spec = Kip868("clearing-loader", txns=1, txn_records=1, normals=0, batch_records=2, failovers=0,
                  snapshots=1, broker_restarts=1)
    ok = compile_predicate(spec.schema, spec.invariants["BrokerSeesOnlyCommittedTxns"])
    [s] = list(spec.init_states())
    # t1 begun and aborted, the broker past the Abort with a clean image.
    log = ((("B", 1), ("R", 1, 1)), (("A", 1),))
    ld = s.loader._replace(image_offset=2, loaded=2)
    s = s._replace(log=log, hw=2, lso=2, next_txn=2, loader=ld)
    for snapshot, clean in (((2, frozenset()), True), ((2, frozenset({("R", 1, 1)})), False)):
        [loaded] = [t for (name, _), t in spec.next(s._replace(snapshot=snapshot, snapshots=1))
                    if name == "BrokerLoadsSnapshot"]
        assert ok(spec.observe(loaded)) is clean
