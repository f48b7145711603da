"""The exit-code contract under faults (checker/failures.py): a crash is
never exit 1 (a CI pipeline reads 1 as "a bug was found"), every failure is
one line on stderr, `--debug` adds the traceback, and a verdict is printed
even when its trace cannot be written."""

from __future__ import annotations

import json
import operator
import random
import sys
from pathlib import Path

import pytest

from txncheck.checker import api
from txncheck.checker.cli import main
from txncheck.spec.classic.diehard import DieHard

from .conftest import MODELS

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


def test_a_spec_whose_next_raises_is_a_spec_error_naming_file_and_line(capsys, tmp_path, monkeypatch):
    def broken(self, s):
        raise ValueError("jug overflow")

    monkeypatch.setattr(DieHard, "next", broken)
    rc, _, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    line = one_line(err)
    assert rc == 2
    assert "spec error: ValueError: jug overflow" in line and f"{__file__}:" in line and "in broken()" in line


def test_debug_shows_the_traceback(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(DieHard, "next", lambda self, s: 1 / 0)
    rc, _, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path), "--debug")
    assert rc == 2 and "Traceback (most recent call last)" in err and "ZeroDivisionError" in err
    assert err.strip().splitlines()[-1].startswith("txncheck: error: spec error: ZeroDivisionError")


def test_a_state_holding_a_list_is_a_spec_error(capsys, tmp_path, monkeypatch):
    original = DieHard.next

    def with_list(self, s):
        for a, t in original(self, s):
            yield a, [t]

    monkeypatch.setattr(DieHard, "next", with_list)
    rc, _, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    assert rc == 2 and "spec error" in one_line(err)


def test_an_observation_missing_a_symbol_is_a_spec_error(capsys, tmp_path, monkeypatch):
    original = DieHard.observe

    def partial(self, s):
        obs = dict(original(self, s))
        obs.pop(sorted(obs)[0])
        return obs

    monkeypatch.setattr(DieHard, "observe", partial)
    rc, _, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    line = one_line(err)
    assert rc == 2 and "observe() gave no value for the schema symbol" in line


def test_an_internal_error_is_not_a_violation(capsys, tmp_path, monkeypatch):
    # a fault inside the checker itself (a builtin called wrongly from
    # checker/api.py), after a run that found a violation
    monkeypatch.setattr(api, "check_temporal", operator.itemgetter("x"))
    rc, out, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    assert rc == 3 and out == ""
    line = one_line(err)
    assert line.startswith("txncheck: internal error: TypeError: ") and line.endswith(
        "(no verdict; --debug shows the traceback)")


def test_a_missing_dependency_is_one_line_and_exit_3(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)   # import pyspark now fails
    rc, _, err = run(capsys, "check", TWOPHASE, "--engine", "spark", "--quiet", "--out", str(tmp_path))
    line = one_line(err)
    assert rc == 3 and "a dependency is missing: pyspark" in line and "txncheck[spark]" in line


@pytest.mark.parametrize("as_json", [False, True])
def test_a_violation_is_reported_when_its_trace_cannot_be_written(capsys, tmp_path, as_json):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    argv = ["check", DIEHARD, "--quiet", "--out", str(blocker / "traces")] + (["--json"] if as_json else [])
    rc, out, err = run(capsys, *argv)
    assert rc == 1   # the verdict stands: a violation was found
    line = one_line(err)
    assert line.startswith("txncheck: error: cannot write the trace ") and "diehard.itf.json" in line
    if as_json:
        doc = json.loads(out)
        assert doc["verdict"] == "violation" and doc["violations"][0]["trace"] is None
        assert doc["output_errors"] == [line.removeprefix("txncheck: error: ")]
    else:
        assert "verdict: violation" in out and "the trace could not be written" in out
    assert not (tmp_path / "traces").exists()


def test_interrupt_is_exit_3(capsys, tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "get_engine", lambda name: interrupted)
    rc, _, err = run(capsys, "check", DIEHARD, "--quiet", "--out", str(tmp_path))
    assert rc == 3 and one_line(err) == "txncheck: interrupted"


# -- hostile input files: each is one line and exit 2, never a hang -----------------


def _hostile_inputs(tmp: Path) -> dict:
    import os

    fifo = tmp / "fifo.toml"
    os.mkfifo(fifo)
    deep = tmp / "deep.toml"
    deep.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    nan = tmp / "nan.toml"
    nan.write_text('spec = "diehard"\nmax_seconds = nan\n')
    deep_formula = tmp / "deep-formula.toml"
    deep_formula.write_text('spec = "diehard"\n[temporal]\nP = "eventually ' + "(" * 50_000 + "NotSolved"
                            + ")" * 50_000 + '"\n')
    digits = tmp / "digits.toml"
    digits.write_text((MODELS / "pip473" / "merged.toml").read_text().replace('writes = "t1:0"', 'writes = "t1:\u00b2"'))
    return {
        "a FIFO as a model": (["check", str(fifo)], "is not a regular file"),
        "a FIFO as a trace": (["show", str(fifo)], "is not a regular file"),
        "a device as a model": (["check", "/dev/zero"], "is not a regular file"),
        "a device as a trace": (["replay", "/dev/zero"], "is not a regular file"),
        "a name too long": (["check", str(tmp / ("a" * 300 + ".toml"))], "File name too long"),
        "TOML nested 100,000 deep": (["check", str(deep)], "TOML nests too deeply"),
        "max_seconds = nan": (["check", str(nan)], "'max_seconds' must be a positive number"),
        "a temporal formula nested 50,000 deep": (["check", str(deep_formula)], "nests too deeply"),
        "a Unicode digit in a bound": (["check", str(digits)], "must be an integer in 0..3"),
    }


