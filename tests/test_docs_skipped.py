"""The examples of README.md and docs/ that cannot run as doc tests (root
package installs, a GitHub Actions workflow, the whole gate or suite, hours
of CPU) are skipped there with a reason; here each one is checked against
the code another way: its commands are the ones CI runs, or parse with the
CLI's own parser, its output has the shape the code prints (run on a subset
small enough for CI), and what it names exists.

`test_every_skipped_example_is_checked_here` fails when a skip is added
that this file does not check."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from txncheck.checker.model import load_model

from .docs_examples import DOCUMENTS, _env, _loose, _matches

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r'(?:<!-- skip: next (?P<skip>.+?) -->\n+)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$', re.S | re.M)
REASON = re.compile(r'^"[^"]+"$')

# (document, first line of the block) of every example skipped with a reason -> the test here that checks it
CHECKED = {
    ("README.md", "make check   # the main job: install, then check every quick model"):
        "test_the_readme_commands_are_what_ci_runs",
    ("docs/guide.md", "$ txncheck check --all models/ --out out/traces --junit out/txncheck.xml "
                      "--sarif out/txncheck.sarif"): "test_the_gate_example_is_the_ci_gate",
    ("docs/guide.md", "name: txncheck"): "test_the_workflow_steps_run_on_a_subset",
    ("README.md", "make -C path/to/txncheck dist"): "test_the_wheel_installs_and_gates_a_users_models",
    ("docs/guide.md", "txncheck check MODEL.toml --engine spark --master spark://host:7077 --checkpoint /shared/run1"):
        "test_skipped_txncheck_commands_parse",
    ("docs/guide.md", "txncheck sweep models/sweeps/classic.toml --master 'local[2]' --out out/classic-sweep"):
        "test_skipped_txncheck_commands_parse",
    ("docs/guide.md", "sudo apt-get install -y openjdk-17-jre-headless"): "test_the_spark_setup_is_what_install_does",
    ("docs/guide.md", "/usr/bin/time -v txncheck check bench/models/pip473-fixed-larger.toml --json --no-graph"
                      "                 # reduced"): "test_the_larger_model_commands_run_to_a_limit",
    ("docs/guide.md", 'spec = "specs/mutex.py:Mutex"   # a Python file, relative to the model file'):
        "test_each_way_to_name_a_spec_resolves",
    ("docs/performance.md", "$ .venv/bin/python bench/suite.py --only twophase-rm7"): "test_the_bench_table_has_the_suites_shape",
    ("docs/performance.md", "$ .venv/bin/python bench/suite.py --only pip473-fixed --max-seconds 2400"):
        "test_the_pip473_bench_table_is_the_suites_runs_of_fixed",
    ("docs/performance.md", "$ .venv/bin/python bench/by_path.py --rounds 2"): "test_the_by_path_table_is_the_benchs",
    ("docs/performance.md", "$ .venv/bin/python bench/tlc_paxos.py --tlc-jar /work/tlc/dist/tla2tools.jar "
                            "--tla /work/tlc/paxos"): "test_the_tlc_table_is_the_benchs",
    ("docs/performance.md", "$ .venv/bin/python bench/reductions.py"): "test_the_reductions_table_is_the_benchs",
    ("docs/performance.md", "$ .venv/bin/python bench/capacity.py --workers 1"): "test_the_capacity_table_is_the_benchs",
    ("docs/performance.md", "$ txncheck profile models/pip473/fixed-standard.toml --max-states 600000"):
        "test_the_standard_models_profile_has_the_commands_shape",
    **{("docs/performance.md", f"$ .venv/bin/python bench/{cmd}"): "test_the_spark_bench_commands_are_the_scripts"
       for cmd in ("spark_memory.py --driver-below 0", "spark_memory.py",
                   "spark_levels.py models/classic/twophase-rm6.toml",
                   "spark_levels.py models/classic/twophase-rm6.toml --driver-below 0",
                   "spark_vs_bfs.py --case twophase-rm7 --master 'local[2]'",
                   "spark_vs_bfs.py --case pip473 --master 'local[2]' --max-seconds 150",
                   "spark_cluster.py --max-states 600000 --resume-at 40000",
                   "spark_cluster.py --max-seconds 7200 --partitions 256 --out bench-cluster.json")},
}


def documents() -> list[Path]:
    found = {p for pattern in DOCUMENTS for p in ROOT.glob(pattern)}
    return sorted(p for p in found if "findings" not in p.parts)


def skipped() -> dict[tuple[str, str], tuple[str, str, str]]:
    """(document, first line) -> (reason, language, body) of each block skipped with a reason."""
    out = {}
    for doc in documents():
        for m in BLOCK.finditer(doc.read_text()):
            if m.group("skip") and REASON.match(m.group("skip")):
                body = m.group("body")
                out[(doc.relative_to(ROOT).as_posix(), body.splitlines()[0])] = (m.group("skip"), m.group("lang"), body)
    return out


def block(doc: str, first_line: str) -> str:
    return skipped()[(doc, first_line)][2]


def key_of(test_name: str) -> tuple[str, str]:
    return next(k for k, v in CHECKED.items() if v == test_name)


def test_every_skipped_example_is_checked_here():
    found = skipped()
    assert set(found) == set(CHECKED), "check a newly skipped example here, and list it in CHECKED"
    for key, test in CHECKED.items():
        assert test in globals(), test


# -- the set-up: `make check`, `make test` ---------------------------------------------


def makefile_recipes() -> dict[str, tuple[list[str], list[str]]]:
    """target -> (prerequisites, recipe lines)."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    target = None
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r"^([\w-]+):(.*)$", line)
        if m and not line.startswith(".PHONY"):
            target = m.group(1)
            out[target] = (m.group(2).split(), [])
        elif line.startswith("\t") and target:
            out[target][1].append(line.strip())
    return out


