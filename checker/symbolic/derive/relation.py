"""`derive(spec)`: the spec's transition relation, from its own code.

1. The shape of the state (shapes.py) is inferred from states of the model
   (the initial ones, a breadth-first prefix and random walks).
2. `next` runs on the symbolic state over the shape's cells, every path
   explored (explore.py). A successor the shape cannot hold widens it, and
   the derivation starts again, until every successor fits.
3. The events become actions: the yields of one label at one node, the
   k-th of that label on their path, are one action (their paths exclude
   each other), whose guard is the disjunction of theirs and whose update
   gives each cell an If-chain of its new values. A path on which `next`
   raises becomes an action that sets the cell "next raises", which the
   invariant's `Types` clause says is false: the proof shows no reachable
   state makes `next` raise.
4. `observe` and the spec's lemmas run the same way (observation.py).

The result is a `Relation` (spec/symbolic.py) with `derived = True`.
"""

from __future__ import annotations

import sys
import time
from functools import partial
from typing import Any, Callable

import z3

from ....spec.api import Action, Spec, SpecError
from ....spec.symbolic import Act, Frame, Relation
from ..cti import render
from .cells import change_at, fit, widen_all
from .misfits import Guarded, Misfits
from .explore import Exploration
from .join import Reach, join_values
from .layout import RAISED, RAISES, DerivedFrame, Layout, Renamer
from .observation import lemma_value, observed_atoms, observed_term, property_cells
from .oracle import OutsideSubset
from .rewrite import rewritten
from . import split
from .sample import sample_states
from .shapes import infer, pool_caps, pool_ints
from .values import Sym

MAX_ROUNDS = 12
BOUNDS_MS = 10_000    # Z3's time for the bounds of one int under one path condition (misfits.py's `guarded`)
# Called with a line after each stage of a derivation (a round of `next`, `observe`, the lemmas):
# the prove command prints it on stderr, as its other progress (an hour at PIP-473's standard bounds).
progress: Callable[[str], None] | None = None


