"""Two processes and a lock; `racy` lets both read the lock before either takes it."""
from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec
from txncheck.spec.schema import Enum


class S(NamedTuple):
    pc: tuple  # per process: "idle", "checked", "crit"
    lock: bool


class Mutex(Spec):
    name = "mutex"
    variants = ("racy", "fixed")
    bounds = {"procs": Bound(2, "processes", lo=1, hi=4)}

    def setup(self):
        self.ps = tuple(f"p{i}" for i in range(1, self.constants["procs"] + 1))
        sc = self.schema
        sc.enum("Proc", self.ps)
        sc.enum("Pc", ("idle", "checked", "crit"))
        pc = sc.fun("pc", "Proc", Enum("Pc"))
        crit = sc.consts("Pc")[2]
        self.invariants["MutualExclusion"] = sc.forall(("Proc", "Proc"), lambda a, b: z3.Implies(
            z3.And(a != b, pc(a) == crit), pc(b) != crit))

    def init_states(self):
        yield S(("idle",) * len(self.ps), False)

    def next(self, s):
        for i, p in enumerate(self.ps):
            pc = s.pc[i]
            if pc == "idle" and not s.lock:
                if self.variant == "racy":
                    yield ("Check", (("p", p),)), s._replace(pc=s.pc[:i] + ("checked",) + s.pc[i + 1:])
                else:
                    yield ("Acquire", (("p", p),)), S(s.pc[:i] + ("crit",) + s.pc[i + 1:], True)
            if pc == "checked":
                yield ("Take", (("p", p),)), S(s.pc[:i] + ("crit",) + s.pc[i + 1:], True)
            if pc == "crit":
                yield ("Release", (("p", p),)), S(s.pc[:i] + ("idle",) + s.pc[i + 1:], False)

    def observe(self, s):
        return {"pc": dict(zip(self.ps, s.pc))}
