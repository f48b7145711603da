"""The fair-cycle search on small hand-made graphs whose verdicts are known in
advance, and on random graphs against a brute-force oracle."""

from __future__ import annotations

from itertools import combinations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.liveness.fair_cycles import Constraint, StateGraph, find_fair_lasso


def graph(n, edges, initial=(0,)):
    """edges: (src, dst, action id)."""
    src, dst, act = zip(*edges) if edges else ((), (), ())
    return StateGraph(n, src, dst, act, initial)


def run(g, fairness, keep, sources=None):
    """fairness: [(kind, {action ids})]."""
    cs = [Constraint(kind, f"{kind}{sorted(acts)}", frozenset(acts)) for kind, acts in fairness]
    g.bind(cs)
    if sources is None:
        sources = [i for i in g.initial if keep[i]]
    return find_fair_lasso(g, cs, keep, sources)


# A, B, C, D, E: action ids
A, B, C, D, E = range(5)

# 0 <-> 1 by A and B; 0 -C-> 2, the goal.
LOOP_WITH_EXIT = [(0, 1, A), (1, 0, B), (0, 2, C)]
NOT_GOAL = [True, True, False]


def test_no_fairness_stutters_in_the_initial_state():
    lasso = run(graph(3, LOOP_WITH_EXIT), [], NOT_GOAL)
    assert lasso.steps == [(None, 0)]
    assert (lasso.loop, lasso.closing) == (0, None)


def test_weak_fairness_keeps_a_cycle_where_the_exit_is_not_continuously_enabled():
    # C is enabled in 0 but not in 1: WF(C) does not force it; the loop is fair.
    lasso = run(graph(3, LOOP_WITH_EXIT), [("WF", {A}), ("WF", {B}), ("WF", {C})], NOT_GOAL)
    assert lasso.steps == [(None, 0), (A, 1)]
    assert (lasso.loop, lasso.closing) == (0, B)


def test_strong_fairness_removes_that_cycle():
    # SF(C): C is enabled infinitely often on the loop, so the loop is unfair;
    # stuttering in 1 is unfair by WF(B). Nothing fair avoids the goal.
    assert run(graph(3, LOOP_WITH_EXIT), [("WF", {A}), ("WF", {B}), ("SF", {C})], NOT_GOAL) is None


def test_weak_fairness_removes_the_cycle_when_the_exit_is_always_enabled():
    edges = LOOP_WITH_EXIT + [(1, 2, C)]
    assert run(graph(3, edges), [("WF", {A}), ("WF", {B}), ("WF", {C})], NOT_GOAL) is None
    # ...and without fairness on C the cycle is fair again.
    lasso = run(graph(3, edges), [("WF", {A}), ("WF", {B})], NOT_GOAL)
    assert (lasso.loop, lasso.closing, [s for _, s in lasso.steps]) == (0, B, [0, 1])


def test_weak_fairness_of_next_as_one_condition():
    # WF over {A, B, C} together: the loop takes A and B, which satisfies it.
    lasso = run(graph(3, LOOP_WITH_EXIT), [("WF", {A, B, C})], NOT_GOAL)
    assert (lasso.loop, lasso.closing) == (0, B)


def test_a_deadlock_stutters_forever_even_under_fairness():
    # 0 -A-> 1, and 1 has no successor: stuttering in 1 is fair.
    lasso = run(graph(3, [(0, 1, A)]), [("WF", {A})], NOT_GOAL)
    assert lasso.steps == [(None, 0), (A, 1)]
    assert (lasso.loop, lasso.closing) == (1, None)


def test_a_self_loop_neither_takes_nor_enables_an_action():
    # 0 -A-> 0 (a self-loop, i.e. a stutter) and 0 -A-> 2 (the goal). Under WF(A)
    # the stutter in 0 is unfair, since A is enabled there by the real edge.
    edges = [(0, 0, A), (0, 2, A)]
    assert run(graph(3, edges), [("WF", {A})], NOT_GOAL) is None
    # A self-loop alone does not enable A: stuttering in 0 is then fair.
    lasso = run(graph(3, [(0, 0, A), (0, 2, B)]), [("WF", {A})], NOT_GOAL)
    assert lasso.steps == [(None, 0)] and lasso.closing is None


def test_leads_to_only_counts_cycles_after_the_trigger():
    # 0 <-> 3 by A/B avoids the goal 2 but lies before the trigger 1;
    # 0 -C-> 1 -D-> 2 -E-> 0.
    edges = [(0, 3, A), (3, 0, B), (0, 1, C), (1, 2, D), (2, 0, E)]
    g = graph(4, edges)
    fair = [("WF", {a}) for a in (A, B, C, D, E)]
    keep = [True, True, False, True]
    # eventually goal fails through the 0 <-> 3 loop ...
    lasso = run(g, fair, keep)
    assert {s for _, s in lasso.steps} == {0, 3}
    # ... but trigger-in-1 leads_to goal holds: from 1, WF(D) forces the goal.
    assert run(graph(4, edges), fair, keep, sources=[1]) is None
    # Without WF(D), 1 stutters forever: the stem runs 0 -> 1.
    lasso = run(graph(4, edges), fair[:3] + fair[4:], keep, sources=[1])
    assert lasso.steps == [(None, 0), (C, 1)] and lasso.closing is None


