"""PaxosCommit (paxos_commit.py beside it) with its messages observed, for
`txncheck prove --infer` (tcconsistent.toml): the same states and actions, and
an observation that adds `msgs` as the properties' vocabulary, one set per
message type, so a lemma can name a message (the example's schema has only
rmState and aState, and a lemma cannot name what the schema lacks):

    p1a[RM, Ballot]                          ("phase1a", rm, b)
    p1b[RM, Ballot, Acceptor]                ("phase1b", rm, b, _, _, acc): any phase 1b
    p1bn[RM, Ballot, Acceptor]               ... reporting no vote (bal -1)
    p1bv[RM, Ballot, Ballot, Vote, Acceptor] ... reporting its vote (bal, val)
    p2a[RM, Ballot, Vote]                    ("phase2a", rm, b, v)
    p2b[RM, Ballot, Vote, Acceptor]          ("phase2b", rm, b, v, acc)
    commit, abort                            ("Commit",), ("Abort",)

Each set is one comprehension over `msgs`, so the derived relation's
observation is a condition per cell, not a branch per message.
"""

from __future__ import annotations

from paxos_commit import PaxosCommit    # the spec beside this file (a spec file imports its siblings by name)

from txncheck.spec.schema import Bool


class PaxosCommitMsgs(PaxosCommit):
    name = "paxos_commit_msgs"
    observed_fields = None      # observe reads every field

    def setup(self) -> None:
        super().setup()
        sc = self.schema
        sc.int_sort("Ballot", 0, len(self.ballots) - 1)
        sc.enum("Vote", ("prepared", "aborted"))
        sc.set("p1a", ("RM", "Ballot"))
        sc.set("p1b", ("RM", "Ballot", "Acceptor"))
        sc.set("p1bn", ("RM", "Ballot", "Acceptor"))
        sc.set("p1bv", ("RM", "Ballot", "Ballot", "Vote", "Acceptor"))
        sc.set("p2a", ("RM", "Ballot", "Vote"))
        sc.set("p2b", ("RM", "Ballot", "Vote", "Acceptor"))
        sc.var("commit", Bool())
        sc.var("abort", Bool())

    def observe(self, s):
        out = super().observe(s)
        ms = s.msgs
        out["p1a"] = {(m[1], str(m[2])) for m in ms if m[0] == "phase1a"}
        out["p1b"] = {(m[1], str(m[2]), m[5]) for m in ms if m[0] == "phase1b"}
        out["p1bn"] = {(m[1], str(m[2]), m[5]) for m in ms if m[0] == "phase1b" and m[3] == -1}
        out["p1bv"] = {(m[1], str(m[2]), str(m[3]), m[4], m[5]) for m in ms if m[0] == "phase1b" and m[3] != -1}
        out["p2a"] = {(m[1], str(m[2]), m[3]) for m in ms if m[0] == "phase2a"}
        out["p2b"] = {(m[1], str(m[2]), m[3], m[4]) for m in ms if m[0] == "phase2b"}
        out["commit"] = ("Commit",) in ms
        out["abort"] = ("Abort",) in ms
        return out
