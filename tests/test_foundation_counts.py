"""The classic models pin the engine to TLC's exact counts (reference-figures.md)."""

from __future__ import annotations

import json

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.itf import read_trace
from txncheck.spec.classic.diehard import DieHard
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TwoPhase

from .helpers import MODELS
from .helpers import explore

SHIPPED = ("tcommit-rm3", "twophase-rm3")   # twophase-rm6 is the same code over 50,816 states: a CPU minute of CI


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_classic_models_match_tlc_under_z3_evaluation(name, tmp_path, capsys):
    """The gate checks these models' TLC figures ([expect]) with the compiled
    predicates; evaluating the properties with Z3 itself gives the same."""
    from txncheck.checker.model import load_model

    path = MODELS / "classic" / f"{name}.toml"
    e = load_model(path).expect
    rc = main(["check", str(path), "--json", "--quiet", "--out", str(tmp_path), "--z3-eval"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert (report["verdict"], report["distinct_states"], report["states_generated"], report["depth"]) == (
        e["verdict"], e["distinct"], e["generated"], e["depth"])
    assert report["engine"] == "bfs" and report["violations"] == []
    assert sum(c["generated"] for c in report["coverage"].values()) == e["generated"] - 1  # minus the initial state
    assert sum(c["distinct"] for c in report["coverage"].values()) == e["distinct"] - 1


# TLC's scaling rows (reference-figures.md) but those of the shipped models
# (TCommit 3, TwoPhase 3 and 6), whose [expect] the gate judges.
TCOMMIT_ROWS = {1: (4, 5, 3), 2: (12, 23, 5), 4: (96, 357, 9), 5: (274, 1296, 11), 6: (792, 4567, 13)}
TWOPHASE_ROWS = {1: (12, 20, 5), 2: (56, 154, 8), 4: (1568, 8258, 14), 5: (8832, 58146, 17)}


@pytest.mark.parametrize("n", sorted(TCOMMIT_ROWS))
def test_tcommit_scaling_rows(n):
    o = explore(TCommit(rm=n))
    assert o.verdict == "ok"
    assert (o.distinct_states, o.states_generated, o.depth) == TCOMMIT_ROWS[n]


@pytest.mark.parametrize("n", sorted(TWOPHASE_ROWS))
def test_twophase_scaling_rows(n):
    o = explore(TwoPhase(rm=n), deadlock=True)
    assert o.verdict == "ok"
    assert (o.distinct_states, o.states_generated, o.depth) == TWOPHASE_ROWS[n]


def test_twophase_seven_rms():
    o = explore(TwoPhase(rm=7), deadlock=True, keep_graph=False)
    assert o.verdict == "ok"
    assert (o.distinct_states, o.states_generated) == (296448, 2744706)


def test_tcommit_with_deadlock_check_reports_the_all_committed_state():
    o = explore(TCommit(rm=2), deadlock=True)
    assert o.verdict == "violation"
    (v,) = o.violations
    assert v.kind == "deadlock"
    final = v.path[-1][1]
    assert set(final.rmState) <= {"committed", "aborted"}


@pytest.mark.parametrize("z3_eval", [False, True], ids=["compiled", "z3-eval"])
def test_diehard_shortest_counterexample(z3_eval, tmp_path, capsys):
    argv = ["check", str(MODELS / "classic" / "diehard.toml"), "--json", "--quiet", "--out", str(tmp_path)]
    rc = main(argv + (["--z3-eval"] if z3_eval else []))
    report = json.loads(capsys.readouterr().out)
    assert rc == 1 and report["verdict"] == "violation"
    (v,) = report["violations"]
    assert (v["property"], v["length"]) == ("NotSolved", 7)
    trace = read_trace(v["trace"])
    assert [(s["big"], s["small"]) for s in trace.states] == [(0, 0), (5, 0), (2, 3), (2, 0), (0, 2), (5, 2), (4, 3)]
    assert trace.meta["spec"] == "diehard" and trace.meta["property"] == "NotSolved"
    assert trace.meta["bounds"] == {"big_capacity": 5, "small_capacity": 3, "goal": 4}
    assert trace.meta["model"].endswith("diehard.toml")
    assert [s["action"] for s in trace.steps] == [
        "init", "FillBigJug", "BigToSmall", "EmptySmallJug", "BigToSmall", "FillBigJug", "BigToSmall"]
    assert main(["show", v["trace"]]) == 0
    table = capsys.readouterr().out
    assert "violates NotSolved" in table and "BigToSmall" in table and "big = 4" in table


def test_diehard_is_solvable_only_with_the_right_goal():
    o = explore(DieHard(goal=4))
    assert o.verdict == "violation"
    o = explore(DieHard(goal=6))  # the big jug holds 5: never reached
    assert o.verdict == "ok" and o.distinct_states == 16


@pytest.mark.parametrize("model, limit, extra", [
    ("twophase-rm6.toml", "2000", []), ("twophase-rm6.toml", "2000", ["--no-graph"]),
    ("tcommit-rm3.toml", "10", []),   # 34 states, fewer than bfs's periodic checks ever saw
])
def test_max_states_stops_at_exactly_that_many(capsys, model, limit, extra):
    rc = main(["check", str(MODELS / "classic" / model), "--json", "--quiet", "--max-states", limit, *extra])
    report = json.loads(capsys.readouterr().out)
    assert rc == 3 and report["verdict"] == "incomplete"
    assert report["distinct_states"] == int(limit) and report["incomplete_reason"] == f"max-states {limit} reached"
    assert sum(c["distinct"] for c in report["coverage"].values()) == int(limit) - 1   # the initial state
    assert report["states_generated"] >= int(limit)


def test_state_graph_has_fingerprint_nodes_and_action_labels():
    o = explore(TwoPhase(rm=2), deadlock=True)
    g = o.exploration.graph()
    assert g.number_of_nodes() == 56
    # 153 successors (154 generated minus the initial state), each a distinct
    # labelled edge, on 130 distinct state pairs (self-loops included)
    assert g.number_of_edges() == 130
    assert sum(len(d["actions"]) for _, _, d in g.edges(data=True)) == 153
    assert all(isinstance(n, int) and 0 <= n < 2**64 for n in g.nodes)
    init = [n for n, d in g.nodes(data=True) if d["initial"]]
    assert len(init) == 1
    import networkx as nx

    far = max(nx.single_source_shortest_path_length(g, init[0]).values())
    assert far == 8 - 1  # depth 8 levels


def test_check_model_api_reports_witnesses():
    r = check_model(MODELS / "classic" / "tcommit-rm3.toml")
    assert r.outcome.witnesses_found == {"SomeCommitted": True, "SomeAborted": True}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_incomplete_bfs_run_says_the_depth_it_checked_completely(workers, capsys):
    """Stopped at 20,000 states, TwoPhase(6) has found every state of its
    first 9 levels (10 is incomplete), as the report says."""
    import re

    model = str(MODELS / "classic" / "twophase-rm6.toml")
    assert main(["check", model, "--max-states", "20000", "--workers", workers, "--quiet"]) == 3
    line = re.search(r"every state up to depth (\d+) was checked: no violation within (\d+) steps",
                     capsys.readouterr().out)
    depth = int(line.group(1))
    assert (depth, int(line.group(2))) == (9, 8)
    full = explore(TwoPhase(rm=6), keep_graph=False).exploration
    cut = explore(TwoPhase(rm=6), keep_graph=False, max_states=20_000).exploration
    within = set(full.states[:full.levels[depth]])  # the states at depth <= 9
    assert within <= set(cut.states) and len(full.states[:full.levels[depth + 1]]) > 20_000
    assert main(["check", model, "--max-states", "20000", "--por", "--quiet"]) == 3  # no such claim with POR
    assert "every state up to depth" not in capsys.readouterr().out


def test_simulate_reports_which_witnesses_its_walks_reach(capsys):
    """A walk that commits is rare in TCommit (every RM must prepare first):
    20 walks (seed 0) never commit, 2,000 do; both are said, in JSON and in text."""
    model = str(MODELS / "classic" / "tcommit-rm3.toml")
    for walks, committed in (("20", False), ("2000", True)):
        rc = main(["check", model, "--engine", "simulate", "--walks", walks, "--json", "--quiet"])
        r = json.loads(capsys.readouterr().out)
        assert rc == 3 and r["verdict"] == "incomplete"
        assert r["witnesses"] == {"SomeCommitted": committed, "SomeAborted": True}
    assert r["distinct_states"] == 34  # 2,000 walks visit every reachable state, each checked once
    main(["check", model, "--engine", "simulate", "--walks", "20", "--quiet"])
    assert "  witnesses reached: SomeAborted; not reached: SomeCommitted\n" in capsys.readouterr().out


def test_simulate_finds_the_diehard_bug_reproducibly_but_never_says_ok(tmp_path, capsys):
    model = str(MODELS / "classic" / "diehard.toml")
    runs = []
    for _ in range(2):
        rc = main(["check", model, "--engine", "simulate", "--seed", "3", "--json", "--quiet", "--out", str(tmp_path)])
        runs.append((rc, json.loads(capsys.readouterr().out)))
    (rc1, r1), (rc2, r2) = runs
    assert rc1 == rc2 == 1
    assert r1["violations"][0]["length"] == r2["violations"][0]["length"] >= 7
    assert read_trace(r1["violations"][0]["trace"]).states[-1]["big"] == 4
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--engine", "simulate", "--walks", "20",
               "--json", "--quiet"])
    r = json.loads(capsys.readouterr().out)
    assert rc == 3 and r["verdict"] == "incomplete" and 0 < r["distinct_states"] <= 288
