"""The hostile-input corpus (issue 24): every case runs the real command line in
a subprocess, bounded by a timeout, and asserts the exit code, exactly one line
on stderr (never a traceback), and that nothing was written outside `--out`.

Classes (the issue's numbering): 1 missing extras, 2 output errors, 4 parsers of
untrusted input, 7 replay of an edited trace, 8 special files, 9 terminal and
renderers, 11 errors in a spec's own code. Signals (3) and planted symlinks (6)
are in tests/test_hostile_faults.py; read-only and full disks (2) in
tests/test_hostile_outputs.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DIEHARD = REPO / "models" / "classic" / "diehard.toml"  # a violation of NotSolved in 7 states
TWOPHASE = REPO / "models" / "classic" / "twophase-rm3.toml"  # ok
PIP_TRACE = REPO / "counterexamples" / "pip473" / "append-before-op.itf.json"
TIMEOUT = 60


def tree(root: Path) -> set[str]:
    out = set()
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def txncheck(tmp_path: Path, *args: str, env: dict | None = None, allowed=("work/out",)):
    """Run `txncheck ARGS` in tmp_path/work (TMPDIR tmp_path/tmp); the only new
    paths allowed under tmp_path are those under `allowed`."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    before = tree(tmp_path)
    e = {**os.environ, "TMPDIR": str(tmp), "PYTHONHASHSEED": "0", **(env or {})}
    p = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", *args], cwd=work, env=e,
                       capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    new = tree(tmp_path) - before
    stray = sorted(n for n in new if not any(n == a or n.startswith(a + os.sep) for a in allowed))
    assert not stray, f"written outside --out: {stray}"
    return p


def one_error_line(p, code: int, *needles: str, info_lines: int = 0):
    lines = p.stderr.strip().splitlines()
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.returncode == code, (p.returncode, p.stderr[-2000:])
    errors = [ln for ln in lines if ln.startswith("txncheck: error: ")]
    assert len(errors) == 1 and len(lines) == 1 + info_lines, lines[-5:]
    for n in needles:
        assert n in errors[0], errors[0]
    return errors[0]


