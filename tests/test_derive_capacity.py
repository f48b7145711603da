"""A derived relation's sequences keep the capacity the model's states
show (derive/misfits.py's `Misfits`): a tuple the code makes longer is not
widened into, its length cell goes past the capacity, and the `Types`
clause (DeclaredBounds) says it does not, so `prove` shows that no
reachable state overflows or says where one does. Widening instead
(`grow_seqs`) never settles for a tuple appended to under a symbolic
guard: each round builds one slot more (ADR 0011)."""

from __future__ import annotations

import pytest

from txncheck.checker.cli import main
from txncheck.checker.symbolic.derive import derive, relation
from txncheck.checker.symbolic.derive.sample import sample_states
from txncheck.checker.symbolic.derive.shapes import Set, widen
from txncheck.checker.symbolic.derive.containers import SSet
from txncheck.spec.api import SpecError
from txncheck.spec.registry import resolve

LOG_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    on: bool
    log: tuple


class Log(Spec):
    """An append under a symbolic guard (`on`); "guarded" also keeps the
    log at two entries, "unbounded" lets it grow for ever."""
    name = "log"
    variants = ("guarded", "unbounded")

    def setup(self):
        self.invariants["FirstIsOne"] = self.schema.var("first", Int(0, 1)) == 1

    def init_states(self):
        yield State(False, ())

    def next(self, s):
        yield ("Flip", ()), s._replace(on=not s.on)
        if s.on and (self.variant == "unbounded" or len(s.log) < 2):
            yield ("Add", ()), s._replace(log=s.log + (1,))

    def observe(self, s):
        return {"first": s.log[0] if s.log else 1}
'''


def decides(model, samples, outside: str, monkeypatch, capsys, switch: str, on: bool, proved: bool | None = None,
            **others) -> None:
    """`prove model` with the shape taken from `samples`, DerivedRelation's
    `switch` on or off (and `others` set): proved (by default, when the
    switch is on), or else DeclaredBounds with the cell `outside` names
    out of its range."""
    monkeypatch.setattr(relation, "sample_states", lambda spec, n: samples)
    for name, value in {switch: on, **others}.items():
        monkeypatch.setattr(relation.DerivedRelation, name, value)
    rc = main(["prove", str(model), "--out", str(model.parent)])
    out = capsys.readouterr().out
    if on if proved is None else proved:
        assert rc == 0 and "verdict: proved" in out, out
    else:
        assert rc == 3 and "DeclaredBounds" in out and outside in out, out


@pytest.fixture
def log(tmp_path, monkeypatch):
    """The log spec's models; the shape is taken from 6 states of a
    breadth-first search (no walks, no search for longer logs), so the
    unbounded log's capacity is 3."""
    (tmp_path / "log.py").write_text(LOG_SPEC)
    for variant in ("guarded", "unbounded"):
        (tmp_path / f"{variant}.toml").write_text(
            f'spec = "log.py:Log"\nvariant = "{variant}"\nproperties = ["FirstIsOne"]\n')
    monkeypatch.setattr(relation.DerivedRelation, "samples", 6)
    monkeypatch.setattr(relation, "sample_states", lambda spec, n: sample_states(spec, n, walks=0, longest=0))
    return tmp_path


def test_a_log_within_its_capacity_proves_and_one_past_it_fails_at_its_length(log, capsys):
    assert main(["prove", str(log / "guarded.toml"), "--out", str(log)]) == 0
    assert "verdict: proved" in capsys.readouterr().out
    assert main(["prove", str(log / "unbounded.toml"), "--out", str(log)]) == 3
    out = capsys.readouterr().out
    assert "inductive step: DeclaredBounds is not preserved" in out and "  action Add\n" in out
    assert "log#len = 4: outside its declared 0..3, a tuple longer than the derived shape holds" in out


def test_widening_sequences_settles_where_the_capacity_holds_and_never_where_it_grows(log):
    """The switch: with `grow_seqs` the guarded log derives the same cells
    and actions; the unbounded one never settles."""
    guarded = resolve(f"{log / 'log.py'}:Log").cls("guarded")
    kept, grown = derive(guarded), derive(guarded, grow_seqs=True)
    assert kept.schema.symbols.keys() == grown.schema.symbols.keys()
    assert [a.label for a in kept.actions()] == [a.label for a in grown.actions()]
    with pytest.raises(SpecError, match="the state's shape did not settle"):
        derive(resolve(f"{log / 'log.py'}:Log").cls("unbounded"), grow_seqs=True).actions()


def test_a_set_of_mixed_elements_widens_to_hold_them_all():
    """Elements Python cannot order (a str beside a tuple) are ordered by
    their repr; the set's universe holds every one of them."""
    grown = widen(Set(()), SSet({(0, 2, "OPEN"): True, (0, 2, ("OPEN", 0)): True}))
    assert set(grown.universe) == {(0, 2, "OPEN"), (0, 2, ("OPEN", 0))}


DEEP_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    c: int
    log: tuple


class Deep(Spec):
    """A log appended to only forty steps in, beside a counter that
    branches: no breadth-first prefix gets there."""
    name = "deep"

    def setup(self):
        self.invariants["Short"] = self.schema.var("n", Int(0, 2)) <= 2

    def init_states(self):
        yield State(0, ())

    def next(self, s):
        if s.c < 60:
            yield ("Step", ()), s._replace(c=s.c + 1)
            yield ("Skip", ()), s._replace(c=s.c + 2)
        if s.c >= 40 and len(s.log) < 2:
            yield ("Add", ()), s._replace(log=s.log + (s.c,))

    def observe(self, s):
        return {"n": len(s.log)}
'''


