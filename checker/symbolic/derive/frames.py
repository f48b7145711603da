"""What the merge key needs to know about a code object (explore.py):
where its statements start, its `for` loops, and which locals are live.

A path of the spec's code can be merged with another at the start of a
statement when the two are in the same state there. At a statement start
the frame's value stack holds nothing but the iterators of the `for` loops
it is in (outside `with` blocks and exception handlers, which this module
excludes), so the state is the position, the live locals and those loops.
The positions come from the source's syntax tree (a statement starts at
the first instruction that belongs to it), the loops and liveness from the
bytecode (a backward dataflow over its jumps and exception table).
"""

from __future__ import annotations

import ast
import dis
import types
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

UNMERGED = {"<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>", "<lambda>"}
_ENDS = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
         "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP"}
_USES = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF"}
DEFS = {"STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF"}


@dataclass
class Loop:
    head: int            # the FOR_ITER's offset
    end: int             # where it jumps when exhausted
    entry: int | None    # the offset where the `for` statement starts


@dataclass
class CodeInfo:
    starts: set[int] = field(default_factory=set)       # statement starts where merging is sound
    loops: dict[int, Loop] = field(default_factory=dict)  # by head
    entries: dict[int, int] = field(default_factory=dict)  # statement start -> loop head
    alias: dict[int, int] = field(default_factory=dict)    # an EXTENDED_ARG's offset -> the head it prefixes
    live_in: dict[int, frozenset] = field(default_factory=dict)
    live_out: dict[int, frozenset] = field(default_factory=dict)
    always: frozenset = frozenset()                     # cells and free variables
    mergeable: bool = True

    def active(self, offset: int) -> list[int]:
        """The heads of the loops whose iterator is on the stack at `offset`."""
        return [h for h, lp in self.loops.items() if h <= offset < lp.end]


def _statements(path: str) -> list[ast.stmt]:
    text = Path(path).read_text(encoding="utf-8")
    return _parsed(path, text)


@lru_cache(maxsize=64)
def _parsed(path: str, text: str) -> list[ast.stmt]:
    tree = ast.parse(text, path)
    out = []
    unsafe: set[int | tuple[str, int]] = set()   # nodes by id; ("first", id): a branch's first statement
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith, ast.Try, ast.TryStar)):
            inner = node.body if isinstance(node, (ast.With, ast.AsyncWith)) else (
                [s for h in node.handlers for s in h.body] + list(node.finalbody))
            for s in inner:
                for sub in ast.walk(s):
                    unsafe.add(id(sub))
        if isinstance(node, ast.If):
            # the first statement of a branch is no merge point: paths reach it only through the
            # test just decided, whose condition the pruning of the branch's own decisions needs
            for branch in (node.body, node.orelse):
                if branch:
                    unsafe.add(("first", id(branch[0])))
        if isinstance(node, ast.stmt):
            out.append(node)
    for s in out:
        s._txn_unsafe = id(s) in unsafe    # type: ignore[attr-defined]
        s._txn_first = ("first", id(s)) in unsafe    # type: ignore[attr-defined]
    return out


def _innermost(stmts, line: int, col: int):
    best = None
    for s in stmts:
        if (s.lineno, s.col_offset) <= (line, col) <= (s.end_lineno, s.end_col_offset):
            if best is None or (s.lineno, s.col_offset) >= (best.lineno, best.col_offset):
                best = s
    return best


@lru_cache(maxsize=None)
def analyse(code: types.CodeType) -> CodeInfo:
    instrs = list(dis.get_instructions(code))
    # A cell is live where it is read, or captured by a closure made there (the rewritten code's
    # lambdas are called within their statement); a closure kept in a variable may read its cells
    # at any later time, so a code object that keeps one keeps all its cells live.
    kept = any(a.opname == "MAKE_FUNCTION" and b.opname.startswith("STORE")
               for a, b in zip(instrs, instrs[1:]))
    info = CodeInfo(always=frozenset(code.co_freevars) | (frozenset(code.co_cellvars) if kept else frozenset()))
    if code.co_name in UNMERGED:
        info.mergeable = False
    else:
        _starts(code, instrs, info)
    _liveness(code, instrs, info)
    return info


def _starts(code, instrs, info: CodeInfo) -> None:
    try:
        stmts = [s for s in _statements(code.co_filename)
                 if code.co_firstlineno <= s.lineno]
    except (OSError, SyntaxError, ValueError):
        info.mergeable = False
        return
    owner = {}
    for ins in instrs:
        pos = ins.positions
        if pos is None or pos.lineno is None or pos.col_offset is None:
            continue
        owner[ins.offset] = _innermost(stmts, pos.lineno, pos.col_offset)
    prev = None
    for k, ins in enumerate(instrs):
        s = owner.get(ins.offset)
        if s is not None and s is not prev and ins.positions.lineno == s.lineno and not s._txn_unsafe:
            if not s._txn_first:
                info.starts.add(ins.offset)
            if isinstance(s, ast.For):
                info.entries[ins.offset] = -1
        if ins.offset in owner:
            prev = s
        if ins.opname == "FOR_ITER":
            s = owner.get(ins.offset)
            entry = next((o for o, h in info.entries.items() if h == -1 and owner.get(o) is s), None)
            info.loops[ins.offset] = Loop(ins.offset, ins.argval, entry)
            if entry is not None:
                info.entries[entry] = ins.offset
            j = k - 1
            while j >= 0 and instrs[j].opname == "EXTENDED_ARG":   # a jump back lands on these
                info.alias[instrs[j].offset] = ins.offset
                j -= 1
    info.entries = {o: h for o, h in info.entries.items() if h != -1}


def _liveness(code, instrs, info: CodeInfo) -> None:
    offs = [i.offset for i in instrs]
    succ: dict[int, list[int]] = {}
    for k, ins in enumerate(instrs):
        out = []
        if ins.opname not in _ENDS and k + 1 < len(instrs):
            out.append(instrs[k + 1].offset)
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            out.append(ins.argval)
        succ[ins.offset] = out
    try:
        table = dis._parse_exception_table(code)   # type: ignore[attr-defined]  # noqa: SLF001 (no public reader in 3.11)
    except AttributeError:
        table = []
    for e in table:
        for o in offs:
            if e.start <= o < e.end:
                succ[o].append(e.target)
    use = {i.offset: frozenset([i.argval]) if i.opname in _USES else frozenset() for i in instrs}
    kill = {i.offset: frozenset([i.argval]) if i.opname in DEFS else frozenset() for i in instrs}
    live_in: dict[int, frozenset] = {o: frozenset() for o in offs}
    live_out: dict[int, frozenset] = {o: frozenset() for o in offs}
    changed = True
    while changed:
        changed = False
        for o in reversed(offs):
            after = frozenset().union(*[live_in.get(s, frozenset()) for s in succ[o]])
            inn = use[o] | (after - kill[o])
            if inn != live_in[o] or after != live_out[o]:
                live_in[o], live_out[o] = inn, after
                changed = True
    info.live_in, info.live_out = live_in, live_out
