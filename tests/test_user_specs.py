"""Specs from outside txncheck: named by path, module or entry point from a
model file in a folder outside the repository, and checked by every command.
Bugs in the spec's own code come back as one line naming file, line or
symbol, action and state."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from txncheck.checker.cli import main
from txncheck.checker.model import load_model
from txncheck.checker.spec_errors import SpecCodeError
from txncheck.spec import registry

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_cli(argv, capsys):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def user_dir(tmp_path):
    """The mutex example copied to a folder outside the repository."""
    d = tmp_path / "myproto"
    shutil.copytree(EXAMPLES / "mutex", d)
    return d


def test_a_spec_named_by_path_is_checked_and_its_bug_found(user_dir, tmp_path, capsys):
    rc, out, _ = run_cli(["check", user_dir / "racy.toml", "--quiet", "--json", "--out", tmp_path / "out"], capsys)
    report = json.loads(out)
    assert rc == 1
    assert report["distinct_states"] == 9 and report["violations"][0]["length"] == 5
    rc, out, _ = run_cli(["check", user_dir / "fixed.toml", "--quiet", "--json"], capsys)
    assert rc == 0 and json.loads(out)["distinct_states"] == 3


def test_check_all_show_and_replay_on_a_user_spec(user_dir, tmp_path, capsys):
    rc, out, _ = run_cli(["check", "--all", user_dir, "--quiet", "--out", tmp_path / "out"], capsys)
    assert rc == 0, out  # both models meet their [expect]
    trace = next((tmp_path / "out").rglob("racy*.itf.json"))
    rc, out, _ = run_cli(["show", trace], capsys)
    assert rc == 0 and "Take" in out and "MutualExclusion" in out
    # no reference implementation exists for a user's spec: one line, exit 2
    rc, _, err = run_cli(["replay", trace], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "no reference implementation" in err


def test_list_shows_where_each_spec_comes_from(user_dir, capsys):
    rc, out, _ = run_cli(["list", user_dir], capsys)
    assert rc == 0 and f"(file {user_dir.resolve() / 'mutex.py'}: not imported by list; check runs it)" in out
    rc, out, _ = run_cli(["list", "--specs"], capsys)
    assert "twophase  txncheck.spec.classic.twophase:TwoPhase  (built-in)" in out


def test_the_pytest_plugin_collects_a_user_spec(user_dir):
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--txncheck", str(user_dir),
                        "--rootdir", str(user_dir)], capture_output=True, text=True, cwd=user_dir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout
    (user_dir / "fixed.toml").write_text((user_dir / "fixed.toml").read_text().replace('"ok"', '"violation"'))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--txncheck", str(user_dir),
                        "--rootdir", str(user_dir)], capture_output=True, text=True, cwd=user_dir)
    assert r.returncode == 1 and "1 failed" in r.stdout


def test_a_spec_named_by_module(user_dir, monkeypatch, tmp_path):
    shutil.copy(user_dir / "mutex.py", tmp_path / "my_mutex_mod.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    m = tmp_path / "m.toml"
    m.write_text('spec = "my_mutex_mod:Mutex"\nvariant = "fixed"\n')
    found = load_model(m).resolve_spec()
    assert found.cls.__name__ == "Mutex" and found.origin == "module my_mutex_mod" and not found.builtin


def test_a_spec_registered_by_entry_point(user_dir, monkeypatch, tmp_path):
    shutil.copy(user_dir / "mutex.py", tmp_path / "ep_mutex_mod.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint("mutex", "ep_mutex_mod:Mutex", registry.GROUP)
    real = registry.entry_points
    monkeypatch.setattr(registry, "entry_points", lambda group: (ep,) if group == registry.GROUP else real(group=group))
    m = tmp_path / "m.toml"
    m.write_text('spec = "mutex"\nvariant = "fixed"\n')
    found = load_model(m).resolve_spec()
    assert found.cls.__name__ == "Mutex" and found.origin.startswith("entry point") and not found.builtin


@pytest.mark.parametrize("ref, needle", [
    ("nowhere.py:Mutex", "no such file"),
    ("mutex.py:Nope", "defines no 'Nope'"),
    ("mutex.py:S", "not a subclass"),
    ("no_such_pkg_h25.mod:X", "no module named 'no_such_pkg_h25'"),
    ("nosuch", "unknown spec 'nosuch'"),
])
def test_a_bad_spec_reference_is_one_line(user_dir, capsys, ref, needle):
    m = user_dir / "bad.toml"
    m.write_text(f'spec = "{ref}"\n')
    rc, _, err = run_cli(["check", m, "--quiet"], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


# -- bugs in the spec's code ---------------------------------------------------

BUGS = {
    # next raises: the line, the action before it, and the state
    "raise": ('            if pc == "checked":\n',
              '            if pc == "checked":\n                1 // 0\n'),
    # a list in a state: the field and the action that made it
    "list": ('yield ("Take", (("p", p),)), S(s.pc[:i] + ("crit",) + s.pc[i + 1:], True)',
             'yield ("Take", (("p", p),)), S(list(s.pc[:i] + ("crit",) + s.pc[i + 1:]), True)'),
    # a value that hashes but is not canonical: found when its state is expanded
    "float": ('yield ("Take", (("p", p),)), S(s.pc[:i] + ("crit",) + s.pc[i + 1:], True)',
              'yield ("Take", (("p", p),)), S(s.pc[:i] + ("crit",) + s.pc[i + 1:], 1.5)'),
    # observe misses a symbol
    "missing": ('return {"pc": dict(zip(self.ps, s.pc))}', 'return {}'),
    # a Bool-valued function observed as a dict
    "set-as-dict": ('        pc = sc.fun("pc", "Proc", Enum("Pc"))\n',
                    '        pc = sc.fun("pc", "Proc", Enum("Pc"))\n        sc.set("holder", "Proc")\n'),
    # import fails inside the spec file
    "import": ("import z3\n", "import z3\nundefined_name\n"),
}


def _plant(user_dir, bug):
    src = user_dir / "mutex.py"
    old, new = BUGS[bug]
    text = src.read_text()
    assert old in text
    text = text.replace(old, new)
    if bug == "set-as-dict":
        text = text.replace('return {"pc": dict(zip(self.ps, s.pc))}',
                            'return {"pc": dict(zip(self.ps, s.pc)), "holder": {p: False for p in self.ps}}')
    src.write_text(text)
    return src


@pytest.mark.parametrize("bug, needles", [
    ("raise", ["mutex.py:", "in next", "ZeroDivisionError", "while computing the first successor in next", "from state S(pc=('checked', 'idle')", "[1 // 0]"]),
    ("list", ["mutex.py", "action Take(p='p1')", "pc holds a list", "from state S(pc=('checked', 'idle')"]),
    ("float", ["mutex.py", "next made a state that is not immutable", "lock holds a float (1.5)",
               "S(pc=('crit', 'idle'), lock=1.5)"]),
    ("missing", ["mutex.py", "observe disagrees with the schema", "symbol pc is declared but missing"]),
    ("set-as-dict", ["mutex.py", "symbol holder is a set", "got dict"]),
    ("import", ["mutex.py:5: spec", "failed to import", "NameError"]),
])
def test_a_bug_in_the_spec_is_one_line_naming_where(user_dir, capsys, bug, needles):
    _plant(user_dir, bug)
    rc, out, err = run_cli(["check", user_dir / "racy.toml", "--quiet"], capsys)
    assert rc == 2, out + err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def test_a_list_made_in_a_forked_worker_is_named_by_the_guard(user_dir, capsys, monkeypatch):
    """--workers 2 forks once a level holds 4 states (4 processes): the
    workers take the successors, fail to fingerprint the list, and the
    guard names it in the worker."""
    from txncheck.checker.engines import parallel

    monkeypatch.setattr(parallel.coordinator, "SPLIT_AT", 2)
    _plant(user_dir, "list")
    m = user_dir / "four.toml"
    m.write_text('spec = "mutex.py:Mutex"\nvariant = "racy"\n[constants]\nprocs = 4\n')
    rc, out, err = run_cli(["check", m, "--quiet", "--workers", "2"], capsys)
    assert rc == 2, out + err
    assert len(err.strip().splitlines()) == 1 and "--workers: worker" in err, err
    # each worker fails on its own part; the one whose error reaches the coordinator first is named
    assert re.search(r"action Take\(p='p[1-4]'\) made a state that is not immutable: pc holds a list", err), err


def test_the_guard_looks_at_each_distinct_state_once_and_never_at_a_successor(user_dir, monkeypatch):
    """What keeps a spec loaded by path as fast as a built-in one: the walk of
    a state's parts runs once per distinct state, as it is expanded, and the
    full check (bad_value) only on the initial states, never per successor."""
    from txncheck.checker import spec_errors
    from txncheck.checker.api import check_model as check

    walks, full = [], []
    admit, bad_value = spec_errors.CanonicalParts.admit, spec_errors.bad_value

    def counted(v, path=""):
        if not path:  # the outermost call
            full.append(v)
        return bad_value(v, path)

    monkeypatch.setattr(spec_errors.CanonicalParts, "admit", lambda self, s: walks.append(s) or admit(self, s))
    monkeypatch.setattr(spec_errors, "bad_value", counted)
    (user_dir / "three.toml").write_text('spec = "mutex.py:Mutex"\nvariant = "fixed"\n[constants]\nprocs = 3\n')
    o = check(user_dir / "three.toml").outcome
    assert o.verdict == "ok" and o.states_generated > o.distinct_states
    assert len(walks) == len(set(walks)) == o.distinct_states
    assert len(full) == 1  # the one initial state


def test_the_original_exception_is_kept_for_debug(user_dir):
    _plant(user_dir, "raise")
    from txncheck.checker.api import check_model as check

    with pytest.raises(SpecCodeError) as info:
        check(user_dir / "racy.toml")
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_new_writes_a_scaffold_and_never_overwrites(tmp_path, capsys):
    rc, out, _ = run_cli(["new", "ring_lock", "--dir", tmp_path], capsys)
    assert rc == 0 and sorted(p.name for p in (tmp_path / "ring_lock").iterdir()) == [
        "ring_lock-racy.toml", "ring_lock.py", "ring_lock.toml"]
    rc, out, _ = run_cli(["check", "--all", tmp_path / "ring_lock", "--quiet", "--out", tmp_path / "o"], capsys)
    assert rc == 0 and "2 models, 0 not as expected" in out
    rc, _, err = run_cli(["new", "ring_lock", "--dir", tmp_path], capsys)
    assert rc == 2 and "already exists" in err
    rc, _, err = run_cli(["new", "9bad-name", "--dir", tmp_path], capsys)
    assert rc == 2 and "letters, digits and underscores" in err


def test_vacuity_explains_itself_and_a_model_may_accept_it(user_dir, capsys):
    """One process: MutualExclusion over pairs of distinct processes cannot fail."""
    m = user_dir / "one.toml"
    m.write_text('spec = "mutex.py:Mutex"\nvariant = "racy"\n[constants]\nprocs = 1\n')
    rc, _, err = run_cli(["check", m, "--quiet"], capsys)
    assert rc == 2 and "sort Proc has one element" in err and 'vacuous = ["MutualExclusion"]' in err
    m.write_text('spec = "mutex.py:Mutex"\nvariant = "racy"\nvacuous = ["MutualExclusion"]\n[constants]\nprocs = 1\n')
    rc, out, _ = run_cli(["check", m, "--quiet", "--json"], capsys)
    assert rc == 0 and json.loads(out)["distinct_states"] == 3
    m.write_text('spec = "mutex.py:Mutex"\nvacuous = "MutualExclusion"\n')
    rc, _, err = run_cli(["check", m, "--quiet"], capsys)
    assert rc == 2 and "'vacuous' must be a list" in err


def test_the_pytest_plugin_reports_a_spec_bug_in_one_line_and_the_fixture_checks_user_specs(user_dir):
    (user_dir / "test_mine.py").write_text(
        "def test_figures(txncheck):\n"
        "    report = txncheck.check('fixed.toml')\n"
        "    assert report.outcome.distinct_states == 3\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"],
                       capture_output=True, text=True, cwd=user_dir)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    _plant(user_dir, "raise")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--txncheck", "racy.toml"],
                       capture_output=True, text=True, cwd=user_dir)
    assert r.returncode == 1 and "Traceback" not in r.stdout
    assert "mutex.py:42: in next: spec Mutex raised ZeroDivisionError" in r.stdout, r.stdout


def test_a_spec_file_imports_its_siblings(user_dir, capsys):
    (user_dir / "mutex_states.py").write_text("IDLE = 'idle'\n")
    src = user_dir / "mutex.py"
    src.write_text(src.read_text().replace("import z3\n", "import z3\nfrom mutex_states import IDLE\n")
                   .replace('yield S(("idle",) * len(self.ps), False)', 'yield S((IDLE,) * len(self.ps), False)'))
    rc, out, _ = run_cli(["check", user_dir / "fixed.toml", "--quiet", "--json"], capsys)
    assert rc == 0 and json.loads(out)["distinct_states"] == 3
    assert str(user_dir) not in sys.path
