"""The relation derived from a spec's own code (checker/symbolic/derive/) is
the spec's: for every spec, the successors Z3 allows are those `next`
yields, under the same labels, and the observation is `observe`'s, state by
state (agreement.py), on every reachable state of a small model with each of
its actions enabled somewhere (the fast tier), and of every small model and
random walks at the bounds the proofs use (slow). The deriver is tested
once for all specs, so a deriver broken on purpose (a branch dropped, a
merge of paths that differ, a yield joined wrongly) must fail here."""

from __future__ import annotations

import pytest

from txncheck.checker.cli import main
from txncheck.checker.symbolic.agreement import disagreements, reachable, shape_states, walk
from txncheck.checker.symbolic.derive import derive, explore, join
from txncheck.spec.classic.diehard import DieHard
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TwoPhase
from txncheck.spec.registry import resolve

from .helpers import ROOT

EX = ROOT / "examples"
ACCS, MAJ = ("a1", "a2", "a3"), (("a1", "a2"), ("a1", "a3"), ("a2", "a3"))


def example(path: str, **bounds):
    return lambda: resolve(str(EX / path)).cls(**bounds)


# One model per spec, each action enabled in some state (`states` the reachable ones checked,
# None: all of them). PaxosCommit with one RM and two ballots has every action; its 1,461
# states cost 2 CPU s to compare, so its fast check takes 400 states of walks.
FAST = {
    "diehard": (lambda: DieHard(), None),
    "tcommit": (lambda: TCommit(rm=3), None),
    "twophase": (lambda: TwoPhase(rm=3), None),
    "paxos_commit": (example("paxos_commit/paxos_commit.py:PaxosCommit", rms=("r1",), acceptors=ACCS,
                             majorities=MAJ, ballots=2), 400),
    "ewd840": (example("ewd840/ewd840.py:EWD840", n=3), None),
    "mutex": (example("mutex/mutex.py:Mutex", variant="racy"), None),
    "peterson": (example("peterson/peterson.py:Peterson"), None),
    "sync_termination": (example("sync_termination/sync_termination.py:SyncTermination", n=3), None),
    "voting": (example("voting/voting.py:Voting", acceptors=ACCS, values=("v1",), quorums=MAJ, ballots=2),
               None),
}


def agree(spec, states=None, relation=None):
    """(distinct states compared, disagreements, labels the spec yielded on them)."""
    rel = relation or derive(spec)
    source = reachable(spec) if states is None else walk(spec, 10**9, seed=52, depth=40)
    seen = []

    def tap(it):
        for s in it:
            seen.append(s)
            yield s

    n, bad = disagreements(rel, tap(source), stop_after=1, most=states)
    labels = {a for s in seen for a, _ in spec.next(s)}
    return rel, n, bad, labels


@pytest.mark.parametrize("name", list(FAST))
def test_each_spec_agrees_with_its_derived_relation(name):
    make, states = FAST[name]
    spec = make()
    rel, n, bad, labels = agree(spec, states)
    assert bad == []
    assert n == (states or len(set(reachable(spec))))
    # every action of the relation was enabled in a state compared, and nothing else
    assert {a.label for a in rel.actions() if a.label[0] != "raises"} == labels


@pytest.mark.parametrize("name", list(FAST))
def test_each_spec_agrees_with_its_derived_relation_off_the_reachable_states(name):
    """On states of the relation's shape drawn at random, mostly unreachable:
    the inductive step ranges over them, so a relation that is right only
    where the spec goes still fails proofs it should pass (PIP-473's derived
    publishPutOp, test_a_helpers_dict_changed_by_one_path_...). 2,000 draws
    each; those where the spec raises or leaves the shape are skipped."""
    spec = FAST[name][0]()
    rel = derive(spec)
    n, bad = disagreements(rel, shape_states(rel, 2_000, seed=52), most=300)
    assert bad == [] and n > 0


