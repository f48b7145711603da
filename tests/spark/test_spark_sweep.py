"""`txncheck sweep`: each cell a Spark task running bfs; the table agrees
with bfs run directly, and is written as Parquet, CSV and Markdown."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from txncheck.checker.cli import main
from txncheck.checker.sweep import SweepError, load_sweep, run_sweep, unmet_expectations

SWEEP = """
description = "test grid"
[[grid]]
model = "{models}/classic/twophase-rm3.toml"
[grid.constants]
rm = [2, 3]
[[grid]]
model = "{models}/classic/diehard.toml"
[grid.constants]
goal = [4, 6]
[[expect]]
where = {{ model = "diehard", goal = 4 }}
verdict = "violation"
property = "NotSolved"
"""
MODELS = Path(__file__).resolve().parents[2] / "models"


def test_sweep_table(spark, tmp_path):
    f = tmp_path / "grid.toml"
    f.write_text(SWEEP.format(models=MODELS))
    sweep = load_sweep(f)
    rows = run_sweep(sweep, tmp_path / "out")
    got = [(r["model"], r["rm"], r["goal"], r["verdict"], r["distinct"], r["generated"], r["depth"]) for r in rows]
    assert got == [
        ("twophase-rm3", 2, None, "ok", 56, 154, 8),
        ("twophase-rm3", 3, None, "ok", 288, 1146, 11),
        ("diehard", None, 4, "violation", 14, 73, 6),
        ("diehard", None, 6, "ok", 16, 97, 8),
    ]
    assert rows[2]["property"] == "NotSolved" and rows[2]["length"] == 7
    assert (tmp_path / "out" / rows[2]["trace"]).is_file()
    assert unmet_expectations(sweep, rows) == []
    table = pq.read_table(tmp_path / "out" / "results.parquet")
    assert table.num_rows == 4 and table.column("distinct").to_pylist() == [56, 288, 14, 16]
    with (tmp_path / "out" / "results.csv").open() as fh:
        assert [r["verdict"] for r in csv.DictReader(fh)] == ["ok", "ok", "violation", "ok"]
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| 0 | twophase-rm3 | default | 2 |  | ok |" in md


def test_unmet_expectation_exits_1(spark, tmp_path, capsys):
    f = tmp_path / "grid.toml"
    f.write_text(SWEEP.format(models=MODELS).replace('verdict = "violation"', 'verdict = "ok"')
                 .replace('property = "NotSolved"', ""))
    assert main(["sweep", str(f), "--out", str(tmp_path / "out")]) == 1
    assert ("unmet expectation: cell 2 (model=diehard, variant=default, goal=4): expected ok, got violation"
            in capsys.readouterr().out)


@pytest.mark.parametrize("text, message", [
    ("[[grid]]\nmodel = 'nope.toml'\n", "no such model file"),
    ("engine = 'spark'\n[[grid]]\nmodel = '{models}/classic/diehard.toml'\n", "engine must be"),
    ("[[grid]]\nmodel = '{models}/classic/diehard.toml'\n[grid.constants]\ngoal = [4, 99]\n", "out of range"),
    ("colour = 1\n", "unknown key 'colour'"),
])
def test_bad_sweep_file_is_one_line(tmp_path, capsys, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text.format(models=MODELS))
    with pytest.raises(SweepError, match=message):
        load_sweep(f)
    assert main(["sweep", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(f) in err[0]
