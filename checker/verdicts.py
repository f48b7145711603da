"""The properties' verdict on each new state: the first invariant it
violates, and the witnesses it satisfies.

A spec whose `observe` reads only some fields of its NamedTuple states says
which (`Spec.observed_fields`). Two states equal on those fields have the
same observation, so the same verdict, and `Verdicts` remembers the verdict
per combination of them. In the first 1.5 million states of the larger
PIP-473 model, a level holds about 1.6 states per combination, half of a
level's combinations were in the level before, and a third of the states
needed an evaluation.

The memory is two generations of at most `limit` combinations each; when
the newer one is full it becomes the older, and the older is dropped. So
it holds about a level's worth, and forgets what the search has moved past.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable, Mapping

from ..spec.api import Spec, SpecError

NO_WITNESSES = ()


class Verdicts:
    """`verdicts(t)` -> (name of the first violated invariant or None, the
    names of the witnesses that hold in `t`, among those the `witness_check`
    was built for, while any is still `pending`)."""

    def __init__(self, spec: Spec, check: Callable[[Mapping], str | None],
                 witness_check: Callable[[Mapping], list[str]] | None, pending: set, limit: int = 1 << 20) -> None:
        self.observe, self.check, self.witness_check, self.pending = spec.observe, check, witness_check, pending
        self.fields = getattr(spec, "observed_fields", None)
        self.key: Callable | None = None  # the observed fields' getter, made from the first state
        self.newer: dict = {}
        self.older: dict = {}
        self.knewer: dict = {}  # the same, under the callers' keys (`keyed`)
        self.kolder: dict = {}
        self.limit = limit
        self.evaluated = 0  # states whose verdict was computed, not remembered
        self.shared: dict = {}  # one tuple per distinct verdict

    def __call__(self, t) -> tuple:
        key = self.key
        if key is None:
            if self.fields is None:
                return self._evaluate(t)
            key = self.key = _getter(t, self.fields)
        k = key(t)
        v = self.newer.get(k)
        if v is None:
            v = self.older.get(k)
            if v is None:
                v = self._evaluate(t)
            if len(self.newer) >= self.limit:
                self.older, self.newer = self.newer, {}
            self.newer[k] = v
        return v

    def keyed(self, k, t) -> tuple:
        """`verdicts(t)`, remembered under the caller's key `k`, which must
        determine t's observed fields as `key(t)` does (the fingerprint
        search's row of field numbers, which hashes faster)."""
        v = self.knewer.get(k)
        if v is None:
            v = self.kolder.get(k)
            if v is None:
                v = self._evaluate(t)
            if len(self.knewer) >= self.limit:
                self.kolder, self.knewer = self.knewer, {}
            self.knewer[k] = v
        return v

    def positions(self, t) -> list[int] | None:
        """The positions of the observed fields in state `t`, or None when
        the spec does not say which it observes."""
        if self.fields is None:
            return None
        _getter(t, self.fields)  # its one-line errors
        names = type(t)._fields
        return [names.index(f) for f in self.fields]

    def _evaluate(self, t) -> tuple:
        # Witnesses are evaluated only while some are pending. A remembered
        # verdict made after the last was found is never asked for them.
        self.evaluated += 1
        obs = self.observe(t)
        wc = self.witness_check
        v = (self.check(obs), tuple(wc(obs)) if wc is not None and self.pending else NO_WITNESSES)
        return self.shared.setdefault(v, v)


def _getter(t, fields) -> Callable:
    names = getattr(type(t), "_fields", None)
    if not fields:
        raise SpecError("the spec's observed_fields is empty; give the fields observe reads, or None")
    missing = [f for f in fields if names is None or f not in names]
    if missing:
        raise SpecError(f"the spec's observed_fields names {missing[0]!r}, which its states ({type(t).__name__}) lack")
    assert names is not None   # else every field is missing
    return itemgetter(*[names.index(f) for f in fields])


