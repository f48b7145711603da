"""Does the relation say what the spec says? State by state, with Z3.

For a state s of the spec, with the current frame fixed to s's cells:

* every successor the spec's `next` yields, under its action's label, is the
  successor of an action of that label whose guard Z3 finds true;
* the relation allows no other: every action whose guard is true yields one
  of the spec's successors, under its label;
* the properties' symbols, computed from the cells by the relation's
  `observation`, equal what `spec.observe(s)` gives, and every cell is
  within its declared type.

A disagreement names the action and the state. The states are every
reachable state of a small model (`reachable`), those random walks visit
(`walk`), or, for a derived relation, random states of its shape
(`shape_states`), where an inductive step goes and no walk does;
tests/test_symbolic_agreement.py and tests/test_symbolic_derive.py run
them.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import z3

from ...spec.api import Spec
from ...spec.symbolic import Frame, Relation, conj, domain_keys, literal, python_value, valuation
from .coverage import Coverage, conjuncts
from .system import System, show_action, show_valuation
from .walks import walk  # noqa: F401 - the tests' uniform walks


@dataclass
class Disagreement:
    what: str          # "spec-only" (Z3 refuses it), "z3-only" (the spec never yields it), "observation", "type"
    action: Any        # the label, or None
    state: Any         # the spec's state
    detail: str

    def __str__(self) -> str:
        act = f" by {show_action(self.action)}" if self.action else ""
        return f"{self.what}{act}: {self.detail}\n  in state {self.state!r}"


def _unchecked(fn):
    """The ctypes function a z3core wrapper calls (the wrapper then asks Z3 for an error code, a
    second C call), or the wrapper itself where z3py is built otherwise."""
    f = getattr((getattr(fn, "__defaults__", None) or (None,))[-1], "f", None)
    return f if callable(f) else fn


_AST_ID, _APP_ARG = _unchecked(z3.Z3_get_ast_id), _unchecked(z3.Z3_get_app_arg)


class _Fields:
    """The arguments of a Z3 application, read through the C API: the
    agreement test reads hundreds a state, and z3py's `arg` wraps each."""

    def __init__(self, app: z3.ExprRef) -> None:
        self.app, self.ref, self.ast = app, app.ctx.ref(), app.as_ast()

    def id(self, n: int) -> int:
        # the C functions themselves: z3py's wrappers ask Z3 for an error code after each call,
        # which doubled the cost; these two cannot fail on an application and an argument index
        # that the bundle's own sort gives
        return _AST_ID(self.ref, _APP_ARG(self.ref, self.ast, n))

    def __call__(self, n: int) -> z3.ExprRef:
        return self.app.arg(n)


@dataclass(frozen=True)
class Term:
    """A value the relation writes that Z3 did not simplify to a constant."""
    text: str

    def __repr__(self) -> str:
        return f"<{self.text}>"


class Substitution:
    """z3.substitute with the `from` terms fixed once: the agreement test
    substitutes a state into the same formulas hundreds of thousands of
    times, and z3.substitute's checks of every pair cost more than Z3's work."""

    def __init__(self, terms: list[z3.ExprRef]) -> None:
        self.n = len(terms)
        self.ctx = terms[0].ctx
        self.frm = (z3.Ast * self.n)(*[t.as_ast() for t in terms])

    def __call__(self, expr: z3.ExprRef, values: list[z3.ExprRef]) -> z3.ExprRef:
        to = (z3.Ast * self.n)(*[v.as_ast() for v in values])
        r = z3.Z3_substitute(self.ctx.ref(), expr.as_ast(), self.n, self.frm, to)
        return z3.simplify(z3.z3._to_expr_ref(r, self.ctx))