def test_the_samples_hold_a_sequence_as_long_as_a_search_finds_it(tmp_path):
    """The shape's capacities come from the samples (above): a sequence the
    prefix and the walks leave short is searched for, longest first
    (PIP-473's ledger holds three entries where both showed two, and the
    proof failed at the overflow); with the search off it stays empty."""
    (tmp_path / "deep.py").write_text(DEEP_SPEC)
    spec = resolve(f"{tmp_path / 'deep.py'}:Deep").cls()
    longest = max(len(s.log) for s in sample_states(spec, 20, walks=0))
    assert longest == 2
    assert max(len(s.log) for s in sample_states(spec, 20, walks=0, longest=0)) == 0


def test_the_search_for_a_longer_sequence_stops_two_entries_past_the_samples(tmp_path):
    """A log that grows for ever gets two slots more than the prefix shows,
    not the thousands a search of 5,000 states would reach: its proof fails
    at the overflow whatever its capacity (above)."""
    (tmp_path / "log.py").write_text(LOG_SPEC)
    spec = resolve(f"{tmp_path / 'log.py'}:Log").cls("unbounded")
    prefix = max(len(s.log) for s in sample_states(spec, 6, walks=0, longest=0))
    assert max(len(s.log) for s in sample_states(spec, 6, walks=0)) == prefix + 2


SLOTS_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class Send(NamedTuple):
    pos: int


class State(NamedTuple):
    n: int
    sends: tuple


class Slots(Spec):
    """Two sends land on one log in either order: each at its next position."""
    name = "slots"

    def setup(self):
        self.invariants["Landed"] = self.schema.var("n", Int(0, 3)) <= 2

    def init_states(self):
        yield State(0, (Send(0), Send(0)))

    def next(self, s):
        for k in range(2):
            if s.sends[k].pos == 0 and s.n < 2:
                sends = tuple(Send(s.n + 1) if i == k else x for i, x in enumerate(s.sends))
                yield ("Land", (("k", k),)), State(s.n + 1, sends)

    def observe(self, s):
        return {"n": s.n}
