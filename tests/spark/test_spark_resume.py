"""Checkpoint and resume: a run stopped after level k resumes from its
directory and ends with the totals of an uninterrupted run; a missing or
corrupt checkpoint is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.engines import EngineError
from txncheck.checker.engines.spark.checkpoint import VERSION

MODELS = Path(__file__).resolve().parents[2] / "models"
TCOMMIT = MODELS / "classic" / "tcommit-rm3.toml"


def test_stop_after_level_then_resume_gives_the_same_totals(spark, tmp_path):
    ckpt = str(tmp_path / "run")
    first = check_model(TCOMMIT, engine="spark", options={"checkpoint": ckpt, "stop_after_level": 3}).outcome
    assert first.verdict == "incomplete" and first.incomplete_reason == "stopped after level 3"
    assert first.extra["spark"]["levels"] == [1, 6, 12]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["levels"] == [1, 6, 12] and manifest["expanded"] == 2 and not manifest["done"]
    resumed = check_model(TCOMMIT, engine="spark", options={"resume": ckpt}).outcome
    assert (resumed.verdict, resumed.distinct_states, resumed.states_generated, resumed.depth) == ("ok", 34, 94, 7)
    assert resumed.witnesses_found == {"SomeCommitted": True, "SomeAborted": True}
    # Resuming a finished run reports the same totals without exploring again.
    again = check_model(TCOMMIT, engine="spark", options={"resume": ckpt}).outcome
    assert (again.distinct_states, again.states_generated, again.depth) == (34, 94, 7)


def test_budget_stop_resumes_too(spark, tmp_path):
    ckpt = str(tmp_path / "run")
    first = check_model(TCOMMIT, engine="spark", max_states=10, options={"checkpoint": ckpt}).outcome
    assert first.verdict == "incomplete" and first.distinct_states >= 10
    resumed = check_model(TCOMMIT, engine="spark", options={"resume": ckpt}).outcome
    assert (resumed.verdict, resumed.distinct_states, resumed.states_generated) == ("ok", 34, 94)


def test_resume_of_another_model_is_refused(spark, tmp_path):
    ckpt = str(tmp_path / "run")
    check_model(TCOMMIT, engine="spark", options={"checkpoint": ckpt, "stop_after_level": 1})
    with pytest.raises(EngineError, match="another model"):
        check_model(MODELS / "classic" / "twophase-rm3.toml", engine="spark", options={"resume": ckpt})


@pytest.mark.parametrize("damage", ["missing", "no-manifest", "bad-json", "missing-level"])
def test_bad_checkpoint_is_one_line_exit_2(tmp_path, capsys, damage):
    root = tmp_path / "run"
    if damage != "missing":
        root.mkdir()
    if damage == "bad-json":
        (root / "manifest.json").write_text("{not json")
    if damage == "missing-level":
        (root / "manifest.json").write_text(json.dumps({
            "format": "txncheck-spark-levels", "version": VERSION, "job": {}, "levels": [1, 3], "expanded": 1,
            "generated": 4, "coverage": {}, "witnesses": {}, "done": False, "seconds": 0.0, "shapes": []}))
        (root / "level-0001").mkdir()
    rc = main(["check", str(TCOMMIT), "--engine", "spark", "--resume", str(root), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("txncheck: error: ")
    assert str(root) in err[0]


def test_damaged_level_file_is_one_line(spark, tmp_path):
    ckpt = tmp_path / "run"
    check_model(TCOMMIT, engine="spark", options={"checkpoint": str(ckpt), "stop_after_level": 2})
    for part in (ckpt / "level-0002").glob("part-*"):
        part.write_bytes(b"not parquet at all")
    with pytest.raises(EngineError, match=r"cannot read the checkpoint at level 2") as info:
        check_model(TCOMMIT, engine="spark", options={"resume": str(ckpt)})
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_a_resumed_run_keeps_its_partitions(spark, tmp_path, monkeypatch):
    """The states' owners (fp mod P) are the checkpoint's: a run started
    with 3 partitions and resumed where the default would be 2 keeps 3."""
    monkeypatch.setenv("TXNCHECK_SPARK_DRIVER_BELOW", "0")
    monkeypatch.setenv("TXNCHECK_SPARK_PARTITIONS", "3")
    ckpt = tmp_path / "run"
    check_model(TCOMMIT, engine="spark", options={"checkpoint": str(ckpt), "stop_after_level": 3})
    assert json.loads((ckpt / "manifest.json").read_text())["partitions"] == 3
    monkeypatch.delenv("TXNCHECK_SPARK_PARTITIONS")
    resumed = check_model(TCOMMIT, engine="spark", options={"resume": str(ckpt)}).outcome
    assert (resumed.verdict, resumed.distinct_states, resumed.states_generated, resumed.depth) == ("ok", 34, 94, 7)
    assert sorted(p.name for p in (ckpt / "level-0007").iterdir()) == [f"part-0000{j}.parquet" for j in range(3)]


@pytest.mark.parametrize("what", ["dev-zero", "fifo", "missing"])
def test_a_part_that_is_not_a_regular_file_is_refused_before_spark_starts(tmp_path, monkeypatch, what):
    """A level's part must be a regular file: a link to /dev/zero would be
    read until memory runs out, a FIFO would hang the resume."""
    import os

    from txncheck.checker.engines.spark import engine as spark
    from txncheck.checker.engines.spark.checkpoint import Manifest, identity, write_manifest
    from txncheck.checker.engines.spark.job import worker_job
    from txncheck.checker.job import Job
    from txncheck.checker.model import load_model

    def must_not_start(*a, **k):
        raise AssertionError("Spark was started")

    root = tmp_path / "run"
    (root / "level-0001").mkdir(parents=True)
    (root / "level-0001" / "part-00000.parquet").write_bytes(b"x")
    part = root / "level-0001" / "part-00001.parquet"
    if what == "dev-zero":
        part.symlink_to("/dev/zero")
    elif what == "fifo":
        os.mkfifo(part)
    m = load_model(TCOMMIT)
    spec = m.instantiate()
    wj = worker_job(Job(spec=spec, properties=m.selected_properties(spec), deadlock=m.deadlock, model=m,
                        witnesses={w: spec.witnesses[w] for w in m.witnesses}))
    write_manifest(str(root), Manifest(job=identity(wj), levels=[1], partitions=2))
    monkeypatch.setattr(spark, "spark_session", must_not_start)
    with pytest.raises(EngineError, match="level 1 lacks part 1") as info:
        check_model(TCOMMIT, engine="spark", options={"resume": str(root)})
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", ["0", "-1", "many", str(1 << 17)])
def test_a_bad_partition_count_is_one_line(monkeypatch, value):
    from txncheck.checker.engines.spark import engine as spark

    monkeypatch.setenv("TXNCHECK_SPARK_PARTITIONS", value)
    monkeypatch.setattr(spark, "spark_session", lambda *a, **k: pytest.fail("Spark was started"))
    with pytest.raises(EngineError, match="TXNCHECK_SPARK_PARTITIONS=.*expected a whole number of partitions"):
        check_model(TCOMMIT, engine="spark")


def test_an_incomplete_run_says_the_depth_it_checked(spark):
    """Spark checks a level's states when it expands the level: stopped after
    writing 5 levels of TwoPhase rm3 (117 states >= 100), it expanded 4."""
    o = check_model(MODELS / "classic" / "twophase-rm3.toml", engine="spark", max_states=100).outcome
    assert (o.verdict, o.extra["spark"]["levels"]) == ("incomplete", [1, 7, 21, 38, 50])
    assert o.checked_depth == 4
    assert o.checked_depth_text().startswith("every state up to depth 4 was checked: no violation within 3 steps")
