"""Liveness end to end: model files with [temporal] and fairness, checked by
`check_model`; every lasso found is replayed against the spec and its
fairness re-checked here, independently of the checker."""

from __future__ import annotations

import json
import re

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.invariants import compile_predicate
from txncheck.checker.itf import read_trace
from txncheck.checker.liveness.check import resolve

from .helpers import MODELS

LIVENESS_MODELS = sorted(p for p in MODELS.rglob("*.toml") if "[temporal]" in p.read_text())


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """path -> the shipped liveness model's report, each checked once for the
    tests of this file (merged-gc-redrive-liveness.toml alone is 26 CPU s)."""
    cache = {}

    def report(path):
        if path not in cache:
            cache[path] = check_model(path, out_dir=tmp_path_factory.mktemp(path.stem))
        return cache[path]
    return report


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


TWOPHASE = """
spec = "twophase"
properties = ["TPTypeOK", "TCConsistent"]
{fairness}
[temporal]
Decided = "eventually AllDecided"
[constants]
rm = {rm}
"""


# -- an independent check of a lasso ----------------------------------------------------


def _matches(text: str, action) -> bool:
    """Does the fairness entry `text` (e.g. WF(Name(p=v, q=*))) cover this action?"""
    m = re.fullmatch(r"[WS]F\((\*|\w+)(?:\((.*)\))?\)", text.replace(" ", ""))
    name, inner = m.groups()
    if name != "*" and name != action[0]:
        return False
    params = {k: str(v) for k, v in action[1]}
    for part in (inner.split(",") if inner else []):
        k, v = part.split("=")
        if v != "*" and params.get(k) != v:
            return False
    return True


def _instances(text: str, actions) -> list[set]:
    """The separate conditions a fairness entry stands for: one per value of its `*` parameters."""
    starred = [k for k, v in (p.split("=") for p in (re.search(r"\((?:\w+)\((.*)\)\)", text.replace(" ", "")) or
                                                     [None, ""])[1].split(",") if p) if v == "*"]
    groups: dict = {}
    for a in actions:
        if _matches(text, a):
            key = tuple(str(dict(a[1])[k]) for k in starred)
            groups.setdefault(key, set()).add(a)
    return list(groups.values())


def assert_fair_lasso(report, v) -> None:
    spec, m = report.spec, report.model
    path, loop = v.path, v.loop
    states = [s for _, s in path]
    assert states[0] in set(spec.init_states())
    for (_, s), (a, t) in zip(path, path[1:]):
        assert (a, t) in set(spec.next(s)), f"step {a} is not a successor"
    closing = v.trace_meta["loop_action"]
    if closing == "stutter":
        assert loop == len(path) - 1
        cycle_steps = []
    else:
        act = (closing["action"], tuple(closing["params"].items()))
        assert (act, states[loop]) in set(spec.next(states[-1])), "the cycle does not close"
        cycle_steps = [(a, s) for a, s in path[loop + 1:]] + [(act, states[loop])]
    cycle_states = states[loop:]
    # The goal never holds from the trigger on; the trigger holds at or before the loop.
    trigger, goal = resolve(m, spec)[v.property]
    holds_goal = compile_predicate(spec.schema, goal)
    holds_trigger = compile_predicate(spec.schema, trigger)
    obs = [spec.observe(s) for s in states]
    start = max(i for i in range(loop + 1) if holds_trigger(obs[i]))
    assert not any(holds_goal(o) for o in obs[start:])
    # Fairness, from the definitions: a step counts only if it changes the state.
    prev = states[loop:] + [states[loop]]
    taken = {a for (a, t), s in zip(cycle_steps, prev) if t != s}
    succ = [{a for a, t in spec.next(s) if t != s} for s in cycle_states]
    all_actions = set().union(*(x for x in succ), taken)
    for f in m.fairness:
        for inst in _instances(f.text, all_actions):
            enabled = [bool(e & inst) for e in succ]
            if inst & taken:
                continue
            if f.kind == "WF":
                assert not all(enabled), f"{f.text} {inst} continuously enabled, never taken"
            else:
                assert not any(enabled), f"{f.text} {inst} enabled infinitely often, never taken"


# -- TwoPhase: the classic -----------------------------------------------------------