def test_the_cycle_takes_every_action_the_fairness_needs():
    # A component 0 -A-> 1 -B-> 0, 1 -C-> 3 -D-> 0 (C, D on a side loop); exit 1 -E-> 2.
    # SF(C) forces the side loop into the cycle; SF(E) would end it.
    edges = [(0, 1, A), (1, 0, B), (1, 3, C), (3, 0, D), (1, 2, E)]
    fair = [("WF", {A}), ("WF", {B}), ("SF", {C}), ("WF", {D})]
    lasso = run(graph(4, edges), fair, [True, True, False, True])
    cycle_actions = {a for a, _ in lasso.steps[lasso.loop + 1:]} | {lasso.closing}
    assert C in cycle_actions
    assert run(graph(4, edges), fair + [("SF", {E})], [True, True, False, True]) is None


def test_sources_outside_keep_or_unreachable_give_no_lasso():
    assert run(graph(3, LOOP_WITH_EXIT), [], NOT_GOAL, sources=[2]) is None
    assert run(graph(3, [(0, 2, A)], initial=(0,)), [], [True, True, False], sources=[1]) is None


# -- random graphs against a brute-force oracle ---------------------------------------


def oracle(n, edges, initial, fairness, keep, sources) -> bool:
    """True iff some set S of keep states, strongly connected through real
    edges (a single state by stuttering), reachable from a source through
    keep states, is fair when the behaviour walks all of S forever."""
    real = [(s, d, a) for s, d, a in edges if s != d]
    full = nx.DiGraph()
    full.add_nodes_from(range(n))
    full.add_edges_from((s, d) for s, d, _ in real)
    reach_init = set(initial)
    for i in initial:
        reach_init |= nx.descendants(full, i)
    inner = nx.DiGraph()
    inner.add_nodes_from(i for i in range(n) if keep[i])
    inner.add_edges_from((s, d) for s, d, _ in real if keep[s] and keep[d])
    start = {x for x in sources if keep[x] and x in reach_init}
    reach = set(start)
    for x in start:
        reach |= nx.descendants(inner, x)
    enabled = [{s for s, _, a in real if a in acts} for _, acts in fairness]
    for k in range(1, len(reach) + 1):
        for S in map(set, combinations(sorted(reach), k)):
            if k > 1 and not nx.is_strongly_connected(inner.subgraph(S)):
                continue
            taken = {a for s, d, a in real if s in S and d in S}
            ok = True
            for (kind, acts), en in zip(fairness, enabled):
                if taken & acts:
                    continue
                if kind == "WF" and S <= en or kind == "SF" and S & en:
                    ok = False
                    break
            if ok:
                return True
    return False


def check_lasso(n, edges, initial, fairness, keep, sources, lasso) -> None:
    real = {(s, d, a) for s, d, a in edges if s != d}
    steps = lasso.steps
    assert steps[0][0] is None and steps[0][1] in initial
    for (_, u), (a, v) in zip(steps, steps[1:]):
        assert (u, v, a) in real
    j = next(i for i, (_, s) in enumerate(steps) if s in sources and all(keep[t] for _, t in steps[i:]))
    assert j <= lasso.loop
    last = steps[-1][1]
    S = {s for _, s in steps[lasso.loop:]}
    taken = {a for a, _ in steps[lasso.loop + 1:]}
    if lasso.closing is None:
        assert lasso.loop == len(steps) - 1
    else:
        assert (last, steps[lasso.loop][1], lasso.closing) in real
        taken.add(lasso.closing)
    for kind, acts in fairness:
        en = {s for s, _, a in real if a in acts}
        if not taken & acts:
            assert not (kind == "WF" and S <= en), (kind, acts)
            assert not (kind == "SF" and S & en), (kind, acts)


@st.composite
def problems(draw):
    n = draw(st.integers(2, 6))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node, st.integers(0, 3)), max_size=14))
    fairness = draw(st.lists(st.tuples(st.sampled_from(["WF", "SF"]),
                                       st.sets(st.integers(0, 3), min_size=1, max_size=2)), max_size=3))
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    sources = draw(st.sets(node, max_size=3))
    return n, edges, (0,), fairness, keep, sorted(sources)


@settings(max_examples=300, deadline=None)
@given(problems())
def test_agrees_with_the_oracle_and_every_lasso_is_a_fair_behaviour(p):
    n, edges, initial, fairness, keep, sources = p
    lasso = run(graph(n, edges, initial), fairness, keep, sources)
    assert (lasso is not None) == oracle(*p)
    if lasso is not None:
        check_lasso(*p, lasso)
