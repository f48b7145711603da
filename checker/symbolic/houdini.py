"""Houdini: the largest subset of the candidate lemmas that, with the
model's properties, is inductive; then the fewest of those the proof needs.

`houdini` drops every candidate false in an initial state, then asks Z3
for a step from a state where every remaining clause holds to one where
some clause fails (a counterexample to induction); it drops every
candidate false in that step's second state, and asks again. It ends when
no such step exists (the remaining set is inductive) or when a step breaks
only the fixed clauses (the properties, and the cells' declared bounds):
no candidate is left to blame, so the properties fall; unless `grow` gives
more candidates that step's first state falsifies (held_clauses.py).

With `cone` it asks only about the clauses the properties need, through
unsat cores (`_cone`): the same verdict, and it keeps that cone, not the
whole set (one query about thousands of clauses at once is beyond Z3 in
minutes; one per clause of the cone is not).

`needed` then keeps only what the proof uses: each lemma is tried without
(greedily, in a fixed order), and goes if the rest is still inductive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

import z3

from .induction import CTI, invariant, solver
from .system import System


@dataclass
class Outcome:
    verdict: str                     # "inductive", "property falls", "deadlock" (inductive, but a state of it has
                                     # no action enabled, where the model asks for deadlock freedom), "unknown"
    kept: list[str]
    dropped_initially: int = 0
    ctis: int = 0
    cti: CTI | None = None           # the step that breaks only fixed clauses
    stuck: dict | None = None        # verdict "deadlock": the state
    unknown: str = ""
    seconds: float = 0.0
    dropped: dict[str, int] = field(default_factory=dict)   # candidate -> the CTI (1, 2, ...) that dropped it
    joined: int = 0                  # candidates `grow` added


class Induction:
    """One solver holding a step, with every clause assumable in its first
    state by a literal of its own. The properties and the candidates are
    formulas over the spec's schema (the properties' vocabulary, stated of
    a frame through the relation's observation); `given` are lemmas over
    the relation's state schema (its `lemmas`), fixed like the properties."""

    def __init__(self, system: System, properties: Mapping[str, z3.BoolRef], candidates: Mapping[str, z3.BoolRef],
                 given: Mapping[str, z3.BoolRef] = {}, timeout_ms: int = 0, deadlock: bool = False) -> None:
        self.system = system
        f, g, act = system.frame("h0"), system.frame("h1"), system.act("h0")
        self.f, self.g, self.act = f, g, act
        self.now = invariant(system, f, properties, given)
        self.next = invariant(system, g, properties, given)
        self.fixed = list(self.now)           # the properties, the given lemmas, the cells' bounds
        self.at_f, self.at_g = Stater(system, f), Stater(system, g)
        self.lit: dict[str, z3.BoolRef] = {}
        self.sv = solver(timeout_ms)       # its queries stop when `prove --max-seconds` runs out
        self.sv.add(system.step(f, g, act))
        # deadlock freedom (a model's `deadlock = true`): a state of the invariant with no action enabled
        self.stuck_sv = None
        if deadlock:
            self.stuck_sv = solver(timeout_ms)
            self.stuck_sv.set("core.minimize", True)
            self.stuck_sv.add(z3.Not(system.enabled(f)))
        self._assumable(self.fixed)
        self.add(candidates)

    def add(self, candidates: Mapping[str, z3.BoolRef]) -> None:
        """More candidates (formulas over the spec's schema), each assumable by a literal of its own."""
        for name, c in candidates.items():
            self.now[name], self.next[name] = self.at_f(c), self.at_g(c)
        self._assumable(list(candidates))

    def _assumable(self, names: list[str]) -> None:
        for n in names:
            self.lit[n] = z3.Bool(f"assume[{n}]")
            self.sv.add(z3.Implies(self.lit[n], self.now[n]))
            if self.stuck_sv is not None:
                self.stuck_sv.add(z3.Implies(self.lit[n], self.now[n]))

    def stuck(self, assume: list[str]):
        """Deadlock freedom under the clauses assumed: sat with a state that
        has no action enabled, unsat with the core, or unknown."""
        assert self.stuck_sv is not None, "asked only when deadlock freedom is checked"
        r = self.stuck_sv.check(*[self.lit[n] for n in assume])
        if r == z3.sat:
            return r, self.stuck_sv.model()
        if r == z3.unsat:
            names = {str(x): n for n, x in self.lit.items()}
            return r, {names[str(x)] for x in self.stuck_sv.unsat_core()}
        return r, self.stuck_sv.reason_unknown()

    def step(self, assume: list[str], broken: list[str], rlimit: int = 0, core: str = "minimal"):
        """sat with a model, unsat with the core (clause names; None with
        core="none"), or unknown. `rlimit`: give up past that much of Z3's
        work (its resource count, which, unlike a timeout, is the same on
        every machine). A "minimal" core (Z3's core.minimize) can cost far
        more than the query (on PIP-473 `fixed`, an unsat query of 0.4 s
        whose minimisation had not ended in minutes): "small" takes the
        core the search found and asks again under it alone, while that
        shrinks it (at most SHRINK times)."""
        self.sv.push()
        self.sv.add(z3.Or([z3.Not(self.next[n]) for n in broken]))
        self.sv.set("rlimit", rlimit)
        self.sv.set("core.minimize", core == "minimal")
        try:
            r = self.sv.check(*[self.lit[n] for n in assume])
        finally:
            self.sv.set("rlimit", 0)
        if r == z3.sat:
            out = (r, self.sv.model())
        elif r == z3.unsat:
            out = (r, self._core(core == "small") if core != "none" else None)
        else:
            out = (r, self.sv.reason_unknown())
        self.sv.pop()
        return out

    def _core(self, shrink: bool) -> set[str]:
        got = self.sv.unsat_core()
        for _ in range(SHRINK if shrink else 0):
            if self.sv.check(*got) != z3.unsat or len(less := self.sv.unsat_core()) >= len(got):
                break
            got = less
        names = {str(x): n for n, x in self.lit.items()}
        return {names[str(x)] for x in got}

    def false_after(self, model: z3.ModelRef, names: list[str]) -> list[str]:
        return [n for n in names if z3.is_false(model.eval(self.next[n], model_completion=True))]

    def cti(self, model: z3.ModelRef, clause: str, failing: list[str]) -> CTI:
        return CTI(clause, self.f.read(model), self.system.label(model, self.act), self.g.read(model), failing)