'''


# the same, the positions a plain tuple of ints (PIP-473's watermark per segment)
INT_SLOTS_SPEC = (SLOTS_SPEC.replace("(Send(0), Send(0))", "(0, 0)").replace("s.sends[k].pos", "s.sends[k]")
                  .replace("Send(s.n + 1)", "s.n + 1"))


@pytest.mark.parametrize("ints", [False, True], ids=["records", "ints"])
@pytest.mark.parametrize("pool", [True, False])
def test_an_arrays_slots_share_an_ints_range_the_samples_show_in_one_slot(tmp_path, monkeypatch, capsys, pool,
                                                                          ints):
    """The samples set an int's range (as they set a sequence's capacity):
    here only send 1 ever lands second. Pooled (shapes.pool_ints), send
    0's position takes send 1's range and the proof holds; without, send 0
    landing second is past its range, and DeclaredBounds says so at the
    reachable step (PIP-473's w1 landing third, ADR 0011). The same for an
    array of ints (PIP-473's watermark of the merged segment)."""
    (tmp_path / "slots.py").write_text(INT_SLOTS_SPEC if ints else SLOTS_SPEC)
    (tmp_path / "slots.toml").write_text('spec = "slots.py:Slots"\nproperties = ["Landed"]\n')
    spec = resolve(f"{tmp_path / 'slots.py'}:Slots").cls()
    (s0,) = spec.init_states()
    first = [t for (a, p), t in spec.next(s0) if dict(p)["k"] == 0][0]
    second = [t for (a, p), t in spec.next(s0) if dict(p)["k"] == 1][0]
    both = [t for (a, p), t in spec.next(second) if dict(p)["k"] == 0][0]   # send 1 first, then send 0
    # the samples: send 0 lands first, send 1 after it; never the other order
    after_first = [t for _, t in spec.next(first)]
    pos = (lambda s: s.sends[0]) if ints else (lambda s: s.sends[0].pos)
    assert pos(both) == 2 and all(pos(s) < 2 for s in [s0, first, *after_first])
    # widen_guarded widens send 0's position too: one rule at a time
    decides(tmp_path / "slots.toml", [s0, first, *after_first], "outside its declared 0..1", monkeypatch, capsys,
            "pool_ints", pool, widen_guarded=False)


LOGS_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    logs: tuple


class Logs(Spec):
    """Two entries land, each on either log."""
    name = "logs"

    def setup(self):
        self.invariants["Two"] = self.schema.var("n", Int(0, 3)) <= 2

    def init_states(self):
        yield State(((), ()))

    def next(self, s):
        if sum(len(x) for x in s.logs) < 2:
            for k in range(2):
                logs = tuple(x + (1,) if i == k else x for i, x in enumerate(s.logs))
                yield ("Add", (("k", k),)), State(logs)

    def observe(self, s):
        return {"n": sum(len(x) for x in s.logs)}
'''


@pytest.mark.parametrize("pool", [True, False])
def test_an_array_of_sequences_shares_the_capacity_the_samples_show_in_one(tmp_path, monkeypatch, capsys, pool):
    """The samples never show log 0 holding two entries (log 1 does).
    Pooled (shapes.pool_caps), log 0 takes log 1's capacity and the proof
    holds; without, DeclaredBounds fails at the reachable second add to log
    0 (PIP-473's merged segment, reached late, ADR 0011)."""
    (tmp_path / "logs.py").write_text(LOGS_SPEC)
    (tmp_path / "logs.toml").write_text('spec = "logs.py:Logs"\nproperties = ["Two"]\n')
    spec = resolve(f"{tmp_path / 'logs.py'}:Logs").cls()
    (s0,) = spec.init_states()
    ones = [t for _, t in spec.next(s0)]
    samples = [s0, *ones, *[t for s in ones for (_, p), t in spec.next(s) if dict(p)["k"] == 1]]
    assert max(len(s.logs[0]) for s in samples) == 1 and max(len(s.logs[1]) for s in samples) == 2
    decides(tmp_path / "logs.toml", samples, "logs[0]#len = 2: outside its declared 0..1", monkeypatch, capsys,
            "pool_caps", pool)