class DerivedRelation(Relation):
    derived = True
    merge = True          # explore.py's merging (off: every path, for the audit)
    split_next = True     # explore next's top-level parts one by one (split.py; off: next whole, for the audit)
    grow_seqs = False     # widen a sequence's capacity too (misfits.py; on: never settles for PIP-473)
    pool_ints = True      # an array's slots share each int field's range (shapes.pool_ints)
    pool_caps = True      # an array of sequences shares one capacity (shapes.pool_caps)
    widen_copies = True   # an int place takes the range of a cell copied into it (misfits.py)
    widen_guarded = True  # ... and the range Z3 gives an int computed under its path condition (misfits.py)
    samples = 2_000       # states of the model the shape is first inferred from
    _sv_layout: object    # the layout the solver of `_possible` was made for (set with it)

    def state_schema(self):
        spec = self.spec
        self.modules = spec_modules(spec)
        self.files = {m.__file__ for m in self.modules}
        states = sample_states(spec, self.samples)
        shape = infer(states)
        shape = pool_ints(shape) if self.pool_ints else shape
        shape = pool_caps(shape) if self.pool_caps else shape
        self._extra = observed_atoms(spec, states)
        self.stats = {"rounds": 0, "runs": 0}
        self._guarded = Guarded() if self.widen_guarded else None
        self._t0 = time.process_time()
        for _ in range(MAX_ROUNDS):
            self.stats["rounds"] += 1
            self.layout = Layout(shape, extra=self._extra)
            widen = self._derive_next()
            undo = self._guarded.undo() if self._guarded else []    # counters no guard bounds
            self._say(f"round {self.stats['rounds']} of next, {len(widen)} places widened"
                      f"{f', {len(undo)} given back their ranges' if undo else ''}, {self.stats['runs']:,} runs")
            if not widen and not undo:
                break
            shape = widen_all(shape, widen)
            for path, before in undo:
                shape = change_at(shape, path, lambda s, b=before: b if getattr(s, "kind_", None) == "int" else s)
        else:
            raise SpecError(f"the derivation of {spec.name}'s relation: the state's shape did not settle "
                            f"in {MAX_ROUNDS} rounds")
        if self._raises:
            self.layout = Layout(shape, raised=True, extra=self._extra)
        self.layout.schema.render = lambda cells, only=None, before=None: render(self, cells, only, before)
        return self.layout.schema

    def setup(self) -> None:
        lay = self.layout
        self._acts = self._make_acts()
        self._observed = self._derive_observe()
        self._say("observe derived")
        self.lemmas = {}
        for name, lemma in getattr(self.spec, "lemmas", {}).items():
            self.lemmas[name] = self._derive_lemma(name, lemma)
        self._say(f"{len(self.lemmas)} lemmas derived")
        _ = lay

    def _say(self, what: str) -> None:
        if progress is not None:
            progress(f"derivation of {self.spec.name}'s relation: {what}, "
                     f"{time.process_time() - self._t0:,.0f} CPU s so far")

    # -- the Relation interface --------------------------------------------------------
    def frame(self, tag: str) -> Frame:
        return DerivedFrame(self.layout, tag)

    def actions(self) -> list[Act]:
        return self._acts

    def cells(self, s) -> dict:
        try:
            return self.layout.cells(s)
        except OutsideSubset as exc:
            raise SpecError(f"a state of {self.spec.name} outside its derived shape: {exc}") from None

    def state_of(self, cells: dict):
        """The spec's state a valuation of the cells stands for."""
        return self.layout.state_of(cells)

    def observation(self, f: Frame):
        r = self._rename(f)
        return [(term, r(v)) for term, v in self._observed]

    def lemma(self, f: Frame, formula: z3.BoolRef) -> z3.BoolRef:
        return self._rename(f)(formula)

    def _rename(self, f: Frame) -> Renamer:
        r = f.__dict__.get("_renamer")      # one per frame (a relation outlives the systems using it)
        if r is None:
            r = f.__dict__["_renamer"] = Renamer(self.layout.base, f)
        return r

    # -- next ------------------------------------------------------------------------
    def _explore(self, body) -> Exploration:
        lay = self.layout
        shared = self.__dict__.get("_shared")
        if shared is None or shared[0] is not lay:
            # one per layout, for every exploration of it (next's parts, observe's, the lemmas): a
            # summary depends only on its arguments' keys, a solver's answer on its assumptions
            ex = Exploration(self.files, lay.types(lay.base), merge=self.merge)
            ex.canon.pin(lay.state)
            shared = self._shared = (lay, ex.solver, ex.canon, ex.summaries, ex.sides)
        else:
            ex = Exploration(self.files, lay.types(lay.base), merge=self.merge, solver=shared[1])
            ex.canon, ex.summaries, ex.sides = shared[2:]
        ex.atoms = lay.atoms
        try:
            with rewritten(self.modules, extra=list(vars(self.spec).values())):
                ex.explore(body)
        except OutsideSubset as exc:
            raise SpecError(f"{self.spec.name} is outside the derivable subset: {exc}{_at(self.files)}")
        self.stats["runs"] += ex.runs + ex.runs_inner
        return ex

    def _derive_next(self) -> list:
        lay, spec = self.layout, self.spec
        whole: Any = type(spec).next      # the class's: a guard (spec_errors.py) checks concrete states
        fns = (split.parts(whole) if self.split_next else None) or [whole]
        widen = Misfits(self.grow_seqs, self.widen_copies, self._guarded)
        self._yields, self._raises = [], []
        self.stats["parts"] = 0
        for fn, kw in _runs(fns):
            def body(ex: Exploration, fn=fn, kw=kw) -> None:
                counts: dict = {}
                last = None
                if kw:     # one iteration of a part's loop (split.py): say that a path started it
                    kw = {**kw, split.MARK: lambda: ex.event("iteration", None)}
                for item in fn(spec, lay.state, **kw):
                    label, succ = item
                    label = _concrete(label)
                    if ex.node is not last:
                        counts, last = {}, ex.node
                    k = counts.get(label, 0)
                    counts[label] = k + 1
                    ex.event("yield", (label, k, succ))

            ex = self._explore(body)
            if kw and not any(e.kind == "iteration" for e in ex.events):
                kw[split.ONLY] = None     # no path has this iteration, nor any later one: the next part
            else:                         # (a path that raised before it still counts, below)
                self.stats["parts"] += 1
            reach = Reach(ex)
            for e in ex.events:
                if e.kind != "yield":
                    continue
                label, k, succ = e.value
                terms: list = []
                fit(lay.shape, succ, lay.state, lay.terms, 0, lay.atoms, terms, widen, ())
                if widen.pending:
                    cond = reach.guard(e)
                    widen.settle(partial(self._bounds, cond))
                self._yields.append((e, label, k, terms, reach))
            self._raises += [(e, reach) for e in ex.events if e.kind == "raise" and self._possible(reach.guard(e))]
        return widen.places

    def _bounds(self, cond: z3.BoolRef, t: z3.ArithRef, lo: int, hi: int) -> tuple[int, int] | None:
        """The least and the greatest value of `t` where `cond` holds in a
        state of the cells' declared ranges; None where it stays within
        lo..hi there, or Z3 cannot say."""
        if not self._possible(z3.And(cond, z3.Or(t < lo, t > hi))):
            return None
        out = []
        for sense in ("minimize", "maximize"):
            opt = z3.Optimize()
            opt.set("timeout", BOUNDS_MS)
            opt.add(*self.layout.types(self.layout.base), cond)
            h = getattr(opt, sense)(t)
            if opt.check() != z3.sat:
                return None
            v = opt.upper(h) if sense == "maximize" else opt.lower(h)
            if not z3.is_int_value(v):
                return None      # unbounded: the declared ranges bound every cell, so only a timeout gets here
            out.append(v.as_long())
        return out[0], out[1]

    def _possible(self, cond: z3.BoolRef) -> bool:
        sv = getattr(self, "_sv", None)
        if sv is None or self._sv_layout is not self.layout:
            sv = self._sv = z3.Solver()
            self._sv_layout = self.layout
            sv.add(*self.layout.types(self.layout.base))
        return sv.check(cond) != z3.unsat

    def _make_acts(self) -> list[Act]:
        lay = self.layout
        groups: dict = {}
        for e, label, k, terms, reach in self._yields:
            groups.setdefault((label, id(e.node), k), []).append((e, terms, reach))
        found: dict = {}     # (label, the changes' terms) -> [guards, changes]: one act, its guards joined
        base = lay.terms
        for (label, _, _), members in groups.items():
            node, reach = members[0][0].node, members[0][2]
            rel = [_conj(e.lits) for e, _, _ in members]
            guard = z3.And(reach.of(node), z3.Or(rel)) if len(rel) > 1 else reach.guard(members[0][0])
            changes = {}
            for c, name in enumerate(lay.names):
                vals = [terms[c] for _, terms, _ in members]
                if all(v.eq(base[c]) for v in vals):
                    continue
                changes[name, ()] = join_values(rel, vals)
            key = (label, tuple((k, v.get_id()) for k, v in changes.items()))
            found.setdefault(key, [[], changes])[0].append(guard)
        acts = [self._act(label, z3.Or(gs) if len(gs) > 1 else gs[0], changes)
                for (label, _), (gs, changes) in found.items()]
        for e, reach in self._raises:
            label = (RAISES, (("error", f"{type(e.value).__name__}: {e.value}"), ("at", e.where)))
            acts.append(self._act(label, reach.guard(e), {(RAISED, ()): z3.BoolVal(True)}))
        return acts

    def _act(self, label: Action, guard: z3.BoolRef, changes: dict) -> Act:
        def step(f, guard=guard, changes=changes):
            r = self._rename(f)
            return r(guard), {k: r(v) for k, v in changes.items()}

        return Act(label, step)

    # -- observe and the lemmas --------------------------------------------------------
    def _derive_observe(self) -> list:
        """Each cell of the properties' vocabulary as a term of the state's
        cells. A spec that gives `observe` as parts (`observation_parts`) has
        each part explored on its own: its paths are then summed, where one
        run of the whole `observe` would take every combination of them."""
        lay, spec = self.layout, self.spec
        cells = property_cells(spec.schema)
        parts = spec.observation_parts()
        fns = [part for _, part in parts] if parts else [lambda s: type(spec).observe(spec, s)]
        terms: dict = {}
        for fn in fns:
            def body(ex: Exploration, fn=fn) -> None:
                obs = fn(lay.state)
                mine = tuple(c for c, ((name, _), _) in enumerate(cells) if isinstance(obs, dict) and name in obs)
                ex.event("return", (mine, [observed_term(spec.schema, obs, *cells[c][0]) for c in mine]))

            guards, values = self._returns(self._explore(body), "observe")
            mine = values[0][0]
            if any(v[0] != mine for v in values):
                raise SpecError(f"{spec.name}: a part of observe returns other symbols on other paths")
            for i, c in enumerate(mine):
                terms[c] = join_values(guards, [v[1][i] for v in values])
        missing = [cells[c][0][0] for c in range(len(cells)) if c not in terms]
        if missing:
            raise SpecError(f"{spec.name}: observe gives no value for symbol {missing[0]}")
        return [(term, terms[c]) for c, (_, term) in enumerate(cells)]

    def _returns(self, ex: Exploration, what: str):
        reach = Reach(ex)
        for e in ex.events:
            if e.kind == "raise" and self._possible(reach.guard(e)):
                raise SpecError(f"{self.spec.name}: {what} raises {type(e.value).__name__} ({e.value}) at "
                                f"{e.where or 'a line of its code'} in a state of its shape")
        rets = [e for e in ex.events if e.kind == "return"]
        if not rets:
            raise SpecError(f"{self.spec.name}: {what} returns on no path")
        return [reach.guard(e) for e in rets], [e.value for e in rets]

    def _derive_lemma(self, name: str, lemma: Any) -> z3.BoolRef:
        lay, spec = self.layout, self.spec
        if z3.is_expr(lemma):
            return z3.substitute(lemma, *self._observed)
        if not callable(lemma):
            raise SpecError(f"{spec.name}: lemma {name} is neither a Z3 formula over the schema nor a "
                            "predicate of the state")

        def body(ex: Exploration) -> None:
            ex.event("return", lemma_value(lemma(lay.state)))

        guards, values = self._returns(self._explore(body), f"lemma {name}")
        return z3.Or([z3.And(g, v) for g, v in zip(guards, values)]) if len(values) > 1 else values[0]


