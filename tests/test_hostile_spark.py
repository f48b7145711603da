"""Class 10 of issue 24: on a violation, Spark and bfs agree on the verdict
and on the counterexample's (shortest) length, and differ exactly as the
The user guide (docs/guide.md) says: Spark finishes the level before it stops, so its counts and depth
can be larger. Its figures for models/pip473/orphan-op.toml are
checked against both engines here."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "models" / "pip473" / "orphan-op.toml"

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # starts Spark: the CI tier, as tests/spark/conftest.py says
pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java", allow_module_level=True)


def test_spark_differs_from_bfs_on_a_violation_exactly_as_the_readme_says(tmp_path):
    from txncheck.checker.api import check_model

    bfs = check_model(MODEL, engine="bfs", out_dir=tmp_path / "bfs").outcome
    spark = check_model(MODEL, engine="spark", out_dir=tmp_path / "spark").outcome
    assert bfs.verdict == spark.verdict == "violation"
    [vb], [vs] = bfs.violations, spark.violations
    assert (vb.property, vb.length) == (vs.property, vs.length) == ("NoOrphanOp", 11)
    assert spark.distinct_states >= bfs.distinct_states and spark.states_generated >= bfs.states_generated
    assert spark.depth in (bfs.depth, bfs.depth + 1)

    readme = (REPO / "docs" / "guide.md").read_text(encoding="utf-8")
    m = re.search(r"orphan-op\.toml`: (\d+) distinct, (\d+) generated, depth (\d+),\s+against bfs's (\d+), (\d+), "
                  r"depth (\d+); both traces have the same length", readme)
    assert m, "the user guide's statement of how Spark differs from bfs is missing"
    said = [int(x) for x in m.groups()]
    assert said == [spark.distinct_states, spark.states_generated, spark.depth,
                    bfs.distinct_states, bfs.states_generated, bfs.depth]


# -- class 3: Ctrl-C on Spark --------------------------------------------------------------

SIGINT_AT = round(__import__("random").Random(24).uniform(1.0, 8.0), 2)  # seeded: JVM start-up or the search


def _children(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return kids


def test_ctrl_c_on_spark_is_one_line_and_leaves_no_jvm(tmp_path):
    """Ctrl-C used to print py4j's tracebacks (logged on the root logger) and
    Spark's JVM log lines; during the JVM's start-up it also left the JVM
    running. Now: exit 3, exactly one line on stderr, no JVM left."""
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONHASHSEED": "0"}
    env.pop("TXNCHECK_DEBUG", None)
    model = REPO / "models" / "classic" / "twophase-rm6.toml"   # about a minute on local[1]
    p = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--engine", "spark",
                          "--master", "local[1]", "--quiet", "--out", str(tmp_path / "out")],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    jvms: set[int] = set()
    deadline = time.monotonic() + SIGINT_AT
    while time.monotonic() < deadline:   # remember the JVM (spark-submit execs into it) as it starts
        jvms.update(_children(p.pid))
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        for pid in [p.pid, *jvms]:   # a JVM left running holds the stderr pipe open
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, err = p.communicate(timeout=30)
        pytest.fail(f"no exit (or a JVM holding stderr) within 60 s of SIGINT: {err[-2000:]}")
    assert err.strip().splitlines() == ["txncheck: error: interrupted (SIGINT); the run is incomplete"], err[-3000:]
    assert p.returncode == 3
    end = time.monotonic() + 20
    while any(Path(f"/proc/{j}").exists() for j in jvms) and time.monotonic() < end:
        time.sleep(0.2)
    alive = [j for j in jvms if Path(f"/proc/{j}").exists()]
    for j in alive:
        os.kill(j, signal.SIGKILL)
    assert not alive, "Spark's JVM outlived the interrupted run"