def test_the_readme_commands_are_what_ci_runs():
    """README's two commands are make targets: the quick gate and the fast
    tier. CI (.ci/run) installs, then runs the whole suite and every model
    with the gate script `make check` runs, each as a timed stage; the
    closing lines README quotes have the format pytest and the gate print,
    and the gate's model counts are those of models/."""
    key = key_of("test_the_readme_commands_are_what_ci_runs")
    commands = [line.split("#")[0].strip() for line in block(*key).splitlines() if line.strip()]
    assert commands == ["make check", "make test"]
    recipes = makefile_recipes()
    assert recipes["install"] == ([], ["bash scripts/install.sh"])
    assert recipes["check"] == (["install"], ["bash scripts/check-models.sh"])
    assert recipes["test"] == (["install"], ['.venv/bin/python -m pytest -q -n auto -m "not slow"'])
    assert recipes["check-all"] == (["install"], ["bash scripts/check-models.sh --runtime all"])
    assert recipes["test-all"] == (["install"], [".venv/bin/python -m pytest -q -n auto"])
    ci = [line.split(" || ")[0].split(" > ")[0] for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if re.match(r"(OUT=\S+ )?stage ", line)]
    assert ci == ["stage install bash scripts/install.sh",
                  "OUT=out/heavy stage gate-heavy until_deadline bash scripts/check-models.sh --runtime heavy --quiet",
                  "stage gate until_deadline bash scripts/check-models.sh --quiet",
                  "stage tests until_deadline nice -n 10 .venv/bin/python -m pytest -q -n auto --durations=30"]  # the heavy models, the quick ones, the suite

    readme = (ROOT / "README.md").read_text()
    assert "`N passed, N skipped, N xfailed in S.SSs`" in readme  # the words pytest -n closes with
    assert "`out/txncheck.xml: valid JUnit XML`, `out/txncheck.sarif: valid SARIF 2.1.0`" in readme.replace("\n  ", " ")
    models = re.search(r"`gate: (\d+) models, 0 not as expected, (\d+) heavy not run \(--runtime all runs them\); "
                       r"cases: \d+ passed, \.\.\.`", readme)
    assert models and (int(models.group(1)), int(models.group(2))) == (len(_shipped()) - len(_heavy()), len(_heavy()))


