"""bench/spark_memory.py's measurement on one tiny model, on local[2]: the
counts are bfs's, every role it reports (driver Python, driver JVM, the
Python workers) has a positive peak, and its table has the columns the docs
show. No figure is compared with a bound: timing and memory depend on the
machine. The cluster path runs in test_cluster_standalone.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TWOPHASE = ROOT / "models" / "classic" / "twophase-rm3.toml"

pytestmark = pytest.mark.spark


def bench():
    spec = importlib.util.spec_from_file_location("bench_spark_memory", ROOT / "bench" / "spark_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_memory_bench_measures_each_role_of_a_local_run(tmp_path):
    b = bench()
    # frontiers below 51 states in the driver: level 6 (54 states) goes to Spark,
    # so the driver JVM's Python workers start
    r = b.measure(TWOPHASE, tmp_path, master="local[2]", driver_below=51)
    assert (r["verdict"], r["distinct"], r["generated"], r["depth"]) == b.bfs_counts(TWOPHASE) == ("ok", 288, 1146, 11)
    assert (r["on_spark"], r["levels"]) == (1, 11)
    assert r["driver_python"] > 0 and r["driver_jvm"] > 0 and r["driver_workers"] > 0, r
    assert r["executors"] == {}   # local[2]: the executor is the driver JVM
    head, rule, row = b.table([r]).splitlines()
    assert [c.strip() for c in head.strip("|").split("|")] == list(b.COLUMNS)
    cells = dict(zip(b.COLUMNS, (c.strip() for c in row.strip("|").split("|"))))
    assert cells["distinct"] == "288" and cells["levels on Spark"] == "1 of 11"
    assert cells["executor JVMs"] == "in the driver JVM"
    assert all(int(cells[c]) > 0 for c in ("driver Python", "driver JVM", "Python workers (PSS)"))


def test_spark_processes_are_told_apart_by_their_command_line():
    role = bench().role
    assert role(["/usr/lib/jvm/java-17/bin/java", "-cp", "x", "org.apache.spark.deploy.SparkSubmit"]) == "driver-jvm"
    assert role(["/usr/bin/java", "org.apache.spark.executor.CoarseGrainedExecutorBackend"]) == "executor-jvm"
    assert role(["/v/bin/python", "-m", "pyspark.daemon", "pyspark.worker"]) == "python-worker"
    assert role(["/usr/bin/java", "org.apache.spark.launcher.Main"]) is None
    assert role(["/usr/bin/java", "org.apache.spark.deploy.worker.Worker"]) is None
    assert role(["bash", "spark-submit"]) is None and role([]) is None
