"""`txncheck profile`: the levels and counts of the prefix, the fields' growth
factors and roles, the symmetry and commutation it measures, on specs small
enough that each figure is known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txncheck.checker.cli import main
from txncheck.checker.model import load_model
from txncheck.checker.profiling import Settings, profile

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# x counts to 2 by A or B; `log` remembers which did each step, and the
# properties read of it only whether B ever did (ghost history); `noise` is
# flipped by Flip and read by nothing. 7 (x, log) pairs times 2 noises.
LOGGED = '''
from typing import NamedTuple
import z3
from txncheck.spec.api import Spec
from txncheck.spec.schema import Bool, Int


class S(NamedTuple):
    x: int
    log: frozenset
    noise: bool


class Logged(Spec):
    name = "logged"

    def setup(self):
        sc = self.schema
        x = sc.var("x", Int())
        sawb = sc.var("sawb", Bool())
        self.invariants["Bounded"] = x <= 2
        self.witnesses["SawB"] = sawb

    def init_states(self):
        yield S(0, frozenset(), False)

    def next(self, s):
        if s.x < 2:
            yield ("A", ()), S(s.x + 1, s.log | {("a", s.x + 1)}, s.noise)
            yield ("B", ()), S(s.x + 1, s.log | {("b", s.x + 1)}, s.noise)
        yield ("Flip", ()), s._replace(noise=not s.noise)

    def observe(self, s):
        return {"x": s.x, "sawb": any(tag == "b" for tag, _ in s.log)}
'''


@pytest.fixture
def logged(tmp_path):
    (tmp_path / "logged.py").write_text(LOGGED)
    m = tmp_path / "logged.toml"
    m.write_text('spec = "logged.py:Logged"\nwitnesses = ["SawB"]\n')
    return m


def test_the_prefix_counts_as_check_does(tmp_path):
    """Peterson (TLC: 42 distinct, 77 generated, depth 11), to the end."""
    p = profile(load_model(EXAMPLES / "peterson" / "peterson.toml"))
    pre = p.prefix
    assert (len(pre.states), pre.generated, len(pre.levels), pre.complete, pre.stopped) == (42, 77, 11, 11, None)
    assert sum(lv.new for lv in pre.levels) == 42
    assert all(sum(lv.new_by.values()) == lv.new and sum(lv.generated_by.values()) == lv.generated
               for lv in pre.levels[1:])  # the initial states come from no action


def test_a_bounded_prefix_says_where_it_stopped(logged):
    p = profile(load_model(logged), Settings(max_depth=2))
    assert (len(p.prefix.states), p.prefix.complete, p.prefix.stopped) == (4, 2, "max-depth 2 reached")
    p = profile(load_model(logged), Settings(max_states=5))
    # level 2 holds 3 states; the first of them is expanded when the 4 held are under 5
    assert p.prefix.stopped == "max-states 5 reached" and p.prefix.complete == 2 and len(p.prefix.states) >= 5


def test_fields_their_growth_and_what_reads_them(logged):
    p = profile(load_model(logged))
    assert len(p.prefix.states) == 14
    f = dict(zip(p.layout.names, zip(p.growth.factor, (r.role for r in p.reads))))
    assert f["noise"] == (2.0, "irrelevant")        # 14 states, 7 without it
    assert f["log"] == (pytest.approx(14 / 6), "ghost")  # (x, noise): 3 x 2
    assert f["x"] == (1.0, "state")                  # the log's size tells x; a guard reads it
    # keeping of log only what the properties observe (whether B happened):
    # (x, sawb) takes 5 values, times 2 noises
    assert p.ghosts == {"log": pytest.approx(14 / 10)}
    assert p.reads[p.layout.names.index("log")].symbols.keys() == {"sawb"}
    x = p.reads[p.layout.names.index("x")]
    assert x.guard > 0 and x.update > 0  # A and B are enabled below 2; log's update reads x


def test_which_actions_commute_and_why(logged):
    com = profile(load_model(logged)).commutation
    ab = com.pairs[("A", "B")]
    assert ab.co_enabled > 0 and ab.independent == 0
    assert set(ab.reasons) == {"the order changes log", "A disables B"}  # at x = 0, and at x = 1
    assert com.pairs[("A", "Flip")].independent == com.pairs[("A", "Flip")].co_enabled > 0
    assert com.visible_to == {"Flip": [], "A": ["Bounded"], "B": ["Bounded", "SawB"]}  # A never changes sawb


def test_symmetry_is_measured_with_the_specs_permute(tmp_path):
    """Voting's 599 states are TLC's 77 orbits under MCVoting's symmetry
    (acceptors and values together), and every permuted state is reachable."""
    p = profile(load_model(EXAMPLES / "voting" / "mc.toml"))
    both = next(sy for sy in p.symmetry if sy.sort == "Acceptor x Value")
    assert (both.states, both.closed, both.factor, both.class_factor) == (599, 1.0, 599 / 77, 599 / 77)


def test_the_command_bounded_text_and_json(logged, capsys):
    assert main(["profile", str(logged), "--max-depth", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "every state to depth 2 (stopped: max-depth 2 reached)" in out
    assert "    noise: factor 1.333 (" in out  # 4 states: the initial one, A's, B's and Flip's; 3 without noise
    assert main(["profile", str(logged), "--max-states", "5", "--quiet"]) == 0
    levels = capsys.readouterr().out.split("\n\n")[1].splitlines()
    # level 3, cut after the first state of level 2 is expanded: its A, B and Flip
    assert levels[-1].split()[:4] == ["3", "3", "3", "partial"]
    assert main(["profile", str(logged), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["distinct_states"] == 14 and doc["ghosts"] == {"log": pytest.approx(14 / 10, abs=1e-4)}
    assert {f["field"]: f["role"] for f in doc["fields"]} == {"x": "state", "log": "ghost", "noise": "irrelevant"}


def test_bad_input_is_one_line(tmp_path, capsys):
    assert main(["profile", str(tmp_path / "nope.toml")]) == 2
    assert main(["profile", str(tmp_path / "nope.toml"), "--max-states", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("txncheck: error:") for line in err)
