"""PIP-473's lemmas as predicates of the state (spec/pip473/lemmas.py,
`Spec.lemmas`): each holds in every reachable state of small `fixed` models
and on random walks at the standard bounds; they are the lemmas the
hand-written relation states (spec/pip473/symbolic/relation_lemmas.py),
until it goes. test_pip473_derived_guards.py proves a small model with
them from the relation derived from the spec's code (ADR 0011)."""

from __future__ import annotations

import pytest

from txncheck.checker.model import load_model
from txncheck.checker.symbolic.agreement import reachable
from txncheck.checker.symbolic.walks import biased_walks, walk
from txncheck.spec.pip473.spec import Pip473

from .helpers import MODELS

PIP473 = MODELS / "pip473"
# two txns: t1's send and t2's cumulative ack on one segment; clients commit, timeouts abort
TWO_TXNS = {"txns": 2, "writes": "t1:0", "acks": "t2:s1:1:cum", "reshape": "none", "crashes": 0, "failovers": 0,
            "decisions": "commit", "client": "stock", "recovery": "steps"}


def spec_of(stem):
    return load_model(PIP473 / f"{stem}.toml").instantiate()


def false_lemmas(spec, states, most=None) -> tuple[int, dict]:
    """(distinct states checked, {lemma: a state where it is false})."""
    seen: set = set()
    bad: dict = {}
    for s in states:
        if s in seen:
            continue
        if most is not None and len(seen) >= most:
            break
        seen.add(s)
        for name, holds in spec.lemmas.items():
            if name not in bad and not holds(s):
                bad[name] = s
    return len(seen), bad


@pytest.mark.parametrize("spec, states", [
    (lambda: spec_of("append-before-op-fixed"), 833),        # a send, a crash and the buffer's recovery
    (lambda: spec_of("acks-across-recovery-fixed"), 3605),   # an ack across a crash and the store's replay
    (lambda: Pip473("fixed", **TWO_TXNS), 5126),
], ids=["append-before-op-fixed", "acks-across-recovery-fixed", "two-txns"])
def test_every_lemma_holds_in_every_reachable_state_of_a_small_fixed_model(spec, states):
    spec = spec()
    n, bad = false_lemmas(spec, reachable(spec))
    assert n == states and not bad, f"false: {sorted(bad)}"


@pytest.mark.parametrize("stem", ["append-before-op-fixed", "fixed-standard", "fixed-standard-unload",
                                  "tb-recovery-publish-fixed", "late-ack-merged", "gc-forced-delete"])
def test_the_spec_states_the_hand_written_relations_lemmas(stem):
    """The same names at the same variant and bounds (a flag's lemma only
    where the flag is on; the derived relation's own two are True there).
    This goes with the hand-written relation."""
    from txncheck.spec.pip473.symbolic.relation import Pip473Relation
    from txncheck.spec.pip473.symbolic.relation_lemmas import lemmas

    spec = spec_of(stem)
    assert set(spec.lemmas) == set(lemmas(Pip473Relation(spec)))


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["fixed-standard", "fixed-standard-unload"])
def test_every_lemma_holds_on_random_walks_at_the_standard_bounds(stem):
    """20,000 distinct states of the standard model's walks (and with its
    unload: ClosedSendsAtAnUnloadedSegment), half uniform, half biased
    toward rare steps (crashes, failovers, GC sweeps)."""
    spec = spec_of(stem)
    for states in (walk(spec, 10**9, seed=473, depth=60), biased_walks(spec, 10**9, seed=473, depth=60)):
        n, bad = false_lemmas(spec, states, most=10_000)
        assert n == 10_000 and not bad, f"false: {sorted(bad)}"
