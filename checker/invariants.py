"""The invariant layer: Z3 formulas compiled once into Python predicates.

Every property in a spec is a quantifier-free Z3 formula over the spec's
`Schema` (finite quantifiers are expanded by the schema). This module turns
each into:

* a compiled predicate: Python source generated from the Z3 AST, evaluated
  against an observation dict (`compile_predicate`, `compile_checker`);
* a Z3 evaluator for `--z3-eval`: substitute the observation's values for
  the symbols and let Z3 simplify to true or false (`Z3Evaluator`);
* load-time sanity checks: a property must be satisfiable, and must not be
  valid under the schema's types alone (`check_sanity`).

A property test (tests/test_invariants_agree.py) keeps the compiled and the
Z3 paths in agreement on random observations for every spec in the repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import z3

from ..spec.schema import Schema, Symbol
from ..spec.symbolic import literal
from .errors import CheckerError

# Z3's own Ctrl-C handler cancels the solver call it interrupts, which then
# returns `unknown`: the interrupt never reaches Python and the run goes on
# (a start-up that ignored Ctrl-C). txncheck handles Ctrl-C itself.
z3.set_param("ctrl_c", False)


class PropertyError(CheckerError, ValueError):
    """A property that cannot be checked as written (one line)."""


# -- compiler -------------------------------------------------------------------

_NARY = {z3.Z3_OP_AND: " and ", z3.Z3_OP_OR: " or ", z3.Z3_OP_ADD: " + ", z3.Z3_OP_MUL: " * "}
_BIN = {
    z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">",
    z3.Z3_OP_EQ: "==", z3.Z3_OP_XOR: "!=",
}


class _Compiler:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.memo: dict[int, str] = {}
        self.reads: dict[str, str] = {}  # symbol -> the local that holds o[symbol]

    def function(self, name: str, body: list[str]) -> Callable:
        """`def name(o)` with `body`, each symbol read from `o` once, up
        front (an observation carries every symbol, as Z3Evaluator reads
        them all)."""
        lines = [f"def {name}(o):"]
        lines += [f"    {v} = o[{n!r}]" for n, v in self.reads.items()]
        lines += [f"    {line}" for line in body]
        ns: dict = {}
        exec(compile("\n".join(lines), "<invariants>", "exec"), ns)
        return ns[name]

    def py(self, e: z3.ExprRef) -> str:
        key = e.get_id()
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._py(e)
        return hit

    def _py(self, e: z3.ExprRef) -> str:
        if z3.is_true(e):
            return "True"
        if z3.is_false(e):
            return "False"
        if z3.is_int_value(e):
            return str(e.as_long())
        if z3.is_string_value(e):
            return repr(e.as_string())
        d = e.decl()
        k = d.kind()
        args = [e.arg(i) for i in range(e.num_args())]
        if k == z3.Z3_OP_DT_CONSTRUCTOR and not args:
            return repr(d.name())
        if k == z3.Z3_OP_UNINTERPRETED:
            return self._symbol(d.name(), args)
        if k in _NARY:
            return "(" + _NARY[k].join(self.py(a) for a in args) + ")"
        if k in _BIN and len(args) == 2:
            return f"({self.py(args[0])} {_BIN[k]} {self.py(args[1])})"
        if k == z3.Z3_OP_NOT:
            return f"(not {self.py(args[0])})"
        if k == z3.Z3_OP_IMPLIES:
            return f"((not {self.py(args[0])}) or {self.py(args[1])})"
        if k == z3.Z3_OP_ITE:
            return f"({self.py(args[1])} if {self.py(args[0])} else {self.py(args[2])})"
        if k == z3.Z3_OP_DISTINCT:
            items = [self.py(a) for a in args]
            if len(items) == 2:
                return f"({items[0]} != {items[1]})"
            return f"(len({{{', '.join(items)}}}) == {len(items)})"
        if k == z3.Z3_OP_SUB:
            return "(" + " - ".join(self.py(a) for a in args) + ")"
        if k == z3.Z3_OP_UMINUS:
            return f"(-{self.py(args[0])})"
        raise PropertyError(f"unsupported Z3 operator {d.name()} in {str(e)[:60]}")

    def _symbol(self, name: str, args: list[z3.ExprRef]) -> str:
        sym = self.schema.symbols.get(name)
        if sym is None:
            raise PropertyError(f"formula uses {name}, which the schema does not declare")
        if len(args) != len(sym.domain):
            raise PropertyError(f"{name} applied to {len(args)} arguments, declared with {len(sym.domain)}")
        o = self.reads.setdefault(name, f"_{len(self.reads)}")
        if not args:
            return o
        parts = [self.py(a) for a in args]
        key = parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ",)"
        if sym.is_set:
            return f"({key} in {o})"
        if sym.default is None:
            return f"{o}[{key}]"
        return f"{o}.get({key}, {sym.default!r})"


def compile_predicate(schema: Schema, formula: z3.BoolRef) -> Callable[[Mapping], bool]:
    return compile_reading(schema, formula)[0]


def compile_reading(schema: Schema, formula: z3.BoolRef) -> tuple[Callable[[Mapping], bool], frozenset[str]]:
    """The compiled predicate, and the symbols it reads."""
    comp = _Compiler(schema)
    body = [f"return {comp.py(formula)}"]
    return comp.function("holds", body), frozenset(comp.reads)


def compile_checker(schema: Schema, props: Mapping[str, z3.BoolRef]) -> Callable[[Mapping], str | None]:
    """One function that returns the name of the first violated property, or None."""
    comp = _Compiler(schema)
    body = [f"if not {comp.py(formula)}: return {name!r}" for name, formula in props.items()]
    return comp.function("check", body + ["return None"])


# -- Z3 evaluation ----------------------------------------------------------------


class Z3Evaluator:
    """Evaluates properties with Z3 itself: substitute every symbol's value
    from the observation, then simplify to a literal."""

    def __init__(self, schema: Schema, props: Mapping[str, z3.BoolRef]) -> None:
        self.schema = schema
        self.props = dict(props)
        self._cells: list[tuple[Symbol, str | tuple[str, ...] | None, Any]] = []  # (symbol, key or None, z3 term)
        for sym in schema.symbols.values():
            if not sym.domain:
                self._cells.append((sym, None, sym.ref))
                continue
            for args in schema._tuples(sym.domain):
                key = tuple(str(a) for a in args)
                self._cells.append((sym, key[0] if len(key) == 1 else key, sym.ref(*args)))

    def _literal(self, sym, value) -> z3.ExprRef:
        try:
            return literal(self.schema, sym.type, value)
        except TypeError:
            raise PropertyError(f"unknown type for {sym.name}") from None

    def substitution(self, obs: Mapping) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        pairs = []
        for sym, key, term in self._cells:
            if key is None:
                value = obs[sym.name]
            elif sym.is_set:
                value = key in obs[sym.name]
            else:
                m = obs[sym.name]
                value = m[key] if sym.default is None else m.get(key, sym.default)
            pairs.append((term, self._literal(sym, value)))
        return pairs

    def evaluate(self, formula: z3.BoolRef, obs: Mapping) -> bool:
        r = z3.simplify(z3.substitute(formula, *self.substitution(obs)))
        if z3.is_true(r):
            return True
        if z3.is_false(r):
            return False
        raise PropertyError(f"Z3 could not reduce a property to true or false: {str(r)[:80]}")

    def first_violation(self, obs: Mapping) -> str | None:
        pairs = self.substitution(obs)
        for name, formula in self.props.items():
            r = z3.simplify(z3.substitute(formula, *pairs))
            if z3.is_false(r):
                return name
            if not z3.is_true(r):
                raise PropertyError(f"Z3 could not reduce {name} to true or false")
        return None


# -- load-time sanity ----------------------------------------------------------------


@dataclass(frozen=True)
class Sanity:
    name: str
    satisfiable: bool
    valid: bool  # valid under the schema's types alone: a check that cannot fail


def sanity(schema: Schema, name: str, formula: z3.BoolRef, timeout_ms: int = 20000) -> Sanity:
    types = schema.type_constraints()
    results = []
    for goal in (formula, z3.Not(formula)):
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(*types, goal)
        results.append(s.check())
    return Sanity(name, results[0] != z3.unsat, results[1] == z3.unsat)


def check_sanity(schema: Schema, props: Mapping[str, z3.BoolRef], accept_vacuous=()) -> None:
    """Raise PropertyError for the first unsatisfiable or vacuous property.
    A property named in `accept_vacuous` (a model file's `vacuous` list) may
    be vacuous in that model's configuration."""
    for name, formula in props.items():
        if not isinstance(formula, z3.BoolRef):
            raise PropertyError(f"property {name} is not a Z3 Boolean formula")
        r = sanity(schema, name, formula)
        if not r.satisfiable:
            raise PropertyError(f"property {name} is unsatisfiable: no observation can satisfy it")
        if r.valid and name not in accept_vacuous:
            raise PropertyError(
                f"property {name} is vacuous: the schema's types alone imply it, so it cannot fail"
                f"{_why_vacuous(schema)}; if this configuration is meant, "
                f"accept it in the model file with vacuous = [\"{name}\"]"
            )


def _why_vacuous(schema: Schema) -> str:
    """A likely reason: a sort of one element makes properties over pairs of
    distinct elements hold trivially."""
    small = [n for n, els in schema.sorts.items() if len(els) == 1]
    if small:
        return f" (sort {small[0]} has one element, so a property over two distinct elements of it holds trivially)"
    return ""
