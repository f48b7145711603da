"""The CI gate: `check --all` judges every model against its [expect] table, with
aggregated exit codes, JUnit and SARIF reports that validate, and the pytest plugin."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from txncheck.checker.cli import main
from txncheck.checker.reports.validate import check_junit, check_sarif
from txncheck.checker.reports.validate import main as validate_main

ROOT = Path(__file__).resolve().parent.parent
CLASSIC = ROOT / "models/classic"

BAD = 'spec = "diehard"\nproperties = ["NotSolved"]\n'                      # expects ok, NotSolved fails
BROKEN = 'spec = "diehard"\n[constants]\nbig_capacity = "x"\n'              # cannot load
STALE = ('spec = "tcommit"\n[constants]\nrm = 2\n'                           # a "known bug" that is not there
         '[expect]\nverdict = "violation"\nproperty = "TCConsistent"\n')
WRONG_LENGTH = ('spec = "diehard"\nproperties = ["NotSolved"]\n'
                '[expect]\nverdict = "violation"\nproperty = "NotSolved"\nlength = 6\n')


def gate(*argv: str, capsys) -> tuple[int, dict, str]:
    code = main(["check", "--all", *argv, "--json", "--quiet"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def by_model(doc: dict) -> dict[str, dict]:
    return {Path(m["model"]).name: m for m in doc["models"]}


def cases(entry: dict) -> dict[str, dict]:
    return {c["name"]: c for c in entry["cases"]}


@pytest.fixture(scope="module")
def classic_gate(tmp_path_factory):
    """The gate over the classic models, with both reports (run once)."""
    tmp = tmp_path_factory.mktemp("gate")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["check", "--all", str(CLASSIC), "--json", "--quiet", "--out", str(tmp / "traces"),
                     "--junit", str(tmp / "out.xml"), "--sarif", str(tmp / "out.sarif")])
    return code, tmp, json.loads(buf.getvalue())


def test_classic_models_meet_their_expectations(classic_gate):
    code, tmp, doc = classic_gate
    assert code == 0 and doc["exit_code"] == 0
    assert cases(by_model(doc)["diehard.toml"])["NotSolved"]["status"] == "passed"
    assert by_model(doc)["tcommit-rm3.toml"]["report"]["distinct_states"] == 34
    xml = ET.parse(tmp / "out.xml").getroot()
    suites = {s.get("name"): s for s in xml.findall("testsuite")}
    diehard = suites["models/classic/diehard.toml"] if "models/classic/diehard.toml" in suites else next(
        s for n, s in suites.items() if n.endswith("classic/diehard.toml"))
    tcs = {t.get("name"): t for t in diehard.findall("testcase")}
    # The known bug: NotSolved must still be violated in exactly 7 states.
    assert tcs["NotSolved"].find("failure") is None
    assert "violated as expected, in 7 states" in tcs["NotSolved"].find("system-out").text
    assert "BigToSmall" in tcs["NotSolved"].find("system-out").text  # the step table rides along
    assert tcs["TypeOK"].find("skipped") is not None  # the search stopped at NotSolved
    rm6 = next(s for n, s in suites.items() if n.endswith("twophase-rm6.toml"))
    props = {p.get("name"): p.get("value") for p in rm6.find("properties")}
    assert (props["distinct_states"], props["states_generated"], props["depth"]) == ("50816", "402306", "20")
    assert int(xml.get("failures")) == 0 and int(xml.get("errors")) == 0
    assert int(xml.get("tests")) == sum(len(s.findall("testcase")) for s in xml.findall("testsuite"))


def test_reports_validate(classic_gate):
    _, tmp, _ = classic_gate
    assert check_junit(tmp / "out.xml") is None
    assert check_sarif(tmp / "out.sarif") is None
    assert validate_main(["--junit", str(tmp / "out.xml"), "--sarif", str(tmp / "out.sarif")]) == 0


def test_sarif_points_at_the_model_and_the_breaking_action(classic_gate):
    _, tmp, _ = classic_gate
    run = json.loads((tmp / "out.sarif").read_text())["runs"][0]
    assert run["tool"]["driver"]["name"] == "txncheck"
    (res,) = [r for r in run["results"] if r["ruleId"] == "diehard/NotSolved"]
    assert res["level"] == "note" and res["suppressions"][0]["kind"] == "inSource"  # expected: a known bug
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for loc in res["locations"]]
    assert uris[0].endswith("spec/classic/diehard.py") and uris[1].endswith("models/classic/diehard.toml")
    assert "BigToSmall" in res["locations"][0]["message"]["text"]
    # The region is the line of diehard.py that yields the breaking action.
    line = res["locations"][0]["physicalLocation"]["region"]["startLine"]
    src = (ROOT / "spec/classic/diehard.py").read_text().splitlines()[line - 1]
    assert "yield big_to_small" in src
    flow = res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert len(flow) == 7 and flow[-1]["location"]["message"]["text"] == "step 6: BigToSmall"
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert res["ruleIndex"] == [r["id"] for r in run["tool"]["driver"]["rules"]].index("diehard/NotSolved")
    assert "diehard/NotSolved" in rules


def test_unmet_expectations_fail_the_gate(tmp_path, capsys):
    models = tmp_path / "models"
    models.mkdir()
    for name, text in {"bad": BAD, "broken": BROKEN, "stale": STALE, "wrong-length": WRONG_LENGTH}.items():
        (models / f"{name}.toml").write_text(text)
    code, doc, _ = gate(str(models), "--out", str(tmp_path / "t"), "--junit", str(tmp_path / "o.xml"),
                        "--sarif", str(tmp_path / "o.sarif"), capsys=capsys)
    assert code == 2  # a model that cannot load outranks failed expectations
    m = by_model(doc)
    assert m["bad.toml"]["exit_code"] == 1
    assert cases(m["bad.toml"])["NotSolved"]["status"] == "failed"
    assert m["broken.toml"]["exit_code"] == 2
    assert cases(m["broken.toml"])["load"]["status"] == "error"
    assert "bound big_capacity must be an integer" in m["broken.toml"]["error"]
    assert "\n" not in m["broken.toml"]["error"]
    assert m["stale.toml"]["exit_code"] == 1
    assert "it holds in all 12 reachable states" in cases(m["stale.toml"])["TCConsistent"]["message"]
    assert "expected a shortest counterexample of 6 states, found one of 7" in \
        cases(m["wrong-length.toml"])["NotSolved"]["message"]
    assert doc["summary"] == {"models": 4, "passed": 1, "failed": 3, "error": 1, "skipped": 0}  # stale: TCTypeOK holds

    xml = ET.parse(tmp_path / "o.xml").getroot()
    failure = xml.find(".//testcase[@name='NotSolved'][@classname]/failure")
    assert failure is not None and "FillBigJug" in failure.text  # the trace table
    assert xml.find(".//testcase[@name='load']/error") is not None
    assert check_junit(tmp_path / "o.xml") is None

    assert check_sarif(tmp_path / "o.sarif") is None
    results = json.loads((tmp_path / "o.sarif").read_text())["runs"][0]["results"]
    rule_ids = sorted(r["ruleId"] for r in results)
    assert rule_ids == ["diehard/NotSolved", "diehard/NotSolved", "txncheck/expectation", "txncheck/model-error"]
    assert all(r["level"] == "error" for r in results)


def test_without_the_broken_model_the_exit_code_is_1(tmp_path, capsys):
    (tmp_path / "bad.toml").write_text(BAD)
    (tmp_path / "ok.toml").write_text(BAD + '[expect]\nverdict = "violation"\nproperty = "NotSolved"\nlength = 7\n')
    code, doc, _ = gate(str(tmp_path), "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 1
    assert by_model(doc)["ok.toml"]["exit_code"] == 0


def test_an_unexpected_limit_gives_3_and_an_expected_one_passes(tmp_path, capsys):
    text = 'spec = "twophase"\n[constants]\nrm = 6\n'
    (tmp_path / "a.toml").write_text(text)
    code, doc, _ = gate(str(tmp_path), "--max-states", "2000", "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 3
    assert all(c["status"] == "failed" and c["message"].startswith("incomplete") for c in doc["models"][0]["cases"])
    (tmp_path / "a.toml").write_text(text + '[expect]\nverdict = "incomplete"\n')
    code, doc, _ = gate(str(tmp_path), "--max-states", "2000", "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 0


def test_each_model_is_checked_once(tmp_path, capsys):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "bad.toml").write_text(BAD)
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "grid.toml").write_text("not a model = [")  # sweep campaigns are not models
    code, doc, _ = gate(str(tmp_path), str(sub), str(sub / "bad.toml"), "--out", str(tmp_path / "t"),
                        capsys=capsys)
    assert [Path(m["model"]).name for m in doc["models"]] == ["bad.toml"]


def test_check_model_positional_still_works_and_misuse_is_one_line(tmp_path, capsys):
    assert main(["check", str(CLASSIC / "tcommit-rm3.toml"), "--quiet", "--json", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["distinct_states"] == 34
    for argv in (["check"], ["check", "a.toml", "b.toml"], ["check", "x.toml", "--junit", "o.xml"],
                 ["check", "--all", str(tmp_path / "nowhere")], ["check", "--all", "--checkpoint", str(tmp_path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("txncheck: error:")


def test_human_output_names_each_model_and_sums_up(tmp_path, capsys):
    (tmp_path / "bad.toml").write_text(BAD)
    code = main(["check", "--all", str(tmp_path), "--quiet", "--out", str(tmp_path / "t")])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL" in out and "bad.toml" in out and "txncheck show" in out
    assert out.strip().splitlines()[-1] == "gate: 1 model, 1 not as expected; cases: 0 passed, 1 failed, 0 errors, 0 skipped"


def test_the_summary_says_why_cases_were_skipped(tmp_path, capsys):
    """DieHard's known bug passes; TypeOK is skipped because the search stopped
    at NotSolved's violation, and the closing line says so; one model is one."""
    code = main(["check", "--all", str(CLASSIC / "diehard.toml"), "--quiet", "--out", str(tmp_path)])
    assert code == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == \
        "gate: 1 model, 0 not as expected; cases: 2 passed, 0 failed, 0 errors, 1 skipped (1 not settled at a violation)"


