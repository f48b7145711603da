"""A user's own spec on the spark engine, named by path from a model file in a
folder outside txncheck: its files ship to the executors (spark_ship) and its
state classes revive there (checker/revive.py: ClassNames). Every level goes to the
executors (TXNCHECK_SPARK_DRIVER_BELOW=0), so no expansion happens in the
driver, which has the spec loaded already; the figures and the shortest
violation are bfs's. tests/spark/test_cluster_standalone.py does the same
on a standalone cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GUARD = 600   # seconds: a hang guard for one CLI run, never a timing check


def tutorial_spec(folder: Path) -> Path:
    """The tutorial's spec, as `txncheck new my_lock` writes it, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["new", "my_lock"]) == 0
    finally:
        os.chdir(cwd)
    return folder / "my_lock"


def bfs_and_spark_agree(bfs, sp) -> None:
    assert sp["verdict"] == bfs.verdict
    assert [(v["property"], v["length"]) for v in sp["violations"]] == \
        [(v.property, v.length) for v in bfs.violations]
    if bfs.verdict == "ok":
        assert (sp["distinct_states"], sp["states_generated"], sp["depth"]) == \
            (bfs.distinct_states, bfs.states_generated, bfs.depth)


def split_spec(folder: Path) -> Path:
    """examples/mutex with its state class in a package beside it (lib/), a
    constant in a sibling module, and its processes' names in a data file it
    reads in `setup`: what it imports and reads must ship too."""
    shutil.copytree(EXAMPLES / "mutex", folder)
    (folder / "data").mkdir()
    (folder / "data" / "names.txt").write_text("p1 p2 p3 p4\n")
    (folder / "lib").mkdir()
    (folder / "lib" / "__init__.py").write_text("")
    src = (folder / "mutex.py").read_text()
    head, rest = src.split("class S(NamedTuple):", 1)
    state_class, rest = rest.split("\n\n\n", 1)
    (folder / "lib" / "split_states.py").write_text(
        "from typing import NamedTuple\n\n\nclass S(NamedTuple):" + state_class + "\n")
    (folder / "split_consts.py").write_text("IDLE = 'idle'\n")
    rest = rest.replace('S(("idle",)', "S((IDLE,)").replace(
        'self.ps = tuple(f"p{i}" for i in range(1, self.constants["procs"] + 1))',
        'self.ps = tuple(NAMES.read_text().split()[:self.constants["procs"]])')
    assert "NAMES" in rest
    (folder / "mutex.py").write_text(
        head.replace("import z3\n", "import z3\nfrom pathlib import Path\nfrom lib.split_states import S\n"
                     "from split_consts import IDLE\n\nNAMES = Path(__file__).parent / 'data' / 'names.txt'\n")
        + rest)
    return folder


def test_a_spec_split_over_a_package_runs_on_the_executors(spark, tmp_path, monkeypatch):
    user = split_spec(tmp_path / "proto")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("TXNCHECK_SPARK_DRIVER_BELOW", "0")
    for model in ("racy.toml", "fixed.toml"):
        rel = os.path.relpath(user / model)
        bfs = check_model(rel, keep_graph=False).outcome
        sp = check_model(rel, engine="spark").outcome
        assert {x["where"] for x in sp.extra["spark"]["per_level"]} == {"spark"}
        bfs_and_spark_agree(bfs, {"verdict": sp.verdict, "distinct_states": sp.distinct_states,
                                  "states_generated": sp.states_generated, "depth": sp.depth,
                                  "violations": [{"property": v.property, "length": v.length}
                                                 for v in sp.violations]})


def cli(model: Path, cwd: Path, tmp_path: Path) -> dict:
    """`txncheck check MODEL --engine spark --json` from `cwd`, the model's path relative to it."""
    argv = [sys.executable, "-m", "txncheck.checker.cli", "check", os.path.relpath(model, cwd), "--engine", "spark",
            "--quiet", "--json", "--out", str(tmp_path / "out")]
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, "TXNCHECK_SPARK_DRIVER_BELOW": "0"},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=GUARD)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert {x["where"] for x in doc["spark"]["per_level"]} == {"spark"}
    return doc


