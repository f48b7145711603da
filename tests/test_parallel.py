"""`bfs --workers N` (checker/engines/parallel/) explores exactly what the
in-process bfs explores: TLC's counts, shortest counterexamples that replay,
deterministic runs, and one-line errors."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.engines import EngineError
from txncheck.checker.engines import parallel
from txncheck.checker.model import load_model
from txncheck.spec.classic.diehard import DieHard
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TwoPhase

from .helpers import explore
from .conftest import MODELS


@pytest.fixture
def fork_early(monkeypatch):
    """Fork the workers after the first level that holds 2 states per
    worker, so small models run in the worker processes too."""
    monkeypatch.setattr(parallel.coordinator, "SPLIT_AT", 2)


def _replays(spec, path) -> bool:
    """Every step of `path` is a step of `spec` from an initial state."""
    if path[0][1] not in set(spec.init_states()):
        return False
    return all((a, t) in set(spec.next(s)) for (_, s), (a, t) in zip(path, path[1:]))


@pytest.mark.parametrize("workers", [2, 3])
def test_twophase_six_rms_has_tlc_counts_in_workers(fork_early, workers):
    o = explore(TwoPhase(rm=6), deadlock=True, keep_graph=False, options={"workers": workers})
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 50816, 402306, 20)
    assert o.extra["workers"]["processes"] == workers and o.extra["workers"]["forked"] == workers
    assert o.extra["visited_set"] == "fingerprints"
    assert o.extra["collision_probability"] == pytest.approx(50816 * (402306 - 50816) / 2**64)
    # generated per action as the in-process run counts it; which action found
    # a state first depends on the order of exploration
    seq = explore(TwoPhase(rm=6), deadlock=True, keep_graph=False).coverage
    assert {a: c["generated"] for a, c in o.coverage.items()} == {a: c["generated"] for a, c in seq.items()}
    assert sum(c["distinct"] for c in o.coverage.values()) == 50816 - 1


def test_small_models_never_fork():
    o = explore(TCommit(rm=3), options={"workers": 2})
    assert (o.distinct_states, o.states_generated, o.depth) == (34, 94, 7)
    assert o.extra["workers"]["forked"] == 0


def test_shortest_counterexample_replays_and_is_deterministic(fork_early):
    model = MODELS / "pip473" / "late-write.toml"
    spec = load_model(model).instantiate()
    (want,) = check_model(model).outcome.violations
    runs = [check_model(model, options={"workers": 2}).outcome for _ in range(2)]
    for o in runs:
        assert o.verdict == "violation" and o.extra["workers"]["forked"] == 2
        (v,) = o.violations
        assert (v.kind, v.property, len(v.path)) == ("invariant", want.property, len(want.path))
        assert _replays(spec, v.path)
    assert runs[0].violations[0].path == runs[1].violations[0].path


def test_in_process_counterexample_when_levels_stay_small(fork_early):
    o = explore(DieHard(goal=4), options={"workers": 2})  # at most 3 states per level: never forks
    assert o.verdict == "violation" and o.extra["workers"]["forked"] == 0
    (v,) = o.violations
    assert (v.property, len(v.path)) == ("NotSolved", 7) and v.path[-1][1].big == 4
    assert _replays(DieHard(goal=4), v.path)


def test_deadlock_is_found_at_its_depth(fork_early):
    o = explore(TCommit(rm=3), deadlock=True, options={"workers": 2})
    seq = explore(TCommit(rm=3), deadlock=True)
    (v,) = o.violations
    assert o.extra["workers"]["forked"] == 2
    assert v.kind == "deadlock" and len(v.path) == len(seq.violations[0].path)
    assert _replays(TCommit(rm=3), v.path)
    final = v.path[-1][1]
    assert not list(TCommit(rm=3).next(final)) and set(final.rmState) <= {"committed", "aborted"}


def test_symmetry_and_witnesses_in_workers(fork_early):
    """twin-clients-fixed under --symmetry: the orbit count of every
    in-process visited-set mode (test_pip473_symmetry), and every witness."""
    r = check_model(MODELS / "pip473" / "twin-clients-fixed.toml", keep_graph=False,
                    options={"symmetry": True, "workers": 2})
    o = r.outcome
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 116275, 487375, 28)
    assert all(o.witnesses_found.values()) and o.extra["workers"]["forked"] == 2


def _sorted(keep):
    return [sorted(k) for k in keep]


# `parallel.assign` takes each new fingerprint's first proposal, and every
# proposal of a shared one, encoded as worker + workers * index.

def test_a_shared_state_goes_to_the_worker_with_most_steps_into_it():
    proposals = {10: 0, 11: 1, 12: 3, 20: 2, 21: 4}
    shared = {20: [2, 5], 21: [4, 7]}  # 20: 1 step from worker 0, 3 from worker 1; 21: 2 and 2
    mults = [[1, 1, 2], [1, 1, 3, 2]]
    assert _sorted(parallel.assign(proposals, shared, mults, 2)) == [[0, 2], [0, 1, 2]]
    # the old rule, the worker holding fewest, gave 20 to worker 0
    assert _sorted(parallel.assign(proposals, shared, [None, None], 2)) == [[0, 1, 2], [0, 1]]


def test_no_worker_gets_more_than_an_even_share():
    # eight states, each generated by both workers, worker 0 with more steps into each
    proposals = {f: 2 * f for f in range(8)}
    shared = {f: [2 * f, 2 * f + 1] for f in range(8)}
    mults = [[2 + f for f in range(8)], [1] * 8]
    keep = _sorted(parallel.assign(proposals, shared, mults, 2))
    assert keep == [[4, 5, 6, 7], [0, 1, 2, 3]]  # the strongest preferences first


def test_without_counts_shared_states_go_to_the_worker_with_most_room():
    proposals = {1: 0, 2: 2, 4: 1, 3: 4}
    shared = {3: [4, 3]}
    assert _sorted(parallel.assign(proposals, shared, [None, None], 2)) == [[0, 1], [0, 1]]


def test_a_costlier_worker_gets_a_smaller_share():
    # the same eight states, but worker 0's states cost three times worker 1's
    proposals = {f: 2 * f for f in range(8)}
    shared = {f: [2 * f, 2 * f + 1] for f in range(8)}
    mults = [[2 + f for f in range(8)], [1] * 8]
    caps = parallel.shares(8, [3.0, 1.0])
    assert caps == [2, 6]
    assert _sorted(parallel.assign(proposals, shared, mults, 2, caps)) == [[6, 7], [0, 1, 2, 3, 4, 5]]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10 ** 7), st.lists(st.floats(0.5, 50), min_size=1, max_size=4))
def test_shares_cover_the_level_in_inverse_proportion_to_cost(total, costs):
    caps = parallel.shares(total, costs)
    assert total <= sum(caps) <= total + len(costs)
    for c, cap in zip(costs, caps):  # cap * cost is the same for every worker, within rounding
        assert abs(cap * c - caps[0] * costs[0]) <= max(costs) + 1e-6 * total * max(costs)
    assert parallel.shares(total, [0] + costs) == [-(-total // (len(costs) + 1))] * (len(costs) + 1)


def _assign_slowly(proposals, shared, mults, n, caps=None):
    """assign's rule, written plainly: shared states in order of (second most
    steps - most steps, fingerprint), each to the worker with most steps into
    it, then with most room, among those under their share."""
    keep = [[c // n for f, c in proposals.items() if f not in shared and c % n == w] for w in range(n)]
    caps = caps or [-(-len(proposals) // n)] * n

    def steps(x):
        return mults[x % n][x // n]

    def strength(f):
        top = sorted((steps(x) for x in shared[f]), reverse=True)
        return (top[1] - top[0], f)

    def used(x):
        return len(keep[x % n]) - caps[x % n]

    for f in sorted(shared, key=strength):
        room = [x for x in shared[f] if used(x) < 0] or shared[f]
        c = min(room, key=lambda x: (-steps(x), used(x), x % n) if used(x) < 0 else (used(x), x % n))
        keep[c % n].append(c // n)
    return keep


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 4), st.data())
def test_assign_follows_its_rule(n, data):
    counts = data.draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    mults = [data.draw(st.lists(st.integers(1, 4), min_size=c, max_size=c)) for c in counts]
    fps = data.draw(st.lists(st.integers(0, 15), min_size=sum(counts), max_size=sum(counts)))
    caps = data.draw(st.none() | st.lists(st.integers(0, 16), min_size=n, max_size=n))
    proposals, shared, it = {}, {}, iter(fps)
    for w in range(n):  # as the coordinator builds them, in arrival order
        for i in range(counts[w]):
            f, code = next(it), w + n * i
            c = proposals.setdefault(f, code)
            if c != code and c % n != w:
                others = shared.setdefault(f, [c])
                if all(x % n != w for x in others):
                    others.append(code)
    assert parallel.assign(proposals, shared, mults, n, caps) == _assign_slowly(proposals, shared, mults, n, caps)


def test_pip473_violation_trace_is_written_and_shortest(fork_early, tmp_path, capsys):
    model = MODELS / "pip473" / "late-write.toml"
    seq = check_model(model).outcome
    want = seq.violations[0]
    rc = main(["check", str(model), "--workers", "2", "--json", "--quiet", "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert rc == 1 and report["verdict"] == "violation" and report["depth"] == seq.depth
    assert report["workers"]["forked"] == 2
    # the level is finished before the violation is reported
    assert report["distinct_states"] >= seq.distinct_states
    (v,) = report["violations"]
    assert (v["property"], v["length"]) == (want.property, len(want.path))
    assert main(["replay", v["trace"]]) == 1  # reproduced on the reference implementation
    assert f"reproduced at step {len(want.path) - 1}: {want.property} fails" in capsys.readouterr().out


def test_budgets_stop_with_an_incomplete_verdict(fork_early):
    o = explore(TwoPhase(rm=6), keep_graph=False, max_states=5000, options={"workers": 2})
    assert o.verdict == "incomplete" and o.incomplete_reason == "max-states 5000 reached"
    assert o.extra["workers"]["forked"] == 2
    assert 5000 <= o.distinct_states < 50816


@pytest.mark.parametrize("flag, message", [
    ("--exact", "--workers keeps 64-bit fingerprints, so it excludes --exact"),
    ("--por", "--por's cycle proviso needs the whole visited set in one process; drop --workers"),
    ("--compact", "--workers keeps fingerprints, not states, so --compact has nothing to share"),
])
def test_refused_combinations_are_one_line(flag, message, capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--workers", "2", flag, "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.endswith(message) and "\n" not in err


def test_temporal_properties_refuse_workers(capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3-liveness.toml"), "--workers", "2", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.endswith("temporal properties cannot be checked with --workers") and "\n" not in err


def test_the_gate_runs_liveness_models_in_one_process(tmp_path, capsys):
    """`check --all --workers 2` passes a liveness model (in one process, and
    says so) next to a safety model that the workers check."""
    for name in ("twophase-rm3-liveness.toml", "twophase-rm6.toml"):
        (tmp_path / name).write_text((MODELS / "classic" / name).read_text())
    rc = main(["check", "--all", str(tmp_path), "--workers", "2", "--quiet", "--json", "--out", str(tmp_path / "o")])
    models = {m["model"].rsplit("/", 1)[-1]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert rc == 0
    live, safe = models["twophase-rm3-liveness.toml"], models["twophase-rm6.toml"]
    assert live["exit_code"] == 0 and "workers" not in live["report"]
    assert live["note"] == "in one process: --workers cannot keep the state graph that temporal properties need"
    assert "note" not in safe and safe["report"]["workers"]["forked"] == 2


def test_other_engines_refuse_workers(capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--engine", "simulate", "--workers", "2"])
    assert rc == 2 and "engine 'simulate' does not support --workers" in capsys.readouterr().err


def test_one_worker_is_the_in_process_bfs(capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--workers", "1", "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and "workers" not in report and "visited_set" not in report
    assert (report["distinct_states"], report["states_generated"]) == (288, 1146)


def test_a_failing_worker_is_reported_in_one_line(fork_early):
    spec = TwoPhase(rm=4)
    main_pid, inner = os.getpid(), spec.next

    def next_or_fail(s):
        if os.getpid() != main_pid:
            raise ValueError("boom")
        return inner(s)

    spec.next = next_or_fail
    with pytest.raises(EngineError, match=r"^--workers: worker \d failed: ValueError: boom$"):
        explore(spec, options={"workers": 2})


def test_a_dying_worker_is_reported_in_one_line(fork_early):
    spec = TwoPhase(rm=4)
    main_pid, inner = os.getpid(), spec.next

    def next_or_exit(s):
        if os.getpid() != main_pid:
            os._exit(7)
        return inner(s)

    spec.next = next_or_exit
    with pytest.raises(EngineError, match=r"^--workers: worker \d died \(exit code 7\)$"):
        explore(spec, options={"workers": 2})
