"""TCommit as a symbolic relation (TCommit.tla's TCNext).

The state is the properties' own schema (rmState). Decide(r) is two guarded
updates with one label, as the spec yields one successor per true disjunct.
TCommit_proof.tla in tlaplus/Examples (specifications/transaction_commit,
commit 0ff87952) proves TCTypeOK /\\ TCConsistent inductive as it stands:
the model's two properties are the whole invariant, with no lemma.
"""

from __future__ import annotations

import z3

from ..symbolic import Act, Relation, one_of

V = z3.StringVal


class TCommitRelation(Relation):
    def actions(self) -> list[Act]:
        rms = self.spec.rms

        def can_commit(f):
            return z3.And([one_of(f.rmState(r), ("prepared", "committed")) for r in rms])

        def not_committed(f):
            return z3.And([f.rmState(r) != V("committed") for r in rms])

        out = []
        for r, (prepare, decide) in zip(rms, self.spec._actions):
            out += [
                Act(prepare, lambda f, r=r: (f.rmState(r) == V("working"), {f.rmState(r): V("prepared")})),
                Act(decide, lambda f, r=r: (z3.And(f.rmState(r) == V("prepared"), can_commit(f)),
                                            {f.rmState(r): V("committed")})),
                Act(decide, lambda f, r=r: (z3.And(one_of(f.rmState(r), ("working", "prepared")), not_committed(f)),
                                            {f.rmState(r): V("aborted")})),
            ]
        return out