class Agreement:
    """Compares a relation with its spec, one state at a time.

    Every action's guard and every value its update writes are the fields
    of one Z3 term (a tuple), built once. Per state, Z3 substitutes the
    state's cells into it and simplifies: each guard becomes true or false
    and each written value a constant. The successors of the enabled actions
    are then compared with those the spec yields, cell by cell, in Python:
    two Z3 calls a state, whatever its number of successors. (Substituting
    each successor into the step formula instead cost 5 times more;
    asserting the state and searching the step formula, 100 times more on
    PIP-473.) A guard or a value that does not simplify to a constant is a
    disagreement of its own ("undecided")."""

    _bundles = 0

    def __init__(self, relation: Relation, coverage: bool = True) -> None:
        """`coverage`: also record which guard conjuncts each state made true
        and false (`prove --agreement`'s report); without, the bundle holds
        no conjunct and each state costs about a tenth less."""
        self.relation = relation
        self.spec: Spec = relation.spec
        self.system = System(relation)
        self.f = self.system.frame("s")
        self.keys = self.f.keys
        self.labels = self.system.labels
        self._by_label: dict = {}
        for i, label in enumerate(self.labels):
            self._by_label.setdefault(label, []).append(i)
        # the tuple's fields: per action its guard, then the values it writes
        index = {k: n for n, k in enumerate(self.keys)}
        terms: list[z3.ExprRef] = []
        self._acts: list[tuple[int, list[tuple[int, int]]]] = []   # (guard's field, [(cell, value's field)])
        self.coverage = Coverage(self.labels)
        for i, (guard, changes) in enumerate(self.system.updates(self.f)):
            writes: list[tuple[int, int]] = []
            for key, v in changes.items():
                writes.append((index[key], len(terms) + 1 + len(writes)))
            self._acts.append((len(terms), writes))
            terms.append(guard)
            terms += [v for key, v in changes.items()]
            if coverage:
                parts = conjuncts(guard)
                self.coverage.conjuncts[i] = [_text(c) for c in parts]
                self.coverage.fields[i] = list(range(len(terms), len(terms) + len(parts)))
                terms += parts
        Agreement._bundles += 1
        _, self._mk, _ = z3.TupleSort(f"agreement{Agreement._bundles}", [t.sort() for t in terms])
        self._bundle = self._mk(*terms)
        self._sub_f = Substitution([self.f[k] for k in self.keys])
        # the observation: each property symbol's term over f equals a constant o[key]
        self._obs = _observation_cells(relation, self.f)
        sc = self.spec.schema
        self._o = [(key, z3.Const(f"o:{key[0]}{list(key[1])}", sc.symbols[key[0]].type.z3sort(sc)))
                   for key, _ in self._obs]
        self._obs_formula = conj([term == o for (_, term), (_, o) in zip(self._obs, self._o)])
        self._sub_obs = Substitution([self.f[k] for k in self.keys] + [o for _, o in self._o])
        self._lit: dict = {}
        self._values_by_id: dict = {}
        self._true, self._false = z3.BoolVal(True).get_id(), z3.BoolVal(False).get_id()
        self.states = 0

    def _literal(self, schema, name: str, value):
        key = (schema is self.relation.schema, name, value)
        hit = self._lit.get(key)
        if hit is None:
            hit = self._lit[key] = literal(schema, schema.symbols[name].type, value)
        return hit

    def _values(self, cells) -> list[z3.ExprRef]:
        sc = self.relation.schema
        return [self._literal(sc, k[0], cells[k]) for k in self.keys]

    def check(self, s) -> list[Disagreement]:
        """Every way the relation and the spec disagree at state `s`."""
        self.states += 1
        rel, spec = self.relation, self.spec
        out: list[Disagreement] = []
        here = rel.cells(s)
        out += self._types(s, here)
        now = self._values(here)
        out += self._observation(s, here, now)
        ids = [v.get_id() for v in now]
        # the relation's successors: action -> the cells it changes, with their new values
        b = self._sub_f(self._bundle, now)
        if not (z3.is_app(b) and b.decl().eq(self._mk)):
            return out + [Disagreement("undecided", None, s, f"the step does not simplify: {b}")]
        field = _Fields(b)     # the tuple's fields by id: Z3 shares its constants, so an id is a value
        self.coverage.conjuncts_seen(field, self._true, self._false)
        enabled: dict[int, dict] = {}
        for i, (g, writes) in enumerate(self._acts):
            guard = field.id(g)
            if guard == self._false:
                continue
            if guard != self._true:
                out.append(Disagreement("undecided", self.labels[i], s, f"the guard simplifies to {field(g)}"))
                continue
            enabled[i] = eff = {}
            for k, n in writes:
                v = field.id(n)
                if v != ids[k]:
                    eff[self.keys[k]] = self._value(self.keys[k], field, n, v)
        by_next: dict = {}
        for i, eff in enabled.items():
            by_next.setdefault((self.labels[i], frozenset(eff.items())), []).append(i)
        # the spec's successors, each matched to the actions of its label that yield it
        succ: dict = {}
        for label, t in spec.next(s):
            cells = rel.cells(t)
            changed = frozenset((k, v) for k, v in cells.items() if here[k] != v)
            succ.setdefault((label, changed), cells)
        self.coverage.enabled_by_spec({label for label, _ in succ})
        matched = set()
        for (label, eff), cells in succ.items():
            hit = by_next.get((label, eff))
            if hit:
                matched.update(hit)
            else:
                out.append(Disagreement("spec-only", label, s, self._why_refused(here, enabled, label, cells)))
        extra = [i for i in enabled if i not in matched]
        if extra:
            i = extra[0]
            out.append(Disagreement("z3-only", self.labels[i], s, "Z3 allows a successor the spec does not yield: "
                                    + "; ".join(_diff(rel, here, {**here, **enabled[i]}))))
        return out

    def _value(self, key, field: "_Fields", n: int, ast_id: int):
        """`_python` of field n (whose id is `ast_id`), remembered by symbol and id: a state's
        written values are mostly the same few constants. The term is kept with its value, so
        that Z3 cannot free it and give its id to another term."""
        hit = self._values_by_id.get((key[0], ast_id))
        if hit is None:
            v = field(n)
            hit = self._values_by_id[key[0], ast_id] = (self._python(key, v), v)
        return hit[0]

    def _python(self, key, v: z3.ExprRef):
        """A cell's new value in Python (a term that is not a constant as `Term`)."""
        if not _constant(v):
            return Term(str(v))
        return python_value(self.relation.schema.symbols[key[0]].type, v)

    def _why_refused(self, here, enabled, label, cells) -> str:
        if label not in self._by_label:
            return "the relation has no action of this label"
        found = [{**here, **enabled[i]} for i in self._by_label[label] if i in enabled]
        if not found:
            return "the spec yields a successor, but the relation's guard is false"
        z3_cells = found[0]
        return ("the relation's update differs from the spec's: "
                + "; ".join(f"{n}{list(k) if k else ''}: spec {cells[n, k]!r}, relation {z3_cells[n, k]!r}"
                            for (n, k) in cells if cells[n, k] != z3_cells[n, k]))

    def _observation(self, s, here, now) -> list[Disagreement]:
        sc = self.spec.schema
        want = valuation(sc, self.spec.observe(s))
        wanted = [self._literal(sc, key[0], want[key]) for key, _ in self._o]
        if z3.is_true(self._sub_obs(self._obs_formula, now + wanted)):
            return []
        bad = []
        for key, term in self._obs:
            v = python_value(sc.symbols[key[0]].type, self._sub_f(term, now))
            if v != want[key]:
                bad.append(f"{key[0]}{list(key[1]) if key[1] else ''}: observe {want[key]!r}, relation {v!r}")
        return [Disagreement("observation", None, s, "; ".join(bad) or "the observation formula fails")]

    def _types(self, s, cells) -> list[Disagreement]:
        sc = self.relation.schema
        bad = []
        for (name, key), v in cells.items():
            t = sc.symbols[name].type
            lo, hi = getattr(t, "lo", None), getattr(t, "hi", None)
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                bad.append(f"{name}{list(key) if key else ''} = {v} is outside [{lo}, {hi}]")
        return [Disagreement("type", None, s, "; ".join(bad))] if bad else []


