"""TwoPhase as a symbolic relation (TwoPhase.tla's TPNext, action by action),
and the inductive invariant of its TLAPS proof as lemmas.

The state is the properties' own schema (rmState, tmState, tmPrepared,
msgs), so `observe` is the whole state and the relation needs no encoding.

Lemmas: the strengthening of TCConsistent that TwoPhase_proof.tla in
tlaplus/Examples (specifications/transaction_commit, commit 77b15b44) proves
inductive, one clause per lemma, in our words. With TPTypeOK and
TCConsistent they are inductive at every bound (`txncheck prove
models/classic/twophase-rm3.toml`).
"""

from __future__ import annotations

import z3

from ..symbolic import Act, Relation

V = z3.StringVal


class TwoPhaseRelation(Relation):
    def setup(self) -> None:
        sc = self.schema
        rm_state, tm_state = sc.symbols["rmState"], sc.symbols["tmState"].ref
        tm_prepared, msgs = sc.symbols["tmPrepared"], sc.symbols["msgs"]
        commit, abort = msgs(sc.const("Msg", "Commit")), msgs(sc.const("Msg", "Abort"))
        prep = {r: msgs(sc.const("Msg", f"Prepared_{r}")) for r in self.spec.rms}
        rm = {r: sc.const("RM", r) for r in self.spec.rms}
        every = self.spec.rms
        self.lemmas = {
            # the TM sends at most one decision
            "OneDecisionSent": z3.Not(z3.And(commit, abort)),
            # the TM's state says which decision it has sent, if any
            "TMStateMatchesSent": z3.And(
                z3.Implies(tm_state == V("init"), z3.And(z3.Not(commit), z3.Not(abort))),
                z3.Implies(tm_state == V("committed"), commit),
                z3.Implies(tm_state == V("aborted"), abort)),
            # the TM counts an RM as prepared only after its Prepared message
            "TMPreparedWasSent": z3.And([z3.Implies(tm_prepared(rm[r]), prep[r]) for r in every]),
            # an RM that sent Prepared is no longer working
            "PreparedLeftWorking": z3.And([
                z3.Implies(prep[r], rm_state(rm[r]) != V("working")) for r in every]),
            # an RM commits only after the TM sent Commit
            "CommittedAfterCommitSent": z3.And([
                z3.Implies(rm_state(rm[r]) == V("committed"), commit) for r in every]),
            # Commit is sent only once every RM sent Prepared
            "CommitAfterAllPrepared": z3.Implies(commit, z3.And([prep[r] for r in every])),
            # an aborted RM heard Abort, or aborted on its own before preparing
            "AbortedWhy": z3.And([
                z3.Implies(rm_state(rm[r]) == V("aborted"), z3.Or(abort, z3.Not(prep[r]))) for r in every]),
        }

    def actions(self) -> list[Act]:
        spec = self.spec
        out = [Act(spec._a_commit, self._tm_commit), Act(spec._a_abort, self._tm_abort)]
        for r, labels in zip(spec.rms, spec._per_rm):
            rcv_prep, prepare, choose_abort, rcv_commit, rcv_abort = labels
            out += [
                Act(rcv_prep, lambda f, r=r: (z3.And(f.tmState == V("init"), f.msgs(f"Prepared_{r}")),
                                              {f.tmPrepared(r): z3.BoolVal(True)})),
                Act(prepare, lambda f, r=r: (f.rmState(r) == V("working"),
                                             {f.rmState(r): V("prepared"), f.msgs(f"Prepared_{r}"): z3.BoolVal(True)})),
                Act(choose_abort, lambda f, r=r: (f.rmState(r) == V("working"), {f.rmState(r): V("aborted")})),
                Act(rcv_commit, lambda f, r=r: (f.msgs("Commit"), {f.rmState(r): V("committed")})),
                Act(rcv_abort, lambda f, r=r: (f.msgs("Abort"), {f.rmState(r): V("aborted")})),
            ]
        return out

    def _tm_commit(self, f):
        every_prepared = z3.And([f.tmPrepared(r) for r in self.spec.rms])
        return (z3.And(f.tmState == V("init"), every_prepared),
                {f.tmState: V("committed"), f.msgs("Commit"): z3.BoolVal(True)})

    def _tm_abort(self, f):
        return f.tmState == V("init"), {f.tmState: V("aborted"), f.msgs("Abort"): z3.BoolVal(True)}