@pytest.mark.spark
@pytest.mark.parametrize("which", ["mutex"])   # the tutorial's spec: on the cluster (test_cluster_standalone.py)
def test_the_cli_runs_a_user_spec_on_local_spark_from_any_folder(which, tmp_path):
    """examples/mutex (and, given "tutorial", the tutorial's spec made by
    `txncheck new`), checked from a folder that is neither theirs nor
    txncheck's: bfs's verdicts, counts and shortest violation. Each spec
    runs on one of the two backends: a JVM start per run is CI's time."""
    if which == "tutorial":
        folder = tutorial_spec(tmp_path / "user")
        models = [folder / "my_lock-racy.toml", folder / "my_lock.toml"]
    else:
        models = [EXAMPLES / "mutex" / "racy.toml", EXAMPLES / "mutex" / "fixed.toml"]
    cwd = tmp_path / "somewhere" / "else"
    cwd.mkdir(parents=True)
    for model in models:
        bfs = check_model(model, keep_graph=False).outcome
        bfs_and_spark_agree(bfs, cli(model, cwd, tmp_path))


ON_EXECUTOR = 'import sys\nON_EXECUTOR = "pyspark.daemon" in sys.modules or "pyspark.worker" in sys.modules\n'


@pytest.mark.parametrize("bug, error, needles", [
    ("            if pc == 'checked' and ON_EXECUTOR:\n                1 / 0\n", "SpecCodeError",
     ["{folder}/mutex.py:{line}: in next: spec Mutex raised ZeroDivisionError", "from state S(pc=("]),
    ("            if pc == 'checked' and ON_EXECUTOR:\n                yield ('Take', ()), S(list(s.pc), True)\n",
     "SpecCodeError", ["{folder}/mutex.py: spec Mutex: action Take() made a state that is not immutable: pc holds a list"]),
    ("if ON_EXECUTOR:\n    import not_installed_anywhere  # noqa\n", "EnvironmentFault",
     ["on a Spark executor: {folder}/mutex.py:", "No module named 'not_installed_anywhere'",
      "must be installed on every executor"]),
], ids=["raises", "list-state", "import"])
def test_a_spec_failing_on_an_executor_is_one_line_naming_the_user_s_file(spark, tmp_path, monkeypatch,
                                                                          bug, error, needles):
    """The worker guards the spec as bfs does (spec_errors), and the driver
    tells its one line with the user's own paths, not the executor's copy's."""
    folder = tmp_path / "proto"
    shutil.copytree(EXAMPLES / "mutex", folder)
    src = (folder / "mutex.py").read_text().replace("import z3\n", "import z3\n" + ON_EXECUTOR)
    if bug.startswith("if"):
        src = src.replace("from txncheck.spec.api", bug + "from txncheck.spec.api")
    else:
        src = src.replace("            if pc == \"checked\":\n", bug + "            if pc == \"checked\":\n")
    (folder / "mutex.py").write_text(src)
    line = next(i for i, x in enumerate(src.splitlines(), 1) if "1 / 0" in x) if "1 / 0" in bug else 0
    monkeypatch.setenv("TXNCHECK_SPARK_DRIVER_BELOW", "0")
    assert check_model(folder / "racy.toml", keep_graph=False).outcome.verdict == "violation"   # fine in the driver
    with pytest.raises(Exception) as got:
        check_model(folder / "racy.toml", engine="spark")
    assert type(got.value).__name__ == error
    text = str(got.value)
    assert "\n" not in text and "txncheck-spec-" not in text, text
    for n in needles:
        assert n.format(line=line, folder=folder) in text, text


def test_a_user_spec_s_checkpoint_resumes_and_is_bound_to_its_code(spark, tmp_path, monkeypatch):
    """A run of a spec by path stopped after level 2 resumes to bfs's totals
    (its state classes named in the manifest revive); after an edit of the
    spec's code the checkpoint is refused, as bfs's are."""
    from txncheck.checker.engines import EngineError

    folder = tmp_path / "proto"
    shutil.copytree(EXAMPLES / "mutex", folder)
    monkeypatch.setenv("TXNCHECK_SPARK_DRIVER_BELOW", "0")
    model, ckpt = folder / "fixed.toml", str(tmp_path / "run")
    bfs = check_model(model, keep_graph=False).outcome
    first = check_model(model, engine="spark", options={"checkpoint": ckpt, "stop_after_level": 2}).outcome
    assert first.verdict == "incomplete"
    assert any(name.startswith("<spec>:") for _, _, name in json.loads((tmp_path / "run" / "manifest.json")
                                                                        .read_text())["shapes"])
    resumed = check_model(model, engine="spark", options={"resume": ckpt}).outcome
    assert (resumed.verdict, resumed.distinct_states, resumed.states_generated, resumed.depth) == \
        (bfs.verdict, bfs.distinct_states, bfs.states_generated, bfs.depth)
    src = (folder / "mutex.py").read_text()
    (folder / "mutex.py").write_text(src.replace('yield ("Release"', 'yield ("Unlock"'))
    with pytest.raises(EngineError, match="another model"):
        check_model(model, engine="spark", options={"resume": ckpt})
