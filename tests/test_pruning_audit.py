"""The pruning audit: a spec's pruning rules (enabling conditions that exist
only to shrink the state space) sit behind one bool bound, `prune`, and must
not change what a model shows. For every spec that prunes, at bounds small
enough to explore unpruned, pruned and unpruned runs must agree on every
property: whether it is violated, and the length of its shortest
counterexample; and on which witnesses are reached.

The exploration here is a plain breadth-first search, independent of the
engines: each property gets the depth of the first state that violates it.
"""

from __future__ import annotations

import pytest

from txncheck.checker.invariants import compile_predicate
from txncheck.spec.pip473.spec import Pip473
from txncheck.spec.registry import SPECS, load_spec_class

# spec -> [(variant, constants)], each explorable unpruned in a few seconds.
PIP473 = [
    # one txn, two sends to one segment and an ack, both decisions: the crash,
    # failover and GC races (the audit's finding: a crash with empty caches
    # but a send in flight, whose op had landed)
    {"txns": 1, "writes": "t1:0 t1:1", "acks": "t1:s1:1:ind", "reshape": "none", "decisions": "commit",
     "crashes": 1, "failovers": 0},
    # the merge: the reshape's own pruning (only while a send is unfinished,
    # starting while a txn is OPEN)
    {"txns": 1, "writes": "t1:0", "acks": "", "reshape": "merge", "decisions": "both", "crashes": 1,
     "failovers": 0},
    # the clock: timeouts and retention windows that take time to pass
    {"txns": 1, "writes": "t1:0", "acks": "t1:s1:1:cum", "reshape": "none", "decisions": "commit",
     "crashes": 1, "failovers": 1, "ticks": 2, "timeout": 1, "retention": 1},
    # two txns: one sends to s1, the other acks s2
    {"txns": 2, "writes": "t1:0", "acks": "t2:s2:1:ind", "reshape": "none", "decisions": "commit", "crashes": 1,
     "failovers": 0},
    # the stock client (it waits for its sends before endTxn)
    {"txns": 1, "writes": "t1:0 t1:1", "acks": "", "reshape": "none", "decisions": "both", "crashes": 1,
     "failovers": 1, "client": "stock"},
    # a non-transactional send around two crashes (the crash rule with empty
    # caches: the send's sync of the read position during recovery)
    {"txns": 1, "writes": "t1:0", "plain": "0", "acks": "", "reshape": "none", "decisions": "abort",
     "crashes": 2, "failovers": 0, "client": "stock"},
    # the coordinator's three-step endTxn (the failover rule: only while the TC has work)
    {"txns": 1, "writes": "t1:0", "acks": "t1:s1:1:ind", "reshape": "none", "decisions": "both", "crashes": 1,
     "failovers": 2, "tc": "steps"},
    # one joint participant (bound participants = "joint"; the other cases split them, the default): the
    # crash rule reads the one cache
    {"txns": 1, "writes": "t1:0", "acks": "t1:s1:1:ind", "reshape": "none", "decisions": "both", "crashes": 2,
     "failovers": 1, "participants": "joint"},
    # the buffer's recovery in steps, a non-transactional send and trimming around it (the crash rule
    # while the buffer recovers)
    {"txns": 1, "writes": "t1:0", "plain": "0 0", "acks": "", "reshape": "none", "decisions": "abort",
     "crashes": 2, "failovers": 0, "client": "stock", "recovery": "steps", "trim": True},
    # two subscriptions, acks only on the second: on s2 only its pending-ack store holds anything (the crash
    # rule reads its cache, events and acks)
    {"txns": 1, "writes": "t1:0", "acks": "t1:s2:1:cum:sub2", "reshape": "none",
     "decisions": "both", "crashes": 1, "failovers": 0, "participants": "split", "subs": 2, "trim": True},
]
# PIP-196: the rollover rule (spec/pip196/spec.py), with crashes and with a
# non-transactional publish during recovery
PIP196 = [{"txns": 2, "ledgers": 2, "crashes": 1}, {"txns": 1, "ledgers": 3, "crashes": 1, "publishes": 1}]
AUDITS: dict[str, list[tuple[str, dict]]] = {
    # a bound a variant never reads is left out of its run (the spec refuses it)
    "pip473": [(v, {k: x for k, x in c.items() if k not in Pip473.ignored_bounds(v, c)})
               for v in ("pip-text", "merged", "fixed") for c in PIP473],
    "pip196": [(v, c) for v in ("merged", "pip-text", "early-publish") for c in PIP196],
}
MAX_STATES = 600_000
# Specs whose enabling conditions are all the protocol's own (or bounds the
# model file sets and the spec's docstring lists), read action by action:
# no rule there exists only to shrink the state space, so there is nothing
# to switch off.
NO_PRUNING = {"tcommit", "twophase", "diehard", "legacy_v4", "kip868"}


def pruning_specs() -> list[str]:
    return [name for name in sorted(SPECS) if "prune" in load_spec_class(name).bounds]


def first_violations(spec) -> tuple[dict[str, int | None], set[str], int]:
    """Per invariant, the number of states in its shortest counterexample
    (None: it holds); the witnesses reached; the distinct states."""
    invs = {n: compile_predicate(spec.schema, f) for n, f in spec.invariants.items()}
    wits = {n: compile_predicate(spec.schema, f) for n, f in spec.witnesses.items()}
    first: dict[str, int | None] = {n: None for n in invs}
    reached: set[str] = set()
    level = list(dict.fromkeys(spec.init_states()))
    seen = set(level)
    depth = 0
    while level:
        depth += 1
        for s in level:
            obs = spec.observe(s)
            for n, holds in invs.items():
                if first[n] is None and not holds(obs):
                    first[n] = depth
            for n, holds in wits.items():
                if n not in reached and holds(obs):
                    reached.add(n)
        nxt = []
        for s in level:
            for _, t in spec.next(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        assert len(seen) <= MAX_STATES, "audit bounds too large to explore unpruned"
        level = nxt
    return first, reached, len(seen)


def test_every_pruning_spec_is_audited():
    assert "pip473" in pruning_specs()
    assert set(pruning_specs()) <= set(AUDITS), "a spec prunes but has no audit bounds here"
    # every spec is either audited here or declared free of pruning
    assert set(SPECS) == set(AUDITS) | NO_PRUNING and not set(AUDITS) & NO_PRUNING


@pytest.mark.parametrize("spec_name,variant,constants", [
    (name, v, c) for name, cases in sorted(AUDITS.items()) for v, c in cases])
def test_pruning_changes_no_verdict(spec_name, variant, constants):
    cls = load_spec_class(spec_name)
    pruned = first_violations(cls(variant, **constants, prune=True))
    full = first_violations(cls(variant, **constants, prune=False))
    assert pruned[0] == full[0], "a property's verdict or shortest trace depends on pruning"
    assert pruned[1] == full[1], "a witness's reachability depends on pruning"
    assert pruned[2] <= full[2]
