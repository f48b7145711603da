"""Symmetry reduction (`--symmetry`): explore one representative per orbit.

A spec lists `symmetric_sorts` and implements `permute(state, mapping)`.
The representative of a state is found in two steps:

1. Each element of a symmetric sort gets a signature: the spec's own
   (`Spec.symmetry_signatures`, read off the state), else one read off the
   observation (its values in every symbol over the sort, or over a sort
   whose elements are named after it, with element names masked). The
   signature does not change when the elements are renamed, so sorting by
   it names the elements in a way that only ties can spoil. Elements move
   only within their class of interchangeable elements
   (`Spec.symmetry_classes`; by default the whole sort is one class).
2. Within each tie class, if a swap and a cycle of the class (they generate
   its symmetric group) leave the sorted state unchanged, every permutation
   of the class does; otherwise the permutations of the class are tried and
   the state with the least canonical encoding wins.

Every representative is a permutation of its state, so the reduction is
sound for symmetric properties; it is exact (one state per orbit) unless a
state has more than `MAX_TIES` tie permutations to try, where it keeps the
sorted state. Properties that name specific elements are refused
(`check_symmetric`). Counterexamples are mapped back to concrete traces
by re-executing the spec (`concretize`).
"""

from __future__ import annotations

from itertools import permutations, product
from typing import Any, Iterable, Mapping, TYPE_CHECKING

import z3

from ...spec.schema import Enum
from ..encoding import encode
from ..errors import ReductionError
from .locations import induced_renaming, rename
from .permutations import permute_for

if TYPE_CHECKING:
    from ...spec.api import Spec

MAX_TIES = 5040  # permutations tried per state before settling for the sorted one


def check_symmetric(spec: Spec, props: Mapping[str, z3.BoolRef]) -> None:
    """Refuse properties that are not invariant under every permutation of a
    symmetric sort: substitute the elements by a transposition and by a
    cycle (they generate the group) and ask Z3 for an observation on which
    the property and its image differ."""
    if not spec.symmetric_sorts:
        raise ReductionError(f"--symmetry: spec {spec.name} declares no symmetric sorts")
    if permute_for(spec) is None:
        raise ReductionError(f"--symmetry: spec {spec.name} declares symmetric sorts but does not implement permute")
    schema = spec.schema
    groups = [(sort, c) for sort in spec.symmetric_sorts for c in spec.symmetry_classes(sort) if len(c) > 1]
    if not groups:
        raise ReductionError(
            f"--symmetry: no two elements of {', '.join(spec.symmetric_sorts)} are interchangeable "
            f"in {spec.describe()}; check it without --symmetry")
    for sort, elems in groups:
        gens = [{elems[0]: elems[1], elems[1]: elems[0]},
                {e: elems[(i + 1) % len(elems)] for i, e in enumerate(elems)}]
        for gen in gens:
            pairs = [(schema.const(s, e), schema.const(s, new))
                     for (s, e), new in induced_renaming(schema, sort, gen).items()]
            # an element's name as a string value (PIP-473's ledger entries) is renamed too
            pairs += [(z3.StringVal(e), z3.StringVal(new)) for e, new in gen.items()]
            for name, f in props.items():
                solver = z3.Solver()
                solver.set("timeout", 20000)
                solver.add(*schema.type_constraints(), f != z3.substitute(f, *pairs))
                if solver.check() != z3.unsat:
                    raise ReductionError(
                        f"--symmetry: property {name} names specific elements of the symmetric sort {sort}; "
                        "check it without --symmetry")


