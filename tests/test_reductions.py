"""Symmetry, partial-order reduction and the fingerprint-only visited set,
on the classic specs and on a small spec built for them here."""

from __future__ import annotations

from itertools import permutations
from typing import NamedTuple

import pytest
import z3

from txncheck.checker.encoding import encode
from txncheck.checker.engines import bfs, get_engine
from txncheck.checker.job import Job
from txncheck.checker.reductions import ReductionError
from txncheck.checker.reductions.fingerprints import collision_probability
from txncheck.checker.reductions.por import audit_footprints
from txncheck.checker.reductions.symmetry import audit_permute
from txncheck.spec.api import Bound, Spec
from txncheck.spec.classic.diehard import DieHard
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TwoPhase
from txncheck.spec.schema import Int


class Workers(NamedTuple):
    count: tuple[int, ...]   # per worker, 0..steps
    done: frozenset[str]
    finished: int            # how many Done actions ran


class Pool(Spec):
    """Workers count to `steps` on their own (Step, invisible to the
    properties), then report Done. The workers are interchangeable."""

    name = "pool"
    bounds = {"workers": Bound(3, lo=1, hi=6), "steps": Bound(2, lo=1, hi=5)}
    symmetric_sorts = ("W",)

    def setup(self):
        self.ws = tuple(f"w{i}" for i in range(1, self.constants["workers"] + 1))
        sc = self.schema
        sc.enum("W", self.ws)
        done = sc.set("done", "W")
        finished = sc.var("finished", Int())
        sc.fun("count", "W", Int())
        self.invariants["FinishedCounts"] = finished == sc.count("W", lambda w: done(w))
        self.invariants["NotAllDone"] = z3.Not(sc.forall("W", lambda w: done(w)))
        self.invariants["FirstNotDone"] = z3.Not(done(sc.const("W", "w1")))
        self.witnesses["SomeDone"] = sc.exists("W", lambda w: done(w))
        self._acts = [(("Step", (("w", w),)), ("Done", (("w", w),))) for w in self.ws]

    def init_states(self):
        yield Workers((0,) * len(self.ws), frozenset(), 0)

    def next(self, s):
        k = self.constants["steps"]
        for i, (step, done) in enumerate(self._acts):
            c = s.count[i]
            if c < k:
                yield step, s._replace(count=s.count[:i] + (c + 1,) + s.count[i + 1:])
            elif self.ws[i] not in s.done:
                yield done, s._replace(done=s.done | {self.ws[i]}, finished=s.finished + 1)

    def observe(self, s):
        return {"count": dict(zip(self.ws, s.count)), "done": s.done, "finished": s.finished}

    def permute(self, s, mapping):
        m = mapping["W"]
        pos = {w: i for i, w in enumerate(self.ws)}
        count = [0] * len(self.ws)
        for w, c in zip(self.ws, s.count):
            count[pos[m[w]]] = c
        return Workers(tuple(count), frozenset(m[w] for w in s.done), s.finished)

    def footprints(self):
        fp = {}
        for w, (step, done) in zip(self.ws, self._acts):
            fp[step] = (frozenset({("count", w)}), frozenset({("count", w)}))
            fp[done] = (frozenset({("count", w), ("done", w)}), frozenset({("done", w), ("finished",)}))
        return fp


def run(spec, props, **options):
    """bfs, or the fingerprint search when asked (which get_engine chooses)."""
    engine = get_engine("bfs") if options.get("fingerprints") else bfs.run
    return engine(Job(spec=spec, properties=props, options=options))


def orbits(spec, states, sort="RM"):
    elems = spec.schema.elements(sort)
    perms = [dict(zip(elems, p)) for p in permutations(elems)]
    return {min(encode(spec.permute(s, {sort: m})) for m in perms) for s in states}


# -- symmetry -------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [TwoPhase(rm=3), TwoPhase(rm=4), TCommit(rm=3), TCommit(rm=4),
                                  Pool(workers=4, steps=2)], ids=lambda s: s.describe())
