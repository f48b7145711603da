"""legacy_v4 models (their verdicts and counts are the gate's, from each
model's [expect]): each corpus trace found again, state for state; and the stall checked on the state graph:
the states `EndTxnNotStranded` rejects are exactly the ones from which the
end-txn can never complete."""

from __future__ import annotations

import networkx as nx
import pytest
import z3

from txncheck.checker.invariants import check_sanity, compile_predicate
from txncheck.checker.itf import read_trace
from txncheck.spec.api import SpecError
from txncheck.spec.legacy_v4.spec import LegacyV4

from .helpers import MODELS, ROOT
from .helpers import assert_trace_found_again, expected_violations, explore, report_cache

V4 = MODELS / "legacy_v4"
CORPUS = ROOT / "counterexamples" / "legacy_v4"

# stem -> (property, length): the [expect] of every model with a corpus trace
VIOLATIONS = expected_violations(V4, skip=("-liveness", "-pip473-fixed"))


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return report_cache(tmp_path_factory.mktemp("legacy_v4"), V4)


@pytest.mark.parametrize("stem", sorted(VIOLATIONS))
def test_corpus_trace_is_found_again(stem, reports):
    trace = read_trace(CORPUS / f"{stem}.itf.json")
    [v] = reports(stem).outcome.violations
    assert_trace_found_again(trace, v, "legacy_v4", VIOLATIONS[stem][1])


def test_stall_trace_reads_like_the_background_section():
    trace = read_trace(CORPUS / "sealed-stall.itf.json")
    assert [s["action"] for s in trace.steps] == ["init", "Publish", "EndTxn", "Split"]
    last = trace.states[-1]
    assert last["status"]["t1"] == "COMMITTING" and last["segState"]["s1"] == "SEALED"


def test_timeout_race_trace_shows_time_out_after_committing():
    trace = read_trace(CORPUS / "timeout-race.itf.json")
    statuses = [s["status"]["t1"] for s in trace.states]
    assert "COMMITTING" in statuses and statuses[-1] == "TIME_OUT"
    assert statuses.index("COMMITTING") < statuses.index("TIME_OUT")
    assert "t1@s1" in trace.states[-1]["delivered"]


def test_timeout_race_writes_both_markers():
    trace = read_trace(CORPUS / "timeout-race-markers.itf.json")
    assert trace.states[-1]["ledger"]["s1"] == ("D:t1", "C:t1", "A:t1")


def test_retry_strict_trace_tells_a_committed_txn_it_failed():
    trace = read_trace(CORPUS / "retry-strict.itf.json")
    actions = [s["action"] for s in trace.steps]
    assert actions.index("TcRestart") < actions.index("ClientRetryEndTxn")
    last = trace.states[-1]
    assert (last["clientResult"]["t1"], last["outcome"]["t1"]) == ("failed", "COMMITTED")


def test_retry_current_fails_only_after_the_txn_finished():
    """Current Pulsar re-drives a retry while COMMITTING; the wrong answer
    comes from a retry after COMMITTED (InvalidTxnStatus), which a stock
    client makes after its operation timeout (known upstream: apache/pulsar#19747)."""
    trace = read_trace(CORPUS / "retry-current.itf.json")
    assert trace.meta["variant"] == "current"
    actions = [s["action"] for s in trace.steps]
    assert actions.index("ClientOpTimeout") < actions.index("EndTxnComplete") < actions.index("ClientRetryEndTxn")
    last = trace.states[-1]
    assert (last["clientResult"]["t1"], last["outcome"]["t1"]) == ("failed", "COMMITTED")


def _current(variant="current", **bounds):
    spec = LegacyV4(variant, txns=1, segments=2, splits=0, **bounds)
    return spec, explore(spec, props={})