class _Signatures:
    """Per-element signatures of one symmetric sort, from observations."""

    def __init__(self, schema, sort: str, classes) -> None:
        self.sort = sort
        self.elements = schema.elements(sort)
        self.classes = [tuple(c) for c in classes]
        self.groups = [c for c in self.classes if len(c) > 1]  # the classes a renaming can move
        self.identity = {e: e for e in self.elements}
        self.mask = set(self.elements)  # element names in values are masked
        # Elements of other sorts named after one element, with the element
        # masked in the name: {element: [(sort, derived element, template)]}
        self.derived: dict[str, list[tuple[str, str, str]]] = {e: [] for e in self.elements}
        for other, elements in schema.sorts.items():
            if other == sort:
                continue
            for d in elements:
                owners = [e for e in self.elements if rename(d, {e: "\0"}) != d]
                if len(owners) == 1:
                    self.derived[owners[0]].append((other, d, rename(d, {owners[0]: "="})))
        # (name, kind, domain, value sort, default, is a set), in a fixed order
        self.symbols: list[tuple[str, str, tuple[str, ...], str | None, Any, bool]] = []
        for sym in sorted(schema.symbols.values(), key=lambda s: s.name):
            vsort = sym.type.sort if isinstance(sym.type, Enum) else None
            if not sym.domain:
                if vsort == sort:
                    self.symbols.append((sym.name, "scalar", (), vsort, sym.default, sym.is_set))
                continue
            self.symbols.append((sym.name, "fun", sym.domain, vsort, sym.default, sym.is_set))

    def _atom(self, v, e) -> str:
        if isinstance(v, str) and v in self.mask:
            return "=" if v == e else "*"
        return repr(v)

    def _key(self, key, e) -> str:
        parts = key if isinstance(key, tuple) else (key,)
        return ",".join(self._atom(k, e) for k in parts)

    def of(self, obs: Mapping, e: str) -> tuple:
        sig = []
        derived = self.derived[e]
        for name, kind, domain, vsort, default, is_set in self.symbols:
            v = obs[name]
            if kind == "scalar":
                sig.append(v == e)
                continue
            if domain == (self.sort,):
                sig.append(self._atom((e in v) if is_set else v.get(e, default), e))
                continue
            cells = [(d, tpl) for s, d, tpl in derived if s == domain[0]] if len(domain) == 1 else None
            if cells:
                sig.append("|".join(sorted(
                    tpl + ":" + self._atom((d in v) if is_set else v.get(d, default), e) for d, tpl in cells)))
                continue
            if self.sort not in domain:
                if vsort == self.sort and not is_set:  # which cells hold this element
                    sig.append("|".join(sorted(self._key(k, e) for k, x in v.items() if x == e)))
                continue
            rows = (((k, True) for k in v) if is_set else v.items())
            sig.append("|".join(sorted(
                self._key(k, e) + ":" + self._atom(x, e) for k, x in rows if e in k)))
        return tuple(sig)