def test_symmetry_keeps_exactly_one_state_per_orbit(spec):
    props = {n: f for n, f in spec.invariants.items() if n not in ("FirstNotDone", "NotAllDone")}
    full = run(spec, props)
    reduced = run(spec, props, symmetry=True)
    assert reduced.verdict == full.verdict == "ok"
    assert reduced.distinct_states == len(orbits(spec, full.exploration.states, spec.symmetric_sorts[0]))
    assert reduced.distinct_states < full.distinct_states
    assert reduced.depth == full.depth
    assert reduced.extra["reductions"]["symmetry"]["inexact_states"] == 0


def test_symmetry_figures_for_twophase():
    # 288 -> 80 and 1568 -> 166 states, checked against brute-force orbits above
    assert run(TwoPhase(rm=3), TwoPhase(rm=3).invariants, symmetry=True).distinct_states == 80
    r6 = run(TwoPhase(rm=6), TwoPhase(rm=6).invariants, symmetry=True)
    assert (r6.distinct_states, r6.depth) == (553, 20)


@pytest.mark.parametrize("spec", [TwoPhase(rm=3), TCommit(rm=3), Pool(workers=3, steps=1)],
                         ids=lambda s: s.name)
def test_permute_is_an_automorphism(spec):
    states = run(spec, {}).exploration.states
    sort = spec.symmetric_sorts[0]
    elems = spec.schema.elements(sort)
    mappings = [{sort: dict(zip(elems, p))} for p in permutations(elems)]
    props = {n: f for n, f in spec.invariants.items() if n != "FirstNotDone"}
    audit_permute(spec, states, mappings, props)
    if isinstance(spec, Pool):  # a property about w1 is not symmetric, and the audit says so
        with pytest.raises(AssertionError, match="FirstNotDone"):
            audit_permute(spec, states, mappings, {"FirstNotDone": spec.invariants["FirstNotDone"]})


def test_symmetric_counterexample_is_concrete_and_shortest():
    spec = TwoPhase(rm=3)
    rm_state = spec.schema.symbols["rmState"]
    none_committed = spec.schema.forall("RM", lambda r: rm_state(r) != z3.StringVal("committed"))
    props = {"NoneCommitted": none_committed}
    full = run(spec, props)
    reduced = run(spec, props, symmetry=True)
    assert full.verdict == reduced.verdict == "violation"
    path = reduced.violations[0].path
    assert len(path) == len(full.violations[0].path)
    assert path[0][1] in set(spec.init_states())
    for (_, s), (a, t) in zip(path, path[1:]):
        assert (a, t) in set(spec.next(s)), f"{a} is not a step of the spec"
    assert "committed" in path[-1][1].rmState


def test_symmetry_refuses_a_property_that_names_an_id():
    spec = TwoPhase(rm=3)
    rm_state = spec.schema.symbols["rmState"]
    props = {"R1NeverAborts": rm_state(spec.schema.const("RM", "r1")) != z3.StringVal("aborted")}
    with pytest.raises(ReductionError, match="R1NeverAborts names specific elements of the symmetric sort RM"):
        run(spec, props, symmetry=True)
    pool = Pool()
    with pytest.raises(ReductionError, match="FirstNotDone"):
        run(pool, {"FirstNotDone": pool.invariants["FirstNotDone"]}, symmetry=True)


def test_symmetry_refuses_a_derived_element():
    # Msg "Prepared_r1" moves with r1, so naming it names r1.
    spec = TwoPhase(rm=3)
    msgs = spec.schema.symbols["msgs"]
    props = {"NoR1Prepared": z3.Not(msgs(spec.schema.const("Msg", "Prepared_r1")))}
    with pytest.raises(ReductionError, match="NoR1Prepared"):
        run(spec, props, symmetry=True)


def test_symmetry_needs_declared_sorts():
    with pytest.raises(ReductionError, match="declares no symmetric sorts"):
        run(DieHard(), DieHard().invariants, symmetry=True)


# -- partial-order reduction -------------------------------------------------------


def test_footprints_are_honest():
    for spec in (TwoPhase(rm=3), TCommit(rm=3), Pool(workers=3, steps=2)):
        audit_footprints(spec, run(spec, {}).exploration.states)


