"""Truth tables for spec properties: a property evaluated on hand-written
observations through the compiled predicate and through Z3, as the checker
evaluates it (checker/invariants.py); both must give the expected value."""

from __future__ import annotations

from txncheck.checker.invariants import Z3Evaluator, compile_predicate


def holds(spec, name: str, obs: dict) -> bool:
    formula = spec.invariants[name]
    fast = compile_predicate(spec.schema, formula)(obs)
    slow = Z3Evaluator(spec.schema, {name: formula}).evaluate(formula, obs)
    assert fast == slow, f"{name}: compiled {fast}, Z3 {slow} on {obs}"
    return fast


def check_table(spec, name: str, base: dict, rows: list[tuple[dict, bool]]) -> None:
    """Each row: changes to `base`, and whether `name` must hold on the result."""
    for change, want in rows:
        obs = {**base, **change}
        assert holds(spec, name, obs) is want, f"{name} on {change}: expected {want}"


def cannot_be_seen_failing(spec_name: str, tables: dict, models_dir) -> list[str]:
    """Properties of `spec_name` that fail in no shipped model ([expect]
    property) and whose table has no row where they fail: checks nothing shows
    can fail."""
    from txncheck.checker.model import find_models, load_model

    failing = {m.expect.get("property") for m in map(load_model, find_models(models_dir)) if m.spec_name == spec_name}
    return sorted(n for n, rows in tables.items() if n not in failing and all(want for _, want in rows))
