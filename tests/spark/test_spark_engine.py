"""The spark engine against bfs: identical figures on every shipped model
small enough, identical shortest counterexamples, and the same ITF file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.itf import read_trace
from txncheck.checker.model import find_models, load_model

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
# "Small enough": bfs finishes within this many states, and the search or
# the counterexample is at most this many levels deep. Levels this small are
# expanded in the driver (spark_driver), a few milliseconds each; the Spark
# side of a level is compared in test_spark_levels.py and on a cluster.
MAX_STATES = 2000
MAX_LEVELS = 40


def shipped_models():
    return [p for p in find_models(MODELS)]


@pytest.mark.parametrize("path", shipped_models(), ids=lambda p: str(p.relative_to(MODELS)))
def test_spark_matches_bfs_on_shipped_models(spark, path, tmp_path):
    model = load_model(path)
    if model.raw.get("temporal"):
        pytest.skip("temporal properties are checked by bfs only")
    bfs = check_model(model, max_states=MAX_STATES, keep_graph=False).outcome
    if bfs.verdict == "incomplete":
        pytest.skip(f"more than {MAX_STATES} states")
    levels = bfs.violations[0].length if bfs.verdict == "violation" and bfs.violations[0].path else bfs.depth
    if levels > MAX_LEVELS:
        pytest.skip(f"{levels} levels deep")
    sp = check_model(model, engine="spark").outcome
    assert sp.verdict == bfs.verdict
    assert [(v.property, v.kind, v.length) for v in sp.violations] == \
        [(v.property, v.kind, v.length) for v in bfs.violations]
    if bfs.verdict == "violation":   # Spark finishes the violating level; bfs stops at its first violation
        assert sp.distinct_states >= bfs.distinct_states and sp.states_generated >= bfs.states_generated
        assert sp.depth in (bfs.depth, bfs.depth + 1)
    if bfs.verdict == "ok":
        assert (sp.distinct_states, sp.states_generated, sp.depth) == \
            (bfs.distinct_states, bfs.states_generated, bfs.depth)
        assert {a: c["generated"] for a, c in sp.coverage.items()} == \
            {a: c["generated"] for a, c in bfs.coverage.items()}
        assert sp.witnesses_found == bfs.witnesses_found


def test_twophase_rm3_tlc_figures(spark):
    o = check_model(MODELS / "classic" / "twophase-rm3.toml", engine="spark").outcome
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 288, 1146, 11)
    assert o.extra["spark"]["levels"] == [1, 7, 21, 38, 50, 54, 49, 36, 21, 9, 2]  # bfs level sizes


def test_twophase_rm6_tlc_figures(spark):
    o = check_model(MODELS / "classic" / "twophase-rm6.toml", engine="spark").outcome
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 50816, 402306, 20)


def test_reduced_pip473_matches_bfs(spark):
    # PIP-473 (fixed) cut down to one txn that writes and acks, with a crash.
    m = load_model(MODELS / "pip473" / "fixed.toml")
    m = replace(m, constants={**m.constants, "txns": 1, "writes": "t1:0", "acks": "t1:s1:1:ind",
                              "reshape": "none", "failovers": 0, "crashes": 1, "ticks": 1},
                raw={k: v for k, v in m.raw.items() if k != "max_depth"})   # the whole space, not the gate's depth
    bfs = check_model(m).outcome
    sp = check_model(m, engine="spark").outcome
    assert bfs.verdict == "ok" and bfs.distinct_states > 100
    assert (sp.verdict, sp.distinct_states, sp.states_generated, sp.depth) == \
        (bfs.verdict, bfs.distinct_states, bfs.states_generated, bfs.depth)


def test_diehard_trace_is_the_bfs_trace(spark, tmp_path):
    model = MODELS / "classic" / "diehard.toml"
    check_model(model, out_dir=tmp_path / "bfs")
    r = check_model(model, engine="spark", out_dir=tmp_path / "spark")
    v = r.outcome.violations[0]
    assert (r.verdict, v.property, v.length) == ("violation", "NotSolved", 7)
    a = json.loads((tmp_path / "bfs" / "diehard.itf.json").read_text())
    b = json.loads((tmp_path / "spark" / "diehard.itf.json").read_text())
    assert a["#meta"].pop("engine") == "bfs" and b["#meta"].pop("engine") == "spark"
    assert a == b  # DieHard's shortest solution is unique, so the files agree state by state


def _pip473_safety_trace():
    for p in sorted((ROOT / "counterexamples" / "pip473").glob("*.itf.json")):
        t = read_trace(p)
        if t.meta.get("kind") == "invariant" and t.meta.get("model"):
            return t
    return None


def test_pip473_counterexample_length(spark, tmp_path):
    t = _pip473_safety_trace()
    if t is not None:  # a corpus trace: spark finds one exactly as short
        model, prop, length = ROOT / t.meta["model"], t.meta["property"], t.length
    else:  # no safety trace in the corpus yet: the shipped pip-text model, against bfs
        model = MODELS / "pip473" / "pip-text.toml"
        v = check_model(model).outcome.violations[0]
        prop, length = v.property, v.length
    r = check_model(model, engine="spark", out_dir=tmp_path)
    v = r.outcome.violations[0]
    assert (r.verdict, v.property, v.length) == ("violation", prop, length)
    written = read_trace(v.trace_file)
    assert written.length == length and written.meta["engine"] == "spark"
