"""Leader election in a ring (Chang and Roberts): the `leader` protocol of
the DistAI benchmarks (VeriGu/DistAI@6669038, protocols/leader/leader.ivy;
DuoAI's `ring_leader_election`).

Nodes sit in a fixed ring, each with a distinct id; here a node is named by
its id (`n3` has id 3), and the ring is the bound `ring`, the nodes in ring
order. A node sends its id to the next node; a node that receives an id not
below its own passes it on; a node that receives its own id becomes the
leader. Messages stay pending once sent, as in the Ivy model. The safety
property: at most one leader.

The ring and the order of ids are constants, which no action changes; the
observation states them as the relations the Ivy model axiomatises, `btw`
and `le`, so that lemmas can name them, beside `pending` and `leader`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec, SpecError


class State(NamedTuple):
    pending: frozenset       # (id, node): the id is pending at the node
    leader: frozenset        # the nodes that think they are the leader


class LeaderElection(Spec):
    name = "leader_election"
    bounds = {"ring": Bound(("n1", "n3", "n2", "n4"), "the nodes in ring order, each n<id>")}

    def setup(self) -> None:
        ring = tuple(self.constants["ring"])
        if len(set(ring)) != len(ring) or not all(re.fullmatch(r"n[0-9]+", n) for n in ring):
            raise SpecError("ring: distinct node names n<id>")
        self.ring = ring
        self.id = {n: int(n[1:]) for n in ring}
        self.nodes = tuple(sorted(ring, key=self.id.get))
        self.succ = {n: ring[(i + 1) % len(ring)] for i, n in enumerate(ring)}
        pos = {n: i for i, n in enumerate(ring)}
        k = len(ring)
        # btw(x, y, z): y is on the path from x to z, the three distinct (the ring axioms of leader.ivy)
        self.btw = {(x, y, z) for x in ring for y in ring for z in ring
                    if len({x, y, z}) == 3 and 0 < (pos[y] - pos[x]) % k < (pos[z] - pos[x]) % k}
        self.le = {(x, y) for x in ring for y in ring if self.id[x] <= self.id[y]}
        sc = self.schema
        sc.enum("Node", self.nodes)
        sc.set("pending", ("Node", "Node"))
        leader = sc.set("leader", "Node")
        sc.set("le", ("Node", "Node"))
        sc.set("btw", ("Node", "Node", "Node"))
        # invariant forall X: node, Y: node. leader(X) & leader(Y) -> X = Y
        self.invariants["AtMostOneLeader"] = sc.forall(
            ("Node", "Node"), lambda x, y: z3.Implies(z3.And(leader(x), leader(y)), x == y))
        self.witnesses["SomeLeader"] = sc.exists("Node", lambda x: leader(x))

    def init_states(self):
        yield State(frozenset(), frozenset())

    def next(self, s: State):
        for n in self.ring:
            n1 = self.succ[n]
            if n1 == n:
                continue       # send and receive need n ~= n1
            # action send(n, n1): pending(idn(n), n1) := true
            yield ("send", (("n", n),)), State(s.pending | {(n, n1)}, s.leader)
            # action become_leader(n): require pending(idn(n), n); leader(n) := true
            if (n, n) in s.pending:
                yield ("become_leader", (("n", n),)), State(s.pending, s.leader | {n})
            # action receive(n, m, n1): require pending(m, n); if le(idn(n), m) { pending(m, n1) := true }
            for m in self.nodes:
                if (m, n) in s.pending:
                    passed = s.pending | {(m, n1)} if self.id[n] <= self.id[m] else s.pending
                    yield ("receive", (("n", n), ("m", m))), State(passed, s.leader)

    def observe(self, s: State):
        return {"pending": set(s.pending), "leader": set(s.leader), "le": self.le, "btw": self.btw}
