"""`next` split at its top-level statements, each part explored on its own.

An exploration replays each of its runs from the start of the code it runs
(explore.py), so a run that branches late in `next` first re-runs every
block before it: the cost grows with the square of `next`'s length. PIP-473's
`next` is a dozen independent blocks (one per kind of step) after a few
assignments; explored block by block, a run replays only its own block.

A top-level statement of `next` that contains a `yield` is a part; the others
(assignments such as `tn = self.txn_names`) are setup. Part i's function is
`next` with every setup statement before it and part i alone (the trailing
setup statements go with the last part), compiled from the same source, so
its lines are the spec's. The split is exact when no part leaves a value that
a later statement reads: a local a part assigns is live at the start of no
later top-level statement (the bytecode's liveness, frames.py), and no part
returns (which would end `next` before the later parts). Then every path of
`next` is a path of each part's function in turn, and the union of the parts'
yields is `next`'s. A part that raises ends `next` where the split goes on
with the later parts: the split relation then has more steps from such a
state, never fewer, and the raise itself is an action whose `Types` clause
the proof must refute (relation.py).

A part that is a `for` loop over the iterations of which nothing is carried
(its body assigns no local live at the loop's head; no `break`, no `else`)
is explored one iteration at a time: its function takes `_txn_only=i` and
`continue`s at once through every other iteration, so a run of the fourth
send's steps no longer replays the first three's (PIP-473's loop over the
plan's sends). The deriver runs i = 0, 1, ... until no path starts
iteration i (relation.py).

`parts(fn)` is None where the split does not apply (one part, a closure, a
`return`, a value carried from one part to another, no source): `next` is
then explored whole. `DerivedRelation.split_next = False` never splits (the
audit in tests/test_symbolic_derive.py: the same relation either way).
"""

from __future__ import annotations

import ast
import copy
import dis
import types
from pathlib import Path

from .frames import DEFS, analyse
from .rewrite import Rewrite


def parts(fn: types.FunctionType) -> list[types.FunctionType] | None:
    code = fn.__code__
    if code.co_freevars or not code.co_flags & 0x20:     # a closure; not a generator
        return None
    node = _def(code)
    if node is None:
        return None
    body = node.body
    is_part = [_yields(s) for s in body]
    if sum(is_part) < 2 or any(_returns(s) for s in body):
        return None
    if _carried(code, body, is_part):
        return None
    last = max(n for n, p in enumerate(is_part) if p)
    out = []
    for n, s in enumerate(body):
        if not is_part[n]:
            continue
        setup = [x for m, x in enumerate(body) if not is_part[m] and (m < n or n == last)]
        each = _iterable(code, s)
        part = _compile(fn, node, sorted(setup + [s], key=body.index), s if isinstance(s, ast.For) and each else None)
        part.__qualname__ = f"{fn.__qualname__}:{s.lineno}"    # the part's first line, for progress and profiles
        part.each_iteration = each    # type: ignore[attr-defined]
        out.append(part)
    return out


def _iterable(code: types.CodeType, s: ast.stmt) -> bool:
    """Can a top-level `for` part be explored one iteration at a time? When
    it has no `else`, no `break` of its own, and its body assigns no local
    live at the loop's head (nothing carried from one iteration to the next)."""
    if not isinstance(s, ast.For) or s.orelse or any(isinstance(x, ast.Break) for x in _own_loop(s)):
        return False
    head = next((i.offset for i in dis.get_instructions(code) if i.opname == "FOR_ITER" and _within(i, s)), None)
    if head is None:
        return False
    stores = set().union(*[_stores(code, x) for x in s.body])
    return not stores & analyse(code).live_in.get(head, frozenset())


def _own_loop(s: ast.For):
    """The nodes of a loop's body outside nested loops, functions and classes."""
    todo: list[ast.AST] = list(s.body)
    while todo:
        x = todo.pop()
        yield x
        todo += [c for c in ast.iter_child_nodes(x)
                 if not isinstance(c, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
                                       ast.Lambda, ast.ClassDef))]


def _carried(code: types.CodeType, body: list[ast.stmt], is_part: list[bool]) -> bool:
    """Does a part assign a local that is live at the start of a later
    top-level statement (or is a statement's start not found)?"""
    info = analyse(code)
    starts = _starts(code, body)
    if starts is None:
        return True
    assigned: set[str] = set()
    for n, s in enumerate(body):
        if assigned & info.live_in.get(starts[n], frozenset()):
            return True
        if is_part[n]:
            assigned |= _stores(code, s)
    return False


