"""Class 10 of issue 24: on a violation, Spark and bfs agree on the verdict
and on the counterexample's (shortest) length, and differ exactly as the
README says: Spark finishes the level before it stops, so its counts and depth
can be larger. The README's figures for models/pip473/orphan-op.toml are
checked against both engines here."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "models" / "pip473" / "orphan-op.toml"

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java", allow_module_level=True)


def test_spark_differs_from_bfs_on_a_violation_exactly_as_the_readme_says(tmp_path):
    from txncheck.checker.api import check_model

    bfs = check_model(MODEL, engine="bfs", out_dir=tmp_path / "bfs").outcome
    spark = check_model(MODEL, engine="spark", out_dir=tmp_path / "spark").outcome
    assert bfs.verdict == spark.verdict == "violation"
    [vb], [vs] = bfs.violations, spark.violations
    assert (vb.property, vb.length) == (vs.property, vs.length) == ("NoOrphanOp", 8)
    assert spark.distinct_states >= bfs.distinct_states and spark.states_generated >= bfs.states_generated
    assert spark.depth in (bfs.depth, bfs.depth + 1)

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"orphan-op\.toml`: (\d+) distinct, (\d+) generated, depth (\d+),\s+against bfs's (\d+), (\d+), "
                  r"depth (\d+); both traces have the same length", readme)
    assert m, "the README's statement of how Spark differs from bfs is missing"
    said = [int(x) for x in m.groups()]
    assert said == [spark.distinct_states, spark.states_generated, spark.depth,
                    bfs.distinct_states, bfs.states_generated, bfs.depth]