@pytest.mark.slow
@pytest.mark.parametrize("make, states", [
    (lambda: TCommit(rm=6), None),
    (lambda: TwoPhase(rm=6), None),
    (example("paxos_commit/paxos_commit.py:PaxosCommit", rms=("r1",), acceptors=ACCS, majorities=MAJ,
             ballots=2), None),
    (example("paxos_commit/paxos_commit.py:PaxosCommit", rms=("r1", "r2"), acceptors=ACCS, majorities=MAJ,
             ballots=2), 10_000),
    (example("ewd840/ewd840.py:EWD840", n=4), None),
    (example("mutex/mutex.py:Mutex", variant="fixed"), None),
    (example("sync_termination/sync_termination.py:SyncTermination", n=7), None),
    (example("voting/voting.py:Voting", acceptors=ACCS, values=("v1", "v2"), quorums=MAJ, ballots=2), None),
], ids=["tcommit-rm6", "twophase-rm6", "paxos-1rm", "paxos-tlc-walks", "ewd840-n4", "mutex-fixed",
        "sync-termination-n7", "voting-mc"])
def test_every_small_model_and_walks_at_the_proofs_bounds_agree(make, states):
    """PaxosCommit at TLC's bounds (1.3 M states) on 10,000 states of walks (25,000 took 136 CPU s
    of CI's suite); its one-RM model, every action enabled, is compared at every state."""
    spec = make()
    _, n, bad, _ = agree(spec, states)
    assert bad == [] and n == (states or len(set(reachable(spec))))


# -- the deriver broken on purpose ---------------------------------------------------------

def _drop_a_branch(monkeypatch):
    """The side of each decision on an Abort message where it was sent is
    never explored. (Dropping the other side is harmless where nothing
    follows the test: TwoPhase's receive of Abort ends its loop's body,
    which is explored one iteration at a time, split.py.)"""
    real = explore.Exploration._choose

    def choose(self, cond):
        if "Abort" in str(cond):
            return False
        return real(self, cond)

    monkeypatch.setattr(explore.Exploration, "_choose", choose)


def _merge_ignoring_loops(monkeypatch):
    """Merge keys that forget which iteration of a loop a path is in."""
    real = explore.Exploration._key

    def key(self, frame):
        k, keep = real(self, frame)
        return (None, None) if k is None else (tuple(p[:3] + ((),) + p[4:] for p in k), keep)

    monkeypatch.setattr(explore.Exploration, "_key", key)


def _join_forgets_a_way(monkeypatch):
    """A node reached two ways keeps only the first."""
    real = join.simplify_ways
    monkeypatch.setattr(join, "simplify_ways", lambda ways: real(ways)[:1])


@pytest.mark.parametrize("breaks", [_drop_a_branch, _merge_ignoring_loops, _join_forgets_a_way])
def test_a_broken_deriver_fails_the_agreement(monkeypatch, breaks):
    """Each mutation of the deriver is caught on some spec of the fast list."""
    breaks(monkeypatch)
    caught = []
    for name in ("twophase", "tcommit", "sync_termination", "peterson"):
        make, states = FAST[name]
        try:
            _, _, bad, _ = agree(make(), states)
        except AssertionError as exc:     # a merge that makes the path graph cyclic
            bad = [str(exc)]
        if bad:
            caught.append(name)
            break
    assert caught, f"{breaks.__name__} went unnoticed"


@pytest.mark.parametrize("name", ["diehard", "tcommit", "twophase", "mutex", "sync_termination"])
def test_merging_paths_changes_no_relation(name):
    """Merging is a claim (explore.py): without it every path is explored
    separately, and the relation says the same at every reachable state.
    (Merging costs some pruning, as a merged path forgets the conditions
    before its node, so it only pays where branches multiply: TwoPhase's.)"""
    make, _ = FAST[name]
    spec = make()
    merged = derive(spec)
    unmerged = derive(spec, merge=False)
    if name == "twophase":
        assert unmerged.stats["runs"] > 2 * merged.stats["runs"]
    for rel in (merged, unmerged):
        assert agree(spec, None, rel)[2] == []


