"""TCommit: Lamport's transaction commit specification (TCommit.tla).

Each resource manager moves working -> prepared -> committed, or to aborted.
Decide(r) is a disjunction of two guarded updates; TLC counts one successor
per true disjunct, and so does this spec.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from ..api import Bound, Spec
from ..schema import Str

RM_STATES = ("working", "prepared", "committed", "aborted")


class TCState(NamedTuple):
    rmState: tuple[str, ...]


class TCommit(Spec):
    name = "tcommit"
    bounds = {"rm": Bound(3, "number of resource managers", lo=1, hi=12)}
    symmetric_sorts = ("RM",)

    def setup(self) -> None:
        self.rms = tuple(f"r{i}" for i in range(1, self.constants["rm"] + 1))
        sc = self.schema
        sc.enum("RM", self.rms)
        rm_state = sc.fun("rmState", "RM", Str())
        is_ = lambda r, v: rm_state(r) == z3.StringVal(v)
        self.invariants["TCTypeOK"] = sc.forall("RM", lambda r: z3.Or([is_(r, v) for v in RM_STATES]))
        self.invariants["TCConsistent"] = sc.forall(
            ("RM", "RM"), lambda a, b: z3.Not(z3.And(is_(a, "aborted"), is_(b, "committed")))
        )
        self.witnesses["SomeCommitted"] = sc.exists("RM", lambda r: is_(r, "committed"))
        self.witnesses["SomeAborted"] = sc.exists("RM", lambda r: is_(r, "aborted"))
        self._actions = [
            (("Prepare", (("rm", r),)), ("Decide", (("rm", r),))) for r in self.rms
        ]

    def init_states(self):
        yield TCState(("working",) * len(self.rms))

    def next(self, s: TCState):
        st = s.rmState
        can_commit = all(x in ("prepared", "committed") for x in st)
        not_committed = all(x != "committed" for x in st)
        for i, (prepare, decide) in enumerate(self._actions):
            x = st[i]
            # Prepare(r)
            if x == "working":
                yield prepare, TCState(st[:i] + ("prepared",) + st[i + 1:])
            # Decide(r), first disjunct: commit
            if x == "prepared" and can_commit:
                yield decide, TCState(st[:i] + ("committed",) + st[i + 1:])
            # Decide(r), second disjunct: abort
            if x in ("working", "prepared") and not_committed:
                yield decide, TCState(st[:i] + ("aborted",) + st[i + 1:])

    def permute(self, s: TCState, mapping):
        """Rename RMs (for --symmetry)."""
        m = mapping["RM"]
        pos = {r: i for i, r in enumerate(self.rms)}
        out = [None] * len(self.rms)
        for r, x in zip(self.rms, s.rmState):
            out[pos[m[r]]] = x
        return TCState(tuple(out))

    def footprints(self):
        """What each action reads and writes (for --por). Decide's guards read every RM."""
        every = frozenset(("rmState", r) for r in self.rms)
        fp = {}
        for r, (prepare, decide) in zip(self.rms, self._actions):
            rs = frozenset({("rmState", r)})
            fp[prepare] = (rs, rs)
            fp[decide] = (every, rs)
        return fp

    def observe(self, s: TCState):
        return {"rmState": dict(zip(self.rms, s.rmState))}

    def state_vars(self, s: TCState):
        return {"rmState": dict(zip(self.rms, s.rmState))}
