"""The Spark suite: one local Spark session for the whole test session
(`local[2]`, UI off, two shuffle partitions, a modest driver). Every test
that uses it is marked `spark`, so `pytest -m "not spark"` skips them; the
input-validation tests here need no Spark and still run.

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


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: needs a local Spark session and Java (deselect with -m 'not spark')")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents and "spark" in getattr(item, "fixturenames", ()):
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