def test_the_readme_gives_make_tests_time_as_measured_within_its_target():
    """README's figure for `make test` is bench/make_test.py's sentence (the
    script writes it: `--write`), measured on two cores, within the target of
    5 minutes and 1 GiB."""
    bench = _bench_module("make_test")
    m = re.search(bench.PATTERN, (ROOT / "README.md").read_text())
    assert m, "README.md gives no measured time for make test: run bench/make_test.py --write on a quiet machine"
    seconds = 60 * int(m["min"]) + int(m["sec"])
    cpu, mib = (float(m[k].replace(",", "")) for k in ("cpu", "mib"))
    assert m.group(0) == bench.sentence(int(m["cores"]), m["date"], seconds, cpu, mib)
    assert int(m["cores"]) == 2 and seconds <= bench.TARGET[0] and mib <= bench.TARGET[1], m.group(0)


def test_the_make_test_bench_reads_time_s_report():
    report = ("\tUser time (seconds): 401.25\n\tSystem time (seconds): 22.50\n"
              "\tElapsed (wall clock) time (h:mm:ss or m:ss): 4:07.61\n\tMaximum resident set size (kbytes): 935424\n")
    got = _bench_module("make_test").parse_time(report)
    assert got == {"seconds": 247.61, "cpu": 423.75, "peak_mib": 913.5}
    line = _bench_module("make_test").sentence(2, "2026-11-29", got["seconds"], got["cpu"], got["peak_mib"])
    assert line == ("Measured on 2 cores with `/usr/bin/time -v` (`bench/make_test.py`, 2026-11-29): "
                    "4 min 8 s, 424 CPU s, a peak of 914 MiB in one process.")
    assert re.fullmatch(_bench_module("make_test").PATTERN, line)


# -- the gate: scripts/check-models.sh ---------------------------------------------------


def _shipped() -> list[Path]:
    from txncheck.checker.gate import collect

    return collect([ROOT / "models"])


def _heavy() -> list[Path]:
    return [p for p in _shipped() if load_model(p).expect.get("runtime") == "heavy"]