def test_current_never_writes_time_out_and_still_aborts_on_timeout():
    """endTransactionForTimeout: OPEN -> ABORTING; Pulsar never writes TIME_OUT."""
    spec, out = _current(timeout=True, restarts=1)
    states = out.exploration.states
    assert not any("TIME_OUT" in s.status for s in states)
    timed_out = [s for s in states if s.timer == ("done",) and s.asked == ("",) and s.outcome == ("ABORTED",)]
    assert timed_out  # the tracker alone aborted t1
    assert "AbortTimedOut" not in out.coverage


def test_current_retry_timer_keeps_the_client_waiting():
    """Since apache/pulsar#13828 a retryable fan-out error arms the TC's retry
    timer with the client's request still held: the client is never answered
    with the error, no marker is written until the timer fires, and the
    request is answered when the end completes."""
    spec, out = _current()
    g = out.exploration
    later = [(s, t) for s in g.states for a, t in spec.next(s) if a[0] == "EndTxnRetryLater"]
    assert later and all(t.live == s.live == (True,) and t.result == s.result and t.redrive == {0} for s, t in later)
    assert not any(s.result == ("error",) for s in g.states)
    armed = [s for s in g.states if s.redrive]
    assert armed and all({a[0] for a, _ in spec.next(s)} & {"EndTxnOnPartition", "EndTxnComplete"} == set()
                         for s in armed)
    assert any(s.redrive and s.live == (True,) for s in armed)  # the client still waits on an armed timer
    # firing the timer returns to the state before it was armed: re-driving changes nothing else
    assert out.coverage["RetryTimerFires"]["generated"] > 0 == out.coverage["RetryTimerFires"]["distinct"]


def test_retry_reply_answered_the_client_with_the_error():
    """Before apache/pulsar#13828 the same attempt answered the client at once
    with the error (neither success nor failure), then re-drove the end."""
    spec, out = _current("retry-reply")
    later = [t for s in out.exploration.states for a, t in spec.next(s) if a[0] == "EndTxnRetryLater"]
    assert later and all(t.result == ("error",) and not t.live[0] and t.redrive == {0} for t in later)
    assert any(s.result == ("error",) and s.outcome == ("COMMITTED",) for s in out.exploration.states)


@pytest.mark.parametrize("variant,verdict,length", [("current", "ok", None), ("retry-reply", "violation", 8),
                                                     ("pip-254", "ok", None)])
def test_without_the_op_timeout_only_the_pre_13828_coordinator_misleads(variant, verdict, length):
    """The difference #13828 makes: with no client operation timeout the
    current coordinator never tells a committed txn's client it failed; the
    coordinator before it does, through its retryable-error reply (8 states,
    models/legacy_v4/retry-reply.toml)."""
    spec = LegacyV4(variant, txns=1, segments=2, splits=0, restarts=1, op_timeout=False)
    out = explore(spec, props={"CommitReplyTruthful": spec.invariants["CommitReplyTruthful"]})
    assert out.verdict == verdict and [v.length for v in out.violations] == ([length] if length else [])
    assert "ClientOpTimeout" not in out.coverage


def test_current_op_timeout_is_neither_success_nor_failure():
    spec, out = _current()
    timed = [s for s in out.exploration.states if s.result == ("timeout",)]
    assert timed and all(not s.live[0] for s in timed)
    check = compile_predicate(spec.schema, spec.invariants["CommitReplyTruthful"])
    assert all(check(spec.observe(s)) for s in timed)


def test_current_re_drives_a_retry_while_committing():
    from txncheck.spec.legacy_v4.spec import COMMITTING, LegacyV4

    for variant, result in (("current", ""), ("retry-strict", "failed")):
        spec = LegacyV4(variant, txns=1, segments=1, splits=0, restarts=1)
        s = next(iter(spec.init_states()))
        s = s._replace(status=(COMMITTING,), parts=(frozenset({0}),), asked=("commit",))
        retried = spec._tc_end(s, 0, "commit")
        assert retried.result == (result,) and retried.live == (variant == "current",)