NOISY_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    prep: int
    log: tuple


class Noisy(Spec):
    """An entry needs six preparing steps in a row; six other actions each
    undo them (a crash, a failover, a timeout ...)."""
    name = "noisy"

    def setup(self):
        self.invariants["Short"] = self.schema.var("n", Int(0, 2)) <= 2

    def init_states(self):
        yield State(0, ())

    def next(self, s):
        if s.prep < 6:
            yield ("Prep", ()), s._replace(prep=s.prep + 1)
        for k in range(6):
            yield (f"Undo{k}", ()), s._replace(prep=0)
        if s.prep == 6 and len(s.log) < 2:
            yield ("Add", ()), State(0, s.log + (1,))

    def observe(self, s):
        return {"n": len(s.log)}
'''


def test_swarm_walks_reach_a_sequence_that_uniform_walks_do_not(tmp_path):
    """Each swarm walk takes a random half of the action names (sample.py):
    some leave every undoing action out, and the log grows. Uniform walks
    of as many steps take six preparing steps in a row about once in
    100,000 (PIP-473's merged segment gets its fourth entry only so)."""
    from txncheck.checker.symbolic.agreement import walk
    from txncheck.checker.symbolic.derive.sample import _swarm

    (tmp_path / "noisy.py").write_text(NOISY_SPEC)
    spec = resolve(f"{tmp_path / 'noisy.py'}:Noisy").cls()
    (s0,) = spec.init_states()
    found = _swarm(spec, [s0], (1,), 0, 2, 20_000, seed=0)
    assert [len(s.log) for s in found] == [1, 2]
    assert max(len(s.log) for s in walk(spec, 20_000, seed=0, depth=60)) == 0


MARKS_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    log: tuple
    mark: int


class Marks(Spec):
    """Entries land on a log; a recovery marks the log's length."""
    name = "marks"

    def setup(self):
        self.invariants["Marked"] = self.schema.var("m", Int(0, 9)) <= 3

    def init_states(self):
        yield State((), 0)

    def next(self, s):
        if len(s.log) < 3:
            yield ("Add", ()), s._replace(log=s.log + (1,))
        yield ("Recover", ()), s._replace(mark=len(s.log))

    def observe(self, s):
        return {"m": s.mark}
'''


@pytest.mark.parametrize("copies", [True, False])
def test_an_int_place_takes_the_range_of_a_cell_copied_into_it(tmp_path, monkeypatch, capsys, copies):
    """The samples never show a recovery after the third entry: the mark's
    range is 0..1 there, the log's length 0..3. The mark is the length's
    copy, so the derivation widens it to the length's range (misfits.py,
    switch `widen_copies`) and the proof holds; without, DeclaredBounds
    fails at the reachable recovery (PIP-473's hold, ADR 0011)."""
    (tmp_path / "marks.py").write_text(MARKS_SPEC)
    (tmp_path / "marks.toml").write_text('spec = "marks.py:Marks"\nproperties = ["Marked"]\n')
    spec = resolve(f"{tmp_path / 'marks.py'}:Marks").cls()
    State = type(next(iter(spec.init_states())))
    samples = [State((1,) * n, m) for n in range(4) for m in range(min(n, 1) + 1)]
    # widen_guarded widens the mark too: one rule at a time
    decides(tmp_path / "marks.toml", samples, "mark = 2: outside its declared 0..1", monkeypatch, capsys,
            "widen_copies", copies, widen_guarded=False)