HOSTILE = ["a FIFO as a model", "a FIFO as a trace", "a device as a model", "a device as a trace",
           "a name too long", "TOML nested 100,000 deep", "max_seconds = nan", "a Unicode digit in a bound",
           "a temporal formula nested 50,000 deep"]


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_input_file_is_one_line_exit_2_and_no_hang(case, tmp_path):
    import subprocess

    argv, needle = _hostile_inputs(tmp_path)[case]
    out_dir = tmp_path / "out"
    before = set(tmp_path.iterdir())
    p = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", *argv, "--out", str(out_dir)]
                       if argv[0] == "check" else [sys.executable, "-m", "txncheck.checker.cli", *argv],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, p.stderr
    assert needle in one_line(p.stderr)
    assert set(tmp_path.iterdir()) == before   # nothing written, not even --out


def test_replay_refuses_edited_values_under_kept_fingerprints(capsys, tmp_path):
    """A trace whose state values were edited but whose fingerprints were
    kept used to replay as reproduced: the values decide now."""
    src = MODELS.parent / "counterexamples" / "pip473" / "merged.itf.json"
    doc = json.loads(src.read_text())
    rc, _, _ = run(capsys, "replay", str(src))
    assert rc == 1
    doc["states"][2]["client"] = {"#tup": ["told-committed", "none"]}   # fingerprint of state 2 kept
    edited = tmp_path / "edited.itf.json"
    edited.write_text(json.dumps(doc))
    rc, out, err = run(capsys, "replay", str(edited))
    assert rc == 2 and "state 2: endTxn" in one_line(err) and "does not follow the spec" in err


def _edited_trace(tmp_path, edit) -> str:
    doc = json.loads((MODELS.parent / "counterexamples" / "pip473" / "merged.itf.json").read_text())
    edit(doc)
    p = tmp_path / "t.itf.json"
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.mark.parametrize("name,edit,needle", [
    ("a lone surrogate in an action", lambda d: d["states"][1]["#meta"].__setitem__("action", "new\ud800Txn"),
     "lone surrogate"),
    ("#meta.property as an object", lambda d: d["#meta"].__setitem__("property", {"x": 1}),
     "'#meta.property' must be a string"),
    ("an escape sequence in an action", lambda d: d["states"][1]["#meta"].__setitem__("action", "a\x1b[31mb"),
     "has control characters"),
])
@pytest.mark.parametrize("command", [["show"], ["show", "--format", "html"], ["show", "--format", "dot"], ["replay"]])
def test_hostile_trace_is_one_line_exit_2(capsys, tmp_path, name, edit, needle, command):
    path = _edited_trace(tmp_path, edit)
    rc, out, err = run(capsys, *command, path)
    assert rc == 2 and needle in one_line(err) and out == ""


def test_escape_sequences_in_trace_values_never_reach_the_terminal(capsys, tmp_path):
    path = _edited_trace(tmp_path, lambda d: d["states"][1].__setitem__("hdr", {"#tup": ["\x1b[31mRED", "NONE"]}))
    rc, out, _ = run(capsys, "show", path)
    assert rc == 0 and "\x1b" not in out and "\\x1b[31mRED" in out


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
    from txncheck.checker import gate

    real = gate.load_model
    calls = []

    def load(path):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
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
    from txncheck.checker.checkpoint import CheckpointError

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
    from txncheck.checker.engines import spark

    def must_not_start(*a, **k):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(spark, "spark_session", must_not_start)
    argv = [a.replace("{ck}", str(tmp_path / "ck")) for a in argv]
    rc, _, err = run(capsys, "check", TWOPHASE, "--engine", "spark", "--quiet", "--out", str(tmp_path), *argv)
    assert rc == code and needle in one_line(err)


# -- signals at seeded moments of a real run --------------------------------------------

_DELAYS = [round(random.Random(seed).uniform(1.0, 3.0), 2) for seed in range(3)]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("delay", _DELAYS)
def test_a_signal_mid_run_ends_incomplete_with_a_report(sig, delay, tmp_path):
    import signal
    import subprocess
    import time

    model = MODELS / "pip473" / "fixed.toml"   # about a minute of search: the signal lands inside it
    proc = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--json", "--quiet",
                             "--no-graph", "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    doc = json.loads(out)   # the report is printed, as one JSON object
    assert doc["verdict"] == "incomplete" and doc["incomplete_reason"] == "interrupted"
