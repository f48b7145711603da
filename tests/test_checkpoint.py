"""Checkpointed bfs runs: resume gives the same figures as an uninterrupted run,
including after a real SIGKILL; Ctrl-C stops with an incomplete report; bad
checkpoints are refused in one line; progress lines carry the live figures."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from txncheck.checker.api import check_model
from txncheck.checker.engines.checkpoint.codec import CheckpointError, _Nodes, _Reader, _Types
from txncheck.checker.cli import main
from txncheck.checker.progress import Progress
from txncheck.spec.classic.diehard import Jugs

ROOT = Path(__file__).resolve().parent.parent
RM3 = ROOT / "models/classic/twophase-rm3.toml"
RM6 = ROOT / "models/classic/twophase-rm6.toml"
# TwoPhase with 7 RMs: 296,448 distinct, 2,744,706 generated, depth 23 (several
# seconds of bfs), long enough to be killed mid-run.
RM7_FIGURES = (296_448, 2_744_706, 23)


def figures(report_json: dict) -> tuple:
    return report_json["distinct_states"], report_json["states_generated"], report_json["depth"]


def cli(*argv: str, capsys) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip().startswith("{") else None), err


def test_resume_after_a_limit_reproduces_tlc_figures(tmp_path, capsys):
    ck = tmp_path / "ck"
    code, first, _ = cli("check", str(RM6), "--json", "--quiet", "--out", str(tmp_path),
                         "--max-states", "20000", "--checkpoint", str(ck), capsys=capsys)
    assert code == 3 and first["verdict"] == "incomplete"
    assert 20000 <= first["distinct_states"] < 50816
    manifest = json.loads((ck / "checkpoint.json").read_text())
    assert sum(s["states"] for s in manifest["segments"]) == first["distinct_states"]
    code, resumed, _ = cli("check", str(RM6), "--json", "--quiet", "--out", str(tmp_path),
                           "--resume", str(ck), capsys=capsys)
    assert code == 0 and resumed["verdict"] == "ok"
    assert figures(resumed) == (50816, 402306, 20)  # TLC's figures
    assert resumed["checkpoint"]["resumed_from_states"] == first["distinct_states"]
    whole = check_model(RM6).to_json()
    assert resumed["coverage"] == whole["coverage"]


def test_resume_from_the_first_expansion_and_without_the_graph(tmp_path, capsys):
    for extra in ([], ["--no-graph"]):
        ck = tmp_path / ("ck" + "".join(extra))
        code, first, _ = cli("check", str(RM3), "--json", "--quiet", "--out", str(tmp_path),
                             "--max-states", "1", "--checkpoint", str(ck), *extra, capsys=capsys)
        assert code == 3 and first["distinct_states"] < 288
        code, resumed, _ = cli("check", str(RM3), "--json", "--quiet", "--out", str(tmp_path),
                               "--resume", str(ck), *extra, capsys=capsys)
        assert code == 0 and figures(resumed) == (288, 1146, 11)
        assert resumed["witnesses"] == {"SomeCommitted": True}


def test_resumed_violation_gives_the_same_shortest_trace(tmp_path, capsys):
    diehard = ROOT / "models/classic/diehard.toml"
    ck = tmp_path / "ck"
    code, first, _ = cli("check", str(diehard), "--json", "--quiet", "--out", str(tmp_path / "a"),
                         "--max-states", "1", "--checkpoint", str(ck), capsys=capsys)
    assert code == 3
    code, resumed, _ = cli("check", str(diehard), "--json", "--quiet", "--out", str(tmp_path / "b"),
                           "--resume", str(ck), capsys=capsys)
    assert code == 1
    assert resumed["violations"][0]["property"] == "NotSolved" and resumed["violations"][0]["length"] == 7
    steps = lambda p: [s["#meta"]["action"] for s in json.loads(Path(p).read_text())["states"]]
    code, whole, _ = cli("check", str(diehard), "--json", "--quiet", "--out", str(tmp_path / "c"), capsys=capsys)
    assert steps(resumed["violations"][0]["trace"]) == steps(whole["violations"][0]["trace"])


def _rm7(tmp_path: Path) -> Path:
    model = tmp_path / "twophase-rm7.toml"
    model.write_text('spec = "twophase"\nproperties = ["TPTypeOK", "TCConsistent"]\ndeadlock = true\n'
                     "[constants]\nrm = 7\n")
    return model


def _start(args: list[str]) -> subprocess.Popen:
    # Ctrl-C must reach the child even when the tests run as a background job,
    # which starts with SIGINT ignored (and a child inherits that).
    return subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for_checkpoint(proc: subprocess.Popen, ck: Path, timeout: float = 120.0) -> dict:
    """The manifest, once the running process has written a checkpoint."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            pytest.fail(f"the run ended (exit {proc.returncode}) before it wrote a checkpoint: {proc.stderr.read()}")
        try:
            return json.loads((ck / "checkpoint.json").read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            time.sleep(0.05)
    proc.kill()
    pytest.fail("no checkpoint written in time")



def _interrupt(proc) -> dict:
    """Ctrl-C a running check: exit 3, no traceback, an honest incomplete report."""
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    report = json.loads(out)
    assert report["verdict"] == "incomplete" and report["incomplete_reason"] == "interrupted"
    assert 0 < report["distinct_states"] < RM7_FIGURES[0]
    return report

def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_figures(tmp_path):
    model, ck = _rm7(tmp_path), tmp_path / "ck"
    proc = _start(["check", str(model), "--json", "--quiet", "--out", str(tmp_path),
                   "--checkpoint", str(ck), "--checkpoint-interval", "0.2"])
    _wait_for_checkpoint(proc, ck)
    time.sleep(0.5)  # let it write a few more
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    manifest = json.loads((ck / "checkpoint.json").read_text())
    saved = sum(s["states"] for s in manifest["segments"])
    assert 0 < saved < RM7_FIGURES[0], "the run must have been killed mid-way"

    resumed = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--json",
                              "--quiet", "--out", str(tmp_path), "--resume", str(ck)],
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    got = json.loads(resumed.stdout)
    assert got["checkpoint"]["resumed_from_states"] == saved
    assert figures(got) == RM7_FIGURES
    whole = check_model(model).to_json()
    assert figures(whole) == RM7_FIGURES
    assert got["coverage"] == whole["coverage"]