class Stater:
    """A formula over the spec's schema stated of a frame, as
    `Relation.property` states one, for many formulas: the relation's
    observation of the frame made once, one call into Z3 a formula
    (z3.substitute checks every pair each call, which cost more than the
    solving on thousands of candidates)."""

    def __init__(self, system: System, frame) -> None:
        pairs = self.pairs = system.relation.observation(frame)   # kept: the arrays below do not own them
        self.n = len(pairs)
        self.ctx = pairs[0][0].ctx
        self.frm = (z3.Ast * self.n)(*[a.as_ast() for a, _ in pairs])
        self.to = (z3.Ast * self.n)(*[b.as_ast() for _, b in pairs])

    def __call__(self, formula: z3.BoolRef) -> z3.BoolRef:
        r = z3.Z3_substitute(self.ctx.ref(), formula.as_ast(), self.n, self.frm, self.to)
        return z3.BoolRef(r, self.ctx)


def houdini(ind: Induction, candidates: list[str], initial: Callable[[list[str]], list[str]],
            say: Callable[[str], None] = lambda _: None, grow: Callable | None = None,
            cone: bool = False) -> Outcome:
    """`initial(names)` gives the names false in some initial state.
    `grow(model)`, when a step breaks only the fixed clauses: more
    candidates (name -> formula) false in that step's first state, which
    join `ind` and Houdini goes on (with none, the properties fall).
    `cone`: ask only about the properties' cone (`_cone`), and keep it."""
    t0 = time.process_time()
    alive = list(candidates)
    out = Outcome("inductive", [])
    while True:
        bad = initial(alive)
        if not bad:
            break
        out.dropped_initially += len(bad)
        gone = set(bad)
        alive = [n for n in alive if n not in gone]
    size = None                      # clauses asked about per query: all at first
    cores: dict = {}                 # with `cone`: clause -> the clauses its preservation needs
    while True:
        clauses = ind.fixed + alive
        r, got = _cone(ind, alive, cores) if cone else _search(ind, clauses, size)
        if r == "split":                 # one query over every clause is too hard for Z3: ask about fewer
            size = max(1, (size or len(clauses)) // SPLIT)
            say(f"asking about {size} clause{'s' if size > 1 else ''} per query")
            continue
        if r == "deadlock":
            out.verdict, out.stuck = "deadlock", ind.f.read(got)
            break
        if r == z3.unsat:
            if cone:
                alive = [n for n in alive if n in got]
            break
        if r != z3.sat:
            out.verdict, out.unknown = "unknown", str(got)
            break
        false = ind.false_after(got, alive)
        out.ctis += 1
        more = grow(got) if grow is not None and not false else {}
        if more:
            ind.add(more)
            fresh = list(more)
            while false_now := set(initial(fresh)):
                fresh = [n for n in fresh if n not in false_now]
            alive += fresh
            out.joined += len(more)
            say(f"counterexample {out.ctis} to induction ({_label(ind, got)}) breaks no candidate: "
                f"{len(more)} held-back candidates false in its first state join, {len(alive)} candidates")
            continue
        if not false:
            failing = ind.false_after(got, ind.fixed)
            out.verdict, out.cti = "property falls", ind.cti(got, failing[0], failing)
            break
        gone = set(false)
        for n in false:
            out.dropped[n] = out.ctis
        alive = [n for n in alive if n not in gone]
        say(f"counterexample {out.ctis} to induction ({_label(ind, got)}): {len(false)} candidates "
            f"dropped, {len(alive)} left")
    if out.verdict == "inductive" and ind.stuck_sv is not None and not cone:
        r, got = ind.stuck(ind.fixed + alive)
        if r == z3.sat:
            out.verdict, out.stuck = "deadlock", ind.f.read(got)
        elif r != z3.unsat:
            out.verdict, out.unknown = "unknown", f"deadlock freedom: {got}"
    out.kept = alive
    out.seconds = time.process_time() - t0
    return out


SHRINK = 4               # asks again under a core to shrink it (Induction.step's "small" core)
RLIMIT = 100_000_000     # Z3's work for one query about several clauses (about a minute), before asking about fewer
SPLIT = 8


def _search(ind: Induction, clauses: list[str], size: int | None):
    """A step from a state of every clause to one where one of them fails:
    one query about all of them, or, past RLIMIT, queries about `size` at a
    time (a query about one clause has no limit but the user's)."""
    size = size or len(clauses) or 1
    for i in range(0, len(clauses), size):
        part = clauses[i:i + size]
        r, got = ind.step(clauses, part, rlimit=RLIMIT if len(part) > 1 else 0, core="none")
        if r == z3.sat:
            return r, got
        if r != z3.unsat:
            if len(part) > 1 and "canceled" in str(got):
                return "split", None
            return r, got
    return z3.unsat, None


def _cone(ind: Induction, alive: list[str], cores: dict):
    """Houdini asked only about what the properties need: from the fixed
    clauses (and deadlock freedom, where the model asks for it) through
    the unsat cores of their preservation, each asked about alone under
    every clause alive, to the clauses those cores hold, and so on. (sat
    and the model of the first step that breaks one; "deadlock" and a
    state with no action enabled; or unsat and the cone: every clause in it
    is preserved under clauses in it, so it is inductive, and Houdini's
    whole set would have held it.) `cores` keeps each clause's core while
    every clause in it is alive, so a query is not asked twice."""
    allowed = set(ind.fixed) | set(alive)
    assume = ind.fixed + alive
    roots: list = [*ind.fixed, *([None] if ind.stuck_sv is not None else [])]
    seen, todo = set(roots), roots[::-1]
    while todo:
        c = todo.pop()
        core = cores.get(c)
        if core is None or not core <= allowed:
            r, got = ind.step(assume, [c]) if c is not None else ind.stuck(assume)
            if r != z3.unsat:
                return ("deadlock" if c is None and r == z3.sat else r), got
            core = cores[c] = frozenset(got)
        fresh = sorted(core - seen)
        seen.update(fresh)
        todo += fresh[::-1]
    return z3.unsat, seen


def _label(ind: Induction, model) -> str:
    from .system import show_action
    return show_action(ind.system.label(model, ind.act))


def initial_checker(system: System, formulas: Mapping[str, z3.BoolRef], timeout_ms: int = 0):
    """names (of formulas over the spec's schema) -> those false in some initial state."""
    f = system.frame("h0")
    sv = solver(timeout_ms)
    sv.add(system.init(f))
    over, at_f = {}, Stater(system, f)

    def false_initially(names: list[str]) -> list[str]:
        for n in names:
            if n not in over:
                over[n] = at_f(formulas[n])
        if not names:
            return []
        r = sv.check(z3.Or([z3.Not(over[n]) for n in names]))
        if r != z3.sat:
            return []
        m = sv.model()
        return [n for n in names if z3.is_false(m.eval(over[n], model_completion=True))]

    return false_initially


def needed(ind: Induction, lemmas: list[str], say: Callable[[str], None] = lambda _: None,
           first: tuple[str, ...] = ()) -> list[str]:
    """The fewest of `lemmas` (an inductive set with the fixed clauses) that
    the fixed clauses need: each lemma tried without, those in `first` first
    (the ones to do without if any can be), then the rest in the order given
    and in the reverse order; the smaller result wins, and a result is tried
    again until no lemma of it can go.

    Each decision is whether a set is inductive, a fact about the relation,
    so the lemmas kept are the same whatever the process asked Z3 before
    (its unsat cores are not). The cores only save queries: a clause
    preserved under a core is preserved under any set holding it, and one
    broken under a set is broken under any set inside it."""
    cores: dict[str | None, list[frozenset]] = {}   # clause (None: deadlock freedom) -> sets it holds under
    fails: dict[str | None, list[frozenset]] = {}   # clause -> sets it does not hold under
    queries = [0]

    def holds(clause: str | None, allowed: frozenset) -> bool:
        if any(k <= allowed for k in cores.get(clause, ())):
            return True
        if any(allowed <= f for f in fails.get(clause, ())):
            return False
        assume = ind.fixed + [n for n in lemmas if n in allowed]
        queries[0] += 1
        r, got = ind.step(assume, [clause], core="small") if clause is not None else ind.stuck(assume)
        if r == z3.unsat:
            cores.setdefault(clause, []).append(frozenset(got) - set(ind.fixed))
            return True
        fails.setdefault(clause, []).append(allowed)     # sat, or unknown: not known to hold
        return False

    def inductive(allowed: frozenset) -> bool:
        clauses: list[str | None] = [*ind.fixed, *(n for n in lemmas if n in allowed)]
        if ind.stuck_sv is not None:
            clauses.append(None)
        return all(holds(c, allowed) for c in clauses)

    if not inductive(frozenset(lemmas)):
        raise RuntimeError("the lemmas given to `needed` are not inductive")
    results = []
    for sign in (1, -1):
        keep = frozenset(lemmas)
        changed = True
        while changed:                   # until no lemma of `keep` can go
            changed = False
            for n in sorted(keep, key=lambda n: (n not in first, sign * lemmas.index(n))):
                if inductive(keep - {n}):
                    keep, changed = keep - {n}, True
        results.append(keep)
    best = min(results, key=lambda k: (len(k & set(first)), len(k)))
    say(f"the properties need {len(best)} of the {len(lemmas)} inductive lemmas ({queries[0]} queries)")
    return [n for n in lemmas if n in best]