def test_por_reduces_independent_steps_and_keeps_the_verdicts():
    spec = Pool(workers=3, steps=2)
    holds = {"FinishedCounts": spec.invariants["FinishedCounts"]}
    full = run(spec, holds)
    reduced = run(spec, holds, por=True)
    assert full.verdict == reduced.verdict == "ok"
    assert full.distinct_states == 4 ** 3  # counts 0..2 then done, per worker
    assert reduced.distinct_states < full.distinct_states
    assert reduced.extra["reductions"]["por"]["ample_states"] > 0

    breaks = {"NotAllDone": spec.invariants["NotAllDone"]}
    bad_full = run(spec, breaks)
    bad = run(spec, breaks, por=True)
    assert bad_full.verdict == bad.verdict == "violation"
    assert bad.distinct_states <= bad_full.distinct_states
    path = bad.violations[0].path
    for (_, s), (a, t) in zip(path, path[1:]):
        assert (a, t) in set(spec.next(s))
    assert path[-1][1].done == frozenset(spec.ws)


def test_por_keeps_witnesses():
    spec = Pool(workers=3, steps=2)
    job = Job(spec=spec, properties={"FinishedCounts": spec.invariants["FinishedCounts"]},
              witnesses={"SomeDone": spec.witnesses["SomeDone"]}, options={"por": True})
    out = bfs.run(job)
    assert out.verdict == "ok" and out.witnesses_found == {"SomeDone": True}


def test_por_and_symmetry_together():
    spec = Pool(workers=4, steps=2)
    holds = {"FinishedCounts": spec.invariants["FinishedCounts"]}
    full = run(spec, holds)
    sym = run(spec, holds, symmetry=True)
    both = run(spec, holds, symmetry=True, por=True)
    assert full.verdict == sym.verdict == both.verdict == "ok"
    assert both.distinct_states <= sym.distinct_states < full.distinct_states
    bad = run(spec, {"NotAllDone": spec.invariants["NotAllDone"]}, symmetry=True, por=True)
    assert bad.verdict == "violation"


def test_por_without_footprints_expands_everything():
    spec = DieHard()
    full = run(spec, spec.invariants)
    reduced = run(spec, spec.invariants, por=True)
    assert (reduced.distinct_states, reduced.states_generated) == (full.distinct_states, full.states_generated)
    assert reduced.extra["reductions"]["por"]["declared"] is False


def test_por_does_not_reduce_twophase_with_its_invariants():
    # Every RM action writes rmState, which both invariants read: all visible.
    spec = TwoPhase(rm=3)
    out = run(spec, spec.invariants, por=True)
    assert (out.distinct_states, out.states_generated, out.depth) == (288, 1146, 11)


# -- fingerprints ---------------------------------------------------------------------


@pytest.mark.parametrize("spec,figures", [
    (TwoPhase(rm=3), (288, 1146, 11)), (TCommit(rm=3), (34, 94, 7)), (TwoPhase(rm=5), None)])
def test_fingerprint_mode_counts_like_exact_mode(spec, figures):
    exact = run(spec, spec.invariants)
    fp = run(spec, spec.invariants, fingerprints=True)
    got = (fp.distinct_states, fp.states_generated, fp.depth)
    assert got == (exact.distinct_states, exact.states_generated, exact.depth)
    if figures:
        assert got == figures
    assert fp.extra["visited_set"] == "fingerprints"
    assert fp.extra["collision_probability"] == collision_probability(*got[:2])
    assert 0 < fp.extra["collision_probability"] < 1e-9
    assert fp.exploration is None  # no state is kept: rows on disk, fingerprints in a table


class Flag(Spec):
    """One variable that becomes True at once, or the int 1 (equal in
    Python) three steps later, after the level holding True is released."""

    name = "flag"
    bounds = {}

    def setup(self):
        self.invariants["NonNegative"] = self.schema.var("x", Int()) >= 0

    def init_states(self):
        yield (0,)

    def next(self, s):
        x = s[0]
        if x == 0:
            yield ("Set", ()), (True,)
            yield ("Count", ()), (2,)
        elif x in (2, 3):
            yield ("Count", ()), (x + 1 if x == 2 else 1,)

    def observe(self, s):
        return {"x": int(s[0])}


def test_fingerprint_mode_counts_a_bool_and_its_int_once():
    """Exact mode keeps (True,) and finds (1,) visited (they are equal);
    fingerprint mode must agree, so a bool and its int share a fingerprint."""
    exact = run(Flag(), Flag().invariants)
    fp = run(Flag(), Flag().invariants, fingerprints=True)
    assert exact.distinct_states == fp.distinct_states == 4
    assert exact.states_generated == fp.states_generated == 5


