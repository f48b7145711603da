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

from ..spec.api import SpecError

NO_WITNESSES = ()


class Verdicts:
    """`verdicts(t)` -> (name of the first violated invariant or None, the
    names of the witnesses that hold in `t`, among those the `witness_check`
    was built for, while any is still `pending`)."""

    def __init__(self, spec, check: Callable[[Mapping], str | None],
                 witness_check: Callable[[Mapping], list[str]] | None, pending: set, limit: int = 1 << 20) -> None:
        self.observe, self.check, self.witness_check, self.pending = spec.observe, check, witness_check, pending
        self.fields = getattr(spec, "observed_fields", None)
        self.key = None  # the observed fields' getter, made from the first state
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
    return itemgetter(*[names.index(f) for f in fields])


def audit_observed_fields(spec, states) -> None:
    """Raise AssertionError unless `observe` reads only `spec.observed_fields`
    on `states`: each state keeps its observation when its other fields are
    taken from the state half the list away (BFS neighbours are alike). For
    tests of a spec's declaration."""
    fields = spec.observed_fields
    states = list(states)
    others = [f for f in type(states[0])._fields if f not in fields]
    h = len(states) // 2
    for s, r in zip(states, states[h:] + states[:h]):
        mixed = s._replace(**{f: getattr(r, f) for f in others})
        assert spec.observe(mixed) == spec.observe(s), (
            f"observe reads a field outside observed_fields: {s} and {mixed} differ only there")
