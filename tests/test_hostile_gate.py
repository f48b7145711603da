"""Issue 50's hostile cases for the gate, standard output and `profile`:
a gate over no model files is bad input, not a pass; a spec that ends its
process (`os._exit(0)`) fails its own model while the gate judges the rest
and writes its summary and JUnit; Ctrl-C at any moment of a gate keeps the
summary and the report; a report that stdout's disk refuses is exit 3 with
a line; `profile --json` keeps a spec's prints off stdout, and
`profile --max-seconds` stops a `next` that never returns."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .test_hostile_inputs import NO_PYC, one_error_line, planted_spec

REPO = Path(__file__).resolve().parent.parent
DIEHARD = REPO / "models" / "classic" / "diehard.toml"
TCOMMIT = REPO / "models" / "classic" / "tcommit-rm3.toml"


def _run(tmp_path: Path, *args: str, stdout=subprocess.PIPE, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "txncheck.checker.cli", *args], cwd=tmp_path,
                          env={**os.environ, "TMPDIR": str(tmp_path), **NO_PYC}, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _gate_folder(tmp_path: Path, *middle: tuple[str, str]) -> Path:
    """A folder of models: diehard first, `middle` (name, text) next, tcommit last."""
    folder = tmp_path / "models"
    folder.mkdir(exist_ok=True)
    (folder / "a-diehard.toml").write_text(DIEHARD.read_text())
    for name, text in middle:
        (folder / name).write_text(text)
    (folder / "z-tcommit.toml").write_text(re.sub(r"(?m)^prove_seconds = .*\n", "", TCOMMIT.read_text()))
    return folder


def test_a_gate_over_no_model_files_is_bad_input(tmp_path):
    """`check --all EMPTY_DIR` printed `gate: 0 models` and exited 0: a typo in a CI path
    turned the gate off without a sound."""
    (tmp_path / "empty").mkdir()
    p = _run(tmp_path, "check", "--all", "empty", "--junit", "gate.xml", "--sarif", "gate.sarif")
    one_error_line(p, 2, "empty: no model files here", "the gate would check nothing")
    assert p.stdout == "" and not (tmp_path / "gate.xml").exists() and not (tmp_path / "gate.sarif").exists()


def test_a_gate_over_a_repository_root_checks_its_models_only(tmp_path):
    """Every *.toml was taken for a model: a repository root failed on pyproject.toml."""
    folder = _gate_folder(tmp_path)
    (folder / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    p = _run(tmp_path, "check", "--all", "models", "--quiet", "--out", "out")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "gate: 2 models, 0 not as expected" in p.stdout and "pyproject" not in p.stdout


def test_a_spec_that_ends_the_process_fails_its_model_and_the_gate_goes_on(tmp_path):
    """os._exit(0) in one model's spec gave exit 3 with no summary and no JUnit, and the
    models after it were never judged."""
    spec = planted_spec(tmp_path, "import os; os._exit(0)")
    folder = _gate_folder(tmp_path, ("m-exits.toml", f'spec = "{spec / "lk.py"}:Lk"\nvariant = "racy"\n'))
    p = _run(tmp_path, "check", "--all", "models", "--quiet", "--out", "out", "--junit", "gate.xml")
    assert p.returncode == 3, p.stdout + p.stderr
    lines = [x for x in p.stdout.splitlines() if not x.startswith(" ")]   # a line per model, then the summary
    assert lines[0].startswith("PASS       models/a-diehard.toml")
    assert lines[1].startswith("INCOMPLETE models/m-exits.toml: ") and "os._exit in a spec?" in lines[1]
    assert lines[2].startswith("PASS       models/z-tcommit.toml")
    assert lines[3].startswith("gate: 3 models, 1 not as expected")
    junit = (tmp_path / "gate.xml").read_text()
    assert junit.count("<testsuite ") == 3 and "os._exit in a spec?" in junit


LONG = 'spec = "twophase"\n[constants]\nrm = 8\n'   # far longer than the moments below


@pytest.mark.parametrize("delay", [0.2, 0.5, 0.9, 1.4])
def test_ctrl_c_early_in_a_gate_keeps_the_summary_and_the_report(tmp_path, delay):
    """A signal in the gate's first second or so gave exit 3 with no summary or JUnit
    (7 of 16 tries)."""
    _gate_folder(tmp_path, ("m-long.toml", LONG))
    p = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", "--all", "models", "--quiet",
                          "--out", "out", "--junit", "gate.xml"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)},
                         start_new_session=True)
    time.sleep(delay)
    os.killpg(p.pid, signal.SIGINT)   # as the terminal sends it: to every process of the group
    out, err = p.communicate(timeout=30)
    assert p.returncode == 3 and "Traceback" not in err, (p.returncode, err[-2000:])
    assert err.strip().splitlines()[-1] == "txncheck: error: interrupted (SIGINT); the run is incomplete"
    if "gate:" not in out:   # the signal came before txncheck's own code ran: Python's default
        pytest.skip(f"the signal at {delay} s came during the interpreter's start-up")
    assert out.splitlines()[-1].startswith("gate: ") and out.splitlines()[-1].endswith(
        "interrupted: the models after these were not checked")
    assert "<testsuites" in (tmp_path / "gate.xml").read_text()


def test_ctrl_c_in_a_long_model_keeps_what_the_gate_found(tmp_path):
    """Ctrl-C 60 s into models/pip473/fixed.toml lost the whole report (stdout empty): the
    model's figures, the summary and the JUnit survive now, within the supervisor's grace."""
    _gate_folder(tmp_path, ("m-long.toml", LONG))
    p = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", "--all", "models",
                          "--out", "out", "--junit", "gate.xml"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)},
                         start_new_session=True)
    deadline = time.monotonic() + 60
    seen = ""
    while "m-long.toml: " not in seen:   # its progress lines: the long model is under way
        assert p.poll() is None and time.monotonic() < deadline
        seen += os.read(p.stderr.fileno(), 4096).decode()
    time.sleep(1.0)
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 2.5 and p.returncode == 3, (p.returncode, err[-2000:])
    assert "INCOMPLETE models/m-long.toml: incomplete; expected ok (" in out
    assert "interrupted: the models after these were not checked" in out
    assert (tmp_path / "gate.xml").read_text().count("<testsuite ") == 2


@pytest.mark.parametrize("model, code", [(TCOMMIT, 3), (DIEHARD, 1)], ids=["ok", "violation"])
def test_a_report_that_stdout_cannot_take_is_not_lost_silently(tmp_path, model, code):
    """`check --json > /dev/full` dropped the report with no line on stderr, exit 0."""
    with open("/dev/full", "w") as full:
        p = _run(tmp_path, "check", str(model), "--json", "--quiet", "--out", "out", stdout=full)
    one_error_line(p, code, "standard output: No space left on device: the report was not written")


def test_profile_json_keeps_a_specs_prints_off_stdout(tmp_path):
    folder = planted_spec(tmp_path, "print('hello from the spec')")
    p = _run(tmp_path, "profile", str(folder / "lk.toml"), "--json", "--quiet", "--max-states", "50")
    assert p.returncode == 0, p.stderr
    json.loads(p.stdout)
    assert "hello from the spec" in p.stderr


def test_profile_max_seconds_stops_a_next_that_never_returns(tmp_path):
    """`profile --max-seconds 3` with such a `next` was still running at 40 s."""
    folder = planted_spec(tmp_path, "while s.lock: pass")
    t0 = time.monotonic()
    p = _run(tmp_path, "profile", str(folder / "lk.toml"), "--max-seconds", "1", "--quiet", timeout=30)
    assert time.monotonic() - t0 < 10
    one_error_line(p, 3, "max-seconds 1 reached; the run is incomplete")
