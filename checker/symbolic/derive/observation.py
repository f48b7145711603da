"""What `observe` and a spec's Python lemmas say, as formulas over the cells.

`observe` runs on the symbolic state (every path, as `next` does); each
path returns a dict in the observation format of spec/schema.py, whose
values are Python or symbolic. Each property symbol's cell (a scalar, or a
point of a function's domain) becomes one term, its values on the paths
joined by their guards. A lemma written as a Python predicate of the state
is run the same way: its formula is the disjunction of the guards of the
paths where it returns true.
"""

from __future__ import annotations

from typing import Any

import z3

from ....spec.schema import Bool, Enum, Int, Schema, Str
from ....spec.symbolic import domain_keys
from .containers import SSet
from .oracle import OutsideSubset
from .pyfuncs import t_in
from .atom import SAtom
from .values import SBool, SInt, Sym, as_int, truth


def property_cells(schema: Schema) -> list[tuple[tuple, z3.ExprRef]]:
    """((symbol, key), its term in the schema's vocabulary) for every cell."""
    out = []
    for sym in schema.symbols.values():
        for key in domain_keys(schema, sym):
            term = sym.ref if not key else sym.ref(*[schema.const(d, e) for d, e in zip(sym.domain, key)])
            out.append(((sym.name, key), term))
    return out


def observed_atoms(spec, states) -> set:
    """The strings `observe` gives the spec's Str and Enum symbols on
    `states`, the symbols' defaults and every Enum element: atoms of the
    layout too, so that a helper of `observe` that returns one of them on
    each path is joined into one atom (summary.py) where its caller would
    otherwise branch once per value. A value missing here is still derived,
    by branching: the set only makes the derivation cheaper."""
    syms = [sym for sym in spec.schema.symbols.values() if isinstance(sym.type, (Str, Enum))]
    out = {sym.default for sym in syms if isinstance(sym.default, str)}
    for sym in syms:
        if isinstance(sym.type, Enum):
            out.update(spec.schema.elements(sym.type.sort))
    for s in states:
        obs = spec.observe(s)
        for sym in syms:
            v = obs.get(sym.name)
            out.update(x for x in (v.values() if isinstance(v, dict) else (v,)) if isinstance(x, str))
    return out


def observed_term(schema: Schema, obs: Any, name: str, key: tuple) -> z3.ExprRef:
    """One cell of the properties' vocabulary, from `observe`'s (symbolic) dict."""
    if not isinstance(obs, dict) or name not in obs:
        raise OutsideSubset(f"observe returned no value for symbol {name}")
    sym = schema.symbols[name]
    v = obs[name]
    if sym.domain:
        k = key[0] if len(key) == 1 else key
        if sym.is_set:
            v = t_in(k, v)
        elif isinstance(v, dict):
            v = v[k] if k in v else sym.default
        else:
            raise OutsideSubset(f"observe gives symbol {name} as a {type(v).__name__}, not a dict")
    return _term(schema, sym.type, v, name)


def _term(schema: Schema, typ, v, name: str) -> z3.ExprRef:
    if isinstance(typ, Bool):
        t = truth(v)
        return t.t if isinstance(t, SBool) else z3.BoolVal(bool(t))
    if isinstance(typ, Int):
        if isinstance(v, (SInt, SBool, SAtom)):
            return as_int(v).t
        return z3.IntVal(int(v))
    if isinstance(typ, Str):
        return _mapped(v, lambda x: z3.StringVal(str(x)), name)
    if isinstance(typ, Enum):
        return _mapped(v, lambda x: schema.const(typ.sort, str(x)), name)
    raise OutsideSubset(f"symbol {name}: unknown type {typ!r}")


def _mapped(v, const, name: str) -> z3.ExprRef:
    """An atom (or symbolic atom) as a term of the symbol's sort."""
    if isinstance(v, SAtom):
        out = const(v.values[-1])
        for a in reversed(v.values[:-1]):
            out = z3.If(v.t == v.reg.const(a), const(a), out)
        return out
    if isinstance(v, Sym):
        v = v._py()
    return const(v)


def lemma_value(v) -> z3.BoolRef:
    t = truth(v)
    if isinstance(t, SBool):
        return t.t
    if isinstance(t, SSet):
        return truth(t).t
    return z3.BoolVal(bool(t))
