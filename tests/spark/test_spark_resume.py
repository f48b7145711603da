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
from txncheck.checker.engines.spark_checkpoint import VERSION

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
