"""PaxosCommit as a symbolic relation (PaxosCommit.tla's PCNext), beside
the spec file, and the inductive invariant of its TLAPS proof as lemmas.

The spec's observation leaves `msgs` out, so the relation's state schema is
the properties' (rmState and each acceptor's mbal, bal, val) plus `msgs`, a
set over every message the constants allow (TLA+'s `Message`). One guarded
update per TLC successor: Phase2a per majority, Phase1b and Phase2b per
message they answer, Decide's two disjuncts.

Lemmas: PaxosCommit_proof.tla in tlaplus/Examples
(specifications/transaction_commit, commit 77b15b44) proves PCTypeOK with
the invariant PCTypeOK /\\ AccInv /\\ MsgInv1b /\\ IsFiniteSet(msgs); the
last holds here by the finite universe, the others are `AccInv` and
`MsgInv1b` below.
"""

from __future__ import annotations

import z3

from txncheck.spec.schema import Bool, Int, Schema, Str
from txncheck.spec.symbolic import Act, Relation, valuation

VALUES = ("prepared", "aborted", "none")
V = z3.StringVal


class PaxosCommitRelation(Relation):
    def state_schema(self) -> Schema:
        m = self.spec
        self.msg_names = {}
        bal = list(m.ballots)
        for r in m.rms:
            for b in bal[1:]:
                self.msg_names["phase1a", r, b] = f"1a:{r}:{b}"
            for mb in bal:
                for b in [-1] + bal:
                    for v in VALUES:
                        for a in m.accs:
                            self.msg_names["phase1b", r, mb, b, v, a] = f"1b:{r}:{mb}:{b}:{v}:{a}"
            for b in bal:
                for v in VALUES[:2]:
                    self.msg_names["phase2a", r, b, v] = f"2a:{r}:{b}:{v}"
                    for a in m.accs:
                        self.msg_names["phase2b", r, b, v, a] = f"2b:{r}:{b}:{v}:{a}"
        self.msg_names["Commit",] = "Commit"
        self.msg_names["Abort",] = "Abort"
        sc = Schema()
        sc.enum("RM", m.rms)
        sc.enum("Acceptor", m.accs)
        sc.enum("Message", list(self.msg_names.values()))
        sc.fun("rmState", "RM", Str())
        sc.fun("mbal", ("RM", "Acceptor"), Int(0, bal[-1]))
        sc.fun("bal", ("RM", "Acceptor"), Int(-1, bal[-1]))
        sc.fun("val", ("RM", "Acceptor"), Str())
        sc.set("msgs", "Message")
        sent = sc.symbols["msgs"]
        msg = lambda *k: sent(sc.const("Message", self.msg_names[k]))
        val, bl = sc.symbols["val"], sc.symbols["bal"]
        self.lemmas = {
            # AccInv: an acceptor has voted (bal # -1) exactly when it holds a value
            "AccInv": sc.forall(("RM", "Acceptor"), lambda r, a: (val(r, a) == V("none")) == (bl(r, a) == -1)),
            # MsgInv1b: a phase 1b message that reports a vote reports a value
            "MsgInv1b": z3.And([z3.Not(msg("phase1b", r, mb, b, "none", a))
                                for r in m.rms for mb in bal for b in bal for a in m.accs]),
        }
        return sc

    def cells(self, s):
        obs = dict(self.spec.observe(s))
        obs["msgs"] = {self.msg_names[x] for x in s.msgs}
        return valuation(self.schema, obs)

    def observation(self, f):
        sc = self.spec.schema
        out = []
        for name in ("rmState", "mbal", "bal", "val"):
            sym = sc.symbols[name]
            for r in self.spec.rms:
                if len(sym.domain) == 1:
                    out.append((sym.ref(sc.const("RM", r)), f.cell(name, r)))
                    continue
                for a in self.spec.accs:
                    out.append((sym.ref(sc.const("RM", r), sc.const("Acceptor", a)), f.cell(name, r, a)))
        return out

    def actions(self) -> list[Act]:
        m = self.spec
        out = []
        msg = lambda f, *k: f.msgs(self.msg_names[k])
        yes = z3.BoolVal(True)
        for i, r in enumerate(m.rms):
            prepare, choose_abort, rcv_commit, rcv_abort = m.a_rm[i]
            out += [
                Act(prepare, lambda f, r=r: (f.rmState(r) == V("working"),
                                             {f.rmState(r): V("prepared"), msg(f, "phase2a", r, 0, "prepared"): yes})),
                Act(choose_abort, lambda f, r=r: (f.rmState(r) == V("working"),
                                                  {f.rmState(r): V("aborted"), msg(f, "phase2a", r, 0, "aborted"): yes})),
                Act(rcv_commit, lambda f, r=r: (msg(f, "Commit"), {f.rmState(r): V("committed")})),
                Act(rcv_abort, lambda f, r=r: (msg(f, "Abort"), {f.rmState(r): V("aborted")})),
            ]
        for b in m.ballots[1:]:
            for i, r in enumerate(m.rms):
                a_1a, a_2a = m.a_leader[b][i]
                out.append(Act(a_1a, lambda f, r=r, b=b: (yes, {msg(f, "phase1a", r, b): yes})))
                for ms in m.majorities:
                    out.append(Act(a_2a, lambda f, r=r, b=b, ms=ms: self._phase2a(f, r, b, ms)))
        decided = lambda f, r, v: z3.Or([z3.And([msg(f, "phase2b", r, b, v, a) for a in ms])
                                         for b in m.ballots for ms in m.majorities])
        out.append(Act(m.a_decide, lambda f: (z3.And([decided(f, r, "prepared") for r in m.rms]),
                                              {msg(f, "Commit"): yes})))
        out.append(Act(m.a_decide, lambda f: (z3.Or([decided(f, r, "aborted") for r in m.rms]),
                                              {msg(f, "Abort"): yes})))
        for j, a in enumerate(m.accs):
            a_1b, a_2b = m.a_acc[j]
            for r in m.rms:
                for b in m.ballots[1:]:
                    out.append(Act(a_1b, lambda f, a=a, r=r, b=b: self._phase1b(f, a, r, b)))
                for b in m.ballots:
                    for v in VALUES[:2]:
                        out.append(Act(a_2b, lambda f, a=a, r=r, b=b, v=v: (
                            z3.And(msg(f, "phase2a", r, b, v), f.mbal(r, a) <= b),
                            {f.mbal(r, a): b, f.bal(r, a): b, f.val(r, a): V(v),
                             msg(f, "phase2b", r, b, v, a): yes})))
        return out

    def _phase1b(self, f, a, r, b):
        m = self.spec
        changes = {f.mbal(r, a): z3.IntVal(b)}
        for x in [-1] + list(m.ballots):
            for v in VALUES:
                cell = f.msgs(self.msg_names["phase1b", r, b, x, v, a])
                changes[cell] = z3.Or(cell, z3.And(f.bal(r, a) == x, f.val(r, a) == V(v)))
        return z3.And(f.msgs(self.msg_names["phase1a", r, b]), f.mbal(r, a) < b), changes

    def _phase2a(self, f, r, b, ms):
        m = self.spec
        msg = lambda *k: f.msgs(self.msg_names[k])
        no_2a = z3.Not(z3.Or([msg("phase2a", r, b, v) for v in VALUES[:2]]))
        heard = z3.And([z3.Or([msg("phase1b", r, b, x, v, a) for x in [-1] + list(m.ballots) for v in VALUES])
                        for a in ms])
        # the value of the highest ballot a phase 1b message of MS reports; "aborted" if none
        value = V("aborted")
        for x in m.ballots:          # ascending: the highest that has a message wins
            for v in ("aborted", "prepared"):
                at = z3.Or([msg("phase1b", r, b, x, v, a) for a in ms])
                value = z3.If(at, V(v), value)
        changes = {}
        for v in VALUES[:2]:
            cell = msg("phase2a", r, b, v)
            changes[cell] = z3.Or(cell, value == V(v))
        return z3.And(no_2a, heard), changes
