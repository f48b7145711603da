"""Small levels in the driver, large ones on Spark (checker/engines/spark/driver.py):
the two sides write the same level rows, a run that mixes them keeps bfs's
figures, the JSON report lists every level, and the threshold is checked."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from txncheck.checker.api import check_model
from txncheck.checker.engines import EngineError
from txncheck.checker.engines.spark.driver import DEFAULT_THRESHOLD, ENV
from txncheck.checker.model import load_model

MODELS = Path(__file__).resolve().parents[2] / "models"
TWOPHASE = MODELS / "classic" / "twophase-rm3.toml"
LEVELS = [1, 7, 21, 38, 50, 54, 49, 36, 21, 9, 2]   # bfs's level sizes for TwoPhase rm3


def diehard_unsolvable():
    """DieHard with a goal no jug can hold: ok, 16 distinct, 97 generated,
    depth 8; unlike TwoPhase (whose levels are layers of a DAG), most of its
    successors were seen at earlier levels, so the visited-set lookup matters."""
    m = load_model(MODELS / "classic" / "diehard.toml")
    return replace(m, constants={**m.constants, "goal": 7})


def level_rows(root: Path, k: int) -> list[tuple]:
    files = sorted(str(p) for p in (root / f"level-{k:04d}").glob("part-*.parquet"))
    assert len(files) == 2   # one per partition: the session's two cores
    t = ds.dataset(files, format="parquet").to_table(columns=["fp", "state", "pfp", "act", "aname"])
    return sorted(zip(*(c.to_pylist() for c in t.columns)), key=lambda r: r[0])


def run(monkeypatch, tmp_path, name: str, below: int | None, model=TWOPHASE, budget: int = 600):
    if below is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, str(below))
    root = tmp_path / name
    # the budget (about twice the distinct states) turns a broken visited set,
    # a search that never ends on a cyclic model, into a prompt failure
    return root, check_model(model, engine="spark", max_states=budget, options={"checkpoint": str(root)}).outcome


@pytest.mark.parametrize("which", ["twophase-rm3", "diehard-goal7"])
def test_driver_and_spark_write_the_same_levels(spark, tmp_path, monkeypatch, which):
    """Every level once by the driver (the default threshold), once by Spark (0):
    the same rows, parent pointers included, so the trace cannot depend on the side."""
    model = TWOPHASE if which == "twophase-rm3" else diehard_unsolvable()
    want = (288, 1146, 11) if which == "twophase-rm3" else (16, 97, 8)
    budget = 2 * want[0]
    d_root, d = run(monkeypatch, tmp_path, "driver", None, model, budget)
    assert (d.verdict, d.distinct_states, d.states_generated, d.depth) == ("ok", *want)
    s_root, s = run(monkeypatch, tmp_path, "spark", 0, model, budget)
    assert (s.verdict, s.distinct_states, s.states_generated, s.depth) == ("ok", *want)
    assert {x["where"] for x in d.extra["spark"]["per_level"]} == {"driver"}
    assert {x["where"] for x in s.extra["spark"]["per_level"]} == {"spark"}
    assert d.extra["spark"]["levels"] == s.extra["spark"]["levels"]
    assert d.coverage == s.coverage
    for k in range(1, want[2] + 1):
        assert level_rows(d_root, k) == level_rows(s_root, k), f"level {k}"


def test_a_run_that_changes_sides_keeps_bfs_s_figures(spark, tmp_path, monkeypatch):
    """Below 40 states in the driver: levels 1-4 and 8-11 there, 5-7 on
    Spark, each side reading the other's files."""
    bfs = check_model(TWOPHASE, keep_graph=False).outcome
    _, o = run(monkeypatch, tmp_path, "mixed", 40)
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == \
        ("ok", bfs.distinct_states, bfs.states_generated, bfs.depth)
    # "distinct" per action names the action kept for each new state: bfs
    # keeps the first it meets, Spark the smallest (parent, action); both sum alike
    assert {a: c["generated"] for a, c in o.coverage.items()} == \
        {a: c["generated"] for a, c in bfs.coverage.items()}
    per_level = o.extra["spark"]["per_level"]
    assert [x["where"][0] for x in per_level] == list("ddddsssdddd")
    assert [x["depth"] for x in per_level] == list(range(1, 12))
    assert [x["frontier"] for x in per_level] == LEVELS
    assert [x["new"] for x in per_level] == LEVELS[1:] + [0]
    assert sum(x["generated"] for x in per_level) == bfs.states_generated - 1   # all but the initial state
    assert all(x["seconds"] >= 0 for x in per_level)


