"""What reads each field, found by sampling: the properties (through
`observe`), the guards (which actions are enabled) and the updates of the
other fields.

A probe takes an explored state `s` and a donor state whose field differs,
puts the donor's value into `s`, and compares the mixed state with `s`: its
observation, its enabled actions, and, for the actions enabled in both, the
successors with that field masked. A difference is proof that something
reads the field; no difference in every probe is evidence only (a guard that
reads it in states the sample missed is not seen), so a field that nothing
was seen to read is a candidate to audit, not a reduction. A mixed state
may be one the spec never reaches; when `next` or `observe` raises on it,
the probe counts as a read.

A field that only the properties read is ghost history: the checker needs of
it only what `observe` makes of it. `ghost_factors` estimates what keeping
only that would buy: distinct states over distinct (rest of the state, the
observation symbols the field was seen to change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import random
from collections import Counter
from dataclasses import dataclass, field

from .fields import Growth, _put

if TYPE_CHECKING:
    from ...spec.api import Spec

ABSENT = object()
MASK = ("<masked>",)


@dataclass
class Reads:
    probes: int = 0    # mixes with a donor value that differs
    observe: int = 0   # the observation changed
    guard: int = 0     # the enabled actions changed
    update: int = 0    # a successor's other fields changed
    errors: int = 0    # next or observe raised on the mixed state
    symbols: Counter = field(default_factory=Counter)  # observation symbols that changed

    @property
    def role(self) -> str:
        """irrelevant (nothing seen to read it), ghost (the properties only),
        or state (a guard or an update reads it, or the spec raised)."""
        if self.guard or self.update or self.errors:
            return "state"
        return "ghost" if self.observe else "irrelevant"


def _get(v, path: tuple):
    for step in path:
        if v is None:
            return ABSENT
        v = getattr(v, step) if isinstance(step, str) else v[step]
    return v


def freeze(v):
    """An observation value as a hashable one (dicts, sets, lists inside)."""
    if isinstance(v, dict):
        return frozenset((k, freeze(x)) for k, x in v.items())
    if isinstance(v, (set, frozenset)):
        return frozenset(freeze(x) for x in v)
    if isinstance(v, (list, tuple)):
        return tuple(freeze(x) for x in v)
    return v


class Prober:
    def __init__(self, spec: Spec, states: list, pool: list[int], seed: int = 0) -> None:
        self.spec, self.states, self.pool = spec, states, pool
        self.rng = random.Random(seed)
        self._next: dict[int, dict] = {}
        self._obs: dict[int, Mapping[str, object]] = {}

    def _succ(self, i: int) -> dict:
        got = self._next.get(i)
        if got is None:
            got = self._next[i] = _by_action(self.spec.next(self.states[i]))
        return got

    def _observe(self, i: int) -> Mapping[str, object]:
        got = self._obs.get(i)
        if got is None:
            got = self._obs[i] = self.spec.observe(self.states[i])
        return got

    def probe(self, path: tuple, trials: int) -> Reads:
        r = Reads()
        states, rng = self.states, self.rng
        for _ in range(trials):
            for _attempt in range(64):  # a state that has the field, and a donor whose value differs
                i = rng.choice(self.pool)
                mine = _get(states[i], path)
                if mine is ABSENT:
                    continue
                theirs = _get(states[rng.randrange(len(states))], path)
                if theirs is not ABSENT and theirs != mine:
                    break
            else:
                continue
            s = states[i]
            m = _put(s, path, theirs)
            r.probes += 1
            try:
                obs = self.spec.observe(m)
                succ = _by_action(self.spec.next(m))
            except Exception:  # a mix the spec's code cannot take: count it as read
                r.errors += 1
                continue
            base = self._observe(i)
            changed = [k for k in base if obs.get(k) != base[k]]
            if changed:
                r.observe += 1
                r.symbols.update(changed)
            mine_succ = self._succ(i)
            if set(succ) != set(mine_succ):
                r.guard += 1
            elif any(_masked(succ[a], path) != _masked(mine_succ[a], path) for a in succ):
                r.update += 1
        return r


def _by_action(items) -> dict:
    out: dict = {}
    for a, t in items:
        out.setdefault(a, []).append(t)
    return out


def _masked(ts: list, path: tuple) -> frozenset:
    return frozenset(t if _get(t, path) is ABSENT else _put(t, path, MASK) for t in ts)


def pool_of(n: int, size: int, rng: random.Random) -> list[int]:
    return sorted(rng.sample(range(n), min(n, size)))


def ghost_factors(spec: Spec, g: Growth, states: list, ghosts: dict[str, tuple[list[int], list[str]]],
                  seed: int = 0) -> dict[str, float]:
    """Per ghost (name -> its components and the observation symbols it was
    seen to change): distinct states over distinct (the state without those
    components, those symbols of its observation), over all `states`, in one
    pass of `observe`."""
    rng = random.Random(seed)
    words: dict = {}
    keys: dict[str, set] = {name: set() for name in ghosts}
    for j, s in enumerate(states):
        obs = spec.observe(s)
        for name, (members, symbols) in ghosts.items():
            k = g.keys[j]
            for c in members:
                k ^= g.words[c][g.ids[c][j]]
            image = (name, tuple(freeze(obs.get(y)) for y in symbols))
            w = words.get(image)
            if w is None:
                w = words[image] = rng.getrandbits(64)
            keys[name].add(k ^ w)
    return {name: g.states / len(ks) for name, ks in keys.items()}