def audit_observed_fields(spec: Spec, states) -> None:
    """Raise AssertionError unless `observe` reads only `spec.observed_fields`
    on `states`: each state keeps its observation when its other fields are
    taken from the state half the list away (BFS neighbours are alike). For
    tests of a spec's declaration."""
    fields = spec.observed_fields
    assert fields is not None, f"spec {spec.name} declares no observed_fields to audit"
    states = list(states)
    others = [f for f in type(states[0])._fields if f not in fields]
    h = len(states) // 2
    for s, r in zip(states, states[h:] + states[:h]):
        mixed = s._replace(**{f: getattr(r, f) for f in others})
        assert spec.observe(mixed) == spec.observe(s), (
            f"observe reads a field outside observed_fields: {s} and {mixed} differ only there")


class PartVerdicts:
    """The verdicts of a spec that gives its observation in parts
    (`Spec.observation_parts`), for a search that numbers field values
    (the fingerprint search's rows): each property's verdict is remembered
    per combination of the numbers of the fields it reads, and each part's
    values per combination of its own. A property is evaluated only on a
    combination not met before, from the parts it reads, each computed only
    on a combination of its fields not met before. `__call__(row, t)` is
    `Verdicts(t)`'s answer for the state t of that row."""

    def __init__(self, spec: Spec, props: Mapping, witnesses: Mapping, pending: set, positions: Mapping[str, int],
                 limit: int = 1 << 16) -> None:
        from .invariants import compile_reading

        self.pending, self.limit, self.observe = pending, limit, spec.observe
        parts = spec.observation_parts()
        first = next(iter(spec.init_states()))
        self.parts: list[tuple[Callable, Callable, dict]] = []  # (getter of its fields' numbers, part, memory)
        provider: dict[str, int] = {}
        for k, (fields, part) in enumerate(parts):
            self.parts.append((_numbers(positions, fields), part, {}))
            for sym in part(first):
                provider[sym] = k
        missing = sorted(set(spec.schema.symbols) - set(provider))
        if missing:
            raise SpecError(f"the spec's observation_parts give no part for {missing[0]!r}")

        def compiled(named):
            out = []
            for name, formula in named.items():
                pred, reads = compile_reading(spec.schema, formula)
                needs = sorted({provider[sym] for sym in reads})
                fields = sorted({f for k in needs for f in parts[k][0]})
                out.append((name, pred, needs, _numbers(positions, fields), {}))
            return out

        self.props = compiled(props)
        self.witnesses = compiled(witnesses)
        self.evaluated = 0  # property evaluations (not remembered)

    def __call__(self, row, t) -> tuple:
        obs: dict = {}
        done: set = set()
        bad = None
        for name, pred, needs, key, memo in self.props:
            k = key(row)
            v = memo.get(k)
            if v is None:
                v = memo[k] = self._evaluate(pred, needs, row, t, obs, done, memo)
            if not v:
                bad = name
                break
        holds = []
        if self.pending:
            for name, pred, needs, key, memo in self.witnesses:
                if name in self.pending:
                    k = key(row)
                    v = memo.get(k)
                    if v is None:
                        v = memo[k] = self._evaluate(pred, needs, row, t, obs, done, memo)
                    if v:
                        holds.append(name)
        return bad, holds

    def _evaluate(self, pred, needs, row, t, obs: dict, done: set, memo: dict) -> bool:
        self.evaluated += 1
        if len(memo) >= self.limit:
            memo.clear()
        for k in needs:
            if k not in done:
                get, part, values = self.parts[k]
                pk = get(row)
                got = values.get(pk)
                if got is None:
                    if len(values) >= self.limit:
                        values.clear()
                    try:
                        got = values[pk] = part(t)
                    except Exception:  # the spec's observe reports its own failure (spec_errors)
                        self.observe(t)
                        raise
                obs.update(got)
                done.add(k)
        return bool(pred(obs))


def _numbers(positions: Mapping[str, int], fields) -> Callable:
    """A getter of the row numbers of `fields` (a tuple, even for one)."""
    idx = [positions[f] for f in fields]
    if not idx:
        return lambda row: ()
    if len(idx) == 1:
        i = idx[0]
        return lambda row: (row[i],)
    return itemgetter(*idx)


def row_positions(t) -> dict[str, int] | None:
    """Field name -> its place in the fingerprint search's row of state t
    (after the shape number), for NamedTuple states; else None."""
    names = getattr(type(t), "_fields", None)
    return None if names is None else {f: i + 1 for i, f in enumerate(names)}