class SymmetryReduced:
    """A spec whose states are orbit representatives; everything else is the
    wrapped spec's."""

    def __init__(self, spec: Spec) -> None:
        if not spec.symmetric_sorts:
            raise ReductionError(f"--symmetry: spec {spec.name} declares no symmetric sorts")
        self.spec = spec
        self.inner_next = getattr(spec, "next_all", spec.next)
        base: Any = spec
        while hasattr(base, "inner_next"):  # under --por: the spec it wraps
            base = base.spec
        self.permute = permute_for(base)
        from ...spec.api import Spec

        own = type(base).symmetry_signatures is not Spec.symmetry_signatures
        self.state_signatures = base.symmetry_signatures if own else None
        self._sigs = [_Signatures(spec.schema, s, spec.symmetry_classes(s)) for s in spec.symmetric_sorts]
        self.inexact = 0  # states that kept the sorted form (too many ties)

    def __getattr__(self, name):
        return getattr(self.spec, name)

    # -- the representative --------------------------------------------------
    def canonical(self, s):
        obs = None
        mapping, classes, moved = {}, [], False
        for sg in self._sigs:
            mapping[sg.sort] = rename = sg.identity  # copied before the first change
            own = self.state_signatures(s, sg.sort) if self.state_signatures else None
            for elems in sg.groups:  # sort each class by signature; ties stay open
                if own is not None:
                    sig_of = own
                else:
                    obs = obs if obs is not None else self.spec.observe(s)
                    sig_of = {e: sg.of(obs, e) for e in elems}
                if len(elems) == 2 and sig_of[elems[0]] < sig_of[elems[1]]:
                    continue  # the commonest class, already in order
                order = sorted(elems, key=sig_of.__getitem__)
                sigs = [sig_of[e] for e in order]
                if order != list(elems):
                    moved = True
                    if rename is sg.identity:
                        rename = mapping[sg.sort] = dict(rename)
                    rename.update(zip(order, elems))
                start = 0
                for i in range(1, len(order) + 1):
                    if i == len(order) or sigs[i] != sigs[start]:
                        if i - start > 1:
                            classes.append((sg.sort, elems[start:i]))
                        start = i
        if not moved and not classes:  # already sorted, no ties: most states
            return s
        base = self.permute(s, mapping) if moved else s
        open_classes = [c for c in classes if not self._fixed(base, *c)]
        if not open_classes:
            return base
        n = 1
        for _, names in open_classes:
            for k in range(2, len(names) + 1):
                n *= k
        if n > MAX_TIES:
            self.inexact += 1
            return base
        best, best_code = base, encode(base)
        choices = [[(sort, names, p) for p in permutations(names)] for sort, names in open_classes]
        for combo in product(*choices):
            m: dict[str, dict[str, str]] = {}
            for sort, names, p in combo:
                m.setdefault(sort, {}).update(zip(names, p))
            for sg in self._sigs:
                full = m.setdefault(sg.sort, {})
                for e in sg.elements:
                    full.setdefault(e, e)
            t = self.permute(base, m)
            code = encode(t)
            if code < best_code:
                best, best_code = t, code
        return best

    def _fixed(self, base, sort: str, names) -> bool:
        """Whether every permutation of `names` leaves `base` unchanged: test
        the two generators of the symmetric group, a swap and a cycle."""
        ident = {sg.sort: sg.identity for sg in self._sigs}
        gens = [{names[0]: names[1], names[1]: names[0]}]
        if len(names) > 2:
            gens.append({e: names[(i + 1) % len(names)] for i, e in enumerate(names)})
        for g in gens:
            m = dict(ident)
            m[sort] = {**ident[sort], **g}
            if self.permute(base, m) != base:
                return False
        return True

    # -- the spec API ---------------------------------------------------------
    def init_states(self) -> Iterable:
        seen = set()
        for s in self.spec.init_states():
            r = self.canonical(s)
            if r not in seen:
                seen.add(r)
                yield r

    def next(self, s):
        # (bfs does not call this: it canonicalizes only the successors it
        # has not stored, see reductions.representatives)
        canonical = self.canonical
        for a, t in self.spec.next(s):
            yield a, canonical(t)

    def next_all(self, s):
        canonical = self.canonical
        for a, t in self.inner_next(s):
            yield a, canonical(t)

    def concretize(self, path):
        """A concrete path of the wrapped spec through the same orbits as a
        path of representatives: start from an initial state in the first
        orbit, then take any step whose target is in the next orbit."""
        if not path:
            return path
        canonical = self.canonical
        cur = next((s for s in self.spec.init_states() if canonical(s) == path[0][1]), None)
        out = [(None, cur)]
        for k, (_, rep) in enumerate(path[1:], 1):
            step = next(((a, t) for a, t in self.inner_next(cur) if canonical(t) == rep), None) if cur else None
            if step is None:
                raise RuntimeError(f"--symmetry: no concrete step into the orbit of trace state {k}; "
                                   f"{self.spec.name}.permute is not an automorphism")
            a, cur = step
            out.append((a, cur))
        return out


def audit_permute(spec: Spec, states, mappings, props: Mapping | None = None) -> None:
    """Raise AssertionError unless `permute` is an automorphism on `states`:
    it commutes with `next` (as sets of successors) and keeps the truth value
    of `props` (default: every invariant and witness). For tests of a spec's
    symmetry declaration."""
    from ..invariants import compile_predicate

    permute = permute_for(spec)
    if props is None:
        props = {**spec.invariants, **spec.witnesses}
    preds = {n: compile_predicate(spec.schema, f) for n, f in props.items()}
    for s in states:
        for m in mappings:
            ps = permute(s, m)
            image = {permute(t, m) for _, t in spec.next(s)}
            assert image == {t for _, t in spec.next(ps)}, f"permute does not commute with next at {s}"
            o, po = spec.observe(s), spec.observe(ps)
            for n, p in preds.items():
                assert p(o) == p(po), f"property {n} changes under permute at {s}"
