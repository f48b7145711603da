"""Voting: Lamport's abstract consensus algorithm that Paxos refines (Voting.tla
in tlaplus/Examples, specifications/Paxos).

Acceptors vote for values in numbered ballots. An acceptor promises, by
raising maxBal, not to vote in lower ballots; it votes for v in ballot b only
if no other acceptor voted for another value in b and some quorum shows that
v is safe at b (ShowsSafeAt). A value is chosen when a quorum votes for it in
one ballot. Inv = TypeOK /\\ VotesSafe /\\ OneValuePerBallot.

The quorum system is a structured constant set from the model file.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec, SpecError
from txncheck.spec.schema import Int


class State(NamedTuple):
    votes: tuple[frozenset, ...]   # per acceptor: {(ballot, value)}
    maxBal: tuple[int, ...]        # per acceptor; -1 before any promise


def _put(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


class Voting(Spec):
    name = "voting"
    bounds = {
        "acceptors": Bound(("a1", "a2", "a3"), "the acceptors"),
        "values": Bound(("v1", "v2"), "the choosable values"),
        "quorums": Bound((("a1", "a2"), ("a1", "a3"), ("a2", "a3")), "the quorums: pairwise intersecting"),
        "ballots": Bound(2, "ballots 0..ballots-1", lo=1, hi=4),
    }
    symmetric_sorts = ("Acceptor", "Value")

    def setup(self) -> None:
        c = self.constants
        self.accs, self.vals = tuple(c["acceptors"]), tuple(c["values"])
        self.ballots = range(c["ballots"])
        self.quorums = tuple(frozenset(q) for q in c["quorums"])
        if any(not q <= set(self.accs) for q in self.quorums):
            raise SpecError("every quorum must be a subset of the acceptors (QuorumAssumption)")
        if any(not (q1 & q2) for q1 in self.quorums for q2 in self.quorums):
            raise SpecError("quorums must intersect pairwise (QuorumAssumption)")
        self.idx = {a: i for i, a in enumerate(self.accs)}
        self.q_idx = tuple(tuple(self.idx[a] for a in q) for q in self.quorums)
        sc = self.schema
        sc.enum("Acceptor", self.accs)
        sc.enum("Value", self.vals)
        sc.enum("Ballot", [f"b{b}" for b in self.ballots])
        voted = sc.set("voted", ("Acceptor", "Ballot", "Value"))
        max_bal = sc.fun("maxBal", "Acceptor", Int(-1, len(self.ballots) - 1))
        A = lambda a: sc.const("Acceptor", a)
        B = lambda b: sc.const("Ballot", f"b{b}")
        V = lambda v: sc.const("Value", v)
        VotedFor = lambda a, b, v: voted(A(a), B(b), V(v))
        DidNotVoteAt = lambda a, b: z3.And([z3.Not(VotedFor(a, b, v)) for v in self.vals])
        CannotVoteAt = lambda a, b: z3.And(max_bal(A(a)) > b, DidNotVoteAt(a, b))
        NoneOtherChoosableAt = lambda b, v: z3.Or([
            z3.And([z3.Or(VotedFor(a, b, v), CannotVoteAt(a, b)) for a in sorted(q)]) for q in self.quorums])
        SafeAt = lambda b, v: z3.And([NoneOtherChoosableAt(c, v) for c in range(b)] or [z3.BoolVal(True)])
        votes_safe = z3.And([z3.Implies(VotedFor(a, b, v), SafeAt(b, v))
                             for a in self.accs for b in self.ballots for v in self.vals])
        one_value_per_ballot = z3.And([
            z3.Implies(z3.And(VotedFor(a1, b, v1), VotedFor(a2, b, v2)), z3.BoolVal(v1 == v2))
            for a1 in self.accs for a2 in self.accs for b in self.ballots
            for v1 in self.vals for v2 in self.vals if v1 != v2])
        # TypeOK: votes are ballot x value by their sorts; maxBal by its Int range.
        self.invariants["Inv"] = z3.And(votes_safe, one_value_per_ballot)
        chosen = lambda v: z3.Or([z3.And([VotedFor(a, b, v) for a in sorted(q)])
                                  for q in self.quorums for b in self.ballots])
        self.invariants["Consistency"] = z3.And([z3.Not(z3.And(chosen(v), chosen(w)))
                                                 for v in self.vals for w in self.vals if v < w])
        self.witnesses["SomeChosen"] = z3.Or([chosen(v) for v in self.vals])

    def init_states(self):
        n = len(self.accs)
        yield State((frozenset(),) * n, (-1,) * n)

    def _shows_safe_at(self, s: State, q: tuple[int, ...], b: int, v: str) -> bool:
        if any(s.maxBal[a] < b for a in q):
            return False
        for c in range(-1, b):
            if c != -1 and not any((c, v) in s.votes[a] for a in q):
                continue
            if all(not any(vt[0] == d for vt in s.votes[a]) for d in range(c + 1, b) for a in q):
                return True
        return False

    def next(self, s: State):
        # Next == \E a \in Acceptor, b \in Ballot: IncreaseMaxBal(a, b) \/ \E v: VoteFor(a, b, v)
        for i, a in enumerate(self.accs):
            for b in self.ballots:
                if b > s.maxBal[i]:
                    yield ("IncreaseMaxBal", (("a", a), ("b", b))), State(s.votes, _put(s.maxBal, i, b))
                if s.maxBal[i] > b or any(vt[0] == b for vt in s.votes[i]):
                    continue
                for v in self.vals:
                    if any(vt[0] == b and vt[1] != v for j, vs in enumerate(s.votes) if j != i for vt in vs):
                        continue
                    if not any(self._shows_safe_at(s, q, b, v) for q in self.q_idx):
                        continue
                    yield (("VoteFor", (("a", a), ("b", b), ("v", v))),
                           State(_put(s.votes, i, s.votes[i] | {(b, v)}), _put(s.maxBal, i, b)))

    def observe(self, s: State):
        return {
            "voted": frozenset((a, f"b{b}", v) for a, vs in zip(self.accs, s.votes) for b, v in vs),
            "maxBal": dict(zip(self.accs, s.maxBal)),
        }

    def permute(self, s: State, mapping):
        ma, mv = mapping["Acceptor"], mapping["Value"]
        votes, mb = [None] * len(self.accs), [None] * len(self.accs)
        for a, vs, m in zip(self.accs, s.votes, s.maxBal):
            j = self.idx[ma[a]]
            votes[j] = frozenset((b, mv[v]) for b, v in vs)
            mb[j] = m
        return State(tuple(votes), tuple(mb))