def _def(code: types.CodeType) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(Path(code.co_filename).read_text(encoding="utf-8"), code.co_filename)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == code.co_name and (
                min([node.lineno] + [d.lineno for d in node.decorator_list]) == code.co_firstlineno):
            return node
    return None


def _own(node: ast.AST):
    """The nodes of `node` outside nested functions, lambdas and classes."""
    todo = [node]
    while todo:
        x = todo.pop()
        yield x
        todo += [c for c in ast.iter_child_nodes(x)
                 if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))]


def _yields(s: ast.stmt) -> bool:
    return any(isinstance(x, (ast.Yield, ast.YieldFrom)) for x in _own(s))


def _returns(s: ast.stmt) -> bool:
    return any(isinstance(x, ast.Return) for x in _own(s))


def _stores(code: types.CodeType, s: ast.stmt) -> set[str]:
    """The locals statement `s` may assign: the bytecode's stores and deletes
    within it, and those of the code objects it makes that assign a variable
    of `code` (a walrus in a comprehension)."""
    out: set[str] = set()
    for i in dis.get_instructions(code):
        if not _within(i, s):
            continue
        if i.opname in DEFS:
            out.add(i.argval)
        elif i.opname == "LOAD_CONST" and isinstance(i.argval, types.CodeType):
            out |= _outer_stores(i.argval)
    return out


def _outer_stores(code: types.CodeType) -> set[str]:
    out = {i.argval for i in dis.get_instructions(code) if i.opname in DEFS and i.argval in code.co_freevars}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _outer_stores(c) & set(code.co_freevars)
    return out


def _within(i: dis.Instruction, s: ast.stmt) -> bool:
    p = i.positions
    return (p is not None and p.lineno is not None
            and (s.lineno, s.col_offset) <= (p.lineno, p.col_offset or 0)
            and (p.end_lineno or 0, p.end_col_offset or 0) <= (s.end_lineno or 0, s.end_col_offset or 0))


def _starts(code: types.CodeType, body: list[ast.stmt]) -> list[int] | None:
    """The offset of each top-level statement's first instruction."""
    out = []
    for s in body:
        offs = [i.offset for i in dis.get_instructions(code) if _within(i, s)]
        if not offs:
            return None
        out.append(min(offs))
    return out


ONLY, MARK = "_txn_only", "_txn_mark"


def _compile(fn: types.FunctionType, node: ast.FunctionDef, body: list[ast.stmt],
             loop: ast.For | None = None) -> types.FunctionType:
    """`fn` with `body` as its body, rewritten as rewrite.py rewrites the
    spec's code. With `loop` (one of the statements), the function takes two
    keywords more: `_txn_only`, the one iteration of the loop it runs (the
    others `continue` at once), and `_txn_mark`, called when it starts it."""
    args = copy.deepcopy(node.args)
    body = [y for x in body for y in (_one_iteration(x) if x is loop else [copy.deepcopy(x)])]
    if loop is not None:
        args.kwonlyargs += [ast.arg(ONLY), ast.arg(MARK)]
        args.kw_defaults += [ast.Constant(0), ast.Constant(None)]
    part = ast.FunctionDef(node.name, args, body, [], None, type_comment=None)
    part = ast.copy_location(part, node)
    tree = ast.Module([part], type_ignores=[])
    tree = Rewrite().visit(tree)
    ast.fix_missing_locations(tree)
    module = compile(tree, fn.__code__.co_filename, "exec")
    code = next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    out = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, None)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out



def _one_iteration(loop: ast.For) -> list[ast.stmt]:
    """    _txn_k = -1
           for TARGET in ITER:
               _txn_k += 1
               if _txn_k != _txn_only:
                   continue
               _txn_mark()
               BODY
    (the added statements at the target's place: no statement of the
    spec's starts there, so frames.py sees no new merge point)."""
    at = loop.target
    k = lambda ctx: ast.Name("_txn_k", ctx)
    added: list[ast.stmt] = [
        ast.AugAssign(k(ast.Store()), ast.Add(), ast.Constant(1)),
        ast.If(ast.Compare(k(ast.Load()), [ast.NotEq()], [ast.Name(ONLY, ast.Load())]), [ast.Continue()], []),
        ast.Expr(ast.Call(ast.Name(MARK, ast.Load()), [], [])),
    ]
    out = copy.deepcopy(loop)
    out.body = [_at(x, at) for x in added] + out.body
    return [_at(ast.Assign([k(ast.Store())], ast.Constant(-1)), at), out]


def _at(node: ast.stmt, where: ast.AST) -> ast.stmt:
    for x in ast.walk(node):
        if "lineno" in x._attributes:
            ast.copy_location(x, where)
    return node
