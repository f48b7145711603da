"""The Spark suite: one local Spark session for the whole test session
(`local[2]`, UI off, two shuffle partitions, a modest driver). Every test
that starts Spark is marked `spark`, so `pytest -m "not spark"` skips them;
the option checks (test_cluster_options.py) need no Spark and still run.

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


def pytest_itemcollected(item):
    """Every test here but the option checks starts Spark (the session below,
    or a `txncheck --engine spark` of its own): marked `spark`."""
    if Path(str(item.fspath)).name != "test_cluster_options.py":
        item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

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
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
