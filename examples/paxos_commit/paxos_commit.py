"""PaxosCommit: Gray and Lamport's Paxos Commit (PaxosCommit.tla in
tlaplus/Examples, specifications/transaction_commit).

Each resource manager's prepare/abort decision is an instance of Paxos
consensus, run by the acceptors; ballot 0 belongs to the RM itself (its
phase 2a message), higher ballots to whatever process believes itself the
leader. As in the TLA+, `msgs` is the set of every message ever sent,
receipt is not modelled (an action is enabled once the messages it needs are
in `msgs`), and leader selection is not modelled.

The action structure is TLC's, so the counts match its: one successor per
disjunct of PCNext and per binding of each `\\E` in an action that holds
(the `m` of Phase1b and Phase2b, the `MS` of Phase2a, the `rm` of Decide's
abort disjunct and the `b`, `MS` of its Decided), duplicates and self-loops
included. TLC reads an `\\A` in an action as the conjunction of its
instances (tlaplus/tlaplus cc6b616, tlatools/org.lamport.tlatools/src/tlc2/
tool/impl/Tool.java:1244, OPCODE_bf), so Decide's commit disjunct yields
the product over the RMs of the witnesses of Decided(rm, "prepared").

Invariants: PCTypeOK (its rmState and aState conjuncts; `msgs \\in SUBSET
Message` holds by construction, every message being built from the
constants) and TCommit's TCConsistent, which PaxosCommit implements.
"""

from __future__ import annotations

from math import prod
from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec, SpecError
from txncheck.spec.schema import Int, Str

RM_STATES = ("working", "prepared", "committed", "aborted")
VALUES = ("prepared", "aborted", "none")
COMMIT, ABORT = ("Commit",), ("Abort",)

# Messages (the TLA+ records, as tuples whose first item is the type):
#   ("phase1a", ins, bal)
#   ("phase1b", ins, mbal, bal, val, acc)
#   ("phase2a", ins, bal, val)
#   ("phase2b", ins, bal, val, acc)
#   ("Commit",)  ("Abort",)


class State(NamedTuple):
    rmState: tuple[str, ...]                             # per RM
    aState: tuple[tuple[tuple[int, int, str], ...], ...]  # [ins][acc] = (mbal, bal, val)
    msgs: frozenset