def test_the_gate_example_is_the_ci_gate(tmp_path):
    """The guide's gate command is the one scripts/check-models.sh runs. The
    script itself, run on the models the example shows, prints their lines as
    the example does (the same figures), then a closing line of the same
    shape, then the two validation lines README quotes; the example's model
    count is that of models/."""
    key = key_of("test_the_gate_example_is_the_ci_gate")
    lines = block(*key).splitlines()
    script = (ROOT / "scripts" / "check-models.sh").read_text()
    [gate] = [line for line in script.splitlines() if "txncheck check" in line]
    assert shlex.split(gate)[-1] == "$@"  # the script's arguments go to the gate (CI: --runtime heavy)
    assert shlex.split(lines[0][2:])[1:] == shlex.split(gate.replace("$out", "out"))[1:-1]  # $OUT: out/ by default

    expected = lines[1:]
    closing = re.fullmatch(r"gate: (\d+) models, 0 not as expected, (\d+) heavy not run \(--runtime all runs them\); "
                           r"cases: \d+ passed, 0 failed, 0 errors, \d+ skipped \(.+\)", expected[-1])
    assert closing and (int(closing.group(1)), int(closing.group(2))) == (len(_shipped()) - len(_heavy()), len(_heavy()))

    shown = [re.match(r"PASS +(\S+\.toml):", line).group(1) for line in expected if line.startswith("PASS")]
    assert len(shown) >= 3
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check-models.sh", tmp_path / "scripts")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    for rel in [*shown, _heavy()[-1].relative_to(ROOT).as_posix()]:  # a heavy model (the last): listed, not run
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).symlink_to(ROOT / rel)
    r = subprocess.run(["bash", "scripts/check-models.sh"], cwd=tmp_path, env=_env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    # the figures of a closing line vary with the models checked, and so do the kinds of skipped case it counts
    closing = re.sub(r" \(.*\)$", " (...)", re.sub(r"\d+", "...", expected[-1]))
    want = _loose("\n".join([*expected[:-1], closing,
                             "out/txncheck.xml: valid JUnit XML", "out/txncheck.sarif: valid SARIF 2.1.0"]))
    got = _loose(r.stdout, tmp_path)
    assert _matches(want, got), "\n".join(["--- want", *want, "--- got", *got])
    assert re.search(rf"^gate: {len(shown)} models, 0 not as expected", r.stdout, re.M)


# -- the GitHub Actions workflow -------------------------------------------------------


def test_the_workflow_steps_run_on_a_subset(tmp_path):
    """The workflow's gate has the CI gate's options; its `run:` steps, run
    here on two of the shipped models, exit 0 and leave the files the later
    steps upload."""
    key = key_of("test_the_workflow_steps_run_on_a_subset")
    text = block(*key)
    runs = re.findall(r"^\s*(?:- )?run: (.+)$", text, re.M)
    assert runs[0].split("#")[0].split() == ["pip", "install", f"tools/{_wheel_name()}"]   # `make dist`'s wheel
    check = next(r for r in runs if r.startswith("txncheck check --all models/"))

    def options(command):
        return sorted(a for a in shlex.split(command) if a.startswith("--"))

    gate = next(line for line in (ROOT / "scripts" / "check-models.sh").read_text().splitlines()
                if "txncheck check" in line)
    assert options(check) == sorted([*options(gate), "--quiet"])

    for rel in ("models/classic/diehard.toml", "models/kip868/kafka-loader.toml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).symlink_to(ROOT / rel)
    for command in runs[1:]:
        r = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, f"{command}\n{r.stdout}{r.stderr}"
    uploaded = re.search(r'path: "([^"]+)"', text).group(1).split("\\n")
    uploaded += re.findall(r"(?:sarif_file|report_paths): ([\w.]+)", text)
    assert len(uploaded) == 5
    for name in uploaded:
        assert (tmp_path / name).exists(), name
    assert list((tmp_path / "traces").rglob("*.itf.json"))


# -- commands that cannot run here parse ---------------------------------------------------


def test_skipped_txncheck_commands_parse():
    """Every txncheck command of a skipped example is accepted by the CLI's
    own parser (options renamed or removed fail here), and the files it
    names exist (MODEL.toml and the cluster's folders are placeholders)."""
    from txncheck.checker.cli import build_parser

    parser = build_parser()
    seen = 0
    for (doc, _), (_, lang, body) in skipped().items():
        for line in body.splitlines():
            if lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            argv = shlex.split(line, comments=True)
            if argv[:2] == ["/usr/bin/time", "-v"]:
                argv = argv[2:]
            if argv[:1] != ["txncheck"]:
                continue
            args = parser.parse_args(argv[1:])
            assert args.command, line
            for a in argv[2:]:
                if a.endswith(".toml") and a != "MODEL.toml":
                    assert (ROOT / a).is_file(), (doc, line)
            seen += 1
    assert seen >= 5


def test_the_spark_setup_is_what_install_does():
    """The Java package the guide installs by hand is the one
    scripts/install.sh installs, and the extra it names is pyproject's."""
    key = key_of("test_the_spark_setup_is_what_install_does")
    lines = [line.split("#")[0].strip() for line in block(*key).splitlines()]
    assert lines == ["sudo apt-get install -y openjdk-17-jre-headless", "pip install -e '.[spark]'"]
    install = (ROOT / "scripts" / "install.sh").read_text()
    assert "command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)" in install
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert [re.split(r"[<>=]", d)[0] for d in extras["spark"]] == ["pyspark", "pyarrow"]  # "# pyspark and pyarrow"
    assert "pyspark and pyarrow" in block(*key)


def test_the_larger_model_commands_run_to_a_limit(tmp_path):
    """The hours-long commands run here, each stopped at 1,000 states
    (exit 3): the model file switches on symmetry and fingerprints, as the
    guide says, `--workers 2` keeps them and `--no-symmetry` drops symmetry."""
    import json

    key = key_of("test_the_larger_model_commands_run_to_a_limit")
    reports = []
    for line in block(*key).splitlines():
        argv = shlex.split(line, comments=True)
        assert argv[:3] == ["/usr/bin/time", "-v", "txncheck"]
        r = subprocess.run([*argv[2:], "--max-states", "1000", "--quiet", "--out", str(tmp_path)], cwd=ROOT,
                           env=_env(), capture_output=True, text=True, timeout=120)
        assert r.returncode == 3, r.stdout + r.stderr
        reports.append(json.loads(r.stdout))
    assert all(rep["verdict"] == "incomplete" and rep["visited_set"] == "fingerprints" for rep in reports)
    assert ["symmetry" in (rep.get("reductions") or {}) for rep in reports] == [True, True, False]
    assert "workers" in reports[1] and "workers" not in reports[0]


def test_each_way_to_name_a_spec_resolves(tmp_path, monkeypatch):
    """Each of the three alternative `spec =` lines, on its own, is TOML and
    names a spec class the way the guide says: a file relative to the model
    file, a module on sys.path, a registered name."""
    from txncheck.checker.cli import main
    from txncheck.spec.api import Spec
    from txncheck.spec.registry import resolve

    key = key_of("test_each_way_to_name_a_spec_resolves")
    refs = [tomllib.loads(line)["spec"] for line in block(*key).splitlines() if line.startswith("spec =")]
    assert refs == ["specs/mutex.py:Mutex", "mypkg.protocols:Mutex", "twophase"]
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mutex"]) == 0
    for target in ("specs/mutex.py", "mypkg/protocols.py"):
        (tmp_path / target).parent.mkdir()
        shutil.copy(tmp_path / "mutex" / "mutex.py", tmp_path / target)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        origins = [resolve(ref, base=tmp_path) for ref in refs]
    finally:
        for name in [n for n in sys.modules if n == "mypkg" or n.startswith("mypkg.")]:
            del sys.modules[name]
    assert all(issubclass(r.cls, Spec) for r in origins)
    assert [r.origin.split()[0] for r in origins] == ["file", "module", "built-in"]


# -- the bench table ----------------------------------------------------------------------


def _shape(cell: str) -> str:
    return re.sub(r"\d[\d,]*(\.\d+)?", "N", cell.strip())


def _bench_suite():
    """bench/suite.py, loaded afresh (a test may replace its CONFIGS)."""
    spec = importlib.util.spec_from_file_location("bench_suite_under_test", ROOT / "bench" / "suite.py")
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    return suite


def test_the_pip473_bench_table_is_the_suites_runs_of_fixed():
    """The PIP-473 table: its command is the suite's configuration for
    models/pip473/fixed.toml, its rows are that configuration's runs in
    order, and every row has the model's whole state space as its
    description gives it (the suite drops the max_depth at which the gate
    stops, and the gate's [expect] figures are those of that depth), so the
    table goes stale with the description."""
    model = load_model(ROOT / "models" / "pip473" / "fixed.toml")
    whole = re.search(r"ran to the end \(([\d,]+) distinct, ([\d,]+) generated, depth (\d+)\)",
                      model.raw["description"])
    assert whole and model.raw["max_depth"] == model.expect["depth"] < int(whole[3])
    fixed_figures = tuple(int(x.replace(",", "")) for x in whole.groups())
    assert "max_depth" not in tomllib.loads(_bench_suite().whole((ROOT / "models" / "pip473" / "fixed.toml").read_text()))

    lines = block(*key_of("test_the_pip473_bench_table_is_the_suites_runs_of_fixed")).splitlines()
    suite = _bench_suite()
    argv = shlex.split(lines[0])[1:]
    assert argv[:4] == [".venv/bin/python", "bench/suite.py", "--only", "pip473-fixed"]
    assert suite.PIP473["pip473-fixed"] == "pip473/fixed.toml"
    rows = [[c.strip() for c in ln.split("|")[1:-1]] for ln in lines[5:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("pip473-fixed", run, "ok") for run in suite.PIP473_RUNS]
    figures = {tuple(int(c.replace(",", "")) for c in r[3:6]) for r in rows}   # distinct, generated, depth
    assert figures == {fixed_figures}, figures


def test_the_bench_table_has_the_suites_shape(capsys, monkeypatch, tmp_path):
    """bench/suite.py, run with the runs of the documented configuration on
    TwoPhase with 6 RMs (50,816 states: over the 50,000 from which MiB / M
    states is given, and seconds instead of minutes), prints the lines of
    docs/performance.md's table: the same header, the same runs in the same
    order, each cell a figure, a blank or a word where the table has one."""
    lines = block(*key_of("test_the_bench_table_has_the_suites_shape")).splitlines()
    suite = _bench_suite()
    name = shlex.split(lines[0])[-1]
    assert shlex.split(lines[0])[1:] == [".venv/bin/python", "bench/suite.py", "--only", name]
    assert name in suite.CONFIGS
    text, runs = suite.CONFIGS[name]
    assert text == suite.TWOPHASE.format(rm=7)
    suite.CONFIGS = {"twophase-rm6": (suite.TWOPHASE.format(rm=6), runs)}
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # the suite's model files and outputs
    assert suite.main(["--only", "twophase-rm6", "--max-seconds", "120"]) == 0
    got = capsys.readouterr().out.splitlines()
    want = lines[1:]
    assert len(got) == len(want) == 4 + len(runs)
    assert _shape(got[0]) == _shape(want[0]) and got[1] == want[1] == ""
    assert got[2:4] == want[2:4]   # header and alignment
    for g, w in zip(got[4:], want[4:]):
        gc, wc = g.split("|"), w.split("|")
        assert (gc[1].strip(), wc[1].strip()) == ("twophase-rm6", name)
        assert [c.strip() for c in gc[2:4]] == [c.strip() for c in wc[2:4]], (g, w)   # run, verdict
        assert [_shape(c) for c in gc[4:]] == [_shape(c) for c in wc[4:]], (g, w)


# -- the Spark benches of docs/performance.md -------------------------------------------


def test_the_spark_bench_commands_are_the_scripts():
    """Each Spark bench command of docs/performance.md names a script of bench/
    and only options its --help lists, and a model file that exists; the
    memory table's header is the one bench/spark_memory.py prints. The
    measurements themselves are tested in tests/spark/ (test_spark_memory.py
    runs the memory bench's measure() on a small model; test_spark_levels.py
    the per-level report)."""
    keys = [k for k, v in CHECKED.items() if v == "test_the_spark_bench_commands_are_the_scripts"]
    helps: dict[str, str] = {}
    for key in keys:
        body = block(*key)
        argv = shlex.split(body.splitlines()[0][2:])
        assert argv[0] == ".venv/bin/python" and argv[1].startswith("bench/"), argv
        script = argv[1]
        if script not in helps:
            helps[script] = subprocess.run([sys.executable, str(ROOT / script), "--help"], capture_output=True,
                                           text=True, env=_env(), cwd=ROOT, timeout=120, check=True).stdout
        for arg in argv[2:]:
            if arg.startswith("--"):
                assert arg in helps[script], (script, arg)
            elif arg.endswith(".toml"):
                assert (ROOT / arg).is_file(), arg
        if script == "bench/spark_memory.py":
            spec = importlib.util.spec_from_file_location("bench_spark_memory_under_test", ROOT / script)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            header = "| " + " | ".join(mod.COLUMNS) + " |"
            assert header in body.splitlines(), header


def _wheel_name() -> str:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return f"txncheck-{version}-py3-none-any.whl"


@pytest.mark.slow  # builds a wheel: seconds, and setuptools from the package index
def test_the_wheel_installs_and_gates_a_users_models(tmp_path):
    """README's way into a user's CI: `make dist` builds the wheel without
    installing anything (no `install` prerequisite, so no apt-get); installed
    into a fresh venv, it lists its shipped models and checks a user's folder
    with the venv's own txncheck. The venv gets txncheck's dependencies from
    this one (a .pth line, offline)."""
    import site
    import sysconfig

    lines = block(*key_of("test_the_wheel_installs_and_gates_a_users_models")).splitlines()
    assert lines[0] == "make -C path/to/txncheck dist"
    prereqs, recipe = makefile_recipes()["dist"]
    assert prereqs == [] and not any("install" in line.split()[:1] for line in recipe)
    dist = tmp_path / "dist"
    subprocess.run(["make", "-C", str(ROOT), "-s", "dist", f"DIST={dist}", f"PY={sys.executable}"], check=True,
                   capture_output=True, timeout=600)
    [wheel] = dist.glob("txncheck-*-py3-none-any.whl")
    assert wheel.name == _wheel_name() and wheel.name in lines[1]
    user = tmp_path / "user"
    user.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "ci"], cwd=user, check=True, timeout=300)
    venv_site = Path(subprocess.run([str(user / "ci/bin/python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                    check=True, capture_output=True, text=True).stdout.strip())
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()] or [sysconfig.get_paths()["purelib"]]
    (venv_site / "txncheck-deps.pth").write_text("\n".join(deps) + "\n")  # appended after the venv's own
    subprocess.run([str(user / "ci/bin/pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=300)
    where = subprocess.run([str(user / "ci/bin/python"), "-c", "import txncheck; print(txncheck.__file__)"],
                           check=True, capture_output=True, text=True).stdout
    assert where.startswith(str(venv_site)), where  # the wheel's txncheck, not this checkout's
    run = subprocess.run([str(user / "ci/bin/txncheck"), "list"], cwd=user, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr   # the shipped models, from the wheel
    assert "txncheck/models/classic/diehard.toml  diehard [default] (built-in)" in run.stdout, run.stdout[:2000]
    run = subprocess.run([str(user / "ci/bin/txncheck"), "new", "my_lock"], cwd=user, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    argv = shlex.split(lines[2])
    assert argv[:2] == ["ci/bin/txncheck", "check"]
    run = subprocess.run([str(user / argv[0]), *argv[1:]], cwd=user, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "gate: 2 models, 0 not as expected" in run.stdout and (user / "report.xml").is_file()
    assert (user / "report.sarif").is_file()


# -- issue 40's benches and profile in docs/performance.md ------------------------------


PAXOS_TLC = ("1,321,761", "16,959,159", "28")  # TLC's counts of PaxosCommit.cfg (tlaplus/Examples' manifest)


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}_under_test", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _help(name: str) -> str:
    return subprocess.run([sys.executable, str(ROOT / "bench" / f"{name}.py"), "--help"], capture_output=True,
                          text=True, env=_env(), cwd=ROOT, timeout=120, check=True).stdout


def _table_rows(lines: list[str], header: str) -> list[list[str]]:
    at = lines.index(header)
    rows = []
    for ln in lines[at + 2:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in ln.split("|")[1:-1]])
    return rows


def test_the_by_path_table_is_the_benchs():
    """The by-path table: the bench's command and header, both ways in each
    round, every row at TLC's counts of PaxosCommit, and the ratio line the
    bench prints, of those rows' median CPU seconds."""
    lines = block(*key_of("test_the_by_path_table_is_the_benchs")).splitlines()
    mod = _bench_module("by_path")
    argv = shlex.split(lines[0])[1:]
    assert argv[:2] == [".venv/bin/python", "bench/by_path.py"]
    assert all(a in _help("by_path") for a in argv[2:] if a.startswith("--"))
    rounds = int(argv[argv.index("--rounds") + 1])
    rows = _table_rows(lines, mod.HEADER)
    assert lines[lines.index(mod.HEADER) + 1] == mod.ALIGN
    assert sorted((r[0], r[1]) for r in rows) == sorted((how, str(k)) for k in range(1, rounds + 1)
                                                        for how in ("built-in", "by path"))
    assert all((r[2], *r[3:6]) == ("ok", *PAXOS_TLC) for r in rows)
    import statistics

    med = {how: statistics.median(float(r[7]) for r in rows if r[0] == how) for how in ("by path", "built-in")}
    ratio = f"by path / built-in, median CPU s: {med['by path']:.1f} / {med['built-in']:.1f} = "
    assert any(ln.startswith(ratio) for ln in lines), ratio


def test_the_reductions_table_is_the_benchs():
    """The reductions table: the bench's header, its rows per standard model
    in the bench's order, one depth per model, and each factor the states
    without the reduction over the states with it."""
    lines = block(*key_of("test_the_reductions_table_is_the_benchs")).splitlines()
    mod = _bench_module("reductions")
    rows = _table_rows(lines, lines[1])
    assert [(r[0], r[1]) for r in rows] == [(m.stem, name) for m in mod.MODELS for name, *_ in mod.ROWS]
    for k, m in enumerate(mod.MODELS):
        mine = rows[k * len(mod.ROWS):(k + 1) * len(mod.ROWS)]
        assert len({r[5] for r in mine}) == 1 and all(r[2] == "incomplete" for r in mine)
        shipped = int(mine[0][3].replace(",", ""))
        for r, (_, _, flags, absent) in zip(mine[1:], mod.ROWS[1:]):
            n = int(r[3].replace(",", ""))
            assert r[7] == f"{(n / shipped if absent else shipped / n):.2f}x", r


def test_the_capacity_table_is_the_benchs():
    """The capacity table: the bench's options and columns, and each per-state
    figure the run's memory above the baseline over its distinct states."""
    lines = block(*key_of("test_the_capacity_table_is_the_benchs")).splitlines()
    assert all(a in _help("capacity") for a in shlex.split(lines[0])[2:] if a.startswith("--"))
    base = float(re.search(r"idle baseline RSS (\d+) MiB", lines[1]).group(1))
    header = next(ln for ln in lines if ln.startswith("| workers |"))
    src = (ROOT / "bench" / "capacity.py").read_text()
    assert all(f"| {c} " in src or f"| {c} |" in src for c in header.strip("| ").split(" | ")), header
    for r in _table_rows(lines, header):
        n, peak, per = int(r[2].replace(",", "")), float(r[9].replace(",", "")), float(r[10])
        assert abs((peak - base) * 2**20 / n - per) < 0.5, r


def test_the_tlc_table_is_the_benchs():
    """The TLC table: the bench's options and header, TLC then txncheck at 1
    and 2 workers, every row at TLC's counts, and each ratio the row's
    seconds over TLC's with as many workers."""
    lines = block(*key_of("test_the_tlc_table_is_the_benchs")).splitlines()
    mod = _bench_module("tlc_paxos")
    argv = shlex.split(lines[0])[1:]
    assert argv[:2] == [".venv/bin/python", "bench/tlc_paxos.py"]
    assert all(a in _help("tlc_paxos") for a in argv[2:] if a.startswith("--"))
    rows = _table_rows(lines, mod.HEADER)
    assert [(r[0], r[1]) for r in rows] == [("TLC", "1"), ("txncheck (in process)", "1"),
                                            ("TLC", "2"), ("txncheck --workers 2", "2")]
    assert all(tuple(r[2:5]) == PAXOS_TLC for r in rows)
    for tlc, ours in (rows[0], rows[1]), (rows[2], rows[3]):
        for col, ratio in ((5, 7), (6, 8)):
            # the bench divides unrounded seconds: the printed ones give the ratio to within 0.01
            assert abs(float(ours[ratio]) - float(ours[col]) / float(tlc[col])) <= 0.01, (ours, tlc)


@pytest.mark.slow
def test_the_standard_models_profile_has_the_commands_shape(tmp_path):
    """The profile of pip473-fixed-standard: its command parses, and the
    profiler, run on the same model to 2,000 states, prints the same
    sections in the same order, the same fields in its Fields table (the
    layout of the model's state, which goes stale with the spec), and the
    same actions."""
    from txncheck.checker.cli import build_parser

    body = block(*key_of("test_the_standard_models_profile_has_the_commands_shape"))
    lines = body.splitlines()
    argv = shlex.split(lines[0][2:])[1:]
    build_parser().parse_args(argv)
    got = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", *argv[:2], "--max-states", "2000",
                          "--probes", "4", "--por-states", "4", "--quiet"], capture_output=True, text=True,
                         env=_env(), cwd=ROOT, timeout=600, check=True).stdout.splitlines()
    want = lines[1:]

    heads = re.compile(r"(profile of |prefix: |Levels: |Actions over |Fields, |Top-level |Candidates |- [a-z]|time: )")

    def sections(text: list[str]) -> list[str]:
        return [ln.split(":")[0].split(" (")[0] for ln in text if heads.match(ln)]

    assert sections(got) == sections(want)

    def table(text: list[str], title: str) -> set[str]:
        at = next(i for i, ln in enumerate(text) if ln.startswith(title))
        out = set()
        for ln in text[at + 2:]:
            if not ln.strip():
                break
            out.add(ln.split()[0])
        return out

    assert table(got, "Fields") == table(want, "Fields")
    assert table(got, "Actions") <= table(want, "Actions")