def test_ctrl_c_stops_cleanly_with_an_incomplete_report_and_a_final_checkpoint(tmp_path):
    model, ck = _rm7(tmp_path), tmp_path / "ck"
    proc = _start(["check", str(model), "--json", "--quiet", "--out", str(tmp_path),
                   "--checkpoint", str(ck), "--checkpoint-interval", "0.2"])
    _wait_for_checkpoint(proc, ck)  # the search loop is running
    report = _interrupt(proc)
    # The stop was deferred to a clean point and checkpointed: resuming loses nothing.
    manifest = json.loads((ck / "checkpoint.json").read_text())
    assert sum(s["states"] for s in manifest["segments"]) == report["distinct_states"]
    assert manifest["run"]["generated"] == report["states_generated"]
    resumed = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--json",
                              "--quiet", "--out", str(tmp_path), "--resume", str(ck)],
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert figures(json.loads(resumed.stdout)) == RM7_FIGURES


def _small_checkpoint(tmp_path: Path, capsys) -> Path:
    ck = tmp_path / "ck"
    code, _, _ = cli("check", str(RM6), "--json", "--quiet", "--out", str(tmp_path),
                     "--max-states", "5000", "--checkpoint", str(ck), capsys=capsys)
    assert code == 3
    return ck


def test_a_tampered_segment_is_refused_in_one_line(tmp_path, capsys):
    ck = _small_checkpoint(tmp_path, capsys)
    seg = sorted(ck.glob("seg-*.bin"))[0]
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0xFF
    seg.write_bytes(bytes(data))
    code, _, err = cli("check", str(RM6), "--quiet", "--out", str(tmp_path), "--resume", str(ck), capsys=capsys)
    assert code == 2
    assert err.count("\n") == 1 and "does not match the manifest" in err and seg.name in err


def test_a_manifest_naming_a_foreign_type_is_refused(tmp_path, capsys):
    ck = _small_checkpoint(tmp_path, capsys)
    manifest = json.loads((ck / "checkpoint.json").read_text())
    manifest["types"] = ["os:system"]
    (ck / "checkpoint.json").write_text(json.dumps(manifest))
    code, _, err = cli("check", str(RM6), "--quiet", "--out", str(tmp_path), "--resume", str(ck), capsys=capsys)
    assert code == 2 and "is not a type of spec twophase" in err and err.count("\n") == 1


@pytest.mark.parametrize("change, message", [
    (lambda m: m["run"].update(next=10**9), "inconsistent run counters"),
    (lambda m: m.update(version=99), "invalid checkpoint manifest"),
    (lambda m: m["segments"].pop(), "count"),
])
def test_inconsistent_manifests_are_refused(tmp_path, capsys, change, message):
    ck = _small_checkpoint(tmp_path, capsys)
    manifest = json.loads((ck / "checkpoint.json").read_text())
    change(manifest)
    (ck / "checkpoint.json").write_text(json.dumps(manifest))
    code, _, err = cli("check", str(RM6), "--quiet", "--out", str(tmp_path), "--resume", str(ck), capsys=capsys)
    assert code == 2 and err.count("\n") == 1
    assert message in err or "inconsistent" in err


def test_resuming_another_model_or_nothing_is_refused(tmp_path, capsys):
    ck = _small_checkpoint(tmp_path, capsys)
    code, _, err = cli("check", str(RM3), "--quiet", "--out", str(tmp_path), "--resume", str(ck), capsys=capsys)
    assert code == 2 and "checkpoint was written for bounds {'rm': 6}" in err
    code, _, err = cli("check", str(RM6), "--quiet", "--out", str(tmp_path), "--resume", str(ck), "--no-graph",
                       capsys=capsys)
    assert code == 2 and "--no-graph" in err
    code, _, err = cli("check", str(RM6), "--quiet", "--resume", str(tmp_path / "nothing"), capsys=capsys)
    assert code == 2 and "no checkpoint here" in err
    with pytest.raises(CheckpointError):
        check_model(RM6, options={"resume": str(tmp_path / "nothing")})


