"""A lemma's syntax tree (lemma_text.py) as a Z3 formula over a relation's
state schema, its quantifiers expanded over the model's finite sorts.

Every name is checked against the schema: a symbol, its arity and each
argument's sort; an element of the sort where one is expected; a string
value only against a string cell; order (<, <=, ...) only between integers.
`forall` is the conjunction of its instances, `exists` their disjunction.
The expansion is capped (MAX_INSTANCES bodies per lemma), so a lemma
cannot make a model file's proof take unbounded memory.
"""

from __future__ import annotations

import itertools
import re

import z3

from ...spec.schema import Bool, Enum, Int, Schema, Str
from .lemma_text import (
    Binary, Cmp, Const, Exists, Forall, LemmaSyntaxError, Name, Nary, Not, Quoted, parse, show_term,
)

MAX_INSTANCES = 200_000
_HOLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def compile_text(text: str, schema: Schema) -> z3.BoolRef:
    return compile_lemma(parse(text), schema)


def compile_lemma(node, schema: Schema) -> z3.BoolRef:
    return _Compiler(schema).formula(node, {})


class _Compiler:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.sorts = schema.sorts
        self.instances = 0

    # -- formulas ------------------------------------------------------------------
    def formula(self, node, env: dict) -> z3.BoolRef:
        if isinstance(node, (Forall, Exists)):
            return self.quantified(node, env)
        if isinstance(node, Binary):
            a, b = self.formula(node.left, env), self.formula(node.right, env)
            return z3.Implies(a, b) if node.op == "->" else a == b
        if isinstance(node, Nary):
            args = [self.formula(x, env) for x in node.args]
            return z3.And(args) if node.op == "&" else z3.Or(args)
        if isinstance(node, Not):
            return z3.Not(self.formula(node.arg, env))
        if isinstance(node, Cmp):
            return self.compare(node, env)
        kind = self.term(node.term, env)
        if kind[0] != "bool":
            raise LemmaSyntaxError(f"{_show(node.term)} is not a formula (compare it with a value)")
        return kind[1]

    def quantified(self, node: Forall | Exists, env: dict) -> z3.BoolRef:
        seen = set()
        for var, sort in node.binds:
            if sort not in self.sorts:
                raise LemmaSyntaxError(f"unknown sort {sort!r} (sorts: {', '.join(self.sorts)})")
            if var in seen or var in env:
                raise LemmaSyntaxError(f"variable {var!r} bound twice")
            if var in self.schema.symbols:
                raise LemmaSyntaxError(f"variable {var!r} has the name of a state symbol")
            seen.add(var)
        domains = [self.sorts[s] for _, s in node.binds]
        n = 1
        for d in domains:
            n *= len(d)
        self.instances += n
        if self.instances > MAX_INSTANCES:
            raise LemmaSyntaxError(f"its quantifiers expand to over {MAX_INSTANCES:,} instances")
        out = []
        for values in itertools.product(*domains):
            inner = dict(env)
            inner.update({v: (s, e) for (v, s), e in zip(node.binds, values)})
            out.append(self.formula(node.body, inner))
        if isinstance(node, Exists):
            return z3.Or(out) if out else z3.BoolVal(False)
        return z3.And(out) if out else z3.BoolVal(True)

    def compare(self, node: Cmp, env: dict) -> z3.BoolRef:
        left, right = self.term(node.left, env), self.term(node.right, env)
        left, right = self.resolve(left, right, node), self.resolve(right, left, node)
        if left[0] != right[0] or (left[0] == "enum" and left[1] != right[1]):
            raise LemmaSyntaxError(f"{_show(node.left)} and {_show(node.right)} have different types "
                                   f"({_kind(left)}, {_kind(right)})")
        a, b = left[-1], right[-1]
        if node.op in ("=", "!="):
            return a == b if node.op == "=" else a != b
        if left[0] != "int":
            raise LemmaSyntaxError(f"{node.op} compares integers, not {_kind(left)}s")
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[node.op]

    def resolve(self, mine: tuple, other: tuple, node: Cmp) -> tuple:
        """A bare word or a quoted text, given the type of the other side."""
        if mine[0] not in ("word", "text"):
            return mine
        if other[0] == "enum":
            return ("enum", other[1], self.element(other[1], mine[1]))
        if other[0] == "str" and mine[0] == "text":
            return ("str", z3.StringVal(mine[1]))
        if other[0] == "str":
            raise LemmaSyntaxError(f"{mine[1]!r} is not a name here: write a string value in quotes")
        if mine[0] == "word":
            raise LemmaSyntaxError(f"unknown name {mine[1]!r}")
        raise LemmaSyntaxError(f"{node.op} between a quoted text and {_kind(other)}")

    # -- terms ---------------------------------------------------------------------
    def term(self, t, env: dict) -> tuple:
        if isinstance(t, Const):
            return ("bool", z3.BoolVal(t.value)) if isinstance(t.value, bool) else ("int", z3.IntVal(t.value))
        if isinstance(t, Quoted):
            return ("text", t.text)
        if isinstance(t, Name):
            if t.id in env:
                sort, e = env[t.id]
                return ("enum", sort, self.element(sort, e))
            sym = self.schema.symbols.get(t.id)
            if sym is None:
                return ("word", t.id)
            if sym.domain:
                raise LemmaSyntaxError(f"{t.id} takes {len(sym.domain)} argument(s): {t.id}[...]")
            return _typed(sym.type, sym.ref)
        sym = self.schema.symbols.get(t.symbol)
        if sym is None:
            raise LemmaSyntaxError(f"unknown state symbol {t.symbol!r}")
        if len(t.args) != len(sym.domain):
            raise LemmaSyntaxError(f"{t.symbol} takes {len(sym.domain)} argument(s), not {len(t.args)}")
        args = [self.element(sort, self.arg(a, sort, env)) for a, sort in zip(t.args, sym.domain)]
        return _typed(sym.type, sym.ref(*args))

    def arg(self, a, sort: str, env: dict) -> str:
        if isinstance(a, Name):
            if a.id in env:
                bound, e = env[a.id]
                if bound != sort:
                    raise LemmaSyntaxError(f"variable {a.id} is of sort {bound}, where {sort} is expected")
                return e
            return a.id

        def hole(m):
            var = m.group(1)
            if var not in env:
                raise LemmaSyntaxError(f"{{{var}}} in {a.text!r} is not a bound variable")
            return env[var][1]

        return _HOLE.sub(hole, a.text)

    def element(self, sort: str, name: str) -> z3.ExprRef:
        if name not in self.sorts[sort]:
            raise LemmaSyntaxError(f"{name!r} is not an element of {sort}")
        return self.schema.const(sort, name)


def _typed(typ, ref) -> tuple:
    if isinstance(typ, Bool):
        return ("bool", ref)
    if isinstance(typ, Int):
        return ("int", ref)
    if isinstance(typ, Str):
        return ("str", ref)
    if isinstance(typ, Enum):
        return ("enum", typ.sort, ref)
    raise LemmaSyntaxError(f"a symbol of type {typ!r} cannot be used in a lemma")


def _kind(k: tuple) -> str:
    return {"enum": f"an element of {k[1]}", "text": "a quoted text", "word": "a name"}.get(k[0], k[0])


_show = show_term
