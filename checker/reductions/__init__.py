"""State-space reductions and visited-set modes for the bfs engine.

* `--symmetry`: explore one representative per orbit of the spec's
  symmetric sorts (`symmetry.py`).
* `--por`: partial-order reduction for safety, stubborn sets with the BFS
  cycle proviso (`por.py`).
* `--fingerprints`: keep 64-bit fingerprints instead of states: the
  search in checker/engines/parallel/ (`fingerprints.py` holds its
  collision estimate); `--exact` keeps full states (the default).
* `--compact`: stored states share their equal parts (`sharing.py`).

Symmetry and POR are spec transformers: objects with the spec API that the
engine explores in place of the spec, so the engine's loop is unchanged.
The engine calls `reduce`, then `exploration`, then `finish`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ReductionError  # noqa: F401 - where callers have found it
from ..exploration import Exploration
from .por import PartialOrderReduced
from .symmetry import SymmetryReduced

if TYPE_CHECKING:
    from ...spec.api import Spec


def reduce(job):
    """The spec the engine explores: job.spec, wrapped as the options ask
    (which the engine has validated: checker/options.py)."""
    opts = job.options
    spec = job.spec
    if opts.por:
        spec = PartialOrderReduced(spec, {**job.properties, **job.witnesses})
    if opts.symmetry:
        from .symmetry import check_symmetric

        check_symmetric(job.spec, {**job.properties, **job.witnesses})
        spec = SymmetryReduced(spec)
    return spec


def sharer(job):
    """A Sharer for the stored states with --compact, else None."""
    if not job.options.compact:
        return None
    from .sharing import Sharer

    return Sharer()


def exploration(job, spec: Spec):
    """The exact engine's Exploration for this job, with POR's proviso
    attached to its visited set."""
    ex = Exploration(spec)
    por = _layer(spec, PartialOrderReduced)
    if por is not None:
        por.seen = ex.index.__contains__
        sym = _layer(spec, SymmetryReduced)
        if sym is not None:
            por.key = sym.canonical
    return ex


def finish(job, spec: Spec, outcome):
    """Concrete counterexamples, and the reductions' figures in outcome.extra."""
    for v in outcome.violations:  # a reduction bound's left-out steps, appended
        if v.path:
            v.path = job.spec.complete_trace(v.path, v.property)
    sym = _layer(spec, SymmetryReduced)
    if sym is not None:
        for v in outcome.violations:
            if v.path:
                v.path = sym.concretize(v.path)
    info = {}
    if sym is not None:
        info["symmetry"] = {"sorts": list(job.spec.symmetric_sorts), "inexact_states": sym.inexact}
    por = _layer(spec, PartialOrderReduced)
    if por is not None:
        info["por"] = por.stats()
        if por.ample_states and outcome.violations:
            info["por"]["note"] = "counterexamples are real paths, not necessarily shortest"
    if info:
        outcome.extra["reductions"] = info
    if job.options.fingerprints:
        from .fingerprints import collision_probability

        outcome.extra["visited_set"] = "fingerprints"
        outcome.extra["collision_probability"] = collision_probability(
            outcome.distinct_states, outcome.states_generated)
    return outcome


def representatives(spec: Spec):
    """(successors, canonical) for an engine's loop. Under --symmetry the
    successors are the wrapped spec's, and `canonical` maps one to its
    orbit's representative. The engine looks a successor up first, and
    canonicalizes it only when it is not stored: only representatives are
    stored, so one found is one already. Without --symmetry: (spec.next, None)."""
    if isinstance(spec, SymmetryReduced):  # the outermost layer, when present
        return spec.spec.next, spec.canonical
    return spec.next, None


def por_layer(spec: Spec):
    """The --por wrapper in a stack of reductions, or None."""
    return _layer(spec, PartialOrderReduced)


def _layer(spec: Spec, cls):
    """The wrapper of type `cls` in a stack of reductions, or None."""
    while isinstance(spec, (SymmetryReduced, PartialOrderReduced)):
        if isinstance(spec, cls):
            return spec
        spec = spec.spec
    return None
