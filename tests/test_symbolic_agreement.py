"""The symbolic relations say what their specs say: at every reachable state
of the classic models, the successors Z3 allows are those `next` yields,
under the same labels, both ways; and a relation with one guard or one
update changed is caught, naming the action and the state."""

from __future__ import annotations

import pytest
import z3

from txncheck.checker.symbolic.agreement import Agreement, disagreements, reachable, walk
from txncheck.spec.classic.diehard import DieHard
from txncheck.spec.classic.diehard_relation import DieHardRelation
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.tcommit_relation import TCommitRelation
from txncheck.spec.classic.twophase import TwoPhase
from txncheck.spec.classic.twophase_relation import TwoPhaseRelation

V = z3.StringVal


@pytest.mark.parametrize("spec, relation, states", [
    (TCommit(rm=1), TCommitRelation, 4), (TCommit(rm=3), TCommitRelation, 34),
    (TwoPhase(rm=1), TwoPhaseRelation, 12), (TwoPhase(rm=3), TwoPhaseRelation, 288),
    (DieHard(), DieHardRelation, 16),
], ids=lambda x: getattr(x, "__name__", None) or getattr(x, "describe", lambda: None)())
def test_every_reachable_state_of_the_classic_models_agrees(spec, relation, states):
    checked, bad = disagreements(relation(spec), reachable(spec), stop_after=1)
    assert bad == [] and checked == states


@pytest.mark.slow
@pytest.mark.parametrize("spec, relation, states", [
    (TCommit(rm=6), TCommitRelation, 792), (TwoPhase(rm=6), TwoPhaseRelation, 50816)])
def test_every_state_of_the_largest_classic_models_agrees(spec, relation, states):
    """models/classic/twophase-rm6.toml's 50,816 states (and TCommit at the
    same bound). Random walks at these bounds visit only states this checks."""
    checked, bad = disagreements(relation(spec), reachable(spec), stop_after=1)
    assert bad == [] and checked == states


class WeakerCommit(TwoPhaseRelation):
    """TMCommit without "every RM prepared"."""

    def _tm_commit(self, f):
        _, changes = super()._tm_commit(f)
        return f.tmState == V("init"), changes


class StrongerAbort(TwoPhaseRelation):
    """TMAbort only while r1 has not aborted."""

    def _tm_abort(self, f):
        guard, changes = super()._tm_abort(f)
        return z3.And(guard, f.rmState("r1") != V("aborted")), changes


class WrongUpdate(TwoPhaseRelation):
    """TMAbort forgets to send Abort."""

    def _tm_abort(self, f):
        guard, _ = super()._tm_abort(f)
        return guard, {f.tmState: V("aborted")}


@pytest.mark.parametrize("relation, what, action, message", [
    (WeakerCommit, "z3-only", "TMCommit", "Z3 allows a successor the spec does not yield: tmState = committed"),
    (StrongerAbort, "spec-only", "TMAbort", "the spec yields a successor, but the relation's guard is false"),
    (WrongUpdate, "spec-only", "TMAbort", "the relation's update differs from the spec's: msgs['Abort']: "
                                          "spec True, relation False"),
])
def test_a_changed_guard_or_update_is_caught_with_its_action_and_state(relation, what, action, message):
    spec = TwoPhase(rm=3)
    _, (bad, *_) = disagreements(relation(spec), reachable(spec), stop_after=1)
    assert (bad.what, bad.action[0]) == (what, action)
    assert message in bad.detail
    assert "in state TPState(rmState=(" in str(bad)
    # the correct relation agrees on that very state
    assert Agreement(TwoPhaseRelation(spec)).check(bad.state) == []


def test_a_wrong_observation_is_caught():
    class Blind(TCommitRelation):
        def observation(self, f):
            return [(t, V("working")) for t, _ in super().observation(f)]

    spec = TCommit(rm=2)
    _, (bad, *_) = disagreements(Blind(spec), reachable(spec), stop_after=1)
    assert bad.what == "observation" and "rmState['r1']: observe 'prepared', relation 'working'" in bad.detail


def test_walks_visit_the_number_of_states_asked():
    spec = TwoPhase(rm=2)
    states = list(walk(spec, 500, seed=3, depth=20))
    assert len(states) == 500 and set(states) <= set(reachable(spec))