def _runs(fns):
    """(function, keywords) for each exploration of next's parts: a part
    explored one iteration at a time (split.py) once per iteration, until
    the caller sets `_txn_only` to None in the keywords it was given."""
    for fn in fns:
        if not getattr(fn, "each_iteration", False):
            yield fn, {}
            continue
        i = 0
        while True:
            kw = {split.ONLY: i}
            yield fn, kw
            if kw[split.ONLY] is None:
                break
            i += 1


def derive(spec: Spec, **options) -> DerivedRelation:
    cls = type("DerivedRelation", (DerivedRelation,), options) if options else DerivedRelation
    return cls(spec)


def spec_modules(spec: Spec) -> list:
    """The modules of the spec's code: its class's (and its bases' but the
    spec API's), and those of the package it is in."""
    names: list[str] = []
    for cls in type(spec).__mro__:
        if cls in (Spec, object) or cls.__module__ in names:
            continue
        names.append(cls.__module__)
    for name in list(names):
        pkg = name.rpartition(".")[0]
        if pkg and pkg != "txncheck.spec":
            names += [m for m in list(sys.modules) if m.startswith(pkg + ".") and m not in names]
    out = [sys.modules[n] for n in names if getattr(sys.modules.get(n), "__file__", None)]
    return [m for m in out if not m.__name__.endswith((".api", ".schema", ".symbolic", ".registry", ".source"))]


def _concrete(x):
    if isinstance(x, Sym):
        return x._py()
    if isinstance(x, tuple):
        items = [_concrete(y) for y in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    return x


def _conj(lits) -> z3.BoolRef:
    lits = list(lits)
    return z3.BoolVal(True) if not lits else lits[0] if len(lits) == 1 else z3.And(lits)


def _at(files: set[str]) -> str:
    """ (at FILE:LINE): the innermost line of the spec's code being run."""
    tb = sys.exc_info()[2]
    where = ""
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in files:
            where = f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})"
        tb = tb.tb_next
    return where
