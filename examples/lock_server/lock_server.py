"""Lock server: clients connect to servers, each server admitting one
client at a time (the `lock_server` protocol of the DistAI benchmarks,
VeriGu/DistAI@6669038, protocols/lock_server/lock_server.ivy, from Verdi's
lock server).

Each server holds a semaphore, free initially. `connect(c, s)` needs the
semaphore of s free, links c to s and takes it; `disconnect(c, s)` needs
the link, drops it and frees the semaphore. The safety property: a server
is linked to at most one client. It is not inductive alone (a state with a
linked server whose semaphore is free lets a second client connect): the
proof needs that a linked server's semaphore is taken, which
`txncheck prove --infer` finds.

The observation is the whole state, so lemmas can name both relations.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec


class State(NamedTuple):
    link: frozenset          # (client, server) pairs
    semaphore: frozenset     # the servers whose semaphore is free


class LockServer(Spec):
    name = "lock_server"
    bounds = {
        "clients": Bound(3, "number of clients", lo=1, hi=6),
        "servers": Bound(2, "number of servers", lo=1, hi=6),
    }

    def setup(self) -> None:
        self.clients = tuple(f"c{i}" for i in range(1, self.constants["clients"] + 1))
        self.servers = tuple(f"s{i}" for i in range(1, self.constants["servers"] + 1))
        sc = self.schema
        sc.enum("Client", self.clients)
        sc.enum("Server", self.servers)
        link = sc.set("link", ("Client", "Server"))
        sc.set("semaphore", "Server")
        # invariant [1000000] link(C1, S) & link(C2, S) -> C1 = C2
        self.invariants["OneClientPerServer"] = sc.forall(
            ("Client", "Client", "Server"),
            lambda c1, c2, s: z3.Implies(z3.And(link(c1, s), link(c2, s)), c1 == c2))
        self.witnesses["SomeLink"] = sc.exists(("Client", "Server"), lambda c, s: link(c, s))

    def init_states(self):
        # after init { semaphore(W) := true; link(X,Y) := false; }
        yield State(frozenset(), frozenset(self.servers))

    def next(self, s: State):
        for c in self.clients:
            for srv in self.servers:
                # action connect(x, y) = { require semaphore(y); link(x,y) := true; semaphore(y) := false; }
                if srv in s.semaphore:
                    yield ("connect", (("c", c), ("s", srv))), State(s.link | {(c, srv)}, s.semaphore - {srv})
                # action disconnect(x, y) = { require link(x,y); link(x,y) := false; semaphore(y) := true; }
                if (c, srv) in s.link:
                    yield ("disconnect", (("c", c), ("s", srv))), State(s.link - {(c, srv)}, s.semaphore | {srv})

    def observe(self, s: State):
        return {"link": set(s.link), "semaphore": set(s.semaphore)}
