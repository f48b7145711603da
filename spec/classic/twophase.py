"""TwoPhase: Lamport's two-phase commit (TwoPhase.tla, tlaplus/Examples).

The transaction manager (TM) collects Prepared messages from the resource
managers (RMs) and broadcasts Commit or Abort. Messages are never removed from
`msgs`, so the receive actions stay enabled as self-loops and the spec never
deadlocks. The action structure is TLC's: one successor per disjunct of
TPNext and per RM, so states generated match TLC exactly.
"""

from __future__ import annotations

from typing import NamedTuple

from ..api import Bound, Spec
from ..api import replace_at as _set
from ..schema import Str

RM_STATES = ("working", "prepared", "committed", "aborted")
TM_STATES = ("init", "committed", "aborted")
COMMIT = ("Commit",)
ABORT = ("Abort",)


class TPState(NamedTuple):
    rmState: tuple[str, ...]          # indexed like self.rms
    tmState: str
    tmPrepared: frozenset[str]
    msgs: frozenset[tuple[str, ...]]  # ("Prepared", rm) | ("Commit",) | ("Abort",)


class TwoPhase(Spec):
    name = "twophase"
    bounds = {"rm": Bound(3, "number of resource managers", lo=1, hi=12)}
    symmetric_sorts = ("RM",)

    def setup(self) -> None:
        n = self.constants["rm"]
        self.rms = tuple(f"r{i}" for i in range(1, n + 1))
        sc = self.schema
        sc.enum("RM", self.rms)
        sc.enum("Msg", [f"Prepared_{r}" for r in self.rms] + ["Commit", "Abort"])
        rm_state = sc.fun("rmState", "RM", Str())
        tm_state = sc.var("tmState", Str())
        sc.set("tmPrepared", "RM")
        sc.set("msgs", "Msg")
        import z3

        one_of = lambda term, values: z3.Or([term == z3.StringVal(v) for v in values])
        # TPTypeOK; tmPrepared \subseteq RM and msgs \subseteq Messages hold by their sorts.
        self.invariants["TPTypeOK"] = z3.And(
            sc.forall("RM", lambda r: one_of(rm_state(r), RM_STATES)),
            one_of(tm_state, TM_STATES),
        )
        # TCConsistent, the property TwoPhase implements.
        self.invariants["TCConsistent"] = sc.forall(
            ("RM", "RM"),
            lambda a, b: z3.Not(
                z3.And(rm_state(a) == z3.StringVal("aborted"), rm_state(b) == z3.StringVal("committed"))
            ),
        )
        self.witnesses["SomeCommitted"] = sc.exists("RM", lambda r: rm_state(r) == z3.StringVal("committed"))
        self.predicates["AllDecided"] = sc.forall(
            "RM", lambda r: one_of(rm_state(r), ("committed", "aborted"))
        )
        self._lemmas(sc)
        # Actions, built once.
        self._a_commit = ("TMCommit", ())
        self._a_abort = ("TMAbort", ())
        self._per_rm = [
            tuple((name, (("rm", r),)) for name in (
                "TMRcvPrepared", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"))
            for r in self.rms
        ]
        self._prepared_msg = [("Prepared", r) for r in self.rms]

    def _lemmas(self, sc) -> None:
        """The inductive invariant of TwoPhase_proof.tla in tlaplus/Examples
        (specifications/transaction_commit, commit 77b15b44), one clause per
        lemma, in our words: with TPTypeOK and TCConsistent they are inductive
        at every bound (`txncheck prove models/classic/twophase-rm3.toml`)."""
        import z3

        V = z3.StringVal
        rm_state, tm_state = sc.symbols["rmState"], sc.symbols["tmState"].ref
        tm_prepared, msgs = sc.symbols["tmPrepared"], sc.symbols["msgs"]
        commit, abort = msgs(sc.const("Msg", "Commit")), msgs(sc.const("Msg", "Abort"))
        prep = {r: msgs(sc.const("Msg", f"Prepared_{r}")) for r in self.rms}
        rm = {r: sc.const("RM", r) for r in self.rms}
        every = self.rms
        self.lemmas.update({
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
        })

    def init_states(self):
        yield TPState(("working",) * len(self.rms), "init", frozenset(), frozenset())

    def next(self, s: TPState):
        rm_state, tm_state, tm_prepared, msgs = s
        rms = self.rms
        # TMCommit
        if tm_state == "init" and len(tm_prepared) == len(rms):
            yield self._a_commit, TPState(rm_state, "committed", tm_prepared, msgs | {COMMIT})
        # TMAbort
        if tm_state == "init":
            yield self._a_abort, TPState(rm_state, "aborted", tm_prepared, msgs | {ABORT})
        has_commit = COMMIT in msgs
        has_abort = ABORT in msgs
        for i, r in enumerate(rms):
            a_rcv_prep, a_prepare, a_choose_abort, a_rcv_commit, a_rcv_abort = self._per_rm[i]
            # TMRcvPrepared(rm)
            if tm_state == "init" and self._prepared_msg[i] in msgs:
                yield a_rcv_prep, TPState(rm_state, tm_state, tm_prepared | {r}, msgs)
            st = rm_state[i]
            if st == "working":
                # RMPrepare(rm)
                yield a_prepare, TPState(_set(rm_state, i, "prepared"), tm_state, tm_prepared,
                                         msgs | {self._prepared_msg[i]})
                # RMChooseToAbort(rm)
                yield a_choose_abort, TPState(_set(rm_state, i, "aborted"), tm_state, tm_prepared, msgs)
            # RMRcvCommitMsg(rm)
            if has_commit:
                yield a_rcv_commit, TPState(_set(rm_state, i, "committed"), tm_state, tm_prepared, msgs)
            # RMRcvAbortMsg(rm)
            if has_abort:
                yield a_rcv_abort, TPState(_set(rm_state, i, "aborted"), tm_state, tm_prepared, msgs)

    def permute(self, s: TPState, mapping):
        """Rename RMs (for --symmetry)."""
        m = mapping["RM"]
        pos = {r: i for i, r in enumerate(self.rms)}
        rm_state = [None] * len(self.rms)
        for r, x in zip(self.rms, s.rmState):
            rm_state[pos[m[r]]] = x
        msgs = frozenset(("Prepared", m[x[1]]) if x[0] == "Prepared" else x for x in s.msgs)
        return TPState(tuple(rm_state), s.tmState, frozenset(m[r] for r in s.tmPrepared), msgs)

    def footprints(self):
        """What each action reads and writes (for --por), from its guard and body."""
        every_prepared = frozenset(("tmPrepared", r) for r in self.rms)
        tm, commit, abort = ("tmState",), ("msgs", "Commit"), ("msgs", "Abort")
        fp = {
            self._a_commit: (frozenset({tm}) | every_prepared, frozenset({tm, commit})),
            self._a_abort: (frozenset({tm}), frozenset({tm, abort})),
        }
        for r, acts in zip(self.rms, self._per_rm):
            rcv_prep, prepare, choose_abort, rcv_commit, rcv_abort = acts
            rs, prep_msg = ("rmState", r), ("msgs", f"Prepared_{r}")
            fp[rcv_prep] = (frozenset({tm, prep_msg}), frozenset({("tmPrepared", r)}))
            fp[prepare] = (frozenset({rs}), frozenset({rs, prep_msg}))
            fp[choose_abort] = (frozenset({rs}), frozenset({rs}))
            fp[rcv_commit] = (frozenset({commit}), frozenset({rs}))
            fp[rcv_abort] = (frozenset({abort}), frozenset({rs}))
        return fp

    def observe(self, s: TPState):
        return {
            "rmState": dict(zip(self.rms, s.rmState)),
            "tmState": s.tmState,
            "tmPrepared": s.tmPrepared,
            "msgs": {f"Prepared_{m[1]}" if m[0] == "Prepared" else m[0] for m in s.msgs},
        }

    def state_vars(self, s: TPState):
        return {
            "rmState": dict(zip(self.rms, s.rmState)),
            "tmState": s.tmState,
            "tmPrepared": s.tmPrepared,
            "msgs": s.msgs,
        }