def test_the_visited_set_of_a_spark_level_never_reaches_the_driver(spark, tmp_path, monkeypatch):
    """A level on Spark looks its candidates up in the visited set inside
    the merge tasks, one partition's fingerprints at a time; the driver
    reads the visited set only for the levels it expands itself. (Until
    commit c416e04 a broadcast join collected it into the driver's JVM at
    every level.) The driver's reads are recorded here; Spark's Python
    workers are other processes, which the spy does not reach."""
    from txncheck.checker.engines.spark import level as spark_level

    reads, real = [], spark_level.visited

    def spy(root, k, j):
        reads.append(k)
        return real(root, k, j)

    monkeypatch.setattr(spark_level, "visited", spy)
    _, o = run(monkeypatch, tmp_path, "mixed", 40)   # levels 5-7 on Spark
    assert (o.verdict, o.distinct_states) == ("ok", 288)
    assert [x["where"][0] for x in o.extra["spark"]["per_level"]] == list("ddddsssdddd")
    assert {5, 6, 7}.isdisjoint(reads) and {1, 2, 3, 4, 8, 9, 10} <= set(reads)   # 11: no candidate


def test_the_json_report_lists_each_level(tmp_path):
    """Through the CLI, in a process of its own (its own local Spark)."""
    proc = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "check", str(TWOPHASE), "--engine",
                           "spark", "--master", "local[1]", "--json", "--quiet", "--out", str(tmp_path)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["spark"]["driver_below"] == DEFAULT_THRESHOLD
    assert [(x["depth"], x["frontier"], x["new"], x["where"]) for x in doc["spark"]["per_level"]] == \
        [(k + 1, n, m, "driver") for k, (n, m) in enumerate(zip(LEVELS, LEVELS[1:] + [0]))]


def test_a_violation_found_in_the_driver_is_bfs_s_trace(spark, tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    model = MODELS / "classic" / "diehard.toml"
    check_model(model, out_dir=tmp_path / "bfs")
    r = check_model(model, engine="spark", out_dir=tmp_path / "spark")
    assert [x["where"] for x in r.outcome.extra["spark"]["per_level"]] == ["driver"] * 7
    a = json.loads((tmp_path / "bfs" / "diehard.itf.json").read_text())
    b = json.loads((tmp_path / "spark" / "diehard.itf.json").read_text())
    a["#meta"].pop("engine"), b["#meta"].pop("engine")
    assert a == b


@pytest.mark.parametrize("value", ["-1", "ten", "1e4", "١٠", "9" * 20])
def test_a_bad_threshold_is_one_line(tmp_path, monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    with pytest.raises(EngineError, match=f"{ENV}=.*expected a whole number of states") as info:
        check_model(TWOPHASE, engine="spark")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("tasks", [1, 2, 3, 7])
def test_the_expansion_ranges_split_a_level_exactly(tmp_path, tasks):
    """Every state of a level is in exactly one task's range of packed
    states, and the ranges are about even (spark_level.ranges; no Spark)."""
    import random

    from txncheck.checker.engines.spark import level as spark_level

    rnd = random.Random(tasks)
    root, P = str(tmp_path), 3
    rows = [(rnd.getrandbits(63) * rnd.choice((1, -1)), bytes([rnd.randrange(4), rnd.randrange(256)]) + b"x" * 30)
            for _ in range(50_000)]
    spark_level.new_level(root, 1)
    for j in range(P):
        part = [r for r in rows if r[0] % P == j]
        cols = [[r[0] for r in part], [r[1] for r in part], [None] * len(part), [None] * len(part), [None] * len(part)]
        spark_level.write_part(root, 1, j, spark_level.by_state(spark_level.table(cols)))
    split = spark_level.ranges(root, 1, P, tasks)
    assert len(split) == tasks
    got = [[fp for fps, _ in spark_level.range_batches(root, 1, P, lo, hi, 4096) for fp in fps] for lo, hi in split]
    assert sorted(fp for g in got for fp in g) == sorted(fp for fp, _ in rows)
    assert max(len(g) for g in got) <= 1.6 * len(rows) / tasks