def test_validate_rejects_broken_reports(tmp_path, capsys):
    (tmp_path / "bad.xml").write_text("<testsuites><testsuite name='x'><testcase name='a'></testsuite>")
    doc = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}  # driver lacks its required name
    (tmp_path / "bad.sarif").write_text(json.dumps(doc))
    assert check_junit(tmp_path / "bad.xml").startswith("not parseable XML")
    assert "invalid SARIF 2.1.0 at runs/0/tool/driver" in check_sarif(tmp_path / "bad.sarif")
    assert validate_main(["--junit", str(tmp_path / "bad.xml"), "--sarif", str(tmp_path / "bad.sarif")]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 2


# -- the pytest plugin (run in a real pytest subprocess, through its entry point) --

def run_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def test_plugin_collects_models_and_shows_the_trace_table(tmp_path):
    shutil.copy(CLASSIC / "diehard.toml", tmp_path / "diehard.toml")
    (tmp_path / "bad.toml").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # not a model: not collected
    p = run_pytest("--txncheck", ".", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "1 failed, 2 passed, 1 skipped" in p.stdout  # diehard: NotSolved, its figures; TypeOK not settled
    assert "FAILED bad.toml::NotSolved" in p.stdout
    assert "step  action" in p.stdout and "FillBigJug" in p.stdout  # the trace table of the failure


def test_plugin_fixture_runs_a_model_from_a_users_test(tmp_path):
    (tmp_path / "bad.toml").write_text(BAD)
    (tmp_path / "test_user.py").write_text(f'''
def test_figures(txncheck):
    report = txncheck.check({str(CLASSIC / "twophase-rm3.toml")!r})
    assert (report.outcome.distinct_states, report.outcome.states_generated) == (288, 1146)

def test_known_bug(txncheck):
    r = txncheck.expect({str(CLASSIC / "diehard.toml")!r})
    assert r.report.outcome.violations[0].length == 7

def test_unexpected(txncheck):
    txncheck.expect("bad.toml")
''')
    p = run_pytest("test_user.py", cwd=tmp_path)
    assert "1 failed, 2 passed" in p.stdout, p.stdout + p.stderr
    assert "bad.toml: NotSolved: invariant NotSolved violated" in p.stdout
    assert "BigToSmall" in p.stdout


# -- [expect]'s figures, runtime class and bounded verdict ---------------------------------------------

RM3 = 'spec = "twophase"\ndeadlock = true\n[constants]\nrm = 3\n[expect]\nverdict = "ok"\n'


def test_the_figures_in_expect_are_judged(tmp_path, capsys):
    (tmp_path / "right.toml").write_text(RM3 + "distinct = 288\ngenerated = 1146\ndepth = 11\n")
    (tmp_path / "wrong.toml").write_text(RM3 + "distinct = 289\ngenerated = 1146\n")
    (tmp_path / "bug.toml").write_text(WRONG_LENGTH.replace("length = 6", "length = 7") + "distinct = 14\ngenerated = 73\n")
    code, doc, _ = gate(str(tmp_path), "--out", str(tmp_path / "t"), capsys=capsys)
    m = by_model(doc)
    assert code == 1 and m["right.toml"]["exit_code"] == m["bug.toml"]["exit_code"] == 0
    assert cases(m["right.toml"])["figures"] == {"name": "figures", "kind": "model", "status": "passed",
                                                 "message": "distinct 288, generated 1,146, depth 11, as recorded"}
    wrong = cases(m["wrong.toml"])["figures"]
    assert wrong["status"] == "failed" and "distinct 288, generated 1,146; [expect] records distinct 289" in wrong["message"]
    assert cases(m["bug.toml"])["figures"]["status"] == "passed"  # a violation's, with the in-process bfs
    # with --workers, where a violation's figures depend on the engine, they are not judged
    code, doc, _ = gate(str(tmp_path / "bug.toml"), "--workers", "2", "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 0 and cases(doc["models"][0])["figures"]["status"] == "skipped"


def test_a_heavy_model_runs_only_when_asked(tmp_path, capsys):
    (tmp_path / "quick.toml").write_text(RM3)
    (tmp_path / "heavy.toml").write_text(RM3 + 'runtime = "heavy"\n')
    code = main(["check", "--all", str(tmp_path), "--quiet", "--out", str(tmp_path / "t"),
                 "--junit", str(tmp_path / "o.xml")])
    out = capsys.readouterr().out
    assert code == 0
    assert f"SKIP       {tmp_path / 'heavy.toml'}: heavy: not run (--runtime all runs it, as CI does)" in out
    assert "gate: 1 model, 0 not as expected, 1 heavy not run (--runtime all runs them);" in out
    xml = ET.parse(tmp_path / "o.xml").getroot()
    assert xml.find(".//testsuite[@name='%s']/testcase/skipped" % (tmp_path / "heavy.toml")) is not None
    for runtime, ran in (("all", {"quick.toml", "heavy.toml"}), ("heavy", {"heavy.toml"})):
        code, doc, _ = gate(str(tmp_path), "--runtime", runtime, "--out", str(tmp_path / "t"), capsys=capsys)
        assert code == 0 and set(by_model(doc)) == ran and "not_run" not in str(doc["models"])


RM6_TO_DEPTH_8 = 'spec = "twophase"\nmax_depth = 8\n[constants]\nrm = 6\n[expect]\nverdict = "incomplete"\n'


def test_a_bounded_expectation_is_no_violation_to_max_depth(tmp_path, capsys):
    (tmp_path / "rm6.toml").write_text(RM6_TO_DEPTH_8)
    code, doc, _ = gate(str(tmp_path), "--out", str(tmp_path / "t"), "--junit", str(tmp_path / "o.xml"),
                        "--sarif", str(tmp_path / "o.sarif"), capsys=capsys)
    [m] = doc["models"]
    assert code == 0 and m["report"]["incomplete_reason"] == "max-depth 8 reached"
    assert m["report"]["checked_depth"] == 8 and m["report"]["depth"] == 8
    assert cases(m)["TPTypeOK"]["message"] == ("no violation to depth 8 (every state to depth 8 checked; "
                                               "max_depth 8), as expected")
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "o.xml").getroot().iter("property")}
    assert props["checked_depth"] == "8"
    [bounded] = [r for r in json.loads((tmp_path / "o.sarif").read_text())["runs"][0]["results"]
                 if r["ruleId"] == "txncheck/bounded"]
    assert bounded["kind"] == "pass" and bounded["properties"]["checked_depth"] == 8
    assert "every state up to depth 8 was checked: no violation within 7 steps" in bounded["message"]["text"]
    assert check_sarif(tmp_path / "o.sarif") is None and check_junit(tmp_path / "o.xml") is None
    # stopped short of the depth by another limit: not as expected
    code, doc, _ = gate(str(tmp_path), "--max-states", "5000", "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 3 and cases(doc["models"][0])["TPTypeOK"]["message"] == (
        "incomplete (max-states 5000 reached): checked to depth 6 only; [expect] wants no violation to depth 8 "
        "(max_depth)")
    # a bound past the end of the state space: the run finishes, and the expectation must say ok
    (tmp_path / "rm6.toml").write_text(RM6_TO_DEPTH_8.replace("max_depth = 8", "max_depth = 25"))
    code, doc, _ = gate(str(tmp_path), "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 1 and cases(doc["models"][0])["expect"]["message"] == \
        "expected the run to stop at a limit, but it completed"


def test_check_all_without_a_folder_checks_the_models_folder_here(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--all", "--quiet"]) == 2
    assert capsys.readouterr().err == ("txncheck: error: no folder given and no models/ here: give the folders "
                                       "of model files (txncheck check --all DIR ...)\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mine.toml").write_text(RM3)
    code, doc, _ = gate(capsys=capsys)
    assert code == 0 and [m["model"] for m in doc["models"]] == ["models/mine.toml"]


def test_a_process_started_by_a_larger_one_measures_its_own_peak_memory():
    """On Linux a child's ru_maxrss starts at its parent's peak (exec keeps
    it); peak_memory_mb, which every report gives, is the child's own. The
    large parent is a process of its own, not the test's (whose peak would
    then stay 600 MiB higher for the rest of the run)."""
    child = "from txncheck.checker.exploration import peak_memory_mb; print(peak_memory_mb())"
    parent = ("import subprocess, sys\n"
              "ballast = bytearray(b'\\x01') * (600 << 20)  # every page touched\n"
              f"p = subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, text=True)\n"
              "print(p.stdout, p.stderr, file=sys.stdout if p.returncode == 0 else sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True)
    assert float(p.stdout) < 400, p.stderr


@pytest.mark.slow   # holds 1.1 GiB in the test's own process by design: over make test's 1 GiB
def test_record_figures_measures_the_runs_own_memory(tmp_path, capsys):
    """Measured by the child's rusage, a model that record_figures ran from
    a large process (a pytest worker in CI) was "heavy" by that process's peak."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("record_figures", ROOT / "scripts" / "record_figures.py")
    record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record)
    (tmp_path / "rm3.toml").write_text(RM3)
    ballast = bytearray(b"\x01") * (1100 << 20)  # over HEAVY_MIB
    assert record.main([str(tmp_path)]) == 0
    del ballast
    assert "runtime" not in (tmp_path / "rm3.toml").read_text(), capsys.readouterr().err


def test_record_figures_writes_what_the_gate_then_holds(tmp_path, capsys):
    """scripts/record_figures.py: the figures of a run into [expect], the other keys kept."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("record_figures", ROOT / "scripts" / "record_figures.py")
    record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record)
    (tmp_path / "rm3.toml").write_text(RM3.replace('verdict = "ok"', 'verdict = "ok"  # kept\ndistinct = 1') +
                                       "\n[label]\nholds_for = \"text\"\nsource = \"s\"\n")
    (tmp_path / "rm6.toml").write_text(RM6_TO_DEPTH_8)
    assert record.main([str(tmp_path)]) == 0
    text = (tmp_path / "rm3.toml").read_text()
    assert '[expect]\nverdict = "ok"  # kept\ndistinct = 288\ngenerated = 1146\ndepth = 11\n\n[label]' in text
    assert (tmp_path / "rm6.toml").read_text().endswith(
        '[expect]\nverdict = "incomplete"\ndistinct = 10044\ngenerated = 54225\ndepth = 8\n')
    capsys.readouterr()
    code, doc, _ = gate(str(tmp_path), "--out", str(tmp_path / "t"), capsys=capsys)
    assert code == 0 and all(cases(m)["figures"]["status"] == "passed" for m in doc["models"])