def model_file(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def trace_doc() -> dict:
    return json.loads(PIP_TRACE.read_text(encoding="utf-8"))


def trace_file(tmp_path: Path, doc, name: str = "t.itf.json") -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return p


# -- 1. missing extras ----------------------------------------------------------

def _missing(tmp_path: Path, *modules: str) -> dict:
    """PYTHONPATH with modules that fail to import as an absent one does."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    for m in modules:
        (shim / f"{m}.py").write_text(f"raise ModuleNotFoundError(\"No module named '{m}'\", name={m!r})\n")
    return {"PYTHONPATH": str(shim)}


def test_spark_engine_without_pyspark(tmp_path):
    p = txncheck(tmp_path, "check", str(TWOPHASE), "--engine", "spark", "--quiet", env=_missing(tmp_path, "pyspark"))
    one_error_line(p, 3, "pyspark", "(pip install pyspark pyarrow)")


def test_sweep_without_pyspark(tmp_path):
    p = txncheck(tmp_path, "sweep", str(REPO / "models" / "sweeps" / "classic.toml"), "--out", "out",
                 env=_missing(tmp_path, "pyspark"))
    one_error_line(p, 3, "pyspark", info_lines=1)  # the "sweep ...: N cells" line comes first


def test_gate_without_pyspark_is_an_environment_fault(tmp_path):
    """Every model an ERROR and exit 2 (bad input) used to be the gate's answer
    to a missing pyspark; it is the machine, not the models: exit 3."""
    models = tmp_path / "models"
    models.mkdir()
    for name in ("diehard.toml", "twophase-rm3.toml"):
        (models / name).write_text((REPO / "models" / "classic" / name).read_text())
    p = txncheck(tmp_path, "check", "--all", str(models), "--engine", "spark", "--quiet", "--json",
                 env=_missing(tmp_path, "pyspark"))
    assert (p.returncode, p.stderr) == (3, "")
    doc = json.loads(p.stdout)
    assert doc["exit_code"] == 3 and [m["exit_code"] for m in doc["models"]] == [3, 3]


def test_zookeeper_store_without_kazoo(tmp_path):
    p = txncheck(tmp_path, "replay", str(PIP_TRACE), "--store", "zookeeper", env=_missing(tmp_path, "kazoo"))
    one_error_line(p, 3, "kazoo", "(pip install kazoo)")


def test_spark_engine_without_java(tmp_path):
    bin_dir = tmp_path / "bin"  # PATH with this Python only: no java
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    env = {"PATH": str(bin_dir)}
    env_clean = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    p = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "check", str(TWOPHASE), "--engine", "spark",
                        "--quiet"], cwd=tmp_path, env={**env_clean, **env}, capture_output=True, text=True,
                       timeout=TIMEOUT)
    one_error_line(p, 3, "no java")


# -- 2. results lost on output errors --------------------------------------------

def test_violation_kept_when_out_is_a_file(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "out").write_text("a file, not a folder")
    p = txncheck(tmp_path, "check", str(DIEHARD), "--out", "out", "--quiet")
    one_error_line(p, 1, "cannot write the counterexample trace")
    assert "verdict: violation" in p.stdout and "14 distinct states" in p.stdout
    assert "(trace not written)" in p.stdout


def test_violation_json_kept_when_out_is_under_a_file(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "out").write_text("a file, not a folder")
    p = txncheck(tmp_path, "check", str(DIEHARD), "--out", "out/deeper", "--json", "--quiet")
    one_error_line(p, 1, "cannot write the counterexample trace")
    doc = json.loads(p.stdout)
    assert (doc["verdict"], doc["distinct_states"], doc["violations"][0]["length"]) == ("violation", 14, 7)
    assert doc["violations"][0]["trace"] is None


def test_ok_run_unaffected_by_unwritable_out(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "out").write_text("a file")
    p = txncheck(tmp_path, "check", str(TWOPHASE), "--out", "out", "--quiet")
    assert (p.returncode, p.stderr) == (0, "") and "288 distinct states" in p.stdout


def test_show_output_to_a_folder(tmp_path):
    (tmp_path / "work" / "out").mkdir(parents=True)
    p = txncheck(tmp_path, "show", str(PIP_TRACE), "-o", "out")
    one_error_line(p, 3, "out")


def test_graph_output_to_a_folder(tmp_path):
    (tmp_path / "work" / "out").mkdir(parents=True)
    p = txncheck(tmp_path, "graph", str(DIEHARD), "-o", "out")
    one_error_line(p, 3, "out")


# read-only and full `--out`, `-o`, checkpoint and sweep folders: tests/test_hostile_outputs.py


# -- 4. parsers of untrusted input -------------------------------------------------

BASE = 'spec = "diehard"\n'


@pytest.mark.parametrize("text, needle", [
    (BASE + "x = " + "[" * 100_000 + "]" * 100_000 + "\n", "nest"),
    (BASE + "[constants]\nbig_capacity = " + "9" * 5000 + "\n", "digit"),
    (BASE + "max_seconds = nan\n", "max_seconds"),
    (BASE + "max_seconds = inf\n", "max_seconds"),
    (BASE + "max_states = " + "9" * 4400 + "\n", "digit"),
    (BASE + '[temporal]\nP = "eventually ' + "(" * 50_000 + "TRUE" + ")" * 50_000 + '"\n', ""),
], ids=["deep-array", "long-int", "nan-budget", "inf-budget", "long-int-budget", "deep-formula"])
def test_hostile_model_file(tmp_path, text, needle):
    m = model_file(tmp_path, text)
    p = txncheck(tmp_path, "check", str(m), "--quiet")
    one_error_line(p, 2, needle)


def test_sweep_nan_budget(tmp_path):
    m = model_file(tmp_path, 'max_seconds = nan\n[[grid]]\nmodel = "x.toml"\n', "s.toml")
    p = txncheck(tmp_path, "sweep", str(m))
    one_error_line(p, 2, "max_seconds")


@pytest.mark.parametrize("edit, needle", [
    (lambda d: json.dumps(d)[:-1] + ', "x": ' + "7" * 5000 + "}", "number"),
    (lambda d: '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nest"),
    (lambda d: (d["states"][1].__setitem__("crashes", {"#bigint": "\u00b2"}), d)[1], "state 1"),
    (lambda d: (d["states"][1].__setitem__("crashes", {"#bigint": "1" * 200}), d)[1], "state 1"),
], ids=["long-int", "deep-array", "unicode-digit", "long-bigint"])
def test_hostile_trace(tmp_path, edit, needle):
    t = trace_file(tmp_path, edit(trace_doc()))
    for cmd in ("show", "replay"):
        p = txncheck(tmp_path, cmd, str(t))
        one_error_line(p, 2, needle)


def test_checkpoint_manifest_with_a_long_int(tmp_path):
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "checkpoint.json").write_text('{"format": ' + "1" * 5000 + "}")
    p = txncheck(tmp_path, "check", str(TWOPHASE), "--resume", str(ck), "--quiet")
    one_error_line(p, 2, "checkpoint")


# -- 7. replay compares values, not only the recorded fingerprints ------------------

def test_replay_refuses_edited_values_with_kept_fingerprints(tmp_path):
    doc = trace_doc()
    doc["states"][2]["crashes"] = {"#bigint": "7"}  # fingerprint of state 2 left as it was
    p = txncheck(tmp_path, "replay", str(trace_file(tmp_path, doc)))
    one_error_line(p, 2, "state 2", "does not follow the spec")
    assert "reproduced" not in p.stdout


def test_replay_of_the_unedited_trace_still_reproduces(tmp_path):
    p = txncheck(tmp_path, "replay", str(trace_file(tmp_path, trace_doc())))
    assert (p.returncode, p.stderr) == (1, "") and "reproduced at step 4" in p.stdout


# -- 8. special files ----------------------------------------------------------------

def _fifo(tmp_path: Path) -> Path:
    f = tmp_path / "fifo"
    os.mkfifo(f)
    return f


@pytest.mark.parametrize("cmd", ["check", "graph", "show", "replay", "sweep"])
def test_fifo_is_refused(tmp_path, cmd):
    p = txncheck(tmp_path, cmd, str(_fifo(tmp_path)))
    one_error_line(p, 2, "not a regular file")


@pytest.mark.parametrize("cmd", ["check", "show", "replay"])
def test_dev_zero_is_refused(tmp_path, cmd):
    p = txncheck(tmp_path, cmd, "/dev/zero")
    one_error_line(p, 2, "not a regular file")


@pytest.mark.parametrize("cmd", ["check", "show", "replay", "sweep"])
def test_overlong_file_name(tmp_path, cmd):
    p = txncheck(tmp_path, cmd, str(tmp_path / ("a" * 300 + ".toml")))
    one_error_line(p, 2, "too long")


def test_folder_as_model(tmp_path):
    p = txncheck(tmp_path, "check", str(tmp_path))
    one_error_line(p, 2, "is a directory")


# -- 9. terminal and renderers ----------------------------------------------------------

def test_lone_surrogate_in_an_action_name(tmp_path):
    doc = trace_doc()
    doc["states"][1]["#meta"]["action"] = "publish\ud800"
    p = txncheck(tmp_path, "show", str(trace_file(tmp_path, doc)))
    one_error_line(p, 2, "action name")


@pytest.mark.parametrize("args", [["show", "--format", "html"], ["show", "--format", "dot"], ["replay"]])
def test_meta_property_as_an_object(tmp_path, args):
    doc = trace_doc()
    doc["#meta"]["property"] = {"not": "a name"}
    p = txncheck(tmp_path, args[0], str(trace_file(tmp_path, doc)), *args[1:])
    one_error_line(p, 2, "#meta.property")


def test_escape_sequences_never_reach_the_terminal(tmp_path):
    doc = trace_doc()
    doc["states"][1]["client"] = {"#tup": ["\x1b]0;owned\x07\x1b[2J"]}
    p = txncheck(tmp_path, "show", str(trace_file(tmp_path, doc)))
    assert (p.returncode, p.stderr) == (0, "")
    assert "\x1b" not in p.stdout and "\x07" not in p.stdout and "\\x1b]0;owned" in p.stdout


ESC = "\\u001b]0;owned\\u0007\\u001b[2J"   # TOML escapes: the file is valid, its text is hostile


def test_list_escapes_a_model_files_description_and_name(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "a.toml").write_text(f'spec = "diehard"\ndescription = "{ESC}"\n')
    (models / "b.toml").write_text(f'spec = "x{ESC}"\n')
    (models / "c\x1b[2J.toml").write_text('spec = "diehard"\n')
    p = txncheck(tmp_path, "list", str(models))
    assert (p.returncode, p.stderr) == (0, "")
    assert "\x1b" not in p.stdout and "\x07" not in p.stdout
    assert p.stdout.count("\\x1b") == 5


def test_gate_escapes_a_model_files_name(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "die\x1b[2J.toml").write_text(DIEHARD.read_text())
    p = txncheck(tmp_path, "check", "--all", str(models), "--out", "out", "--quiet")
    assert (p.returncode, p.stderr) == (0, "") and "PASS" in p.stdout
    assert "\x1b" not in p.stdout and "die\\x1b[2J.toml" in p.stdout


# -- 11. errors in a spec's own code -------------------------------------------------------

DRIVER = '''
import sys
from txncheck.spec.classic.diehard import DieHard, Jugs
from txncheck.checker.cli import main

def broken_next(self, s):
    yield from ()
    raise ZeroDivisionError("a bug in next")

def unhashable_init(self):
    yield Jugs(0, [0])

def broken_observe(self, s):
    return {"big": s.big, "small": undefined_symbol}

fault = sys.argv[1]
if fault == "next":
    DieHard.next = broken_next
elif fault == "init":
    DieHard.init_states = unhashable_init
else:
    DieHard.observe = broken_observe
sys.exit(main(sys.argv[2:]))
'''


@pytest.mark.parametrize("fault, needles", [
    ("next", ["spec error at", "driver.py:8", "broken_next", "ZeroDivisionError"]),
    ("init", ["spec error", "not hashable"]),
    ("observe", ["spec error at", "driver.py:14", "broken_observe", "NameError"]),
])
def test_spec_error_is_exit_2_naming_the_line(tmp_path, fault, needles):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    argv = [sys.executable, str(driver), fault, "check", str(DIEHARD), "--quiet", "--out", str(tmp_path / "out")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
    one_error_line(p, 2, *needles)
    d = subprocess.run(argv + ["--debug"], capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
    assert d.returncode == 2 and "Traceback" in d.stderr and d.stderr.strip().splitlines()[-1].startswith("txncheck: error:")


def test_debug_shows_the_traceback_of_bad_input(tmp_path):
    p = txncheck(tmp_path, "check", "no-such.toml", "--debug")
    assert p.returncode == 2 and "Traceback" in p.stderr and "ModelError" in p.stderr


def test_no_command_output_for_help(tmp_path):
    p = txncheck(tmp_path, "--help")
    assert p.returncode == 0 and "usage" in p.stdout  # --help is not an error


# -- 11b. a spec's code that ends the process or poses as Ctrl-C (issue 38) -------------------------
# Before: any SystemExit of code 0 or 2 passed through as the exit code, os._exit(0) ended every
# command with 0, and a spec's own KeyboardInterrupt was reported as a Ctrl-C.

NO_PYC = {"PYTHONDONTWRITEBYTECODE": "1"}  # importing the spec writes nothing beside it
ANCHORS = {"next": "    def next(self, s: State):\n", "setup": "    def setup(self) -> None:\n",
           "import": "import z3\n"}


def planted_spec(tmp_path: Path, line: str, where: str = "next", name: str = "lk") -> Path:
    """The folder `txncheck new NAME` writes (a spec and two models), with `line` planted
    first in `where`; returns the folder."""
    import argparse

    from txncheck.checker.commands.new import run as new

    new(argparse.Namespace(name=name, dir=str(tmp_path)))
    spec = tmp_path / name / f"{name}.py"
    anchor = ANCHORS[where]
    indent = "" if where == "import" else "        "
    spec.write_text(spec.read_text().replace(anchor, anchor + indent + line + "\n", 1))
    return tmp_path / name


def planted_line(folder: Path, line: str) -> int:
    return [x.strip() for x in folder.joinpath(f"{folder.name}.py").read_text().splitlines()].index(line) + 1


@pytest.mark.parametrize("line, needle", [
    ("import sys; sys.exit(0)", "called sys.exit(0)"),
    ("import sys; sys.exit(2)", "called sys.exit(2)"),
    ("raise SystemExit", "called sys.exit(None)"),
    ("raise KeyboardInterrupt", "raised KeyboardInterrupt itself (no signal was received)"),
], ids=["exit-0", "exit-2", "exit-none", "keyboard-interrupt"])
def test_a_spec_that_exits_is_a_spec_error(tmp_path, line, needle):
    folder = planted_spec(tmp_path, line)
    p = txncheck(tmp_path, "check", str(folder / "lk-racy.toml"), "--quiet", env=NO_PYC)
    one_error_line(p, 2, f"lk.py:{planted_line(folder, line)}: in next", needle)


def test_a_spec_that_exits_does_not_end_the_gate(tmp_path):
    folder = planted_spec(tmp_path, "import sys; sys.exit(0)")
    p = txncheck(tmp_path, "check", "--all", str(folder), "--junit", "out/gate.xml", "--quiet", env=NO_PYC)
    assert (p.returncode, p.stderr) == (2, "")
    assert p.stdout.count("called sys.exit(0)") == 2 and "gate: 2 models, 2 not as expected" in p.stdout
    assert "<testsuite" in (tmp_path / "work" / "out" / "gate.xml").read_text()


@pytest.mark.parametrize("where", ["import", "setup"])
def test_a_spec_that_exits_while_loading_names_the_line(tmp_path, where):
    line = "raise SystemExit(0)"
    folder = planted_spec(tmp_path, line, where)
    p = txncheck(tmp_path, "check", str(folder / "lk.toml"), "--quiet", env=NO_PYC)
    one_error_line(p, 2, f"lk.py:{planted_line(folder, line)}", "sys.exit(0)")


@pytest.mark.parametrize("args", [["check", "{m}"], ["check", "--all", "{d}", "--junit", "out/gate.xml"]],
                         ids=["check", "gate"])
def test_os_exit_in_a_spec_is_never_a_success(tmp_path, args):
    """os._exit skips every handler: the supervising parent (checker/supervisor.py) sees that
    the process ended without a verdict."""
    folder = planted_spec(tmp_path, "import os; os._exit(0)")
    argv = [a.format(m=folder / "lk.toml", d=folder) for a in args]
    p = txncheck(tmp_path, *argv, "--quiet", env=NO_PYC)
    if "--all" in args:   # each model runs in a child of the gate's (test_hostile_gate.py): it fails, the gate reports
        assert p.returncode == 3 and "PASS" not in p.stdout and p.stdout.count("os._exit in a spec?") == 2
        assert "gate: 2 models, 2 not as expected" in p.stdout
        return
    one_error_line(p, 3, "exited with status 0 before txncheck reached a verdict", "os._exit")
    assert "verdict: ok" not in p.stdout


def test_json_is_one_object_whatever_the_spec_prints(tmp_path):
    folder = planted_spec(tmp_path, 'print("from next"); import os; os.write(1, b"raw fd 1\\n")')
    p = txncheck(tmp_path, "check", str(folder / "lk-racy.toml"), "--json", "--quiet", env=NO_PYC)
    assert p.returncode == 1 and json.loads(p.stdout)["verdict"] == "violation"
    assert "from next" in p.stderr and "raw fd 1" in p.stderr
    p = txncheck(tmp_path, "check", "--all", str(folder), "--json", "--quiet", env=NO_PYC)
    assert p.returncode == 0 and json.loads(p.stdout)["summary"]["models"] == 2


def test_list_reads_model_files_without_running_their_specs(tmp_path):
    folder = planted_spec(tmp_path, "open(__file__ + '.ran', 'w').close(); import os; os._exit(0)", "import")
    p = txncheck(tmp_path, "list", str(folder), env=NO_PYC)
    assert (p.returncode, p.stderr) == (0, "")
    assert not (folder / "lk.py.ran").exists()
    assert p.stdout.count(f"(file {folder.resolve() / 'lk.py'}: not imported by list; check runs it)") == 2


# -- 4b. smaller parsers and folders (issue 38) -----------------------------------------------------

def test_a_sweep_grid_too_large_is_refused_before_its_cells_are_made(tmp_path):
    """8,000,000 cells (200 x 200 x 200 valid bounds) were enumerated, each spec instantiated."""
    values = ", ".join(["5"] * 200)
    sweep = model_file(tmp_path, f'[[grid]]\nmodel = "{DIEHARD}"\n[grid.constants]\nbig_capacity = [{values}]\n'
                                 f'small_capacity = [{values}]\ngoal = [{values.replace("5", "4")}]\n', "s.toml")
    p = txncheck(tmp_path, "sweep", str(sweep))
    one_error_line(p, 2, str(sweep), "8,000,000 cells", "at most 10,000")


def test_a_nul_in_a_sweeps_model_path(tmp_path):
    sweep = model_file(tmp_path, '[[grid]]\nmodel = "x\\u0000.toml"\n', "s.toml")
    p = txncheck(tmp_path, "sweep", str(sweep))
    one_error_line(p, 2, str(sweep), "NUL")


def test_a_temporal_formula_nested_too_deep_names_the_file(tmp_path):
    m = model_file(tmp_path, BASE + '[temporal]\nP = "eventually ' + "not " * 20_000 + 'TRUE"\n')
    p = txncheck(tmp_path, "check", str(m), "--quiet")
    one_error_line(p, 2, str(m), "nests more than 100 deep")


def test_resume_from_nothing_creates_nothing(tmp_path):
    p = txncheck(tmp_path, "check", str(TWOPHASE), "--resume", "nope", "--quiet")  # `txncheck` sees no stray file
    one_error_line(p, 2, "nope: no checkpoint here")


# -- the pytest plugin (issue 38): hostile model files under the collected folder ------------------------

def _pytest_txncheck(tmp_path: Path, folder: Path) -> subprocess.CompletedProcess:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp), **NO_PYC}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--txncheck", str(folder),
                           "--rootdir", str(folder), "--basetemp", str(tmp_path / "basetemp")],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=folder, env=env)


def test_the_plugin_survives_a_spec_that_exits(tmp_path):
    """os._exit(0) in a spec ended the whole pytest session with exit 0."""
    folder = planted_spec(tmp_path, "import os; os._exit(0)")
    p = _pytest_txncheck(tmp_path, folder)
    # every item fails, the session goes on: two models' two invariants each, and the fixed lock's proof
    assert p.returncode == 1 and "5 failed" in p.stdout, p.stdout[-3000:]
    assert "exited with status 0 before it reported a result" in p.stdout
    assert not list((tmp_path / "tmp").glob("txncheck-traces-*"))


def test_the_plugin_reports_a_deep_toml_and_checks_the_rest(tmp_path):
    """One deeply nested *.toml aborted the whole collection (RecursionError); every collected
    model left a txncheck-traces-* folder in the temp directory."""
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "diehard.toml").write_text(DIEHARD.read_text())
    (folder / "deep.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    p = _pytest_txncheck(tmp_path, folder)
    assert p.returncode == 1 and "1 failed, 2 passed, 1 skipped" in p.stdout, p.stdout[-3000:]  # diehard: its figures too
    assert "deep.toml::load" in p.stdout and "nests too deeply" in p.stdout
    assert not list((tmp_path / "tmp").glob("txncheck-traces-*"))


def test_the_plugin_reads_no_more_of_a_toml_than_a_model_holds(tmp_path):
    """A 1 GiB *.toml was read in full before its size was checked."""
    import tracemalloc

    from txncheck.checker.model_files import is_model_file

    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(256 << 20)  # sparse: costs no disk
    tracemalloc.start()
    try:
        assert is_model_file(big)  # collected, so that loading it says it is too large
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak
