"""From explored paths to formulas: the condition of reaching each node, the
guard of each event, and a value joined over the paths that give it.

A node's condition is the disjunction, over the ways in, of the condition
of the node each comes from and the conditions decided on the way. Two ways
in from one node that differ only in the last decision (both sides of an
`if` with no `else` that meet again) are one way in without it, so the
conditions stay the size of the code's own tests.
"""

from __future__ import annotations

from typing import Any

import z3

from ....spec.symbolic import conj, disj
from .explore import Event, Exploration, Node


def _and(lits) -> z3.BoolRef:
    return conj(list(lits))     # z3.And without its per-argument coercion (a sixth of a derivation's time)


def _or(terms) -> z3.BoolRef:
    terms = [t for t in terms if not z3.is_false(t)]
    if any(z3.is_true(t) for t in terms):
        return z3.BoolVal(True)
    return disj(terms)


_KEYS: dict[int, tuple[tuple[int, bool], z3.ExprRef]] = {}   # id -> (key, the literal, kept alive)


def _lit_key(lit) -> tuple[int, bool]:
    """(the id of a literal's atom, whether it is negated), read with Z3's C
    API (z3py's is_not and arg cost 50 times more) and kept by the literal's id."""
    ctx, a = lit.ctx.ref(), lit.as_ast()
    i = z3.Z3_get_ast_id(ctx, a)
    hit = _KEYS.get(i)
    if hit is None:
        neg = (z3.Z3_get_ast_kind(ctx, a) == z3.Z3_APP_AST
               and z3.Z3_get_decl_kind(ctx, z3.Z3_get_app_decl(ctx, a)) == z3.Z3_OP_NOT)
        hit = _KEYS[i] = ((z3.Z3_get_ast_id(ctx, z3.Z3_get_app_arg(ctx, a, 0)), True) if neg else (i, False), lit)
    return hit[0]


def simplify_ways(ways: list[tuple]) -> list[tuple]:
    """Literal lists (a disjunction of conjunctions), with two lists that
    differ only in one literal, c in one and not c in the other, made one
    without it (both sides of an `if` that met again), repeatedly."""
    keyed = {tuple(_lit_key(x) for x in w): tuple(w) for w in ways}
    changed = True
    while changed and len(keyed) > 1:
        changed = False
        items = sorted(keyed, key=len)
        for n, k1 in enumerate(items):
            for k2 in items[n + 1:]:
                if len(k1) != len(k2):
                    continue
                diff = [i for i, (a, b) in enumerate(zip(k1, k2)) if a != b]
                if len(diff) == 1 and k1[diff[0]][0] == k2[diff[0]][0]:
                    i = diff[0]
                    w = keyed.pop(k1)
                    keyed.pop(k2)
                    keyed[k1[:i] + k1[i + 1:]] = w[:i] + w[i + 1:]
                    changed = True
                    break
            if changed:
                break
    return sorted(keyed.values(), key=len)


class Reach:
    """The condition of reaching each node of an exploration.

    A node's condition is kept as (anchor node, ways): the anchor's
    condition and one of the literal lists (`ways`) since it. A node with
    one way in extends its source's ways; one with several ways in from
    the same anchor joins them (and `simplify_ways` drops the `if`s whose
    two sides met again); past `MAX_WAYS`, or where the anchors differ, a
    node becomes an anchor of its own, its condition one formula."""

    MAX_WAYS = 16

    def __init__(self, ex: Exploration) -> None:
        self.anchor: dict[int, tuple[Node, list]] = {id(ex.root): (ex.root, [()])}
        self.formula: dict[int, z3.BoolRef] = {id(ex.root): z3.BoolVal(True)}
        self.solver = z3.Solver()
        self.solver.add(*ex.background)
        for node in _topological(ex):
            ins = [(self.anchor[id(src)], lits) for src, lits in node.ins]
            anchors = {id(a) for (a, _), _ in ins}
            if len(anchors) == 1:
                anchor = ins[0][0][0]
                ways = simplify_ways([w + tuple(lits) for (_, src_ways), lits in ins for w in src_ways])
                if len(ways) > 1 and self._covers(ways):
                    ways = [()]     # every way the code can go from the anchor leads here
                if len(ways) <= self.MAX_WAYS:
                    self.anchor[id(node)] = (anchor, ways)
                    continue
            parts = [self._formula(a, ws, lits) for (a, ws), lits in ins]
            whole = _or(parts)
            if len(parts) > 1 and self.solver.check(z3.Not(whole)) == z3.unsat:
                whole = z3.BoolVal(True)     # every state's path comes here
            self.formula[id(node)] = whole
            self.anchor[id(node)] = (node, [()])

    def _covers(self, ways: list) -> bool:
        """Is the disjunction of the ways true in every state of the cells' types?"""
        return self.solver.check(z3.Not(_or([_and(w) for w in ways]))) == z3.unsat

    def _formula(self, anchor: Node, ways: list, lits=()) -> z3.BoolRef:
        inner = _or([_and(tuple(w) + tuple(lits)) for w in ways])
        base = self.formula[id(anchor)]
        if z3.is_true(base):
            return inner
        return base if z3.is_true(inner) else conj([base, inner])

    def of(self, node: Node) -> z3.BoolRef:
        anchor, ways = self.anchor[id(node)]
        return self._formula(anchor, ways)

    def guard(self, e: Event) -> z3.BoolRef:
        anchor, ways = self.anchor[id(e.node)]
        return self._formula(anchor, ways, e.lits)


def _topological(ex: Exploration) -> list[Node]:
    """The nodes, each after every node a way into it comes from."""
    order: list[Node] = []
    state: dict[int, int] = {id(ex.root): 2}
    for start in ex.nodes.values():
        stack = [(start, False)]
        while stack:
            node, done = stack.pop()
            if done:
                state[id(node)] = 2
                order.append(node)
                continue
            if state.get(id(node)) == 2:
                continue
            if state.get(id(node)) == 1:
                raise AssertionError("the paths' graph has a cycle: the code loops without end")
            state[id(node)] = 1
            stack.append((node, True))
            stack.extend((src, False) for src, _ in node.ins if state.get(id(src)) != 2)
    return order


def join_values(guards: list[z3.BoolRef], values: list[Any]) -> Any:
    """One term from one per path (the guards partition the states)."""
    out = values[-1]
    for g, v in zip(reversed(guards[:-1]), reversed(values[:-1])):
        out = v if v.eq(out) else z3.If(g, v, out)
    return out
