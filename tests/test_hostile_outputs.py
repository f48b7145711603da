"""Class 2 of issue 24 on real disks: outputs on a read-only folder and on a
full one. A verdict is never lost: `check` prints it (and the counts and the
`--json` object) and then reports the write in one line; `show -o`, `graph
-o`, a checkpoint and `sweep --out` that cannot write exit 3 in one line.

Running as root, a chmod'ed folder is still writable, so the read-only
folder is a read-only tmpfs mount (EROFS even for root); not root, it is a
chmod 0555 folder. The full disk is a 64 KiB tmpfs filled to the last byte,
which needs root (mount); without it those cases are skipped with the reason.
Every mount is unmounted in the fixture's teardown, whatever the test did.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from .test_hostile_inputs import DIEHARD, PIP_TRACE, REPO, TWOPHASE, one_error_line, txncheck

RM6 = REPO / "models" / "classic" / "twophase-rm6.toml"  # ok, 50,816 distinct states: many checkpoint writes


def _can_write_in(folder: Path) -> bool:
    try:
        (folder / ".probe").write_text("x")
    except OSError:
        return False
    (folder / ".probe").unlink()
    return True


@contextmanager
def _tmpfs(mountpoint: Path, options: str):
    mountpoint.mkdir(parents=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mountpoint)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        for _ in range(50):  # a child that still holds a file there: wait a little, then detach lazily
            if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            subprocess.run(["umount", "-l", str(mountpoint)], check=False)


@pytest.fixture
def read_only_out(tmp_path):
    """tmp_path/work/out, which no write can change (the `txncheck` helper's --out)."""
    out = tmp_path / "work" / "out"
    if os.geteuid() == 0:
        with _tmpfs(out, "ro,size=1m"):
            assert not _can_write_in(out)
            yield out
        return
    out.mkdir(parents=True)
    os.chmod(out, 0o555)
    try:
        if _can_write_in(out):
            pytest.skip("this user writes into a chmod 0555 folder (CAP_DAC_OVERRIDE) and cannot mount")
        yield out
    finally:
        os.chmod(out, 0o755)


@pytest.fixture
def full_out(tmp_path):
    """tmp_path/work/out on a 64 KiB tmpfs with no byte free (a filler file takes them all)."""
    out = tmp_path / "work" / "out"
    with _tmpfs(out, "size=64k"):
        fd = os.open(out / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:  # ENOSPC: full
            pass
        finally:
            os.close(fd)
        assert os.statvfs(out).f_bavail == 0
        yield out


def _contents(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- check --out -----------------------------------------------------------------------

def test_violation_kept_when_out_is_read_only(tmp_path, read_only_out):
    p = txncheck(tmp_path, "check", str(DIEHARD), "--out", "out", "--quiet")
    line = one_error_line(p, 1, "cannot write the counterexample trace", "diehard.itf.json")
    assert ".tmp-" not in line  # the trace is named, not the temp file the write failed on
    assert "verdict: violation" in p.stdout and "14 distinct states, 73 states generated" in p.stdout
    assert "counterexample has 7 states -> (trace not written)" in p.stdout
    assert _contents(read_only_out) == []


def test_violation_json_kept_when_out_is_read_only(tmp_path, read_only_out):
    p = txncheck(tmp_path, "check", str(DIEHARD), "--out", "out/deeper", "--json", "--quiet")
    one_error_line(p, 1, "cannot write the counterexample trace")
    doc = json.loads(p.stdout)
    assert (doc["verdict"], doc["distinct_states"], doc["states_generated"]) == ("violation", 14, 73)
    assert (doc["violations"][0]["length"], doc["violations"][0]["trace"]) == (7, None)


def test_ok_run_unaffected_by_a_read_only_out(tmp_path, read_only_out):
    p = txncheck(tmp_path, "check", str(TWOPHASE), "--out", "out", "--quiet")
    assert (p.returncode, p.stderr) == (0, "") and "verdict: ok" in p.stdout


def test_violation_kept_when_the_trace_does_not_fit(tmp_path, full_out):
    p = txncheck(tmp_path, "check", str(DIEHARD), "--out", "out", "--json", "--quiet")
    one_error_line(p, 1, "diehard.itf.json", "No space left on device")
    doc = json.loads(p.stdout)
    assert (doc["verdict"], doc["distinct_states"], doc["violations"][0]["trace"]) == ("violation", 14, None)
    assert _contents(full_out) == ["filler"]  # no temp file left behind


# -- show -o and graph -o ------------------------------------------------------------------

@pytest.mark.parametrize("target", ["out/trace.txt", "out"], ids=["file-in-read-only", "the-read-only-folder"])
def test_show_to_a_read_only_path(tmp_path, read_only_out, target):
    p = txncheck(tmp_path, "show", str(PIP_TRACE), "-o", target)
    one_error_line(p, 3, "cannot write report")
    assert p.stdout == ""


@pytest.mark.parametrize("target", ["out/graph.dot", "out"], ids=["file-in-read-only", "the-read-only-folder"])
def test_graph_to_a_read_only_path(tmp_path, read_only_out, target):
    p = txncheck(tmp_path, "graph", str(DIEHARD), "-o", target)
    one_error_line(p, 3, "cannot write report")


def test_show_to_a_full_disk(tmp_path, full_out):
    p = txncheck(tmp_path, "show", str(PIP_TRACE), "--format", "html", "-o", "out/trace.html")
    one_error_line(p, 3, "out/trace.html", "No space left on device")
    assert _contents(full_out) == ["filler"]


# -- bfs --checkpoint ------------------------------------------------------------------------

def test_bfs_checkpoint_on_a_full_disk_stops_with_its_report(tmp_path, full_out):
    """The disk refuses the first segment: the run stops there, prints its
    report (incomplete, with the counts so far), reports the write in one
    line and exits 3. It used to exit 2 (bad input) with nothing printed."""
    p = txncheck(tmp_path, "check", str(RM6), "--checkpoint", "out/ck", "--checkpoint-interval", "0.01",
                 "--json", "--quiet")
    one_error_line(p, 3, "out/ck/seg-000001.bin", "cannot write checkpoint", "No space left on device")
    doc = json.loads(p.stdout)
    assert (doc["verdict"], doc["incomplete_reason"]) == ("incomplete", "checkpoint not written")
    assert doc["distinct_states"] > 0 and doc["checkpoint"]["writes"] == 0
    assert _contents(full_out) == ["ck", "filler"]


def test_bfs_checkpoint_on_a_read_only_folder(tmp_path, read_only_out):
    p = txncheck(tmp_path, "check", str(RM6), "--checkpoint", "out/ck", "--quiet")
    one_error_line(p, 3, "out/ck", "cannot create checkpoint folder")


def test_bfs_checkpoint_that_fails_midway_stays_resumable(tmp_path):
    """A write that fails after good ones leaves the last good checkpoint,
    and no later write (the final one included) touches it."""
    ck = tmp_path / "work" / "out" / "ck"
    with _tmpfs(ck.parent, "size=1m"):
        p = txncheck(tmp_path, "check", str(RM6), "--checkpoint", "out/ck", "--checkpoint-interval", "0.01",
                     "--quiet")
        if "write failed" not in p.stdout:
            pytest.skip("the whole run fitted in 1 MiB of checkpoints")
        one_error_line(p, 3, "cannot write checkpoint", "No space left on device")
        writes = int(p.stdout.split("checkpoint: out/ck (")[1].split(" write")[0])
        assert writes >= 1 and "continue with --resume out/ck" in p.stdout
        shutil.copytree(ck, tmp_path / "ck")
    r = txncheck(tmp_path, "check", str(RM6), "--resume", str(tmp_path / "ck"), "--quiet", "--json",
                 allowed=("ck", "work/out"))
    doc = json.loads(r.stdout)
    assert (r.returncode, doc["verdict"], doc["distinct_states"]) == (0, "ok", 50816), r.stderr


# -- Spark: --checkpoint and sweep --out -------------------------------------------------------

def _spark_ready() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


needs_spark = pytest.mark.skipif(not _spark_ready(), reason="needs pyspark and Java")

SWEEP = """description = "DieHard by goal"
engine = "bfs"
[[grid]]
model = "{model}"
[grid.constants]
goal = [4, 6]
[[expect]]
where = {{ goal = 4 }}
verdict = "violation"
"""


@needs_spark
def test_spark_checkpoint_on_a_read_only_folder_is_refused_before_spark_starts(tmp_path, read_only_out):
    t0 = time.monotonic()
    p = txncheck(tmp_path, "check", str(DIEHARD), "--engine", "spark", "--master", "local[1]",
                 "--checkpoint", "out/ck", "--quiet")
    one_error_line(p, 3, "out/ck", "cannot write checkpoint")
    assert time.monotonic() - t0 < 10  # no JVM was started


@needs_spark
def test_sweep_to_a_read_only_out_is_refused_before_spark_starts(tmp_path, read_only_out):
    sweep = tmp_path / "s.toml"
    sweep.write_text(SWEEP.format(model=DIEHARD))
    p = txncheck(tmp_path, "sweep", str(sweep), "--out", "out")
    one_error_line(p, 3, "out/traces", info_lines=1)  # the "sweep ...: 2 cells" line comes first
    assert "Exception" not in p.stderr and p.stdout == ""


@needs_spark
def test_sweep_to_a_full_disk_still_prints_its_table(tmp_path, full_out):
    """The cells run, their traces and the table do not fit: the table is
    printed all the same (its untrusted description escaped), the lost writes
    are one line, exit 3. It used to be a Python traceback relayed by the
    JVM, dozens of lines, and no table."""
    sweep = tmp_path / "s.toml"
    sweep.write_text(SWEEP.format(model=DIEHARD).replace("DieHard by goal", "DieHard \\u001b[2J by goal"))
    p = txncheck(tmp_path, "sweep", str(sweep), "--out", "out")
    one_error_line(p, 3, "cannot write the sweep table", "No space left on device", "(and 1 more)", info_lines=1)
    assert "DieHard \\x1b[2J by goal" in p.stdout and "\x1b" not in p.stdout
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith("| 0 ") or ln.startswith("| 1 ")]
    assert "| violation | NotSolved | 7 |" in rows[0] and "trace not written (No space left on device)" in rows[0]
    assert "| ok |" in rows[1]
    assert "unmet expectation" not in p.stdout
    assert [c for c in _contents(full_out) if not c.startswith("traces")] == ["filler"]


# -- check --all: its JUnit and SARIF reports ------------------------------------------------

@pytest.mark.parametrize("flag", ["--junit", "--sarif"])
def test_gate_report_on_a_read_only_path_keeps_the_summary(tmp_path, read_only_out, flag):
    """A report that cannot be written was bad usage (exit 2) and the summary
    (or the --json object) was never printed."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(DIEHARD, models / "diehard.toml")
    p = txncheck(tmp_path, "check", "--all", str(models), "--out", "traces", flag, "out/report.xml", "--json",
                 "--quiet", allowed=("work/traces",))
    one_error_line(p, 3, "out/report.xml", "cannot write report")
    doc = json.loads(p.stdout)
    assert doc["exit_code"] == 0 and doc["summary"]["models"] == 1


def test_gate_with_a_read_only_out_keeps_every_verdict(tmp_path, read_only_out):
    """A trace the gate could not write turned its model into an ERROR (exit
    2) and lost the verdict; now the model is judged, the write is noted under
    its line, and the gate exits 3 (an environment fault)."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(DIEHARD, models / "diehard.toml")
    shutil.copy(TWOPHASE, models / "twophase.toml")
    p = txncheck(tmp_path, "check", "--all", str(models), "--out", "out", "--quiet")
    assert (p.returncode, p.stderr, "Traceback" in p.stdout) == (3, "", False), p.stdout
    assert "violation of NotSolved (7 states); expected violation of NotSolved" in p.stdout
    assert "diehard.itf.json: trace not written (" in p.stdout and "cases: 8 passed, 0 failed, 0 errors" in p.stdout  # with each model's figures and twophase's proof


# -- a reader that goes away (issue 38): the exit code and the reports stay ---------------------------
# Before: BrokenPipeError was exit 0, whatever the verdict, and the gate lost its JUnit file.

def _gate_models(tmp_path: Path) -> Path:
    """diehard (a violation it expects) and a copy that expects ok: the gate must exit 1."""
    models = tmp_path / "models"
    models.mkdir()
    text = DIEHARD.read_text()
    (models / "diehard.toml").write_text(text)
    (models / "diehard-wrong.toml").write_text(text.split("[expect]")[0] + '[expect]\nverdict = "ok"\n')
    return models


def _with_stdout(tmp_path: Path, stdout_setup: str, *args: str) -> subprocess.CompletedProcess:
    """Run txncheck in tmp_path/work with stdout a pipe whose reader is gone (`closed-pipe`) or closed."""
    import sys

    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "txncheck.checker.cli", *args]
    if stdout_setup == "closed-pipe":
        r, w = os.pipe()
        os.close(r)
        try:
            return subprocess.run(argv, cwd=work, stdout=w, stderr=subprocess.PIPE, text=True, timeout=60)
        finally:
            os.close(w)
    return subprocess.run(argv, cwd=work, stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(1))  # `>&-`


@pytest.mark.parametrize("stdout", ["closed-pipe", "closed"])
def test_a_lost_stdout_keeps_the_violation(tmp_path, stdout):
    p = _with_stdout(tmp_path, stdout, "check", str(DIEHARD), "--out", "out")
    assert (p.returncode, p.stderr) == (1, "")
    p = _with_stdout(tmp_path, stdout, "check", str(DIEHARD), "--out", "out", "--json", "--quiet")
    assert (p.returncode, p.stderr) == (1, "")


@pytest.mark.parametrize("stdout", ["closed-pipe", "closed"])
def test_a_lost_stdout_keeps_the_gates_exit_code_and_reports(tmp_path, stdout):
    models = _gate_models(tmp_path)
    p = _with_stdout(tmp_path, stdout, "check", "--all", str(models), "--out", "out", "--quiet",
                     "--junit", "out/gate.xml", "--sarif", "out/gate.sarif")
    assert (p.returncode, p.stderr) == (1, "")
    junit = (tmp_path / "work" / "out" / "gate.xml").read_text()
    assert junit.count("<testcase") == 5 and "<failure" in junit  # diehard: NotSolved, TypeOK, figures
    assert json.loads((tmp_path / "work" / "out" / "gate.sarif").read_text())["version"] == "2.1.0"
