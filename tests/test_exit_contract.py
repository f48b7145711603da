"""The exit-code contract under faults that need more than a hostile file
(tests/test_hostile_inputs.py has those): an internal error is never exit 1,
Ctrl-C while the gate loads a model, a counterexample forged through a
checkpoint, a symlink planted in a checkpoint folder, cluster options
refused before Spark starts, and SIGINT/SIGTERM at seeded moments of a real
run."""

from __future__ import annotations

import json
import operator
import os
import random
import sys
from pathlib import Path

import pytest

from txncheck.checker import api
from txncheck.checker.cli import main
from txncheck.spec.classic.diehard import DieHard

from .helpers import MODELS

DIEHARD = str(MODELS / "classic" / "diehard.toml")      # a violation of NotSolved in 7 states
TWOPHASE = str(MODELS / "classic" / "twophase-rm3.toml")  # ok


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_an_internal_error_is_not_a_violation(capsys, tmp_path, monkeypatch):
    # a fault inside the checker itself (a builtin called wrongly from
    # checker/api.py), after a run that found a violation
    monkeypatch.setattr(api, "check_temporal", operator.itemgetter("x"))
    rc, out, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    assert rc == 3 and out == ""
    line = one_line(err)
    assert line.startswith("txncheck: error: internal error, the run is incomplete: TypeError: ") and line.endswith(
        "(--debug shows the traceback)")


def test_interrupt_is_exit_3(capsys, tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "get_engine", lambda name: interrupted)
    rc, _, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    assert rc == 3 and one_line(err) == "txncheck: error: interrupted (SIGINT); the run is incomplete"


def test_a_symlink_planted_in_a_checkpoint_folder_redirects_no_write(capsys, tmp_path):
    """The temp files of a checkpoint had predictable names: a link planted
    at one redirected the write outside the folder."""
    import os

    ck = tmp_path / "ck"
    ck.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    # the names bfs's checkpoint (.tmp-PID-NAME) and Spark's manifest (NAME.tmp) used
    for name in ("checkpoint.json", "manifest.json"):
        os.symlink(victim, ck / f".tmp-{os.getpid()}-{name}")
        os.symlink(victim, ck / name.replace(".json", ".tmp"))
    rc, _, _ = run(capsys, "check", str(MODELS / "classic" / "twophase-rm6.toml"), "--quiet", "--json",
                   "--out", str(tmp_path / "out"), "--max-states", "20000", "--checkpoint", str(ck))
    assert rc == 3 and (ck / "checkpoint.json").is_file() and not (ck / "checkpoint.json").is_symlink()
    assert victim.read_text() == "untouched"


def test_ctrl_c_while_the_gate_loads_a_model_still_writes_the_summary_and_reports(capsys, tmp_path, monkeypatch):
    """Ctrl-C outside the search loop (loading a model, Z3's checks) used to
    end `check --all` with no summary and no JUnit file."""
    import signal

    from txncheck.checker import gate

    real = gate.load_model
    calls = []
    gate_pid = os.getpid()

    def load(path):
        if os.getpid() == gate_pid:  # the gate's own process (each model's check runs in a child of its own)
            calls.append(path)
            if len(calls) == 2:  # Ctrl-C (a KeyboardInterrupt that no signal caused is the spec's own error)
                signal.raise_signal(signal.SIGINT)
        return real(path)

    monkeypatch.setattr(gate, "load_model", load)
    junit = tmp_path / "gate.xml"
    rc, out, _ = run(capsys, "check", "--all", str(MODELS / "classic"), "--out", str(tmp_path / "out"),
                     "--junit", str(junit), "--quiet")
    assert rc == 3 and len(calls) == 2
    assert "gate: 2 models" in out and "interrupted" in out
    assert junit.is_file() and "<testsuite" in junit.read_text()


def test_a_resumed_counterexample_must_be_a_run_of_the_spec(capsys, tmp_path):
    """A crafted checkpoint could make --resume report a violation that does
    not exist: the counterexample rebuilt from it is now checked step by
    step against the spec, and a forged one is refused (exit 2)."""
    from txncheck.checker.api import _check_resumed_paths
    from txncheck.checker.engines.checkpoint import CheckpointError

    ck = tmp_path / "ck"
    rc, first, _ = run(capsys, "check", DIEHARD, "--quiet", "--json", "--out", str(tmp_path), "--max-states", "2",
                       "--checkpoint", str(ck))
    assert rc == 3
    rc, out, _ = run(capsys, "check", DIEHARD, "--quiet", "--json", "--out", str(tmp_path), "--resume", str(ck))
    doc = json.loads(out)
    assert rc == 1 and doc["violations"][0]["length"] == 7   # a real counterexample passes the check
    rep = api.check_model(DIEHARD)
    (v,) = rep.outcome.violations
    action, state = v.path[3]
    v.path[3] = (action, state._replace(big=state.big + 1))   # one forged step
    with pytest.raises(CheckpointError, match="not a run of diehard"):
        _check_resumed_paths(rep.spec, rep.outcome, ck)


@pytest.mark.parametrize("argv,code,needle", [
    (["--master", "spark://127.0.0.1:1", "--checkpoint", "{ck}"], 3, "cannot reach the Spark master"),
    (["--master", "spark://127.0.0.1:1"], 2, "needs --checkpoint DIR on storage every executor shares"),
    (["--master", "spark://nohostport", "--checkpoint", "{ck}"], 2, "expected spark://HOST:PORT"),
])
def test_bad_cluster_options_are_refused_before_spark_starts(capsys, tmp_path, monkeypatch, argv, code, needle):
    from txncheck.checker.engines.spark import engine as spark

    def must_not_start(*a, **k):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(spark, "spark_session", must_not_start)
    argv = [a.replace("{ck}", str(tmp_path / "ck")) for a in argv]
    rc, _, err = run(capsys, "check", TWOPHASE, "--engine", "spark", "--quiet", "--out", str(tmp_path), *argv)
    assert rc == code and needle in one_line(err)


# -- signals at seeded moments of a real run --------------------------------------------

_DELAYS = [round(random.Random(seed).uniform(0.0, 1.0), 2) for seed in range(3)]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("delay", _DELAYS)
def test_a_signal_mid_run_ends_incomplete_with_a_report(sig, delay, tmp_path):
    """The signal lands inside the search (after its first progress line,
    plus a seeded delay): the report is printed, incomplete, exit 3."""
    import signal
    import subprocess
    import time

    model = MODELS / "pip473" / "fixed.toml"   # about a minute of search
    proc = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--json",
                             "--no-graph", "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    first = proc.stderr.readline()   # progress starts after two seconds of search
    assert "distinct" in first, first
    time.sleep(delay)
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3 and out, (proc.returncode, err[-2000:])
    assert "Traceback" not in err
    doc = json.loads(out)   # the report is printed, as one JSON object
    assert doc["verdict"] == "incomplete" and doc["incomplete_reason"] == "interrupted"
