"""The state-space profiler (`txncheck profile MODEL`): why a state space is
as big as it is, read off a bounded breadth-first prefix of it.

* `explore`: the prefix, and per level the new states and the actions that
  produced them.
* `fields`: the state's fields, named from its structure, with the distinct
  values each takes and the factor of the growth it carries.
* `dependence`: what reads each field (the properties, the guards, the
  other fields' updates), by sampling; the fields nothing reads and the
  ghost history that could keep less.
* `symmetry`: what the spec's symmetric sorts buy, with its `permute`.
* `commute`: which actions are dependent and why, for partial-order
  reduction, and to which properties each action is visible.

Everything sampled is evidence, not proof: a candidate the profile names is
a reduction to build as a switch and audit (tests/test_pruning_audit.py).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from ...spec.api import Spec
from ..errors import explained
from ..failures import budget_alarm
from ..model import Model
from .commute import Commutation, commutation
from .dependence import Prober, Reads, ghost_factors, pool_of
from .explore import Prefix, explore
from .fields import Growth, Layout, growth
from .symmetry import SortSymmetry, symmetry

LAYOUT_SAMPLE = 4000  # states the layout is read off


@dataclass
class Settings:
    max_states: int | None = 200_000
    max_depth: int | None = None
    max_seconds: float | None = None
    probes: int = 40        # mixes per field
    pool: int = 400         # states the probes start from
    por_states: int = 60    # states sampled for commutation
    symmetry_states: int = 100_000
    seed: int = 0


@dataclass
class Profile:
    model: Model
    spec: Spec
    settings: Settings
    prefix: Prefix
    layout: Layout
    growth: Growth
    reads: list[Reads]          # per component
    group_reads: dict[str, Reads]
    ghosts: dict[str, float]    # component or top-level field -> factor of keeping only what is observed
    symmetry: list[SortSymmetry]
    commutation: Commutation
    seconds: dict[str, float]


def profile(model: Model, settings: Settings | None = None, progress=None) -> Profile:
    st = settings or Settings()
    spec = model.instantiate()
    try:
        return _profile(model, spec, st, progress)
    except Exception as exc:
        why = explained(spec, exc)
        if why is exc:
            raise
        raise why from exc


def _profile(model: Model, spec: Spec, st: Settings, progress) -> Profile:
    clock: dict[str, float] = {}
    t = time.monotonic()
    with budget_alarm(st.max_seconds):  # a next() that never returns: stopped, exit 3 (the later phases need it)
        prefix = explore(spec, st.max_states, st.max_depth, st.max_seconds, progress)
    clock["explore"] = time.monotonic() - t
    states = prefix.states
    rng = random.Random(st.seed)

    t = time.monotonic()
    layout = Layout([states[i] for i in pool_of(len(states), LAYOUT_SAMPLE, rng)])
    g = growth(layout, states, st.seed)
    clock["fields"] = time.monotonic() - t

    t = time.monotonic()
    prober = Prober(spec, states, pool_of(len(states), st.pool, rng), st.seed)
    reads = [prober.probe(p, st.probes) for p in layout.paths]
    group_reads = {}
    for name, members in layout.groups.items():
        group_reads[name] = reads[members[0]] if len(members) == 1 else prober.probe(layout.paths[members[0]][:1],
                                                                                        st.probes)
    ghosts = {}
    for c, r in enumerate(reads):
        if r.role == "ghost":
            ghosts[layout.names[c]] = ([c], sorted(r.symbols))
    for name, r in group_reads.items():
        if r.role == "ghost" and len(layout.groups[name]) > 1:
            ghosts[name] = (layout.groups[name], sorted(r.symbols))
    ghost = ghost_factors(spec, g, states, ghosts, st.seed) if ghosts else {}
    clock["reads"] = time.monotonic() - t

    t = time.monotonic()
    sym = symmetry(spec, states[:_whole_levels(prefix, st.symmetry_states)])
    clock["symmetry"] = time.monotonic() - t

    t = time.monotonic()
    props = {**model.selected_properties(spec), **{w: spec.witnesses[w] for w in model.witnesses}}
    com = commutation(spec, layout, states, pool_of(len(states), st.por_states, rng), props)
    clock["commutation"] = time.monotonic() - t
    return Profile(model, spec, st, prefix, layout, g, reads, group_reads, ghost, sym, com, clock)


def _whole_levels(prefix: Prefix, limit: int) -> int:
    """How many states the complete levels from the first hold, up to
    `limit` (the first level at least)."""
    ends = [prefix.starts[k] for k in range(1, prefix.complete)] + [
        prefix.starts[prefix.complete] if prefix.complete < len(prefix.starts) else len(prefix.states)]
    fit = [e for e in ends if e <= limit]
    return max(fit) if fit else ends[0]
