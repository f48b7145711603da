"""Every shipped model keeps its verdict under --symmetry, --por and both,
and no reduction ever stores more states. A spec with neither symmetry nor
footprints is explored in full under --por and refused under --symmetry.

Models too large for a test are checked at smaller bounds: the largest
integer bound is lowered until the unreduced check fits in CAP states. The
safety part of a model is compared (invariants, witnesses, deadlock);
temporal properties are the liveness checker's.
"""

from __future__ import annotations

from itertools import permutations

import pytest

from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.checker.model import find_models, load_model
from txncheck.checker.reductions import ReductionError
from txncheck.checker.reductions.permutations import permute_for
from txncheck.checker.reductions.symmetry import audit_permute, check_symmetric
from txncheck.spec.api import SpecError

from .helpers import MODELS

CAP = 20_000
MODES = ({"symmetry": True}, {"por": True}, {"symmetry": True, "por": True})


def _job(spec, m, options=None, cap=None):
    props = m.selected_properties(spec)
    return Job(spec=spec, properties=props, witnesses={w: spec.witnesses[w] for w in m.witnesses},
               deadlock=m.deadlock, max_states=cap, keep_graph=False, options=dict(options or {}))


def _fitting(m):
    """The model's spec at the largest bounds (lowering one integer bound at
    a time) whose unreduced check ends within CAP states, and its outcome."""
    cls = type(m.instantiate())
    constants = dict(cls(m.variant, **m.constants).constants)
    frozen: set[str] = set()  # bounds that other bounds depend on (lowering them is invalid)
    for _ in range(16):
        spec = cls(m.variant, **constants)
        out = bfs.run(_job(spec, m, cap=CAP))
        if out.verdict != "incomplete":
            return spec, out
        for v, k in sorted(((v, k) for k, v in constants.items() if k not in frozen and type(v) is int
                            and v > max(spec.bounds[k].lo or 0, 0)), reverse=True):
            try:
                cls(m.variant, **{**constants, k: v - 1})
            except SpecError:
                frozen.add(k)
                continue
            constants[k] = v - 1
            break
        else:
            break
    # Bounds that name txns (PIP-473's writes/acks plans) cannot be lowered one
    # at a time. Those models are compared at full bounds instead: under --por
    # in test_pip473_por.py, and the one with interchangeable txns
    # (twin-clients-fixed) under --symmetry in test_pip473_symmetry.py.
    pytest.skip(f"{m.path}: even at {constants} the check needs over {CAP} states; "
                "compared at full bounds in test_pip473_por.py / test_pip473_symmetry.py")


def _symmetry_applies(spec, m) -> bool:
    if not spec.symmetric_sorts or permute_for(spec) is None:
        return False
    try:
        check_symmetric(spec, {**m.selected_properties(spec), **{w: spec.witnesses[w] for w in m.witnesses}})
    except ReductionError:
        return False
    return True


@pytest.mark.parametrize("path", find_models(MODELS), ids=lambda p: str(p.relative_to(MODELS)))
def test_reductions_keep_the_verdict(path):
    m = load_model(path)
    spec0 = m.instantiate()
    spec, full = _fitting(m)
    if not _symmetry_applies(spec0, m) and spec0.footprints() is None:
        # Nothing to reduce: --por expands every state, --symmetry refuses.
        out = bfs.run(_job(spec, m, {"por": True}))
        assert (out.verdict, out.distinct_states, out.states_generated) == (
            full.verdict, full.distinct_states, full.states_generated)
        assert out.extra["reductions"]["por"]["declared"] is False
        with pytest.raises(ReductionError, match="--symmetry"):
            bfs.run(_job(spec, m, {"symmetry": True}))
        return
    if _symmetry_applies(spec, m):  # permute is an automorphism on every reachable state
        states = full.exploration.states   # the unreduced run's own states (complete: under CAP)
        states = states[::max(1, len(states) // 2000)]  # a spread of at most ~2000, every depth
        mappings = []
        for sort in spec.symmetric_sorts:
            for elems in spec.symmetry_classes(sort):  # permutations act within a class
                for p in list(permutations(elems))[1:24]:
                    mappings.append({x: {e: e for e in spec.schema.elements(x)} for x in spec.symmetric_sorts})
                    mappings[-1][sort].update(zip(elems, p))
        audit_permute(spec, states, mappings, {**m.selected_properties(spec),
                                               **{w: spec.witnesses[w] for w in m.witnesses}})
    for options in MODES:
        if options.get("symmetry") and not _symmetry_applies(spec, m):
            continue
        out = bfs.run(_job(spec, m, options))
        assert out.verdict == full.verdict, f"{options}: {out.verdict} != {full.verdict}"
        assert out.distinct_states <= full.distinct_states
        if out.verdict == "ok":
            assert out.witnesses_found == full.witnesses_found
        for v in out.violations:
            if v.path:  # a real path of the spec, ending where the property fails
                for (_, s), (a, t) in zip(v.path, v.path[1:]):
                    assert (a, t) in set(spec.next(s))
                if v.kind == "invariant":
                    props = {v.property: m.selected_properties(spec)[v.property]}
                    assert Job(spec=spec, properties=props).invariant_checker()(
                        spec.observe(v.path[-1][1])) == v.property
