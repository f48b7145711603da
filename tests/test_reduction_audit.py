"""The reduction audit: a spec's reduction bounds (`Bound(reduction=True)`:
values that only shrink the state space) must not change what a model
shows. As the pruning audit does for `prune`, at bounds small enough to
explore both ways, runs with and without each reduction must agree on every
property (violated or not, and the length of its shortest counterexample)
and on the witnesses reached; and a counterexample found with a reduction is
made a run of the unreduced spec (`Spec.complete_trace`)."""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.invariants import compile_predicate
from txncheck.checker.itf import read_trace
from txncheck.spec.pip473.spec import Pip473
from txncheck.spec.registry import SPECS, load_spec_class

from .test_pruning_audit import PIP473, first_violations

# spec -> reduction bound -> its reducing value
REDUCTIONS = {"pip473": {"replies": "owed"}}
# the pruning audit's PIP-473 cases, by index, with the variants a reduction applies to
CASES = [(v, PIP473[i]) for v in ("merged", "fixed") for i in (0, 2, 4, 6)]
QUICK = {2}  # run in the default tier (a few seconds); the rest are slow


def test_every_reduction_bound_is_audited():
    declared = {name: {k for k, b in load_spec_class(name).bounds.items() if b.reduction} for name in SPECS}
    assert {n: set(r) for n, r in declared.items() if r} == {n: set(r) for n, r in REDUCTIONS.items()}


@pytest.mark.parametrize("bound,k", [
    pytest.param(b, k, id=f"{b}-{CASES[k][0]}-{k}", marks=() if k in QUICK else pytest.mark.slow)
    for b in sorted(REDUCTIONS["pip473"]) for k in range(len(CASES))])
def test_a_reduction_changes_no_verdict(bound, k):
    variant, constants = CASES[k]
    plain = first_violations(Pip473(variant, **constants))
    reduced = first_violations(Pip473(variant, **constants, **{bound: REDUCTIONS["pip473"][bound]}))
    assert reduced[0] == plain[0], "a property's verdict or shortest counterexample changed"
    assert reduced[1] == plain[1], "the witnesses reached changed"
    assert reduced[2] < plain[2], "the reduction reduces nothing here"


def test_an_owed_answer_that_contradicts_the_decision_is_completed_with_tcfinalize():
    """replies = owed reads an owed answer as told; a SingleFinalization
    counterexample ending there gets the tcFinalize step the run with
    replies = sent takes, and the completed last state violates the property."""
    spec = Pip473("fixed", txns=1, writes="t1:0", acks="", reshape="none", decisions="commit",
                  crashes=0, failovers=0, replies="owed", client="permissive")  # ends with its send open
    path = [(None, next(iter(spec.init_states())))]
    for want in ("newTxn", "endTxn"):
        path.append(next((a, t) for a, t in spec.next(path[-1][1]) if a[0] == want))
    last = path[-1][1]
    (t, step, d), = last.tcp
    forged = last._replace(tcp=frozenset({(t, step, "ABORTED")}))  # the TC owes a wrong answer
    path[-1] = (path[-1][0], forged)
    holds = compile_predicate(spec.schema, spec.invariants["SingleFinalization"])
    assert not holds(spec.observe(forged))
    done = spec.complete_trace(path, "SingleFinalization")
    assert len(done) == len(path) + 1 and done[-1][0][0] == "tcFinalize"
    assert done[-1][1].client[t] == "told-aborted" and not holds(spec.observe(done[-1][1]))
    assert spec.complete_trace(path, "Atomicity") == path


def test_a_trace_found_with_a_reduction_records_the_unreduced_bound(tmp_path):
    model = tmp_path / "m.toml"
    model.write_text('spec = "pip473"\nvariant = "merged"\nproperties = ["NoLateAdmission"]\n'
                     '[constants]\ntxns = 1\nwrites = "t1:0 t1:0"\nacks = ""\nreshape = "none"\n'
                     'crashes = 0\nfailovers = 0\nreplies = "owed"\n')
    report = check_model(model, out_dir=tmp_path)
    (v,) = report.outcome.violations
    assert read_trace(v.trace_file).meta["bounds"]["replies"] == "sent"