def test_swarm_walks_reach_an_int_that_uniform_walks_do_not(tmp_path):
    """The same for an int place (sample._swarm_ints, every int place at
    once): the level rises only after six preparing steps in a row, as
    the log grows above. Uniform walks never see level 1; swarm walks see
    1 and 2 (two past the samples' largest: a counter is not followed)."""
    from txncheck.checker.symbolic.agreement import walk
    from txncheck.checker.symbolic.derive.sample import _swarm_ints

    (tmp_path / "noisy.py").write_text(NOISY_SPEC.replace("log: tuple", "log: int").replace("State(0, ())", "State(0, 0)")
                                       .replace("len(s.log) < 2", "s.log < 3").replace("s.log + (1,)", "s.log + 1")
                                       .replace("len(s.log)", "min(s.log, 2)"))
    spec = resolve(f"{tmp_path / 'noisy.py'}:Noisy").cls()
    (s0,) = spec.init_states()
    starts = [s0._replace(prep=k) for k in range(7)]
    found = _swarm_ints(spec, starts, 100_000, seed=0)
    assert sorted({s.log for s in found}) == [1, 2]
    assert max(s.log for s in walk(spec, 20_000, seed=0, depth=60)) == 0


READER_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    log: tuple
    rd: int


class Reader(Spec):
    """A reader's next position moves on while it is at most the log's
    length (PIP-473's dispatcher); "ticking" moves it on with no guard."""
    name = "reader"
    variants = ("guarded", "ticking")

    def setup(self):
        r = self.schema.var("r", Int(0, 99))
        self.invariants["ReadBounded"] = r <= 4
        self.invariants["Started"] = r >= 1

    def init_states(self):
        yield State((), 1)

    def next(self, s):
        if len(s.log) < 3:
            yield ("Add", ()), s._replace(log=s.log + (1,))
        if self.variant == "ticking" or s.rd <= len(s.log):
            yield ("Read", ()), s._replace(rd=s.rd + 1)

    def observe(self, s):
        return {"r": s.rd}
'''


@pytest.mark.parametrize("guarded", [True, False])
def test_an_int_computed_under_a_guard_takes_the_range_z3_gives_it_there(tmp_path, monkeypatch, capsys, guarded):
    """The samples show the reader at 1 and 2 only, the log up to its 3
    entries. `rd + 1` under `rd <= len(log)` is at most 4: the derivation
    widens rd to 1..4 (misfits.py, switch `widen_guarded`) and the proof
    holds; without, DeclaredBounds fails at the reachable read to 3."""
    (tmp_path / "reader.py").write_text(READER_SPEC)
    (tmp_path / "reader.toml").write_text('spec = "reader.py:Reader"\nvariant = "guarded"\nproperties = ["ReadBounded"]\n')
    spec = resolve(f"{tmp_path / 'reader.py'}:Reader").cls(variant="guarded")
    State = type(next(iter(spec.init_states())))
    samples = [State((1,) * n, r) for n in range(4) for r in (1, 2) if r <= n + 1]
    decides(tmp_path / "reader.toml", samples, "rd = 3: outside its declared 1..2", monkeypatch, capsys,
            "widen_guarded", guarded)


def test_a_counter_no_guard_bounds_gets_its_range_back_and_the_proof_decides(tmp_path, monkeypatch, capsys):
    """With no guard the rule would widen for ever: past GUARDED_ROUNDS
    widenings the place gets back the range the samples gave it, the shape
    settles, and DeclaredBounds names the step that leaves it, as without
    the rule."""
    from txncheck.checker.symbolic.derive.misfits import GUARDED_ROUNDS

    (tmp_path / "reader.py").write_text(READER_SPEC)
    spec = resolve(f"{tmp_path / 'reader.py'}:Reader").cls(variant="ticking")
    State = type(next(iter(spec.init_states())))
    samples = [State((1,) * n, r) for n in range(4) for r in (1, 2)]
    monkeypatch.setattr(relation, "sample_states", lambda spec, n: samples)
    rel = derive(spec)    # the rule is on by default
    assert rel.stats["rounds"] == GUARDED_ROUNDS + 2 and rel.schema.symbols["rd"].type.hi == 2
    (tmp_path / "ticking.toml").write_text('spec = "reader.py:Reader"\nvariant = "ticking"\nproperties = ["Started"]\n')
    decides(tmp_path / "ticking.toml", samples, "rd = 3: outside its declared 1..2", monkeypatch, capsys,
            "widen_guarded", True, proved=False)
