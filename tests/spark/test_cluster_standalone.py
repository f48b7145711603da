"""The spark engine on a real standalone cluster: a master and two one-core
workers on 127.0.0.1 (tests/spark/cluster.py), the CLI as a user runs it
with `--master spark://127.0.0.1:PORT --checkpoint DIR`, every level sent to
the executors (TXNCHECK_SPARK_DRIVER_BELOW=0: none expanded in the driver).

- DieHard's counterexample is bfs's, file for file (its shortest solution is
  unique, so the trace cannot depend on the engine's order);
- an unsolvable DieHard (cyclic: the visited-set lookup decides its counts)
  gives bfs's counts;
- TwoPhase with 3 RMs gives bfs's (and TLC's) exact counts and level sizes
  although a worker, with its executor and Python workers, is SIGKILLed
  while the run is in its levels: Spark reruns the lost tasks on the
  remaining executor;
- a user's own spec, named by path (the tutorial's, made by `txncheck new`
  in a folder outside txncheck, and examples/mutex), checked from yet another
  folder: its files reach the executors (a copy in each worker's folder of
  the application) and the verdicts, counts and shortest violation are bfs's.

The cluster is stopped (every process group it started) even when a test
fails, and the module fails if a process of it is left behind. Skipped,
with the reason, only without Java (or pyspark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.engines.spark.session import LOCAL_JVM_OPTIONS

from .cluster import Cluster, java_missing

pytestmark = pytest.mark.spark

_why = java_missing()
if _why:
    pytest.skip(f"standalone Spark cluster: {_why}", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
TWOPHASE = ROOT / "models" / "classic" / "twophase-rm3.toml"
DIEHARD = ROOT / "models" / "classic" / "diehard.toml"
GUARD = 600   # seconds: a hang guard for one CLI run, never a timing check


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"), java_options=LOCAL_JVM_OPTIONS)
    try:
        yield c.start()
    finally:
        c.stop()
        left = c.alive()
        assert not left, f"cluster processes left running: {left}"


def cli_env(cluster: Cluster) -> dict:
    return {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        # executors that fit the one-gigabyte workers, and one core each; the driver's and the
        # executors' JVMs compile with the first tier only, as txncheck's local sessions do
        # (LOCAL_JVM_OPTIONS): in runs this short, C2 costs more CPU than it saves
        "PYSPARK_SUBMIT_ARGS": "--conf spark.executor.memory=512m --conf spark.executor.cores=1 "
                               f"--driver-java-options {LOCAL_JVM_OPTIONS} "
                               f"--conf spark.executor.extraJavaOptions={LOCAL_JVM_OPTIONS} pyspark-shell",
        "TXNCHECK_SPARK_DRIVER_BELOW": "0",
    }


def cli_argv(cluster: Cluster, model: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--engine", "spark",
            "--master", cluster.master, "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out"),
            "--json", *extra]


def test_diehard_counterexample_on_the_cluster_is_bfs_s(cluster, tmp_path):
    proc = subprocess.run(cli_argv(cluster, DIEHARD, tmp_path, "--quiet"), env=cli_env(cluster),
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=GUARD)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["spark"]["master"] == cluster.master
    assert [(v["property"], v["length"]) for v in doc["violations"]] == [("NotSolved", 7)]
    check_model(DIEHARD, out_dir=tmp_path / "bfs")
    a = json.loads((tmp_path / "bfs" / "diehard.itf.json").read_text())
    b = json.loads((tmp_path / "out" / "diehard.itf.json").read_text())
    assert a["#meta"].pop("engine") == "bfs" and b["#meta"].pop("engine") == "spark"
    assert a == b


def test_a_cyclic_model_on_the_cluster_has_bfs_s_counts(cluster, tmp_path):
    """DieHard with a goal no jug can hold: most successors were seen at an
    earlier level, so the lookup in the visited set decides the counts
    (TwoPhase's levels are layers of a DAG and never exercise it)."""
    model = tmp_path / "diehard-goal7.toml"
    model.write_text(DIEHARD.read_text().replace("goal = 4", "goal = 7").split("[expect]")[0])
    bfs = check_model(model, keep_graph=False).outcome
    assert (bfs.verdict, bfs.distinct_states, bfs.states_generated, bfs.depth) == ("ok", 16, 97, 8)
    proc = subprocess.run(cli_argv(cluster, model, tmp_path, "--quiet", "--max-states", "64"), env=cli_env(cluster),
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=GUARD)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["spark"]["master"] == cluster.master
    assert {x["where"] for x in doc["spark"]["per_level"]} == {"spark"}
    assert (doc["verdict"], doc["distinct_states"], doc["states_generated"], doc["depth"]) == ("ok", 16, 97, 8)


def test_the_memory_bench_finds_each_executor(cluster, tmp_path):
    """bench/spark_memory.py's measurement on this cluster (before a worker is
    killed below): one executor JVM per worker, each with a positive peak, and
    Python workers under them; the driver's JVM runs no task."""
    from .test_spark_memory import bench

    b = bench()
    r = b.measure(TWOPHASE, tmp_path, cluster=cluster, driver_below=51)   # level 6 (54 states) on Spark
    assert (r["master"], r["distinct"], r["generated"], r["depth"], r["on_spark"]) == (cluster.master, 288, 1146, 11, 1)
    assert r["driver_python"] > 0 and r["driver_jvm"] > 0 and r["driver_workers"] == 0, r
    assert sorted(r["executors"]) == ["worker1", "worker2"]
    assert all(jvm > 0 for jvm, _ in r["executors"].values()), r
    assert sum(py for _, py in r["executors"].values()) > 0, r


def test_a_worker_killed_mid_run_costs_nothing_but_time(cluster, tmp_path):
    bfs = check_model(TWOPHASE, keep_graph=False).outcome
    assert (bfs.distinct_states, bfs.states_generated, bfs.depth) == (288, 1146, 11)   # TLC's figures
    proc = subprocess.Popen(cli_argv(cluster, TWOPHASE, tmp_path), env=cli_env(cluster),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        seen = []
        for line in proc.stderr:   # one progress line per level
            seen.append(line)
            if line.startswith("depth 3:"):
                break
        assert proc.poll() is None, "".join(seen)   # still running: the kill lands mid-run
        assert cluster.app_log().count("Launching executor") == 2   # this run has an executor on each worker
        cluster.kill("worker1")
        out, err = proc.communicate(timeout=GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, "".join(seen) + err
    later = [x for x in err.splitlines() if x.startswith("depth ")]
    assert later and later[-1].startswith("depth 11:")   # levels 4..11 ran after the kill
    doc = json.loads(out)
    assert doc["spark"]["master"] == cluster.master
    assert (doc["verdict"], doc["distinct_states"], doc["states_generated"], doc["depth"]) == \
        ("ok", bfs.distinct_states, bfs.states_generated, bfs.depth)
    assert doc["spark"]["levels"] == [1, 7, 21, 38, 50, 54, 49, 36, 21, 9, 2]
    assert {a: c["generated"] for a, c in doc["coverage"].items()} == \
        {a: c["generated"] for a, c in bfs.coverage.items()}
    assert "Removing worker" in cluster.app_log()   # the master saw the worker go


@pytest.mark.parametrize("which", ["tutorial"])   # examples/mutex: on local Spark (test_spark_user_specs.py)
def test_a_user_spec_by_path_runs_on_the_cluster_from_any_folder(cluster, tmp_path, which):
    from .test_spark_user_specs import bfs_and_spark_agree, tutorial_spec

    if which == "tutorial":
        folder = tutorial_spec(tmp_path / "user")
        models = [folder / "my_lock-racy.toml", folder / "my_lock.toml"]
    else:
        folder = ROOT / "examples" / "mutex"
        models = [folder / "racy.toml", folder / "fixed.toml"]
    cwd = tmp_path / "somewhere" / "else"
    cwd.mkdir(parents=True)
    for i, model in enumerate(models):
        argv = cli_argv(cluster, model, tmp_path / f"run{i}", "--quiet")
        argv[4] = os.path.relpath(model, cwd)
        proc = subprocess.run(argv, cwd=cwd, env=cli_env(cluster), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=GUARD)
        assert proc.returncode in (0, 1), proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["spark"]["master"] == cluster.master
        assert {x["where"] for x in doc["spark"]["per_level"]} == {"spark"}
        bfs_and_spark_agree(check_model(model, keep_graph=False).outcome, doc)
    copies = {p.name for p in cluster.folder.glob("worker*/app-*/*/txncheck-spec-*/*.py")}
    assert folder.name + ".py" in copies, sorted(cluster.folder.rglob("txncheck-spec-*"))   # shipped, not read in place