def test_stranded_states_are_exactly_those_that_can_never_complete():
    """Safety view vs. graph: from a state EndTxnNotStranded rejects, no path
    reaches EndCompleted_t1; from every other end-requested state one does."""
    spec = LegacyV4("default", txns=1, segments=2, splits=1)
    out = explore(spec, props={})
    ex = out.exploration
    g, fps = ex.graph(), ex.fingerprints()
    done = compile_predicate(spec.schema, spec.predicates["EndCompleted_t1"])
    requested = compile_predicate(spec.schema, spec.predicates["EndRequested_t1"])
    stranded = compile_predicate(spec.schema, z3.Not(spec.invariants["EndTxnNotStranded"]))
    obs = [spec.observe(s) for s in ex.states]
    can = set()
    for i, o in enumerate(obs):
        if done(o):
            can.add(fps[i])
            can |= nx.ancestors(g, fps[i])
    never = {i for i, o in enumerate(obs) if requested(o) and fps[i] not in can}
    assert never == {i for i, o in enumerate(obs) if stranded(o)}
    assert len(never) == 250
    # and the sealed participant's marker write is really attempted and rejected
    assert out.coverage["MarkerRejected"]["generated"] > 0
    assert out.coverage["MarkerRejected"]["distinct"] == 0


def test_subscription_side_completes_on_a_sealed_segment():
    """END_TXN_ON_SUBSCRIPTION goes to the pending-ack topic, which a split
    does not seal: a txn that only acked (no partition) always completes,
    even when the acked segment is sealed."""
    spec = LegacyV4("default", txns=1, segments=1, splits=1, acks=True)
    ex = explore(spec, props={}).exploration
    g, fps = ex.graph(), ex.fingerprints()
    done = compile_predicate(spec.schema, spec.predicates["EndCompleted_t1"])
    can = set()
    for i, s in enumerate(ex.states):
        if done(spec.observe(s)):
            can.add(fps[i])
            can |= nx.ancestors(g, fps[i])
    acks_only = [i for i, s in enumerate(ex.states)
                 if s.status[0] == "COMMITTING" and s.subs[0] and not s.parts[0] and s.seg[0] == "SEALED"]
    assert acks_only and all(fps[i] in can for i in acks_only)
    with_partition = [i for i, s in enumerate(ex.states)
                      if s.status[0] == "COMMITTING" and 0 in s.parts[0] and s.seg[0] == "SEALED"
                      and ("p", 0) not in s.acked[0]]
    assert with_partition and not any(fps[i] in can for i in with_partition)


def test_every_property_passes_the_load_time_sanity_check():
    spec = LegacyV4("default", txns=2, segments=2, splits=1, merges=1)
    check_sanity(spec.schema, {**spec.invariants, **spec.witnesses, **spec.predicates})


def test_bad_bounds_are_one_line_errors():
    with pytest.raises(SpecError, match="bound txns = 0 is out of range"):
        LegacyV4("default", txns=0)
    with pytest.raises(SpecError, match="unknown variant"):
        LegacyV4("fixed")


def test_pip_254_keeps_the_shipped_timers_and_answers_a_late_retry_with_success():
    """The fix model changes only the coordinator's answer: the same retry after
    COMMITTED that current answers with InvalidTxnStatus gets success."""
    from txncheck.spec.legacy_v4.spec import COMMITTED

    for variant, result in (("current", "failed"), ("pip-254", "ok")):
        spec = LegacyV4(variant, txns=1, segments=1, splits=0, restarts=1)
        s = next(iter(spec.init_states()))
        s = s._replace(status=(COMMITTED,), outcome=(COMMITTED,), parts=(frozenset({0}),), asked=("commit",))
        assert spec._tc_end(s, 0, "commit").result == (result,)
    spec, out = _current("pip-254", restarts=1)
    assert "RemoveFinishedTxn" not in out.coverage and out.coverage["ClientOpTimeout"]["distinct"] > 0
