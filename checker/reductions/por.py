"""Partial-order reduction for safety (`--por`): stubborn sets with the BFS
cycle proviso.

The spec declares, for every action `next` can yield, the state locations it
reads (guard included) and writes (`Spec.footprints`). Two actions are
dependent when one writes a location the other reads or writes. In each
state, for each enabled action as a seed, a stubborn set is closed under:

* an enabled action in the set brings in every action dependent on it;
* a disabled action brings in every action that writes a location it reads
  (a superset of any necessary enabling set).

The ample set is the enabled part of the smallest closure whose actions are
all invisible (they write nothing a checked property or witness reads). The
state is expanded fully when no seed gives a proper invisible ample set, or
when an ample successor is a state already visited (the proviso: every cycle
of the reduced graph then passes through a fully expanded state). A spec
without footprints, or an action missing from them, is expanded fully.

Counterexamples are real paths but not necessarily shortest ones.
"""

from __future__ import annotations

from typing import Iterable, Mapping, TYPE_CHECKING

from .locations import overlap, read_locations

if TYPE_CHECKING:
    from ...spec.api import Spec


def _touches(locs_a, locs_b) -> bool:
    return any(overlap(a, b) for a in locs_a for b in locs_b)


class PartialOrderReduced:
    """A spec whose `next` yields ample sets; everything else is the wrapped
    spec's. `seen(key(t))` tells whether a state was already visited; the
    engine sets both (see `reductions.exploration`)."""

    def __init__(self, spec: Spec, properties: Mapping) -> None:
        self.spec = spec
        self.inner_next = getattr(spec, "next_all", spec.next)
        self.seen = lambda t: True  # until the engine attaches its visited set: no reduction
        self.key = lambda t: t
        self.ample_states = 0
        self.full_states = 0
        fps = spec.footprints()
        self.declared = fps is not None
        self.ids: dict = {}
        if not fps:
            return
        watched = set()
        for f in properties.values():
            watched |= read_locations(spec.schema, f)
        acts = list(fps)
        self.ids = {a: i for i, a in enumerate(acts)}
        reads = [tuple(fps[a][0]) for a in acts]
        writes = [tuple(fps[a][1]) for a in acts]
        n = len(acts)
        self.visible = [_touches(writes[i], watched) for i in range(n)]
        self.dependents: list[list[int]] = [[] for _ in range(n)]
        self.enablers: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                w_i_r_j = _touches(writes[i], reads[j])
                if w_i_r_j or _touches(writes[i], writes[j]) or _touches(reads[i], writes[j]):
                    self.dependents[i].append(j)
                if w_i_r_j:
                    self.enablers[j].append(i)

    def __getattr__(self, name):
        return getattr(self.spec, name)

    def _ample(self, enabled: set[int]) -> set[int] | None:
        best = None
        for seed in sorted(enabled):
            if self.visible[seed]:
                continue
            stub, work, amp = {seed}, [seed], 1
            bound = len(enabled) if best is None else len(best)
            while work and amp < bound:
                x = work.pop()
                for y in (self.dependents[x] if x in enabled else self.enablers[x]):
                    if y not in stub:
                        stub.add(y)
                        work.append(y)
                        if y in enabled:
                            amp += 1
                            if self.visible[y]:
                                amp = bound  # a visible action: this seed cannot reduce
                                break
            if amp < bound:
                best = stub & enabled
        return best

    def next(self, s) -> Iterable:
        succ = list(self.inner_next(s))
        ids = self.ids
        by_id: dict[int, list] = {}
        for a, t in succ:
            i = ids.get(a)
            if i is None:  # undeclared action: no reduction here
                by_id = {}
                break
            by_id.setdefault(i, []).append((a, t))
        if len(by_id) > 1:
            amp = self._ample(set(by_id))
            if amp is not None:
                chosen = [x for i in sorted(amp) for x in by_id[i]]
                seen, key = self.seen, self.key
                if not any(t == s or seen(key(t)) for _, t in chosen):
                    self.ample_states += 1
                    return chosen
        self.full_states += 1
        return succ

    def next_all(self, s):
        return self.inner_next(s)

    def stats(self) -> dict:
        return {"declared": self.declared, "ample_states": self.ample_states, "full_states": self.full_states}


def audit_footprints(spec: Spec, states) -> None:
    """Raise AssertionError where a spec's footprints are wrong on `states`:
    an action outside them; a write that changes an observed location it
    does not declare; or two enabled actions declared independent that do
    not commute (a;b and b;a reach different states, or one disables the
    other). For tests of a spec's --por declaration."""
    fps = spec.footprints()
    assert fps is not None, f"spec {spec.name} declares no footprints to audit"
    schema = spec.schema
    for s in states:
        succ = list(spec.next(s))
        by_action: dict = {}
        for a, t in succ:
            assert a in fps, f"action {a} is not in the footprints"
            by_action.setdefault(a, set()).add(t)
            changed = _changed_locations(schema, spec.observe(s), spec.observe(t))
            for loc in changed:
                assert any(overlap(loc, w) for w in fps[a][1]), f"{a} changes {loc} but does not declare it"
        acts = list(by_action)
        for i, a in enumerate(acts):
            for b in acts[i + 1:]:
                ra, wa = fps[a]
                rb, wb = fps[b]
                if _touches(wa, rb) or _touches(wa, wb) or _touches(ra, wb):
                    continue
                ab = _then(spec, by_action[a], b, f"{a} disables {b}, declared independent, at {s}")
                ba = _then(spec, by_action[b], a, f"{b} disables {a}, declared independent, at {s}")
                assert ab == ba, f"{a} and {b}, declared independent, do not commute at {s}"


def _then(spec: Spec, states, action, msg) -> set:
    out = set()
    for t in states:
        after = {u for x, u in spec.next(t) if x == action}
        assert after, msg
        out |= after
    return out


def _changed_locations(schema, o1, o2) -> set[tuple]:
    out = set()
    for name, sym in schema.symbols.items():
        v1, v2 = o1[name], o2[name]
        if v1 == v2:
            continue
        if not sym.domain:
            out.add((name,))
        elif sym.is_set:
            for k in set(v1) ^ set(v2):
                out.add((name, *(k if isinstance(k, tuple) else (k,))))
        else:
            for k in set(v1) | set(v2):
                if v1.get(k, sym.default) != v2.get(k, sym.default):
                    out.add((name, *(k if isinstance(k, tuple) else (k,))))
    return out
