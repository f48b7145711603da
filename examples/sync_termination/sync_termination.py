"""SyncTerminationDetection: the abstract termination-detection problem on a
ring with synchronous communication (SyncTerminationDetection.tla in
tlaplus/Examples, specifications/ewd840, which EWD 840 refines).

Nodes are active or passive; an active node may wake any node, or turn
passive, and termination may be detected at once when the last node turns
passive, or later. Stable: once detected, every node is passive.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec
from txncheck.spec.schema import Bool


class State(NamedTuple):
    active: tuple[bool, ...]  # per node 0..N-1
    detected: bool            # terminationDetected


class SyncTermination(Spec):
    name = "sync_termination"
    bounds = {"n": Bound(7, "nodes", lo=1, hi=10)}

    def setup(self) -> None:
        n = self.n = self.constants["n"]
        sc = self.schema
        sc.int_sort("Node", 0, n - 1)
        active = sc.set("active", "Node")
        detected = sc.var("terminationDetected", Bool())
        terminated = sc.forall("Node", lambda i: z3.Not(active(i)))
        # The safety half of Stable: detection implies termination (the
        # other half, that it stays so, follows since Wakeup needs an active node).
        self.invariants["DetectedMeansTerminated"] = z3.Implies(detected, terminated)
        self.witnesses["Detected"] = detected
        self.a_term = [("Terminate", (("i", i),)) for i in range(n)]
        self.a_wake = [[("Wakeup", (("i", i), ("j", j))) for j in range(n)] for i in range(n)]
        self.a_detect = ("DetectTermination", ())

    def init_states(self):
        for active in itertools.product((False, True), repeat=self.n):
            # terminationDetected \in {FALSE, terminated}: one state when the two agree
            for d in sorted({False, not any(active)}):
                yield State(active, d)

    def next(self, s: State):
        active, detected = s
        # \E i: Terminate(i); terminationDetected' \in {terminationDetected, terminated'}
        for i in range(self.n):
            if active[i]:
                after = active[:i] + (False,) + active[i + 1:]
                for d in sorted({detected, not any(after)}):
                    yield self.a_term[i], State(after, d)
        # \E i, j: Wakeup(i, j)
        for i in range(self.n):
            if active[i]:
                for j in range(self.n):
                    yield self.a_wake[i][j], State(active[:j] + (True,) + active[j + 1:], detected)
        # DetectTermination
        if not any(active):
            yield self.a_detect, State(active, True)

    def observe(self, s: State):
        return {"active": frozenset(str(i) for i, a in enumerate(s.active) if a),
                "terminationDetected": s.detected}
