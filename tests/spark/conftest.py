"""The Spark suite: one local Spark session for the whole test session
(`local[2]`, UI off, two shuffle partitions, a modest driver). Every test
that starts Spark is marked `spark`, so `pytest -m "not spark"` skips them;
the input checks need no Spark and still run.

Without pyspark or Java only the test_cluster_*.py files are collected:
test_cluster_options.py needs neither, and test_cluster_standalone.py skips
itself with the reason."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

try:
    import pyspark  # noqa: F401
except ImportError:
    collect_ignore_glob = ["test_spark_*.py"]
else:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        collect_ignore_glob = ["test_spark_*.py"]


# The Spark tests of the fast tier (`make test`): one of each path through
# checker/engines/spark*.py and the sweep, on the session started once. Every
# other test that starts Spark is in the `slow` tier (CI): a JVM's work is not
# in tests/durations.txt's CPU figures, so this list, not the recording, tiers them.
FAST_SPARK = {
    "test_spark_engine.py::test_twophase_rm3_tlc_figures",        # a run to the end: TLC's figures
    "test_spark_engine.py::test_diehard_trace_is_the_bfs_trace",   # a violation's trace
    "test_spark_levels.py::test_a_violation_found_in_the_driver_is_bfs_s_trace",
    "test_spark_resume.py::test_stop_after_level_then_resume_gives_the_same_totals",
    "test_spark_sweep.py::test_unmet_expectation_exits_1",
    "test_spark_user_specs.py::test_a_spec_split_over_a_package_runs_on_the_executors",   # a spec shipped by path
}


def pytest_itemcollected(item):
    """A test that uses the session below is marked `spark` (test_cluster_*.py
    and test_spark_memory.py, which start Spark their own way, mark themselves);
    a Spark test not in FAST_SPARK is marked `slow`."""
    if "spark" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.spark)
    if item.get_closest_marker("spark") and item.nodeid.split("/")[-1] not in FAST_SPARK:
        item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    from txncheck.checker.engines.spark.session import LOCAL_JVM_OPTIONS

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("txncheck-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "768m")
        .config("spark.driver.extraJavaOptions", LOCAL_JVM_OPTIONS)   # C1 only, as the engine's local sessions
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