def test_a_spec_outside_the_subset_is_one_line_with_its_file_and_line(capsys, tmp_path):
    """A set of more than a few elements turned into a Python value (here by
    sorting it with a key) is refused, naming the construct and the line."""
    spec = tmp_path / "bag.py"
    spec.write_text('''
from typing import NamedTuple
import z3
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    items: frozenset


class Bag(Spec):
    name = "bag"

    def setup(self):
        self.invariants["Small"] = self.schema.var("n", Int()) <= 20

    def init_states(self):
        yield State(frozenset())

    def next(self, s):
        for i in range(20):
            if i not in s.items:
                yield ("Add", (("i", i),)), State(s.items | {i})
        if s.items:
            first = sorted(s.items, key=lambda x: -x)[0]
            yield ("Drop", ()), State(s.items - {first})

    def observe(self, s):
        return {"n": len(s.items)}
''')
    (tmp_path / "bag.toml").write_text('spec = "bag.py:Bag"\n[expect]\nverdict = "ok"\n')
    rc = main(["prove", str(tmp_path / "bag.toml")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "outside the derivable subset: a set over 20 possible elements must become a Python frozenset" in err
    line = spec.read_text().splitlines().index("            first = sorted(s.items, key=lambda x: -x)[0]") + 1
    assert f"(at {spec}:{line})" in err


def test_a_new_spec_proves_from_its_code_and_its_lemmas_alone(capsys, tmp_path):
    """`txncheck new`'s fixed lock: MutualExclusion with the lemma the spec
    states; LockHasAHolder with no lemma at all (inductive by itself); and
    without the lemma, a CTI in the spec's own fields (pc, lock), written
    as an ITF pair that `show` reads."""
    assert main(["new", "my_lock", "--dir", str(tmp_path)]) == 0
    model = tmp_path / "my_lock" / "my_lock.toml"
    capsys.readouterr()
    assert main(["prove", str(model)]) == 0
    assert "verdict: proved (MutualExclusion, LockHasAHolder hold" in capsys.readouterr().out
    alone = tmp_path / "my_lock" / "alone.toml"
    alone.write_text(model.read_text().replace('variant = "fixed"', 'variant = "fixed"\nproperties = ["LockHasAHolder"]')
                     .split("[prove]")[0])
    assert main(["prove", str(alone)]) == 0
    out = capsys.readouterr().out
    assert "invariant: LockHasAHolder\n" in out and "verdict: proved" in out
    rc = main(["prove", str(model), "--without", "CritHoldsTheLock", "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert rc == 3 and "inductive step: MutualExclusion is not preserved" in out
    before, after = out.split("  state 1 (every clause of the invariant holds):\n")[1].split("  state 2 (what changed):\n")
    assert "    lock = FALSE" in before and "crit" in before and "  action Acquire(p=" in before
    assert "    lock = TRUE" in after
    assert main(["show", str(tmp_path / "o" / "my_lock.cti.itf.json")]) == 0
    assert "violates MutualExclusion (counterexample to induction) in 2 states" in capsys.readouterr().out


def test_a_guard_changed_in_the_specs_code_changes_what_prove_concludes(capsys, tmp_path):
    """TwoPhase's TMCommit without "every RM prepared", edited in a copy of
    its code and nothing else: the proof of the same model with the same
    lemmas now fails, at TMCommit, with the lemma that says why."""
    src = (ROOT / "spec" / "classic" / "twophase.py").read_text()
    guard = 'if tm_state == "init" and len(tm_prepared) == len(rms):'
    assert guard in src
    edited = src.replace("from ..api import", "from txncheck.spec.api import").replace(
        "from ..schema import", "from txncheck.spec.schema import")
    (tmp_path / "tp.py").write_text(edited)
    model = tmp_path / "tp.toml"
    model.write_text((ROOT / "models" / "classic" / "twophase-rm3.toml").read_text().replace(
        'spec = "twophase"', 'spec = "tp.py:TwoPhase"'))
    assert main(["prove", str(model), "--out", str(tmp_path)]) == 0
    (tmp_path / "tp.py").write_text(edited.replace(guard, 'if tm_state == "init":'))
    rc = main(["prove", str(model), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 3 and "inductive step: CommitAfterAllPrepared is not preserved" in out
    assert "  action TMCommit\n" in out


MEMO_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    x: bool
    y: int


class Memo(Spec):
    name = "memo"

    def setup(self):
        self.invariants["Small"] = self.schema.var("y", Int()) <= 3

    def init_states(self):
        yield State(False, 0)
        yield State(True, 0)

    def next(self, s):
        a, ys = (1 if s.x else 0), [2 - bool(s.x) for _ in (0,)]
        yield ("Set", ()), State(s.x, ys[0] + a)

    def observe(self, s):
        return {"y": s.y}
'''


def test_a_comprehension_that_reads_a_decided_condition_is_not_reused_where_it_is_open(tmp_path):
    """The comprehension makes `s.x` a bool, which its statement decided before:
    it asks nothing new, yet its value depends on that decision. Kept as
    decision-free (comp.py's memo), the other path (x false) would reuse
    the first path's entries and the relation would say y' = 2 there."""
    (tmp_path / "memo.py").write_text(MEMO_SPEC)
    spec = resolve(f"{tmp_path / 'memo.py'}:Memo").cls()
    rel, n, bad, labels = agree(spec)
    assert (n, bad, labels) == (4, [], {("Set", ())})


MUTATE_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    x: int
    y: int


def fields(s):
    return {"x": s.x}


def note(changed, y):
    changed["y"] = y


class Mutate(Spec):
    name = "mutate"

    def setup(self):
        self.invariants["Small"] = self.schema.var("y", Int()) <= 2

    def init_states(self):
        for x in range(3):
            yield State(x, 0)
            yield State(x, 1)

    def next(self, s):
        changed = fields(s)
        if s.x == 2:
            changed["y"] = 1
        yield ("Set", ()), s._replace(**changed)
        changed = fields(s)
        if s.x == 1:
            note(changed, s.x + 1)
            if s.y == 0:
                changed["x"] = 0
        yield ("Note", ()), s._replace(**changed)

    def observe(self, s):
        return {"y": s.y}
'''


def test_a_helpers_dict_changed_by_one_path_is_not_what_the_next_path_gets(tmp_path):
    """`fields(s)` is summarized (its argument is symbolic) and the summary
    is kept for later runs. Were its dict returned as the one object, the
    path where x is 2 would add y to it and the other paths would set y
    too; and `note`, given the dict, would change it only on the run that
    summarized it, not on the replay that takes y != 0. (PIP-473's derived
    `publishPutOp` wrote a participant that a path with no segment set
    into every path's state this way.)"""
    (tmp_path / "mutate.py").write_text(MUTATE_SPEC)
    spec = resolve(f"{tmp_path / 'mutate.py'}:Mutate").cls()
    rel, n, bad, labels = agree(spec)
    assert (n, bad, labels) == (8, [], {("Set", ()), ("Note", ())})


PAIR_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    flag: bool
    a: int
    b: int
    got: frozenset


def pick(s):
    if s.flag:
        return frozenset({(s.a, s.b)})
    return frozenset()


class Pair(Spec):
    name = "pair"

    def setup(self):
        self.invariants["Few"] = self.schema.var("n", Int()) <= 1

    def init_states(self):
        for a in range(9):
            for b in range(9):
                yield State(False, a, b, frozenset())
                yield State(True, a, b, frozenset())

    def next(self, s):
        yield ("Take", ()), s._replace(got=pick(s))

    def observe(self, s):
        return {"n": len(s.got)}
'''


def test_a_helper_returning_a_set_it_hashed_is_joined_without_deciding_again(tmp_path):
    """`pick`'s set display has 81 possible elements, too many to stay
    symbolic (comp.MAX_CASES): Python hashes it, a path per value, inside
    `pick`'s summary. Joining the summary's returns must use the values
    each path decided, not hash the symbolic pair again outside its path
    (which asked the caller's run, whose replays then saw other conditions)."""
    (tmp_path / "pair.py").write_text(PAIR_SPEC)
    spec = resolve(f"{tmp_path / 'pair.py'}:Pair").cls()
    rel, n, bad, labels = agree(spec)
    assert (n, bad, labels) == (243, [], {("Take", ())})


WORST_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Str

POS = ("p1", "p2", "p3", "p4")


class State(NamedTuple):
    dlv: frozenset   # (position, state at delivery)
    last: str        # the last delivery's state: the atoms' cell


def worst(dlv, pos):
    for st in ("OPEN", "COMMITTED"):
        if (pos, st) in dlv:
            return st
    return ""


class Worst(Spec):
    name = "worst"

    def setup(self):
        sc = self.schema
        sc.enum("Pos", POS)
        w = sc.fun("worst", "Pos", Str(), default="")
        self.invariants["NeverOpen"] = sc.forall("Pos", lambda p: w(p) != "OPEN")

    def init_states(self):
        yield State(frozenset(), "")

    def next(self, s):
        for pos in POS:
            for st in ("OPEN", "COMMITTED"):
                if (pos, st) not in s.dlv:
                    yield ("Deliver", (("pos", pos), ("st", st))), State(s.dlv | {(pos, st)}, st)

    def observe(self, s):
        return {"worst": {pos: worst(s.dlv, pos) for pos in POS}}
'''


def test_a_helper_answering_plain_atoms_per_key_is_one_value_not_a_branch_per_answer(tmp_path, monkeypatch):
    """`worst` returns "OPEN", "COMMITTED" or "" by the set's elements. Its
    summary joins the three into one symbolic atom (the layout's atoms), so
    observe runs on a handful of paths; were each answer a branch, it would
    run once per combination of the four positions' answers (3^4)."""
    from txncheck.checker.symbolic.derive import summary

    (tmp_path / "worst.py").write_text(WORST_SPEC)
    spec = resolve(f"{tmp_path / 'worst.py'}:Worst").cls()
    rel, n, bad, _ = agree(spec)
    assert (n, bad) == (481, [])
    joined = rel.stats["runs"]
    real = summary.join_groups
    monkeypatch.setattr(summary, "join_groups", lambda entries, atoms=None: real(entries))
    rel, n, bad, _ = agree(resolve(f"{tmp_path / 'worst.py'}:Worst").cls())
    assert (n, bad) == (481, [])
    assert rel.stats["runs"] > joined + 3 ** 4 - 10, (joined, rel.stats["runs"])


NAMES_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Str

POS = ("p1", "p2", "p3", "p4")
NAMES = ("t1", "t2")


class State(NamedTuple):
    led: tuple   # per position: the index of the txn whose entry it holds, or -1


def name_at(s, i):
    if s.led[i] < 0:
        return ""
    return NAMES[s.led[i]]


class Names(Spec):
    name = "names"

    def setup(self):
        sc = self.schema
        sc.enum("Pos", POS)
        e = sc.fun("entry", "Pos", Str(), default="")
        self.invariants["OneWriter"] = sc.forall("Pos", lambda p: e(p) != "t3")

    def init_states(self):
        yield State((-1,) * len(POS))

    def next(self, s):
        for i in range(len(POS)):
            if s.led[i] < 0:
                for t in range(len(NAMES)):
                    yield ("Write", (("pos", i), ("txn", t))), State(s.led[:i] + (t,) + s.led[i + 1:])

    def observe(self, s):
        return {"entry": {p: name_at(s, i) for i, p in enumerate(POS)}}
'''


def test_a_helper_answering_names_no_cell_holds_is_one_value_not_a_branch_per_name(tmp_path, monkeypatch):
    """`name_at` answers "", "t1" or "t2": strings of the observation that
    no cell of the state holds. The layout takes them as atoms too
    (observation.observed_atoms), so the summary joins them into one value;
    without them each answer is a branch of observe, 3^4 runs of it (PIP-473's
    `entry` ran 18,338 paths this way)."""
    from txncheck.checker.symbolic.derive import relation

    (tmp_path / "names.py").write_text(NAMES_SPEC)
    spec = resolve(f"{tmp_path / 'names.py'}:Names").cls()
    rel, n, bad, _ = agree(spec)
    assert (n, bad) == (81, [])
    joined = rel.stats["runs"]
    monkeypatch.setattr(relation, "observed_atoms", lambda spec, states: set())
    rel, n, bad, _ = agree(resolve(f"{tmp_path / 'names.py'}:Names").cls())
    assert (n, bad) == (81, [])
    assert rel.stats["runs"] >= joined + 3 ** 4 - 10, (joined, rel.stats["runs"])


SWEEP_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int

GONE = "GONE"


class Header(NamedTuple):
    state: str
    n: int


class State(NamedTuple):
    hdr: tuple   # per txn: its Header, or GONE once swept
    log: tuple   # the txns swept, in order: a tuple whose length varies


def sweep(s, t):
    """One value of the state on four paths: the state's own, or one with
    hdr[t] a plain alternative, or a log longer or shorter."""
    h = s.hdr[t]
    if h == GONE:
        return s._replace(log=s.log[1:])     # the oldest is forgotten
    if h.state == "OPEN":
        return s
    if h.n < 1:
        return s._replace(hdr=s.hdr[:t] + (Header("DONE", h.n + 1),) + s.hdr[t + 1:])
    return s._replace(hdr=s.hdr[:t] + (GONE,) + s.hdr[t + 1:], log=s.log + (t,))


class Sweeps(Spec):
    name = "sweeps"

    def setup(self):
        sc = self.schema
        self.invariants["Short"] = sc.var("swept", Int()) <= 2

    def init_states(self):
        yield State((Header("OPEN", 0), Header("OPEN", 0)), ())

    def next(self, s):
        for t in range(2):
            h = s.hdr[t]
            if h != GONE and h.state == "OPEN":
                yield ("Finish", (("txn", t),)), s._replace(hdr=s.hdr[:t] + (Header("DONE", 0),) + s.hdr[t + 1:])
            yield ("Sweep", (("txn", t),)), sweep(s, t)

    def observe(self, s):
        return {"swept": len(s.log)}
'''


def test_a_helper_returning_the_states_own_value_or_a_plain_one_is_joined_into_one_value(tmp_path, monkeypatch):
    """`sweep` returns the state itself (hdr[t] the state's header-or-GONE,
    log its tuple of varying length) on one path and plain values on the
    others (GONE, a Header, a tuple one longer or one shorter). The summary
    joins them into one union and one sequence, whose unused places (the
    other alternative, the slots past the length) hold the defaults the
    encoding writes: with the union's old header kept, or a slot's old
    item, the successor's cells differ from the spec's and the agreement
    fails. Kept apart, each return is a branch of the caller's run."""
    from txncheck.checker.symbolic.derive import summary

    (tmp_path / "sweeps.py").write_text(SWEEP_SPEC)
    rel, n, bad, _ = agree(resolve(f"{tmp_path / 'sweeps.py'}:Sweeps").cls())
    assert (n, bad) == (26, [])
    joined = rel.stats["runs"]
    monkeypatch.setattr(summary, "JOIN_CONTAINERS", False)
    rel, n, bad, _ = agree(resolve(f"{tmp_path / 'sweeps.py'}:Sweeps").cls())
    assert (n, bad) == (26, [])
    assert (joined, rel.stats["runs"]) == (26, 40)


PARTS_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int

SLOTS = ("a", "b", "c")


class State(NamedTuple):
    n: tuple   # per slot, a counter 0..3


def part(s, i):
    """A part of observe: a dict per branch, as PIP-473's parts return."""
    v, name = s.n[i], f"l{SLOTS[i]}"
    if v == 0:
        return {name: 0}
    if v == 1:
        return {name: 10}
    if v == 2:
        return {name: 20}
    return {name: 30}


class Parts(Spec):
    name = "parts"

    def setup(self):
        sc = self.schema
        for x in SLOTS:
            self.invariants[f"Bounded{x}"] = sc.var(f"l{x}", Int()) <= 30

    def init_states(self):
        yield State((0, 0, 0))

    def next(self, s):
        for i in range(len(SLOTS)):
            if s.n[i] < 3:
                yield ("Bump", (("slot", SLOTS[i]),)), s._replace(n=s.n[:i] + (s.n[i] + 1,) + s.n[i + 1:])

    def observe(self, s):
        return {**part(s, 0), **part(s, 1), **part(s, 2)}

    def observation_parts(self):
        return [(("n",), lambda s, i=i: part(s, i)) for i in range(len(SLOTS))]
'''


def test_observe_given_as_parts_is_derived_part_by_part(tmp_path, monkeypatch):
    """Each part of `observe` branches four ways on its slot's counter. Given
    as parts, each is explored on its own (4 + 4 + 4 runs); as one
    `observe`, its run takes every combination (4^3). Both derive the same
    relation, which agrees with the spec on every reachable state. The
    state's `opt` also becomes None-able in the round its count is widened
    (two widenings of one place in one round: the deeper must go first)."""
    (tmp_path / "parts.py").write_text(PARTS_SPEC)
    rel, n, bad, _ = agree(resolve(f"{tmp_path / 'parts.py'}:Parts").cls())
    assert (n, bad) == (64, [])
    by_parts = rel.stats["runs"]
    spec = resolve(f"{tmp_path / 'parts.py'}:Parts").cls()
    monkeypatch.setattr(type(spec), "observation_parts", lambda self: None)
    rel, n, bad, _ = agree(spec)
    assert (n, bad) == (64, [])
    assert rel.stats["runs"] >= by_parts + 4 ** 3 - 12, (by_parts, rel.stats["runs"])


def test_one_rounds_widenings_of_a_place_and_a_place_inside_it_both_land():
    """A round finds a pair field that is sometimes None and a new count
    inside the pair: widening the pair into a union first would move the
    inner place's path (PIP-473's `part[j]` and its `loaded`)."""
    from txncheck.checker.symbolic.derive.cells import widen_all
    from txncheck.checker.symbolic.derive.shapes import Union, infer

    shape = infer([(False, 0)])
    wide = widen_all(shape, [((), None), ((1,), 1)])
    assert isinstance(wide, Union) and wide == widen_all(widen_all(shape, [((1,), 1)]), [((), None)])


@pytest.mark.slow
def test_pip473_derives_its_next_and_observe_and_they_agree_on_a_small_model():
    """PIP-473 `fixed` (append-before-op-fixed.toml, 833 states): the
    relation derived from the spec's own next and observe agrees with the
    spec on every reachable state, every transition and every observed cell
    (ADR 0011), and on 500 states of its shape drawn at random."""
    from txncheck.checker.model import load_model

    spec = load_model(ROOT / "models/pip473/append-before-op-fixed.toml").instantiate()
    rel, n, bad, labels = agree(spec)
    assert (n, bad) == (833, [])
    assert {"newTxn", "publishAppend", "endTxn", "deliverEvent", "dispatch", "crash", "recover",
            "gcSweep"} <= {name for name, _ in labels}
    # and off the reachable states, where the summary's shared dict showed (put_write_op)
    n, bad = disagreements(rel, shape_states(rel, 3_000, seed=52), most=500)
    assert (n, bad) == (500, [])


CARRY_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    a: int
    b: int


class Carry(Spec):
    name = "carry"

    def setup(self):
        self.invariants["Small"] = self.schema.var("a", Int()) <= 2

    def init_states(self):
        yield State(0, 0)

    def next(self, s):
        top = 2                  # setup: every part's function runs it
        bumped = 0
        if s.a < top:
            bumped += 1
            yield ("BumpA", ()), s._replace(a=s.a + 1)
        if s.b < top:
            yield ("BumpB", ()), s._replace(b=s.b + 1)
        if bumped == 0:          # reads what the first part left
            yield ("Reset", ()), State(0, s.b)

    def observe(self, s):
        return {"a": s.a}
'''


def test_next_is_explored_part_by_part_where_no_part_feeds_another(tmp_path, monkeypatch):
    """split.py: TwoPhase's next is three independent parts, each explored
    on its own (its loop over the RMs one iteration at a time), and the
    relation is the same with the split off. Carry's
    third part reads a local the first one sets: it is not split, and a
    splitter that ignored that (the liveness check dropped) would give
    `Reset` in every state, which the agreement catches."""
    from txncheck.checker.symbolic.derive import split

    spec = TwoPhase(rm=3)
    whole = derive(spec, split_next=False)
    parts = derive(spec)
    assert (whole.stats["parts"], parts.stats["parts"]) == (1, 2 + 3)   # two ifs, the loop's three RMs
    for rel in (whole, parts):
        assert agree(spec, None, rel)[2] == []
    (tmp_path / "carry.py").write_text(CARRY_SPEC)
    spec = resolve(f"{tmp_path / 'carry.py'}:Carry").cls()
    assert split.parts(type(spec).next) is None
    assert agree(spec)[2] == []
    monkeypatch.setattr(split, "_carried", lambda code, body, is_part: False)
    rel, _, bad, _ = agree(resolve(f"{tmp_path / 'carry.py'}:Carry").cls())
    assert rel.stats["parts"] == 3 and bad and "Reset" in str(bad[0])


LOOP_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int


class State(NamedTuple):
    n: tuple


class Loop(Spec):
    name = "loop"

    def setup(self):
        self.invariants["Small"] = self.schema.var("total", Int()) <= 4

    def init_states(self):
        yield State((0, 0))

    def next(self, s):
        for i in range(2):
            if s.n[i] < 2:
                yield ("Bump", (("i", i),)), State(s.n[:i] + (s.n[i] + 1,) + s.n[i + 1:])
        seen = 0
        for i in range(2):       # carries `seen` from one iteration to the next
            seen += s.n[i]
            if seen >= 3:
                yield ("Reset", (("i", i),)), State((0, 0))

    def observe(self, s):
        return {"total": s.n[0] + s.n[1]}
'''


def test_a_loop_is_explored_one_iteration_at_a_time_unless_an_iteration_feeds_the_next(tmp_path, monkeypatch):
    """Loop's first loop runs once per iteration (two explorations); its
    second adds up `seen` over the iterations, so it runs whole. A splitter
    that took it one iteration at a time would start the second iteration
    from `seen = 0` and lose `Reset(i=1)` where s.n = (1, 2)."""
    from txncheck.checker.symbolic.derive import split

    (tmp_path / "loop.py").write_text(LOOP_SPEC)
    spec = resolve(f"{tmp_path / 'loop.py'}:Loop").cls()
    assert [p.each_iteration for p in split.parts(type(spec).next)] == [True, False]
    rel, n, bad, _ = agree(spec)
    assert (n, bad, rel.stats["parts"]) == (9, [], 3)
    monkeypatch.setattr(split, "_iterable", lambda code, s: isinstance(s, split.ast.For))
    rel, _, bad, _ = agree(resolve(f"{tmp_path / 'loop.py'}:Loop").cls())
    assert rel.stats["parts"] == 4 and bad and "Reset" in str(bad[0])


KEY_SPEC = '''
from typing import NamedTuple
from txncheck.spec.api import Spec
from txncheck.spec.schema import Int

UNKEYED = 99


class State(NamedTuple):
    pos: int          # 0..3
    busy: bool
    keys: frozenset   # (slot, key) records


def key(s):
    """The record's key: UNKEYED while busy, else the position."""
    if s.busy:
        return UNKEYED
    return s.pos


class Keys(Spec):
    name = "keys"

    def setup(self):
        self.invariants["Few"] = self.schema.var("n", Int()) <= 4

    def init_states(self):
        yield State(0, False, frozenset())

    def next(self, s):
        if s.pos < 3:
            yield ("Move", ()), s._replace(pos=s.pos + 1)
        yield ("Flip", ()), s._replace(busy=not s.busy)
        if len(s.keys) < 2:
            yield ("Put", ()), s._replace(keys=s.keys | {(len(s.keys), key(s))})

    def observe(self, s):
        return {"n": len(s.keys)}
'''


def test_an_integer_joined_from_a_few_values_branches_over_those_values_only(tmp_path, monkeypatch):
    """`key` returns 99 or a position 0..3: one SInt whose interval is 0..99.
    Put into a set, it must become a Python int (its hash). With the join's
    value set (0..3 and 99) the set display stays symbolic, one element per
    value the path allows (the slot, `len(s.keys)`, is 0 or 1 there: an
    element the path rules out would widen the set's universe with places
    no state uses); with the interval alone (intjoin.VALUE_SETS off) each
    value is a branch. The relation and its cells are the same."""
    from txncheck.checker.symbolic.derive import intjoin

    (tmp_path / "keys.py").write_text(KEY_SPEC)
    rel, n, bad, _ = agree(resolve(f"{tmp_path / 'keys.py'}:Keys").cls())
    assert bad == [] and n == 124
    runs, cells = rel.stats["runs"], rel.layout.names
    monkeypatch.setattr(intjoin, "VALUE_SETS", False)
    rel, n2, bad, _ = agree(resolve(f"{tmp_path / 'keys.py'}:Keys").cls())
    assert (n2, bad, rel.layout.names) == (n, [], cells)
    assert rel.stats["runs"] > 2 * runs, (runs, rel.stats["runs"])


def test_a_derivation_reports_each_stage(monkeypatch):
    """`prove` prints these on stderr: PIP-473's standard bounds derive for
    the better part of an hour."""
    from txncheck.checker.symbolic.derive import relation

    lines: list[str] = []
    monkeypatch.setattr(relation, "progress", lines.append)
    derive(TwoPhase(rm=3)).actions()
    assert [x.split(",")[0] for x in lines] == [
        "derivation of twophase's relation: round 1 of next", "derivation of twophase's relation: observe derived",
        "derivation of twophase's relation: 7 lemmas derived"], lines
    assert all(x.endswith(" CPU s so far") for x in lines)
