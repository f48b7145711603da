"""The compiled predicate and Z3 agree on random observations, for every
property (invariant, witness, predicate) of every spec in the repository."""

from __future__ import annotations

import itertools

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.invariants import Z3Evaluator, compile_predicate, sanity
from txncheck.checker.model import ModelError, find_models, load_model
from txncheck.spec.schema import Bool, Enum, Int, Str

from .helpers import MODELS


def _specs():
    """One instance per (spec, variant, constants) among the shipped models."""
    seen, out = set(), []
    for path in find_models(MODELS):
        try:
            m = load_model(path)
            spec = m.instantiate()
        except ModelError:
            continue
        key = (m.spec_name, m.variant, tuple(sorted(spec.constants.items())))
        if key not in seen:
            seen.add(key)
            out.append(spec)
    return out


def _cases():
    """Every named property of every spec, each once: in the first shipped
    configuration (spec, variant, constants) that defines it."""
    done = set()
    for spec in _specs():
        props = {**spec.invariants, **{f"witness:{k}": v for k, v in spec.witnesses.items()},
                 **{f"predicate:{k}": v for k, v in spec.predicates.items()}}
        for name, formula in props.items():
            if (spec.name, name) in done:
                continue
            done.add((spec.name, name))
            yield pytest.param(spec, formula, id=f"{spec.name}[{spec.variant}]:{name}")


def string_literals(formula) -> set[str]:
    out, todo, seen = set(), [formula], set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_string_value(e):
            out.add(e.as_string())
        todo.extend(e.children())
    return out


def value_strategy(schema, typ, literals):
    if isinstance(typ, Bool):
        return st.booleans()
    if isinstance(typ, Int):
        lo = (typ.lo if typ.lo is not None else -3) - 2
        hi = (typ.hi if typ.hi is not None else 8) + 2
        return st.integers(lo, hi)
    if isinstance(typ, Str):
        return st.sampled_from(sorted(literals | {"", "other"}))
    if isinstance(typ, Enum):
        return st.sampled_from(schema.elements(typ.sort))
    raise AssertionError(typ)


def observation_strategy(schema, literals):
    fields = {}
    for sym in schema.symbols.values():
        val = value_strategy(schema, sym.type, literals)
        if not sym.domain:
            fields[sym.name] = val
            continue
        doms = [schema.elements(d) for d in sym.domain]
        keys = [k[0] if len(k) == 1 else k for k in itertools.product(*doms)]
        if sym.is_set:
            fields[sym.name] = st.sets(st.sampled_from(keys), max_size=len(keys))
        elif sym.default is None:
            fields[sym.name] = st.fixed_dictionaries({k: val for k in keys})
        else:
            fields[sym.name] = st.dictionaries(st.sampled_from(keys), val, max_size=len(keys))
    return st.fixed_dictionaries(fields)


CASES = list(_cases())


@pytest.mark.parametrize("spec, formula", CASES)
def test_compiled_and_z3_agree(spec, formula):
    pred = compile_predicate(spec.schema, formula)
    ev = Z3Evaluator(spec.schema, {"p": formula})

    @settings(max_examples=40)
    @given(observation_strategy(spec.schema, string_literals(formula)))
    def agree(obs):
        assert pred(obs) == ev.evaluate(formula, obs)

    agree()


@pytest.mark.parametrize("spec, formula", CASES)
def test_every_shipped_property_is_satisfiable_and_not_vacuous(spec, formula):
    r = sanity(spec.schema, "p", formula)
    assert r.satisfiable and not r.valid


def test_there_are_properties_to_check():
    assert len(CASES) >= 8