def test_twophase_every_rm_decides_under_weak_fairness_of_next():
    r = check_model(MODELS / "classic" / "twophase-rm3-liveness.toml")
    assert (r.outcome.distinct_states, r.outcome.states_generated) == (288, 1146)
    assert r.verdict == "ok"
    assert r.outcome.extra["liveness"]["properties"]["EventuallyAllDecided"]["verdict"] == "ok"


def test_twophase_without_fairness_stutters_in_the_initial_state(tmp_path):
    p = write(tmp_path, "tp.toml", TWOPHASE.format(fairness="", rm=2))
    r = check_model(p, out_dir=tmp_path / "out")
    (v,) = r.outcome.violations
    assert (v.kind, v.property, v.length, v.loop) == ("liveness", "Decided", 1, 0)
    assert v.trace_meta["loop_action"] == "stutter"
    assert_fair_lasso(r, v)


def test_twophase_with_an_unfair_tm_can_wait_forever(tmp_path):
    # RMs and the TM's receipt are fair, TMCommit/TMAbort are not: the TM may never decide.
    fair = 'fairness = ["WF(RMPrepare(rm=*))", "WF(RMRcvCommitMsg(rm=*))", "WF(RMRcvAbortMsg(rm=*))", ' \
           '"WF(TMRcvPrepared(rm=*))"]'
    p = write(tmp_path, "tp.toml", TWOPHASE.format(fairness=fair, rm=3))
    r = check_model(p, out_dir=tmp_path / "out")
    (v,) = r.outcome.violations
    assert r.verdict == "violation"
    assert_fair_lasso(r, v)
    final = v.path[-1][1]
    assert final.tmState == "init" and "working" not in final.rmState
    # ... and adding WF(TMAbort) forces a decision.
    p = write(tmp_path, "tp2.toml", TWOPHASE.format(fairness=fair[:-1] + ', "WF(TMAbort)"]', rm=3))
    assert check_model(p).verdict == "ok"


def test_twophase_weak_fairness_of_commit_alone_is_not_enough(tmp_path):
    # Only TMCommit and commit receipt are fair: the RMs need not prepare, so
    # TMCommit never becomes enabled and the initial state may stutter.
    fair = 'fairness = ["WF(TMCommit)", "WF(RMRcvCommitMsg(rm=*))"]'
    p = write(tmp_path, "tp.toml", TWOPHASE.format(fairness=fair, rm=2))
    r = check_model(p)
    (v,) = r.outcome.violations
    assert (v.length, v.loop) == (1, 0)
    assert_fair_lasso(r, v)


def test_the_endless_gc_redrive_is_a_cycle_of_real_steps(shipped):
    # The PIP-473 question: in the merged code the GC sweep re-drives the
    # fan-out while ops remain; the lasso's cycle takes gcSweep for ever.
    r = shipped(MODELS / "pip473" / "merged-gc-redrive-liveness.toml")
    (v,) = r.outcome.violations
    assert_fair_lasso(r, v)
    closing = v.trace_meta["loop_action"]
    assert closing != "stutter"
    cycle = [a[0] for a, _ in v.path[v.loop + 1:]] + [closing["action"]]
    assert "gcSweep" in cycle


# -- the shipped liveness models ------------------------------------------------------


