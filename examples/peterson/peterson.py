"""Peterson's two-process mutual exclusion (Peterson.tla in tlaplus/Examples,
specifications/locks_auxiliary_vars, from the PlusCal algorithm with labels
a0..a4 and cs).

Each process loops: a0 skip; a1 raise its flag c[self]; a2 give the turn to
the other; a3 wait until the other's flag is down or the turn is its own; cs;
a4 lower its flag. `Inv` is the course's inductive invariant, which includes
mutual exclusion of {cs, a4}.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from txncheck.spec.api import Spec
from txncheck.spec.schema import Enum

PROCS = ("p1", "p2")
LABELS = ("a0", "a1", "a2", "a3", "cs", "a4")


class State(NamedTuple):
    pc: tuple[str, str]
    c: tuple[bool, bool]
    turn: int  # 0 or 1, the index of a process


def _put(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


class Peterson(Spec):
    name = "peterson"

    def setup(self) -> None:
        sc = self.schema
        sc.enum("Proc", PROCS)
        sc.enum("Label", LABELS)
        pc = sc.fun("pc", "Proc", Enum("Label"))
        c = sc.set("c", "Proc")
        turn = sc.var("turn", Enum("Proc"))
        L = lambda name: sc.const("Label", name)
        P = lambda p: sc.const("Proc", p)
        other = {PROCS[0]: PROCS[1], PROCS[1]: PROCS[0]}
        in_labels = lambda p, names: z3.Or([pc(P(p)) == L(n) for n in names])
        lockcs = lambda p: in_labels(p, ("cs", "a4"))
        self.invariants["Inv"] = z3.And(
            z3.And([c(P(p)) == in_labels(p, ("a2", "a3", "cs", "a4")) for p in PROCS]),
            z3.And([z3.Implies(lockcs(p), z3.Or(turn == P(p), in_labels(other[p], ("a0", "a1", "a2"))))
                    for p in PROCS]),
            z3.Not(z3.And(lockcs(PROCS[0]), lockcs(PROCS[1]))),
        )
        self.acts = {(lab, i): (lab, (("self", p),)) for lab in LABELS for i, p in enumerate(PROCS)}

    def init_states(self):
        yield State(("a0", "a0"), (False, False), 0)

    def next(self, s: State):
        pc, c, turn = s
        for i in (0, 1):
            o = 1 - i
            lab = pc[i]
            if lab == "a0":
                t = State(_put(pc, i, "a1"), c, turn)
            elif lab == "a1":
                t = State(_put(pc, i, "a2"), _put(c, i, True), turn)
            elif lab == "a2":
                t = State(_put(pc, i, "a3"), c, o)
            elif lab == "a3":
                if c[o] and turn != i:
                    continue
                t = State(_put(pc, i, "cs"), c, turn)
            elif lab == "cs":
                t = State(_put(pc, i, "a4"), c, turn)
            else:  # a4
                t = State(_put(pc, i, "a0"), _put(c, i, False), turn)
            yield self.acts[(lab, i)], t

    def observe(self, s: State):
        return {"pc": dict(zip(PROCS, s.pc)),
                "c": frozenset(p for p, up in zip(PROCS, s.c) if up),
                "turn": PROCS[s.turn]}
