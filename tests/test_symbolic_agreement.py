"""The agreement check (agreement.py) tells a relation from its spec: at
every reachable state it compares the successors Z3 allows with those
`next` yields, both ways, and the observation with `observe`'s. A relation
with one guard weakened or strengthened, one update changed or the
observation changed is caught, naming the action and the state. (That the
derived relations agree with their specs is tests/test_symbolic_derive.py's.)"""

from __future__ import annotations

import pytest
import z3

from txncheck.checker.symbolic.agreement import Agreement, disagreements, reachable, walk
from txncheck.checker.symbolic.derive import DerivedRelation
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TwoPhase
from txncheck.spec.symbolic import Act


class Mutated(DerivedRelation):
    """The derived relation with the acts of one action name changed by
    `change(f, guard, changes)`."""

    name = ""

    def actions(self):
        out = []
        for a in super().actions():
            if a.label[0] == self.name:
                a = Act(a.label, lambda f, step=a.step: self.change(f, *step(f)))
            out.append(a)
        return out

    def atom(self, v):
        return self.layout.atoms.const(v)


class WeakerCommit(Mutated):
    """TMCommit without "every RM prepared"."""

    name = "TMCommit"

    def change(self, f, guard, changes):
        return f["tmState", ()] == self.atom("init"), changes


class StrongerAbort(Mutated):
    """TMAbort only while r1 has not aborted."""

    name = "TMAbort"

    def change(self, f, guard, changes):
        return z3.And(guard, f["rmState[0]", ()] != self.atom("aborted")), changes


class WrongUpdate(Mutated):
    """TMAbort forgets to send Abort."""

    name = "TMAbort"

    def change(self, f, guard, changes):
        return guard, {k: v for k, v in changes.items() if not k[0].startswith("msgs")}


@pytest.mark.parametrize("relation, what, action, message", [
    (WeakerCommit, "z3-only", "TMCommit", "Z3 allows a successor the spec does not yield: "),
    (StrongerAbort, "spec-only", "TMAbort", "the spec yields a successor, but the relation's guard is false"),
    (WrongUpdate, "spec-only", "TMAbort", "the relation's update differs from the spec's: msgs{('Abort',)}: "
                                          "spec True, relation False"),
])
def test_a_changed_guard_or_update_is_caught_with_its_action_and_state(relation, what, action, message):
    spec = TwoPhase(rm=3)
    _, (bad, *_) = disagreements(relation(spec), reachable(spec), stop_after=1)
    assert (bad.what, bad.action[0]) == (what, action)
    assert message in bad.detail
    assert "in state TPState(rmState=(" in str(bad)
    # the derived relation agrees on that very state
    assert Agreement(DerivedRelation(spec)).check(bad.state) == []


def test_a_wrong_observation_is_caught():
    class Blind(DerivedRelation):
        def observation(self, f):
            return [(t, z3.StringVal("working")) for t, _ in super().observation(f)]

    spec = TCommit(rm=2)
    _, (bad, *_) = disagreements(Blind(spec), reachable(spec), stop_after=1)
    assert bad.what == "observation" and "rmState['r1']: observe 'prepared', relation 'working'" in bad.detail


def test_walks_visit_the_number_of_states_asked():
    spec = TwoPhase(rm=2)
    states = list(walk(spec, 500, seed=3, depth=20))
    assert len(states) == 500 and set(states) <= set(reachable(spec))
