"""EWD 840: Dijkstra's termination detection on a ring (Dijkstra, Feijen and
van Gasteren; the TLA+ spec is EWD840.tla in tlaplus/Examples).

Node 0 sends a token around the ring N-1, N-2, ..., 0. A node that activates a
node further along the token's route turns black; a black node stains the
token. Node 0 concludes that every node is passive when the token comes back
white to a white, passive node 0 (`TerminationDetection`). `Inv` is Dijkstra's
invariant, the disjunction P0 \\/ P1 \\/ P2.

Written the way a user writes a spec, outside txncheck; a model file names
it by path. Successors follow the TLA+ disjuncts one for one (SendMsg has one
successor per receiver j), so "states generated" is TLC's.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec
from txncheck.spec.schema import Int, Str


class State(NamedTuple):
    active: tuple[bool, ...]   # per node 0..N-1
    color: tuple[str, ...]     # "white" | "black", per node
    tpos: int                  # the node holding the token
    tcolor: str                # the token's color


def _put(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


class EWD840(Spec):
    name = "ewd840"
    bounds = {"n": Bound(3, "nodes on the ring", lo=1, hi=6)}

    def setup(self) -> None:
        n = self.n = self.constants["n"]
        self.nodes = tuple(f"n{i}" for i in range(n))  # sort elements name the integers 0..N-1
        sc = self.schema
        sc.enum("Node", self.nodes)
        active = sc.set("active", "Node")
        color = sc.fun("color", "Node", Str())
        tpos = sc.var("tpos", Int(0, n - 1))
        tcolor = sc.var("tcolor", Str())
        node = lambda i: sc.const("Node", self.nodes[i])
        white, black = z3.StringVal("white"), z3.StringVal("black")
        detected = z3.And(tpos == 0, tcolor == white, color(node(0)) == white, z3.Not(active(node(0))))
        self.invariants["TypeOK"] = z3.And(
            sc.forall("Node", lambda i: z3.Or(color(i) == white, color(i) == black)),
            z3.Or(tcolor == white, tcolor == black))
        self.invariants["TerminationDetection"] = z3.Implies(
            detected, sc.forall("Node", lambda i: z3.Not(active(i))))
        p0 = z3.And([z3.Implies(tpos < i, z3.Not(active(node(i)))) for i in range(n)])
        p1 = z3.Or([z3.And(j <= tpos, color(node(j)) == black) for j in range(n)])
        self.invariants["Inv"] = z3.Or(p0, p1, tcolor == black)
        self.predicates["terminationDetected"] = detected
        # the actions, built once
        self.a_probe = ("InitiateProbe", ())
        self.a_pass = [("PassToken", (("i", i),)) for i in range(n)]
        self.a_send = [[("SendMsg", (("i", i), ("j", j))) for j in range(n)] for i in range(n)]
        self.a_deact = [("Deactivate", (("i", i),)) for i in range(n)]

    def init_states(self):
        n = self.n
        for active in itertools.product((False, True), repeat=n):
            for color in itertools.product(("white", "black"), repeat=n):
                for tpos in range(n):
                    yield State(active, color, tpos, "black")

    def next(self, s: State):
        active, color, tpos, tcolor = s
        n = self.n
        # System: InitiateProbe \/ \E i \in Nodes \ {0}: PassToken(i)
        if tpos == 0 and (tcolor == "black" or color[0] == "black"):
            yield self.a_probe, State(active, _put(color, 0, "white"), n - 1, "white")
        i = tpos
        if i != 0 and (not active[i] or color[i] == "black" or tcolor == "black"):
            yield self.a_pass[i], State(active, _put(color, i, "white"), i - 1,
                                        "black" if color[i] == "black" else tcolor)
        # Environment: \E i \in Nodes: SendMsg(i) \/ Deactivate(i)
        for i in range(n):
            if not active[i]:
                continue
            for j in range(n):
                if j != i:
                    yield self.a_send[i][j], State(_put(active, j, True),
                                                   _put(color, i, "black") if j > i else color, tpos, tcolor)
            yield self.a_deact[i], State(_put(active, i, False), color, tpos, tcolor)

    def observe(self, s: State):
        return {
            "active": frozenset(self.nodes[i] for i, a in enumerate(s.active) if a),
            "color": dict(zip(self.nodes, s.color)),
            "tpos": s.tpos,
            "tcolor": s.tcolor,
        }