def test_a_manifest_that_is_a_folder_is_named(tmp_path, capsys):
    """It said "5: Is a directory" (the descriptor, not the file), exit 3."""
    ck = tmp_path / "ck"
    (ck / "checkpoint.json").mkdir(parents=True)
    code, _, err = cli("check", str(RM3), "--quiet", "--out", str(tmp_path), "--resume", str(ck), capsys=capsys)
    assert (code, err) == (2, f"txncheck: error: {ck / 'checkpoint.json'}: the manifest is not a regular file "
                              "but a folder\n")


def test_checkpoints_are_written_atomically_and_listed(tmp_path, capsys):
    ck = _small_checkpoint(tmp_path, capsys)
    manifest = json.loads((ck / "checkpoint.json").read_text())
    listed = {s["file"] for s in manifest["segments"]}
    assert listed == {p.name for p in ck.glob("seg-*.bin")}
    assert not list(ck.glob(".tmp-*")), "no temporary file may be left behind"
    assert manifest["identity"]["spec"] == "twophase" and manifest["identity"]["bounds"] == {"rm": 6}


def test_progress_lines_carry_queue_depth_and_rate():
    buf = io.StringIO()
    report = check_model(RM6, progress=Progress(stream=buf, delay=0, interval=0))
    assert report.outcome.distinct_states == 50816
    lines = [ln for ln in buf.getvalue().splitlines() if ln]
    assert lines, "a non-TTY stream gets plain progress lines"
    last = lines[-1]
    for word in ("distinct", "generated", "queue", "depth", "states/s"):
        assert word in last
    assert "\r" not in buf.getvalue()


def test_ctrl_c_without_checkpoints_also_reports_incomplete(tmp_path):
    model = _rm7(tmp_path)
    proc = _start(["check", str(model), "--json", "--out", str(tmp_path)])
    line = proc.stderr.readline()  # the first progress line (after two seconds): the search is running
    assert "distinct" in line and "queue" in line, line
    _interrupt(proc)


# -- the segment codec, on arbitrary state-like values ---------------------------

scalars = st.one_of(st.integers(-2**70, 2**70), st.text(max_size=5), st.booleans(), st.none())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(tuple),
        st.frozensets(inner, max_size=4),
        st.tuples(inner, inner).map(lambda t: Jugs(*t)),
    ),
    max_leaves=25,
)


def _typed(v):
    """A value with its container types spelled out (NamedTuple == tuple otherwise)."""
    if isinstance(v, frozenset):
        return ("set", frozenset(_typed(x) for x in v))
    if isinstance(v, tuple):
        return (type(v).__name__, tuple(_typed(x) for x in v))
    return (type(v).__name__, v)


@given(st.lists(st.tuples(values, values).map(tuple), min_size=1, max_size=6))
def test_the_node_table_round_trips_values_and_their_types(states):
    types = _Types()
    nodes = _Nodes(types)
    out = bytearray()
    ids = [nodes.node(s, out) for s in states]
    table: list = []
    r = _Reader(bytes(out), "segment", [Jugs] * len(types.names), table)
    while r.pos < len(out):
        r.node()
    assert len(table) == len(nodes.objects)
    for s, k in zip(states, ids):
        assert _typed(table[k]) == _typed(s)


@given(st.binary(max_size=64))
def test_the_node_reader_refuses_garbage_in_one_line(data):
    table: list = []
    r = _Reader(data, "seg-000001.bin", [Jugs], table)
    try:
        while r.pos < len(data):
            r.node()
    except CheckpointError as exc:
        assert str(exc).startswith("seg-000001.bin: ") and "\n" not in str(exc)


def test_a_data_file_edited_between_runs_in_one_process_is_named(tmp_path, capsys):
    """A process that checks again (the Python API, a test) reads the spec's data file again in
    `setup`: the checkpoint must be compared with what it read then, not with the first read."""
    from .test_hostile_faults import _spec_with_a_guard_in

    folder, data, edit = _spec_with_a_guard_in(tmp_path, "data")
    model, ck = folder / "lk.toml", tmp_path / "ck"
    code, _, _ = cli("check", str(model), "--quiet", "--out", str(tmp_path), "--checkpoint", str(ck),
                     "--max-states", "2", capsys=capsys)
    assert code == 3
    data.write_text(data.read_text().replace(*edit))
    code, _, err = cli("check", str(model), "--quiet", "--out", str(tmp_path), "--resume", str(ck), capsys=capsys)
    assert (code, err) == (2, f"txncheck: error: {ck}: checkpoint was written by other code of spec lk: "
                              f"{data.resolve()} changed since; start a fresh run\n")
