"""Bad input of every kind: exit 2, one line naming the file and the problem, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import z3

from txncheck.checker import model as model_mod
from txncheck.checker.cli import main
from txncheck.spec.api import Spec
from txncheck.spec.registry import Resolved
from txncheck.spec.schema import Int

from .helpers import MODELS


def run_cli(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def assert_one_line_error(rc, err, *needles):
    assert rc == 2
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("txncheck: error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


GOOD = 'spec = "twophase"\nproperties = ["TPTypeOK"]\ndeadlock = true\n[constants]\nrm = 2\n'


@pytest.mark.parametrize(
    "text, needle",
    [
        ("spec = \n", "malformed TOML"),
        ('spec = "nosuch"\n', "unknown spec 'nosuch'"),
        ('spec = "twophase"\nvariant = "v9"\n', "unknown variant 'v9'"),
        ('spec = "twophase"\nproperties = ["Nope"]\n', "unknown property 'Nope'"),
        ('spec = "twophase"\n[constants]\nrms = 3\n', "unknown bound 'rms'"),
        ('spec = "twophase"\n[constants]\nrm = 0\n', "out of range"),
        ('spec = "twophase"\n[constants]\nrm = 99\n', "out of range"),
        ('spec = "twophase"\n[constants]\nrm = "three"\n', "must be an integer"),
        ('spec = "twophase"\ndeadlock = "yes"\n', "'deadlock' must be true or false"),
        ('spec = "twophase"\nbogus = 1\n', "unknown key 'bogus'"),
        ('spec = "twophase"\npor = 1\n', "'por' must be true or false"),
        ('spec = "twophase"\nmax_states = 0\n', "'max_states' must be a positive integer"),
        ('spec = "twophase"\nmax_seconds = "1m"\n', "'max_seconds' must be a positive number"),
        ('spec = "twophase"\nengine = 3\n', "'engine' must be a string"),
        ('variant = "x"\n', "missing 'spec'"),
        ('spec = "diehard"\nwitnesses = ["Nope"]\n', "unknown witness 'Nope'"),
        ('spec = "diehard"\n[expect]\nverdict = "maybe"\n', "[expect] verdict"),
    ],
)
def test_bad_model_files(tmp_path, capsys, text, needle):
    path = write(tmp_path, "m.toml", text)
    rc, out, err = run_cli(["check", path, "--quiet"], capsys)
    assert_one_line_error(rc, err, path, needle)
    assert out == ""


@pytest.mark.parametrize("text, message", [
    ('spec = "twophase"\n\ndeadlok = true\n', ":3: unknown key 'deadlok'; did you mean 'deadlock'?"),
    ('spec = "twophase"\n[expect]\nverdict = "ok"\ndistinc = 3\n',
     ":4: unknown key 'distinc' in [expect]; did you mean 'distinct'?"),
    ('spec = "twophase"\n[constants]\nrms = 3\n', ":3: unknown bound 'rms' for spec twophase; did you mean 'rm'?"),
    ('spec = "twophase"\nproperties = ["TPTypeOk"]\n',
     ":2: unknown property 'TPTypeOk' for spec twophase; did you mean 'TPTypeOK'?"),
    ('spec = "twophase"\n[label]\nholds_fr = "code"\n', ":3: unknown key 'holds_fr' in [label]; did you mean 'holds_for'?"),
    ('spec = "twophase"\n[expect]\nruntime = "slow"\n', ": [expect] runtime must be one of quick, heavy"),
    ('spec = "twophase"\nmax_depth = 0\n', ": 'max_depth' must be a positive integer"),
])
def test_a_misspelt_key_gets_its_line_and_the_nearest_name(tmp_path, capsys, text, message):
    path = write(tmp_path, "m.toml", text)
    rc, _, err = run_cli(["check", path, "--quiet"], capsys)
    assert rc == 2 and err.startswith(f"txncheck: error: {path}{message}"), err


def test_missing_model_file(tmp_path, capsys):
    path = str(tmp_path / "absent.toml")
    rc, _, err = run_cli(["check", path], capsys)
    assert_one_line_error(rc, err, path, "no such model file")


def test_bad_usage(capsys):
    rc, _, err = run_cli(["check"], capsys)
    assert_one_line_error(rc, err, "model")
    rc, _, err = run_cli(["check", str(MODELS / "classic" / "diehard.toml"), "--max-states", "-4"], capsys)
    assert_one_line_error(rc, err, "--max-states")
    rc, _, err = run_cli(["check", str(MODELS / "classic" / "diehard.toml"), "--engine", "warp"], capsys)
    assert_one_line_error(rc, err, "unknown engine 'warp'")
    rc, _, err = run_cli(["frobnicate"], capsys)
    assert_one_line_error(rc, err, "frobnicate")


@pytest.mark.parametrize("argv, message", [
    (["chek", "m.toml"], "invalid choice: 'chek' (choose from 'check', "),
    (["check", "m.toml", "--jsn"], "unrecognized arguments: --jsn; did you mean '--json'?"),
    (["check", "m.toml", "--quite", "--jsn"],
     "unrecognized arguments: --quite --jsn; did you mean '--quiet' for '--quite', '--json' for '--jsn'?"),
    (["show", "t.json", "--formt=html"], "unrecognized arguments: --formt=html; did you mean '--format'?"),
    (["list", "--specz"], "did you mean '--specs'?"),     # the command's own options, not check's
    (["check", "m.toml", "--qqqqqq"], "unrecognized arguments: --qqqqqq"),
])
def test_a_misspelt_command_or_option_gets_the_nearest_name(capsys, argv, message):
    rc, _, err = run_cli(argv, capsys)
    assert_one_line_error(rc, err, message)
    if "qqq" in message:
        assert "did you mean" not in err
    if argv[0] == "chek":
        assert err.rstrip().endswith("; did you mean 'check'?")


def test_a_misspelt_spec_class_gets_the_nearest_spec_class(tmp_path, capsys):
    import shutil

    shutil.copytree(MODELS.parent / "examples" / "mutex", tmp_path / "m")
    model = write(tmp_path / "m", "bad.toml", 'spec = "mutex.py:Mutx"\nvariant = "racy"\n')
    rc, _, err = run_cli(["check", model], capsys)
    assert_one_line_error(rc, err, "defines no 'Mutx'; did you mean 'Mutex'?")   # a class, not the state S


# -- properties that cannot fail, or cannot hold --------------------------------


class Odd(Spec):
    name = "odd"
    variants = ("vacuous", "unsat", "fine")

    def setup(self):
        x = self.schema.var("x", Int(0, 3))
        self.invariants["P"] = {"vacuous": x <= 3, "unsat": z3.And(x > 1, x < 1), "fine": x <= 2}[self.variant]

    def init_states(self):
        yield 0

    def next(self, s):
        if s < 3:
            yield ("Inc", ()), s + 1

    def observe(self, s):
        return {"x": s}


@pytest.mark.parametrize("variant, needle", [("vacuous", "is vacuous"), ("unsat", "is unsatisfiable")])
def test_vacuous_and_unsatisfiable_properties_exit_2(tmp_path, capsys, monkeypatch, variant, needle):
    monkeypatch.setattr(model_mod, "resolve", lambda name, base: Resolved(Odd, "test", True))
    path = write(tmp_path, "odd.toml", f'spec = "odd"\nvariant = "{variant}"\n')
    rc, _, err = run_cli(["check", path, "--quiet"], capsys)
    assert_one_line_error(rc, err, "property P", needle)


def test_a_meaningful_property_on_the_same_schema_is_checked(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(model_mod, "resolve", lambda name, base: Resolved(Odd, "test", True))
    path = write(tmp_path, "odd.toml", 'spec = "odd"\nvariant = "fine"\n')
    rc, out, _ = run_cli(["check", path, "--quiet", "--json", "--out", str(tmp_path)], capsys)
    report = json.loads(out)
    assert rc == 1 and report["violations"][0]["length"] == 4  # 0, 1, 2, 3


# -- traces --------------------------------------------------------------------


def good_trace(tmp_path, capsys):
    rc, out, _ = run_cli(["check", str(MODELS / "classic" / "diehard.toml"), "--json", "--quiet",
                          "--out", str(tmp_path)], capsys)
    return json.loads(out)["violations"][0]["trace"]


def mutate(tmp_path, capsys, fn):
    doc = json.loads(open(good_trace(tmp_path, capsys)).read())
    fn(doc)
    return write(tmp_path, "bad.itf.json", json.dumps(doc))


HOSTILE = {
    "wrong index": (lambda d: d["states"][2]["#meta"].update(index=7), "expected 2"),
    "no states": (lambda d: d.update(states=[]), "non-empty list"),
    "states not a list": (lambda d: d.update(states={"a": 1}), "non-empty list"),
    "vars not names": (lambda d: d.update(vars=[1, 2]), "'vars'"),
    "missing var": (lambda d: d["states"][1].pop("big"), "lacks variable 'big'"),
    "undeclared var": (lambda d: d["states"][1].update(evil=True), "undeclared variable 'evil'"),
    "bad bigint": (lambda d: d["states"][1].update(big={"#bigint": "12x"}), "#bigint"),
    "huge bigint": (lambda d: d["states"][1].update(big={"#bigint": "9" * 5000}), "#bigint"),
    "unknown kind": (lambda d: d["states"][1].update(big={"#pickle": "cos\nsystem"}), "unknown value kind"),
    "two keys": (lambda d: d["states"][1].update(big={"#tup": [], "#set": []}), "exactly one"),
    "float": (lambda d: d["states"][1].update(big=1.5), "unsupported JSON value"),
    "null": (lambda d: d["states"][1].update(big=None), "unsupported JSON value"),
    "loop out of range": (lambda d: d.update(loop=99), "'loop'"),
    "no meta": (lambda d: d.pop("#meta"), "'#meta'"),
    "no spec": (lambda d: d["#meta"].pop("spec"), "'spec'"),
    "no action": (lambda d: d["states"][1]["#meta"].pop("action"), "action name"),
    "bad fingerprint": (lambda d: d["states"][1]["#meta"].update(fingerprint="zz" * 40), "fingerprint"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_traces_are_rejected(tmp_path, capsys, case):
    fn, needle = HOSTILE[case]
    path = mutate(tmp_path, capsys, fn)
    rc, _, err = run_cli(["show", path], capsys)
    assert_one_line_error(rc, err, path, needle)


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"", "not JSON"),
        (b"{\"#meta\": {\"spec\": \"diehard\"", "not JSON"),  # truncated
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a UTF-8"),
        (b"this is not json", "not JSON"),
        (b"[" * 100000 + b"]" * 100000, "nests too deeply"),
        (b"[1, 2, 3]", "must be a JSON object"),
    ],
    ids=["empty", "truncated", "binary", "text", "deep", "array"],
)
def test_non_json_and_truncated_traces(tmp_path, capsys, content, needle):
    p = tmp_path / "t.itf.json"
    p.write_bytes(content)
    rc, _, err = run_cli(["show", str(p)], capsys)
    assert_one_line_error(rc, err, str(p), needle)


def test_truncated_real_trace(tmp_path, capsys):
    path = good_trace(tmp_path, capsys)
    data = open(path, "rb").read()
    cut = write(tmp_path, "cut.itf.json", data[: len(data) // 2].decode())
    rc, _, err = run_cli(["show", cut], capsys)
    assert_one_line_error(rc, err, cut, "not JSON")


def test_console_script_prints_no_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("spec = [\n")
    p = subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "check", str(bad)],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "malformed TOML" in p.stderr and "Traceback" not in p.stderr
