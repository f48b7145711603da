"""The spec's own functions, recompiled so that symbolic values stay
symbolic where Python would force a `bool` (pyfuncs.py says what each call
does).

Python coerces the result of `in`, of a comparison between tuples, of
`not` and of an `and`/`or` in an `if` to a bool, which would branch on each
element of `all(x in S for x in T)`. The twin is the same source, parsed
and rewritten: `a in b` becomes `_txn_in(a, b)`, `a is b`, `a == b` and
`not a` likewise, an `and`/`or` whose truth alone matters (in a test)
becomes `_txn_and(a, lambda: b)` (b still evaluated only when needed), and
a comprehension with one `for` becomes `_txn_comp(kind, it, cond, elt)`.
On Python values each helper does what the operator does.

`rewritten(modules)` swaps each function's code object for its twin's
(same function objects, so every reference to them sees the twin) and puts
the helpers and the symbolic builtins in the modules' globals, for the
duration of a derivation; the spec's code on disk and in the explicit
engines is never changed.
"""

from __future__ import annotations

import ast
import functools
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

from .pyfuncs import BUILTINS, HELPERS

_CALLS = {ast.In: "_txn_in", ast.NotIn: "_txn_not_in", ast.Is: "_txn_is", ast.IsNot: "_txn_is_not",
          ast.Eq: "_txn_eq", ast.NotEq: "_txn_ne"}
_KINDS = {ast.GeneratorExp: "gen", ast.ListComp: "list", ast.SetComp: "set"}
_DIRECT = {"super", "locals", "vars", "globals", "dir", "eval", "exec"}   # they read the caller's frame


def _call(name: str, args: list, like: ast.AST) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), like)