def _text(c: z3.ExprRef, most: int = 160) -> str:
    """A conjunct as the coverage report names it: Z3's own printer (z3py's
    lays a term out as a tree, which costs seconds for a derived guard that
    shares its subterms), cut short."""
    text = " ".join(c.sexpr().split())
    return text if len(text) <= most else text[:most - 3] + "..."


def _constant(v: z3.ExprRef) -> bool:
    return (z3.is_true(v) or z3.is_false(v) or z3.is_int_value(v) or z3.is_string_value(v)
            or (z3.is_app(v) and v.num_args() == 0 and v.decl().kind() == z3.Z3_OP_DT_CONSTRUCTOR))


def _observation_cells(relation: Relation, f: Frame):
    """(spec-schema cell, its term over the frame) for every property symbol."""
    sc = relation.spec.schema
    pairs = dict((t.get_id(), v) for t, v in relation.observation(f))
    out = []
    for sym in sc.symbols.values():
        for key in domain_keys(sc, sym):
            term = sym.ref if not key else sym.ref(*[sc.const(d, e) for d, e in zip(sym.domain, key)])
            out.append(((sym.name, key), pairs.get(term.get_id(), term)))
    return out


def _diff(rel: Relation, before, after) -> list[str]:
    changed = {n for (n, k) in before if before[n, k] != after[n, k]}
    return show_valuation(rel.schema, after, only=changed) or ["(no cell changes)"]


def reachable(spec: Spec, limit: int | None = None) -> Iterator:
    """Every reachable state, breadth first (a small model's)."""
    seen: set = set()
    todo: deque = deque()
    for s in spec.init_states():
        if s not in seen:
            seen.add(s)
            todo.append(s)
    while todo:
        s = todo.popleft()
        yield s
        if limit is not None and len(seen) >= limit:
            continue
        for _, t in spec.next(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)


def shape_states(relation: Relation, draws: int, seed: int = 0) -> Iterator:
    """States of a derived relation's shape, every place drawn at random
    (`draws` of them, repeats included): mostly unreachable ones, where a
    proof's inductive step goes and no walk does. Those where the spec's
    `next` or `observe` raises, or yields a successor the shape cannot
    hold, are left out (the relation states those as a raise, or its Types
    clause fails: the proof's business, not a comparison's)."""
    from .derive.shapes import random_value

    rng = random.Random(seed)
    spec, shape = relation.spec, relation.layout.shape   # type: ignore[attr-defined]
    for _ in range(draws):
        s = random_value(shape, rng)
        try:
            spec.observe(s)
            for _, t in spec.next(s):
                relation.cells(t)
        except Exception:
            continue
        yield s


def disagreements(relation: Relation, states: Iterable, stop_after: int = 1,
                  most: int | None = None) -> tuple[int, list[Disagreement]]:
    """Check the states, each distinct one once, at most `most` of them; stop
    after `stop_after` disagreements. Returns (distinct states checked,
    disagreements). No coverage is recorded (`run_agreement` records it)."""
    ag = Agreement(relation, coverage=False)
    seen: set = set()
    out: list[Disagreement] = []
    for s in states:
        if s in seen:
            continue
        if most is not None and len(seen) >= most:
            break
        seen.add(s)
        out += ag.check(s)
        if len(out) >= stop_after:
            break
    return len(seen), out