@pytest.mark.parametrize("path", LIVENESS_MODELS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shipped_liveness_model_meets_its_expectation(path, shipped):
    r = shipped(path)
    expect = r.model.expect
    live = r.outcome.extra["liveness"]["properties"]
    assert set(live) == set(r.model.temporal)
    assert r.verdict == expect.get("verdict", "ok")
    failing = {v.property for v in r.outcome.violations if v.kind == "liveness"}
    assert failing == {n for n, x in live.items() if x["verdict"] == "violation"}
    if "property" in expect:
        assert expect["property"] in failing
    for v in r.outcome.violations:
        if v.kind != "liveness":
            continue
        assert_fair_lasso(r, v)
        trace = read_trace(v.trace_file)
        assert trace.loop == v.loop and trace.length == v.length
        assert trace.meta["kind"] == "liveness" and trace.meta["temporal"] == r.model.temporal[v.property].text
        if "length" in expect and v.property == expect.get("property"):
            assert v.length == expect["length"]


def test_the_corpus_holds_the_lasso_of_every_failing_liveness_model():
    from .helpers import ROOT

    for path in LIVENESS_MODELS:
        r_expect = path.read_text()
        if 'verdict = "violation"' not in r_expect:
            continue
        spec = re.search(r'^spec = "(\w+)"', r_expect, re.M).group(1)
        corpus = ROOT / "counterexamples" / spec
        found = sorted(corpus.glob(f"{path.stem}*.itf.json"))
        assert found, f"no trace for {path} in {corpus}"
        for f in found:
            t = read_trace(f)
            assert t.loop is not None and t.meta["kind"] == "liveness"


# -- show marks the cycle -------------------------------------------------------------


def test_show_marks_where_the_cycle_starts(tmp_path, capsys):
    p = write(tmp_path, "tp.toml", TWOPHASE.format(fairness='fairness = ["WF(TMCommit)"]', rm=2))
    r = check_model(p, out_dir=tmp_path / "out")
    (v,) = r.outcome.violations
    assert main(["show", v.trace_file]) == 0
    out = capsys.readouterr().out
    rows = [l for l in out.splitlines() if re.match(r"\d+\s", l)]
    marked = [l.split()[0] for l in rows if "<- cycle starts" in l]
    assert marked == [str(v.loop)]
    doc = json.loads(open(v.trace_file).read())
    assert doc["loop"] == v.loop and doc["#meta"]["loop_action"] == v.trace_meta["loop_action"]


# -- bad input: one line, exit 2 --------------------------------------------------------


@pytest.mark.parametrize("body, needle", [
    ('[temporal]\nX = "eventually"\n', "expected a formula"),
    ('[temporal]\nX = "AllDecided"\n', "must read 'eventually F'"),
    ('[temporal]\nX = "eventually (AllDecided"\n', "expected )"),
    ('[temporal]\nX = "eventually NoSuchPredicate"\n', "'NoSuchPredicate', which spec twophase does not define"),
    ('[temporal]\nX = "eventually TRUE"\n', "vacuous"),
    ('temporal = "eventually AllDecided"\n', "[temporal] must be a table"),
    ('fairness = ["XF(TMCommit)"]\n[temporal]\nX = "eventually AllDecided"\n', "must read WF(Action)"),
    ('fairness = "WF(*)"\n[temporal]\nX = "eventually AllDecided"\n', "'fairness' must be a list"),
    ('[temporal]\nX = "eventually AllDecided"\nfairness = ["WF(*)"]\n', "move it above the [temporal] table"),
    ('fairness = ["WF(TMCommit(rm=r1))"]\n[temporal]\nX = "eventually AllDecided"\n', "has no parameter 'rm'"),
])
def test_bad_temporal_input_is_one_line_and_exit_2(tmp_path, capsys, body, needle):
    p = write(tmp_path, "bad.toml", f'spec = "twophase"\n{body}[constants]\nrm = 2\n')
    rc = main(["check", str(p), "--quiet", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    lines = [l for l in err.splitlines() if l.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert str(p) in lines[0] and needle in lines[0], lines[0]


@pytest.mark.parametrize("flags, needle", [
    (["--symmetry"], "--symmetry"),
    (["--no-graph"], "--no-graph"),
    (["--engine", "simulate"], "bfs engine only"),
])
def test_runs_that_cannot_check_liveness_are_refused(tmp_path, capsys, flags, needle):
    p = write(tmp_path, "m.toml", TWOPHASE.format(fairness='fairness = ["WF(*)"]', rm=2))
    rc = main(["check", str(p), "--quiet", "--out", str(tmp_path / "out"), *flags])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_a_fairness_condition_nothing_enables_is_reported_not_fatal(tmp_path):
    p = write(tmp_path, "m.toml", TWOPHASE.format(fairness='fairness = ["WF(*)", "WF(NoSuchAction)"]', rm=2))
    r = check_model(p)
    assert r.verdict == "ok"
    assert r.outcome.extra["liveness"]["unmatched_fairness"] == ["WF(NoSuchAction)"]


def test_liveness_is_not_checked_on_a_partial_graph(tmp_path):
    # diehard's NotSolved fails, so the search stops early: the temporal property stays unchecked.
    p = write(tmp_path, "dh.toml", 'spec = "diehard"\nfairness = ["WF(*)"]\n[temporal]\n'
                                   'Full = "eventually BothFull"\n')
    r = check_model(p)
    assert [v.kind for v in r.outcome.violations] == ["invariant"]
    assert r.outcome.extra["liveness"]["properties"]["Full"] == {"verdict": "unchecked"}