def _lambda(params: list[str], body: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    return ast.copy_location(ast.Lambda(args, body), body)


class Rewrite(ast.NodeTransformer):
    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        fn = _CALLS.get(type(node.ops[0])) if len(node.ops) == 1 else None
        return _call(fn, [node.left, node.comparators[0]], node) if fn else node

    def visit_UnaryOp(self, node: ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return _call("_txn_not", [self.truth(node.operand)], node)
        return self.generic_visit(node)

    def truth(self, expr: ast.expr) -> ast.expr:
        """`expr` where only its truth matters."""
        if isinstance(expr, ast.BoolOp):
            values = [self.truth(v) for v in expr.values]
            fn = "_txn_and" if isinstance(expr.op, ast.And) else "_txn_or"
            return _call(fn, [values[0]] + [_lambda([], v) for v in values[1:]], expr)
        return self.visit(expr)

    def _test(self, node):
        node.test = self.truth(node.test)
        for name in ("body", "orelse", "msg"):
            if hasattr(node, name):
                value = getattr(node, name)
                if isinstance(value, list):
                    setattr(node, name, [self.visit(x) for x in value])
                elif value is not None:
                    setattr(node, name, self.visit(value))
        return node

    visit_If = visit_While = visit_IfExp = visit_Assert = _test

    def _comp(self, node):
        gens = node.generators
        target = gens[0].target if len(gens) == 1 else None
        names = _names(target) if target is not None and not gens[0].is_async else None
        if names is None:
            return self.generic_visit(node)
        g = gens[0]
        cond = None
        if g.ifs:
            test = g.ifs[0] if len(g.ifs) == 1 else ast.copy_location(ast.BoolOp(ast.And(), g.ifs), g.ifs[0])
            cond = _lambda(names, self.truth(test))
        elt = _lambda(names, self.visit(node.elt))
        unpack = isinstance(target, ast.Tuple)
        return _call("_txn_comp", [ast.Constant(_KINDS[type(node)]), self.visit(g.iter), ast.Constant(unpack),
                                   cond or ast.Constant(None), elt], node)

    visit_GeneratorExp = visit_ListComp = visit_SetComp = _comp

    def visit_Set(self, node: ast.Set):
        """A set display with a symbolic element builds a symbolic set (comp.t_set)."""
        self.generic_visit(node)
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return node
        return _call("_txn_set", node.elts, node)

    def visit_Call(self, node: ast.Call):
        """A call goes through `_txn_call`, which summarizes a spec function
        called on symbolic data (summary.py) and calls anything else."""
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and (f.id.startswith("_txn_") or f.id in _DIRECT):
            return node
        return ast.copy_location(ast.Call(ast.Name("_txn_call", ast.Load()), [f] + node.args, node.keywords), node)


def _names(target) -> list[str] | None:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        names = [e.id for e in target.elts if isinstance(e, ast.Name)]   # all of them
        return names if len(set(names)) == len(names) else None
    return None


def twin_codes(path: Path) -> dict:
    """The rewritten code objects of a source file, by (name, first line);
    a key two code objects share is left out (which is which is unknown)."""
    tree = Rewrite().visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    ast.fix_missing_locations(tree)
    out: dict = {}
    clash = set()

    def walk(code):
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                key = (c.co_name, c.co_firstlineno)
                if key in out:
                    clash.add(key)
                out[key] = c
                walk(c)

    walk(compile(tree, str(path), "exec"))
    return {k: v for k, v in out.items() if k not in clash}


def _functions(value, files: set[str], seen: set, out: list, depth: int = 0) -> None:
    if id(value) in seen or depth > 4:
        return
    seen.add(id(value))
    if isinstance(value, types.FunctionType):
        if value.__code__.co_filename in files:
            out.append(value)
        return
    if isinstance(value, (staticmethod, classmethod)):
        _functions(value.__func__, files, seen, out, depth)
    elif isinstance(value, property):
        for f in (value.fget, value.fset):
            if f is not None:
                _functions(f, files, seen, out, depth)
    elif isinstance(value, functools.partial):
        _functions(value.func, files, seen, out, depth)
    elif isinstance(value, type):
        if getattr(value, "__module__", None) is not None:
            for v in list(vars(value).values()):
                _functions(v, files, seen, out, depth + 1)
    elif isinstance(value, dict):
        for v in list(value.values()):
            _functions(v, files, seen, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _functions(v, files, seen, out, depth + 1)


_TWINS: dict[str, tuple[bytes, dict]] = {}   # file -> (its text, its twins)


def _file(m: types.ModuleType) -> str:
    assert m.__file__ is not None, f"{m.__name__} has no source file to derive from"
    return m.__file__


@contextmanager
def rewritten(modules: list[types.ModuleType], extra: Sequence = ()):
    """While it holds, the functions of `modules` (and any in `extra`, the
    spec object's attributes) run their twins' code."""
    files = {_file(m) for m in modules}
    found: list = []
    seen: set = set()
    for m in modules:
        for v in list(vars(m).values()):
            _functions(v, files, seen, found)
    for v in extra:
        _functions(v, files, seen, found)
    swapped, saved = [], []
    try:
        for m in modules:
            text = Path(_file(m)).read_bytes()
            twins = _TWINS.get(_file(m))
            if twins is None or twins[0] != text:
                twins = _TWINS[_file(m)] = (text, twin_codes(Path(_file(m))))
            g = vars(m)
            for name, fn in {**HELPERS, **BUILTINS}.items():
                saved.append((g, name, g.get(name, _MISSING)))
                g[name] = fn
        for fn in found:
            codes = _TWINS[fn.__code__.co_filename][1]
            twin = codes.get((fn.__code__.co_name, fn.__code__.co_firstlineno))
            if twin is not None and twin.co_freevars == fn.__code__.co_freevars:
                swapped.append((fn, fn.__code__))
                fn.__code__ = twin
        yield {c for _, c in swapped} | {fn.__code__ for fn, _ in swapped}
    finally:
        for fn, code in swapped:
            fn.__code__ = code
        for g, name, old in reversed(saved):
            if old is _MISSING:
                g.pop(name, None)
            else:
                g[name] = old


_MISSING = object()