def test_fingerprint_mode_rebuilds_the_counterexample():
    spec = DieHard()
    exact = run(spec, spec.invariants)
    fp = run(spec, spec.invariants, fingerprints=True)
    assert fp.violations[0].path == exact.violations[0].path
    assert len(fp.violations[0].path) == 7
    assert fp.violations[0].path[-1][1].big == 4


def test_collision_probability_formula():
    assert collision_probability(2 ** 20, 2 ** 20 + 2 ** 24) == 2.0 ** 44 / 2.0 ** 64
    assert collision_probability(10, 10) == 0


def test_exact_and_fingerprints_exclude_each_other():
    with pytest.raises(ReductionError, match="exclude each other"):
        run(TwoPhase(rm=3), {}, fingerprints=True, exact=True)


# -- compact storage ------------------------------------------------------------------


def test_compact_states_share_their_parts_and_count_the_same():
    spec = TwoPhase(rm=4)
    plain = run(spec, spec.invariants)
    compact = run(spec, spec.invariants, compact=True)
    assert (compact.distinct_states, compact.states_generated) == (plain.distinct_states, plain.states_generated)
    assert compact.exploration.states == plain.exploration.states
    distinct_parts = lambda ex: len({id(s.rmState) for s in ex.states})
    assert distinct_parts(compact.exploration) == len({s.rmState for s in compact.exploration.states})
    assert distinct_parts(plain.exploration) > distinct_parts(compact.exploration)


def test_compact_never_shares_a_bool_with_an_int_or_a_namedtuple_with_a_tuple():
    from collections import namedtuple

    from txncheck.checker.encoding import fingerprint
    from txncheck.checker.reductions.sharing import Sharer

    P = namedtuple("P", "a b")
    state = ((True,), (1,), frozenset({True}), frozenset({1}), P(1, 2), (1, 2))
    shared = Sharer()(state)
    assert [type(x) for x in shared] == [type(x) for x in state]
    assert type(shared[0][0]) is bool and type(shared[1][0]) is int
    assert type(next(iter(shared[2]))) is bool and type(next(iter(shared[3]))) is int
    assert fingerprint(shared) == fingerprint(state)


def test_symmetry_with_fingerprints_rebuilds_a_concrete_trace():
    spec = Pool(workers=3, steps=1)
    out = run(spec, {"NotAllDone": spec.invariants["NotAllDone"]}, symmetry=True, fingerprints=True, por=True)
    path = out.violations[0].path
    assert path[0][1] in set(spec.init_states())
    for (_, s), (a, t) in zip(path, path[1:]):
        assert (a, t) in set(spec.next(s))
    assert path[-1][1].done == frozenset(spec.ws)


# -- the command line -------------------------------------------------------------------


def _cli(capsys, *args):
    import json

    from txncheck.checker.cli import main
    from .helpers import MODELS

    code = main(["check", str(MODELS / "classic" / args[0]), "--quiet", "--json", "--out", "/tmp/txncheck-test-out",
                 *args[1:]])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_cli_reports_the_reductions(capsys):
    code, rep, _ = _cli(capsys, "twophase-rm3.toml", "--symmetry")
    assert code == 0 and rep["distinct_states"] == 80
    assert rep["reductions"]["symmetry"]["sorts"] == ["RM"]
    code, rep, _ = _cli(capsys, "twophase-rm3.toml", "--fingerprints")
    assert code == 0 and rep["distinct_states"] == 288
    assert rep["collision_probability"] == 288 * (1146 - 288) / 2 ** 64
    code, rep, _ = _cli(capsys, "diehard.toml", "--fingerprints")
    assert code == 1 and rep["violations"][0]["length"] == 7


@pytest.mark.parametrize("args,message", [
    (("twophase-rm3.toml", "--exact", "--fingerprints"), "--exact and --fingerprints exclude each other"),
    (("diehard.toml", "--symmetry"), "--symmetry: spec diehard declares no symmetric sorts"),
])
def test_cli_refuses_in_one_line(capsys, args, message):
    code, rep, err = _cli(capsys, *args)
    assert code == 2 and rep is None
    assert err.strip().splitlines() == [f"txncheck: error: {message}"]
