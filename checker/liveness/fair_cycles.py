"""Fair cycles in an explicit state graph, and lasso counterexamples.

The graph is given as integer arrays (source, target, action id), one entry
per generated successor, as the bfs engine keeps them. Self-loops are
dropped on entry: in TLA+ a step that leaves the state unchanged is a
stutter, it neither takes an action (<<A>>_vars needs a change) nor makes
one enabled (ENABLED <<A>>_vars). Stuttering is allowed in every state, so
every state lies on a cycle and a single state is a candidate component.

`find_fair_lasso` answers: is there a fair behaviour that reaches one of the
`sources` and from there on stays inside the `keep` states forever? It is the
standard SCC-refinement check for strong (Streett) and weak fairness:

1. restrict the graph to `keep` states reachable from the sources inside
   `keep`; compute its strongly connected components (networkx). States on
   no cycle are trimmed first: each is a component of its own that can only
   stutter, fair iff no fairness condition is enabled in it;
2. for a component C, let taken(C) be the actions of the real edges inside C;
   - strong fairness SF(A): if A is enabled somewhere in C but not taken in
     C, no fair behaviour can visit those states infinitely often: remove
     them and recompute the components of what is left (step 1 on C);
   - weak fairness WF(A): if A is enabled in every state of C and not taken
     in C, no behaviour confined to C is fair, nor to any part of C:
     discard C;
   - otherwise the behaviour that walks all of C forever is fair: C is a
     fair component.
3. the lasso: the shortest stem (the sources carry their BFS depth, so the
   stem is shortest over all sources) to the nearest state of the nearest
   fair component, then a cycle inside that component that meets every
   obligation: take an A-edge for each fairness condition taken inside C,
   or visit a state where A is disabled. When the entry state meets them all
   on its own, the cycle is that state stuttering forever.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import networkx as nx


@dataclass
class Constraint:
    """One fairness obligation on the graph: WF or SF of a set of action ids."""

    kind: str  # "WF" | "SF"
    label: str
    actions: frozenset[int]
    enabled: set[int] = field(default_factory=set)  # states with a real edge labelled by one of `actions`


@dataclass
class Lasso:
    """steps[0] = (None, initial state); steps[k] = (action id, state).
    After the last step the behaviour continues at steps[loop] — by the
    action `closing`, or by stuttering when `closing` is None (then the last
    step is steps[loop] itself)."""

    steps: list[tuple[int | None, int]]
    loop: int
    closing: int | None


class StateGraph:
    """States 0..n-1, real (non-self-loop) edges and the BFS tree from the
    initial states."""

    def __init__(self, n: int, src: Iterable[int], dst: Iterable[int], act: Iterable[int],
                 initial: Iterable[int]) -> None:
        self.n = n
        self.succ: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for s, d, a in zip(src, dst, act):
            if s != d:
                self.succ[s].append((d, a))
        self.initial = sorted(set(initial))
        # BFS from the initial states: depth and parent (state, action) for stems.
        self.depth = [-1] * n
        self.parent: list[tuple[int, int] | None] = [None] * n
        q = deque(self.initial)
        for i in self.initial:
            self.depth[i] = 0
        while q:
            u = q.popleft()
            for v, a in self.succ[u]:
                if self.depth[v] < 0:
                    self.depth[v] = self.depth[u] + 1
                    self.parent[v] = (u, a)
                    q.append(v)

    def bind(self, constraints: Sequence[Constraint]) -> None:
        """Fill each constraint's enabled set from the graph's edges."""
        by_action: dict[int, list[Constraint]] = {}
        for c in constraints:
            c.enabled = set()
            for a in c.actions:
                by_action.setdefault(a, []).append(c)
        for s, out in enumerate(self.succ):
            for _, a in out:
                for c in by_action.get(a, ()):
                    c.enabled.add(s)

    def stem(self, x: int) -> list[tuple[int | None, int]]:
        out: list[tuple[int | None, int]] = []
        while (step := self.parent[x]) is not None:
            u, a = step
            out.append((a, x))
            x = u
        out.append((None, x))
        out.reverse()
        return out


def _taken(g: StateGraph, comp: set[int]) -> set[int]:
    return {a for s in comp for d, a in g.succ[s] if d in comp}


def _on_cycles(g: StateGraph, nodes: set[int]) -> set[int]:
    """`nodes` trimmed of states that lie on no real cycle inside `nodes`:
    repeatedly drop states with no successor or no predecessor left. Most
    states of a protocol's graph go here, which keeps networkx's graph small."""
    out_deg = dict.fromkeys(nodes, 0)
    in_deg = dict.fromkeys(nodes, 0)
    pred: dict[int, list[int]] = {s: [] for s in nodes}
    for s in nodes:
        for d, _ in g.succ[s]:
            if d in out_deg:
                out_deg[s] += 1
                in_deg[d] += 1
                pred[d].append(s)
    alive = set(nodes)
    queue = [s for s in nodes if not out_deg[s] or not in_deg[s]]
    while queue:
        s = queue.pop()
        if s not in alive:
            continue
        alive.discard(s)
        for d, _ in g.succ[s]:
            if d in alive:
                in_deg[d] -= 1
                if not in_deg[d]:
                    queue.append(d)
        for u in pred[s]:
            if u in alive:
                out_deg[u] -= 1
                if not out_deg[u]:
                    queue.append(u)
    return alive


def fair_components(g: StateGraph, constraints: Sequence[Constraint], nodes: set[int]) -> Iterator[set[int]]:
    """The fair components (step 2 of the module docstring) inside `nodes`.
    A state on no real cycle is a component of its own, fair iff no fairness
    condition is enabled in it (it can only stutter)."""
    cyclic = _on_cycles(g, nodes)
    enabled_somewhere = set().union(*(c.enabled for c in constraints)) if constraints else set()
    for s in nodes:
        if s not in cyclic and s not in enabled_somewhere:
            yield {s}
    if not cyclic:
        return
    whole = nx.DiGraph()
    whole.add_nodes_from(cyclic)
    whole.add_edges_from((s, d) for s in cyclic for d, _ in g.succ[s] if d in cyclic)
    work = [cyclic]
    while work:
        part = work.pop()
        view = whole if part is cyclic else whole.subgraph(part)
        for comp in nx.strongly_connected_components(view):
            taken = _taken(g, comp)
            drop: set[int] = set()
            for c in constraints:
                if c.kind == "SF" and c.actions.isdisjoint(taken):
                    drop |= comp & c.enabled
            if drop:
                rest = comp - drop
                if rest:
                    work.append(rest)
                continue
            if any(c.kind == "WF" and c.actions.isdisjoint(taken) and comp <= c.enabled for c in constraints):
                continue
            yield comp


def _distances(g: StateGraph, keep: Sequence[bool], sources: Iterable[int]):
    """Shortest total distance (BFS depth of the source + steps inside keep),
    by a BFS whose sources join the frontier at their own depth."""
    starts = sorted((g.depth[x], x) for x in set(sources) if keep[x] and g.depth[x] >= 0)
    dist: dict[int, int] = {}
    via: dict[int, tuple[int, int] | None] = {}
    k, frontier = 0, list[int]()
    level = starts[0][0] if starts else 0
    while frontier or k < len(starts):
        if not frontier:
            level = max(level, starts[k][0])
        while k < len(starts) and starts[k][0] == level:
            x = starts[k][1]
            if x not in dist:
                dist[x], via[x] = level, None
                frontier.append(x)
            k += 1
        nxt = []
        for u in frontier:
            for v, a in g.succ[u]:
                if keep[v] and v not in dist:
                    dist[v], via[v] = level + 1, (u, a)
                    nxt.append(v)
        frontier = nxt
        level += 1
    return dist, via


def _walk_to(g: StateGraph, comp: set[int], start: int, states: set[int], actions: frozenset[int]):
    """Shortest walk inside comp from start to a state in `states` or across
    an edge labelled by one of `actions`; a list of (action, state) steps."""
    prev: dict[int, tuple[int, int] | None] = {start: None}
    q = deque([start])

    def path(u: int) -> list[tuple[int, int]]:
        out = []
        while (step := prev[u]) is not None:
            p, a = step
            out.append((a, u))
            u = p
        out.reverse()
        return out

    while q:
        u = q.popleft()
        if u in states:
            return path(u)
        for v, a in g.succ[u]:
            if v not in comp:
                continue
            if a in actions:
                return path(u) + [(a, v)]
            if v not in prev:
                prev[v] = (u, a)
                q.append(v)
    raise AssertionError("fair component without a witness walk")  # excluded by fair_components


def _cycle(g: StateGraph, constraints: Sequence[Constraint], comp: set[int], entry: int):
    taken = _taken(g, comp)
    obligations = []
    for c in constraints:
        if comp.isdisjoint(c.enabled):
            continue
        ok_states = comp - c.enabled if c.kind == "WF" else set()
        ok_actions = c.actions & taken
        obligations.append((ok_states, frozenset(ok_actions)))
    steps: list[tuple[int, int]] = []
    seen_states, seen_actions, cur = {entry}, set[int](), entry
    for ok_states, ok_actions in obligations:
        if not seen_states.isdisjoint(ok_states) or not seen_actions.isdisjoint(ok_actions):
            continue
        walk = _walk_to(g, comp, cur, ok_states, ok_actions)
        steps += walk
        for a, v in walk:
            seen_actions.add(a)
            seen_states.add(v)
        cur = steps[-1][1] if steps else entry
    if steps and cur != entry:
        steps += _walk_to(g, comp, cur, {entry}, frozenset())
    return steps


def find_fair_lasso(g: StateGraph, constraints: Sequence[Constraint], keep: Sequence[bool],
                    sources: Iterable[int]) -> Lasso | None:
    """A fair behaviour that reaches a source and then stays in `keep` states
    forever, as a lasso; None when there is none. `g.bind(constraints)` must
    have been called."""
    dist, via = _distances(g, keep, sources)
    if not dist:
        return None
    best: tuple[int, int, set[int]] | None = None
    for comp in fair_components(g, constraints, set(dist)):
        entry = min(comp, key=lambda s: (dist[s], s))
        if best is None or (dist[entry], entry) < (best[0], best[1]):
            best = (dist[entry], entry, comp)
    if best is None:
        return None
    _, entry, comp = best
    # Stem: back through `via` inside keep to the source, then the BFS tree to an initial state.
    tail, x = [], entry
    while via[x] is not None:
        u, a = via[x]
        tail.append((a, x))
        x = u
    tail.reverse()
    stem = g.stem(x) + tail
    cycle = _cycle(g, constraints, comp, entry)
    loop = len(stem) - 1
    if not cycle:
        return Lasso(stem, loop, None)
    return Lasso(stem + cycle[:-1], loop, cycle[-1][0])