def _put(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


class PaxosCommit(Spec):
    name = "paxos_commit"
    bounds = {
        "rms": Bound(("r1", "r2"), "the resource managers (RM)"),
        "acceptors": Bound(("a1", "a2", "a3"), "the acceptors"),
        "majorities": Bound((("a1", "a2"), ("a1", "a3"), ("a2", "a3")),
                            "the majorities of acceptors: pairwise intersecting"),
        "ballots": Bound(2, "ballot numbers 0..ballots-1 (Ballot)", lo=1, hi=4),
    }
    observed_fields = ("rmState", "aState")  # observe does not read msgs

    def setup(self) -> None:
        c = self.constants
        self.rms, self.accs = tuple(c["rms"]), tuple(c["acceptors"])
        if len(set(self.rms)) != len(self.rms) or len(set(self.accs)) != len(self.accs):
            raise SpecError("the RMs and the acceptors must each be distinct names")
        majorities = tuple(frozenset(ms) for ms in c["majorities"])
        # PaxosCommitAssumptions: Majority \subseteq SUBSET Acceptor, pairwise intersecting.
        if any(not ms <= set(self.accs) for ms in majorities):
            raise SpecError("every majority must be a subset of the acceptors (PaxosCommitAssumptions)")
        if any(not (m1 & m2) for m1 in majorities for m2 in majorities):
            raise SpecError("majorities must intersect pairwise (PaxosCommitAssumptions)")
        self.majorities = tuple(tuple(a for a in self.accs if a in ms) for ms in majorities)
        self.ballots = tuple(range(c["ballots"]))
        self._acts()

        sc = self.schema
        sc.enum("RM", self.rms)
        sc.enum("Acceptor", self.accs)
        rm_state = sc.fun("rmState", "RM", Str())
        mbal = sc.fun("mbal", ("RM", "Acceptor"), Int())
        bal = sc.fun("bal", ("RM", "Acceptor"), Int())
        val = sc.fun("val", ("RM", "Acceptor"), Str())
        one_of = lambda term, values: z3.Or([term == z3.StringVal(v) for v in values])
        in_ballot = lambda term: z3.And(term >= 0, term <= self.ballots[-1])
        self.invariants["PCTypeOK"] = z3.And(
            sc.forall("RM", lambda r: one_of(rm_state(r), RM_STATES)),
            sc.forall(("RM", "Acceptor"), lambda r, a: z3.And(
                in_ballot(mbal(r, a)),
                z3.Or(in_ballot(bal(r, a)), bal(r, a) == -1),
                one_of(val(r, a), VALUES))),
        )
        self.invariants["TCConsistent"] = sc.forall(("RM", "RM"), lambda a, b: z3.Not(z3.And(
            rm_state(a) == z3.StringVal("aborted"), rm_state(b) == z3.StringVal("committed"))))
        self.witnesses["SomeCommitted"] = sc.exists("RM", lambda r: rm_state(r) == z3.StringVal("committed"))
        # Lemmas for `txncheck prove` (examples/paxos_commit/prove-typeok.toml): PaxosCommit_proof.tla
        # in tlaplus/Examples (specifications/transaction_commit, commit 77b15b44) proves PCTypeOK with
        # the invariant PCTypeOK /\ AccInv /\ MsgInv1b /\ IsFiniteSet(msgs); the last holds here as
        # every message is built from the constants.
        # AccInv: an acceptor has voted (bal # -1) exactly when it holds a value
        self.lemmas["AccInv"] = sc.forall(("RM", "Acceptor"), lambda r, a: (val(r, a) == z3.StringVal("none"))
                                          == (bal(r, a) == -1))
        # MsgInv1b: a phase 1b message that reports a vote reports a value (msgs is not observed,
        # so this lemma reads the state as next does)
        self.lemmas["MsgInv1b"] = self.msg_inv_1b

    def _acts(self) -> None:
        """The actions, built once."""
        per_rm = ("RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg")
        self.a_rm = [tuple((n, (("rm", r),)) for n in per_rm) for r in self.rms]
        self.a_leader = [[(("Phase1a", (("bal", b), ("rm", r))), ("Phase2a", (("bal", b), ("rm", r))))
                          for r in self.rms] for b in self.ballots]
        self.a_decide = ("Decide", ())
        self.a_acc = [(("Phase1b", (("acc", a),)), ("Phase2b", (("acc", a),))) for a in self.accs]
        # The messages an action may read (the TLA+ `\E m \in msgs` over the Message set), built
        # once: `m in msgs` for each, not a scan of msgs, so that every test is one a reader (and
        # txncheck prove) can see. A phase 1b message reports a vote of a lower ballot than its
        # own (-1 and "none" for no vote); phase 2a proposes "prepared" or "aborted".
        voted = tuple((x, v) for x in self.ballots for v in VALUES[:2])
        self.m_1a = tuple((k, b, ("phase1a", rm, b)) for k, rm in enumerate(self.rms) for b in self.ballots[1:])
        self.m_2a = tuple((k, b, v, ("phase2a", rm, b, v)) for k, rm in enumerate(self.rms)
                          for b in self.ballots for v in VALUES[:2])
        self.m_2a_of = {(rm, b): tuple(("phase2a", rm, b, v) for v in VALUES[:2])
                        for rm in self.rms for b in self.ballots}
        self.m_1b_of = {(rm, b): tuple(("phase1b", rm, b, x, v, acc) for x, v in ((-1, "none"),) + voted if x < b
                                       for acc in self.accs)
                        for rm in self.rms for b in self.ballots}

    def init_states(self):
        blank = ((0, -1, "none"),) * len(self.accs)
        yield State(("working",) * len(self.rms), (blank,) * len(self.rms), frozenset())

    def _decided(self, msgs: frozenset, rm: str, v: str) -> int:
        # Decided(rm, v) == \E b \in Ballot, MS \in Majority: \A ac \in MS: phase2b(rm, b, v, ac) \in msgs,
        # as the number of the (b, MS) that witness it
        return sum(all(("phase2b", rm, b, v, ac) in msgs for ac in ms)
                   for b in self.ballots for ms in self.majorities)

    def next(self, s: State):
        rm_state, a_state, msgs = s
        rms = self.rms

        # \E rm \in RM: RMPrepare(rm) \/ RMChooseToAbort(rm) \/ RMRcvCommitMsg(rm) \/ RMRcvAbortMsg(rm)
        committed, aborted = COMMIT in msgs, ABORT in msgs
        for i, rm in enumerate(rms):
            prepare, choose_abort, rcv_commit, rcv_abort = self.a_rm[i]
            if rm_state[i] == "working":
                yield prepare, State(_put(rm_state, i, "prepared"), a_state,
                                     msgs | {("phase2a", rm, 0, "prepared")})
                yield choose_abort, State(_put(rm_state, i, "aborted"), a_state,
                                          msgs | {("phase2a", rm, 0, "aborted")})
            if committed:
                yield rcv_commit, State(_put(rm_state, i, "committed"), a_state, msgs)
            if aborted:
                yield rcv_abort, State(_put(rm_state, i, "aborted"), a_state, msgs)

        # \E bal \in Ballot \ {0}, rm \in RM: Phase1a(bal, rm) \/ Phase2a(bal, rm)
        for b in self.ballots[1:]:
            for i, rm in enumerate(rms):
                a_1a, a_2a = self.a_leader[b][i]
                yield a_1a, State(rm_state, a_state, msgs | {("phase1a", rm, b)})
                if any(m in msgs for m in self.m_2a_of[rm, b]):   # ~\E m \in msgs: a phase 2a of (rm, b)
                    continue
                got = {m for m in self.m_1b_of[rm, b] if m in msgs}
                for ms in self.majorities:  # \E MS \in Majority
                    mset = {m for m in got if m[5] in ms}
                    # \A ac \in MS: \E m \in mset: m.acc = ac; one binding at most, as an acceptor
                    # sends one phase 1b per ballot (its mbal rises past it)
                    if not all(any(m[5] == ac for m in mset) for ac in ms):
                        continue
                    maxbal = max((m[3] for m in mset), default=-1)
                    # CHOOSE m \in mset: m.bal = maxbal; all such m carry one value (one 2a per ballot)
                    # where the state is reachable; `min` makes the choice the state's in every other
                    # state too (a set's order is its hashes'), where a proof's inductive step goes
                    v = "aborted" if maxbal == -1 else min(m[4] for m in mset if m[3] == maxbal)
                    yield a_2a, State(rm_state, a_state, msgs | {("phase2a", rm, b, v)})

        # Decide. TLC takes \A rm: Decided(rm, "prepared") as the conjunction of its instances, and
        # enumerates each \E b, MS of Decided and the \E rm of the abort disjunct: one successor per
        # binding that holds, so the product of the witnesses over the RMs, then their sum.
        commits = prod(self._decided(msgs, rm, "prepared") for rm in rms)
        aborts = sum(self._decided(msgs, rm, "aborted") for rm in rms)
        for n, msg in ((commits, COMMIT), (aborts, ABORT)):
            if n:
                t = State(rm_state, a_state, msgs | {msg})
                for _ in range(n):
                    yield self.a_decide, t

        # \E acc \in Acceptor: Phase1b(acc) \/ Phase2b(acc)
        for j, acc in enumerate(self.accs):
            a_1b, a_2b = self.a_acc[j]
            for k, b, m in self.m_1a:  # \E m \in msgs: m.type = "phase1a" /\ ...
                if m in msgs:
                    mbal, bal, val = a_state[k][j]
                    if mbal < b:
                        row = _put(a_state[k], j, (b, bal, val))
                        yield a_1b, State(rm_state, _put(a_state, k, row),
                                          msgs | {("phase1b", m[1], b, bal, val, acc)})
            for k, b, v, m in self.m_2a:  # \E m \in msgs: m.type = "phase2a" /\ ...
                if m in msgs and a_state[k][j][0] <= b:
                    row = _put(a_state[k], j, (b, b, v))
                    yield a_2b, State(rm_state, _put(a_state, k, row), msgs | {("phase2b", m[1], b, v, acc)})

    def msg_inv_1b(self, s: State) -> bool:
        return not any(m[0] == "phase1b" and m[3] != -1 and m[4] == "none" for m in s.msgs)

    def observe(self, s: State):
        cells = [((r, a), x) for r, row in zip(self.rms, s.aState) for a, x in zip(self.accs, row)]
        return {
            "rmState": dict(zip(self.rms, s.rmState)),
            "mbal": {k: x[0] for k, x in cells},
            "bal": {k: x[1] for k, x in cells},
            "val": {k: x[2] for k, x in cells},
        }
