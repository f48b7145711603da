"""Every path through a piece of the spec's code, run on symbolic values.

The code runs as ordinary Python. Where a symbolic condition must become a
`bool` (oracle.py), the exploration decides it: the first run takes one
side and queues the run that takes the other, which replays the recorded
decisions up to that point and flips the last (as CrossHair does). A side
that Z3 finds impossible, given the conditions decided since the last merge
point and the cells' types, is not taken.

Paths merge. At the start of a statement of the spec's code (frames.py),
after a decision, the run computes a key: for each frame of the spec's code
on the stack, its position, its live locals (symbolic values by their Z3
terms), the state of its `for` loops and, for a frame in mid-statement, the
decisions taken since that statement began. Two runs with the same key do
the same from there on, so the second stops and joins the first's node: the
paths form a graph whose size follows the code, not the product of its
branches. A run's events (what it yields, returns or raises) are recorded
at the node it last passed, with the conditions decided since; the guard of
an event is the condition of reaching its node and those.

`Exploration.merge = False` explores every path without merging (the
merging is a claim; tests/test_symbolic_derive.py checks it changes no
relation on the specs small enough to explore without it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from . import oracle
from .canon import Canon
from .frames import analyse

PATH_BUDGET = 200_000


class Merged(BaseException):
    """Raised in the spec's code when a run reaches a node already explored."""


class Stopped(BaseException):
    """A run abandoned after it merged (nothing it does counts)."""


@dataclass(eq=False)
class Node:
    key: Any
    keep: Any = None
    ins: list = field(default_factory=list)   # (from node, literals) of each way in


@dataclass(eq=False)
class Event:
    node: Node
    lits: tuple
    kind: str         # "yield", "return", "raise"
    value: Any
    where: str = ""


class _Rec:
    __slots__ = ("frame", "since", "call", "loops", "at_loop")

    def __init__(self, frame, since: int) -> None:
        self.frame, self.since, self.call = frame, since, since
        self.loops: dict[int, list] = {}   # loop head's offset -> [entries, ..., ...]
        self.at_loop: int | None = None


class Exploration:
    def __init__(self, files: set[str], background: list[z3.BoolRef], merge: bool = True,
                 budget: int | None = None, solver: z3.Solver | None = None) -> None:
        self.files = files
        self.merge = merge
        self.budget = budget or PATH_BUDGET
        if solver is None:     # (a summary's exploration shares its caller's: same background, asked by assumptions)
            solver = z3.Solver()
            solver.add(*background)
        self.solver = solver
        self.root = Node(None)
        self.nodes: dict = {}
        self.events: list[Event] = []
        self.runs = 0
        self.runs_inner = 0        # runs of the summaries' explorations (summary.py)
        self.summaries: dict = {}  # the spec's functions' calls, by their arguments (summary.py)
        self.background = background
        self.canon = Canon()
        self.memo: dict = {}       # decision-free computations, by their inputs (pyfuncs.t_comp)
        self.sides: dict = {}      # (lits' ids, condition's id) -> what _sides answered
        self.asked = 0             # symbolic conditions asked, known ones too (a memo's test of decision-free)
        self.atoms = None          # the layout's atoms: a summary joins plain atoms into one (summary.py)

    # -- running ------------------------------------------------------------------
    def explore(self, body: Callable[["Exploration"], None]) -> None:
        """Run `body` (which calls the spec's code and reports events with
        `event`) on every path."""
        work: list[list] = [[]]
        outer, outer_trace = oracle.current[0], sys.gettrace()   # a summary's exploration runs inside a run
        while work:
            self.runs += 1
            if self.runs > self.budget:
                raise oracle.OutsideSubset(f"more than {self.budget:,} paths (the code branches on too many "
                                           "symbolic conditions that never meet again)")
            self._start(work.pop(), work)
            oracle.current[0] = self
            sys.settrace(self._global)
            try:
                body(self)
            except (Merged, Stopped):
                pass
            except oracle.OutsideSubset:
                raise
            except Exception as exc:
                if not self.stopped:
                    self.event("raise", exc, where=_where(exc, self.files))
            finally:
                sys.settrace(outer_trace)
                oracle.current[0] = outer

    def _start(self, prefix: list, work: list) -> None:
        self.prefix, self.pos, self.work = prefix, 0, work
        self.log: list = []          # (term, outcome, iterating) of every decision of this run
        self.node = self.root
        self.lits: list = []
        self.lit_ids: dict[int, bool] = {}   # the lits' ids -> True, their negated atoms' ids -> False
        self.decided = False
        self.stopped = False
        self.recs: dict[int, _Rec] = {}

    @property
    def replaying(self) -> bool:
        return self.pos < len(self.prefix)

    def event(self, kind: str, value: Any, where: str = "") -> None:
        if not self.replaying and not self.stopped:
            self.events.append(Event(self.node, tuple(self.lits), kind, value, where))

    # -- deciding -------------------------------------------------------------------
    def decide(self, cond: z3.BoolRef, iterating: bool = False) -> bool:
        """The side of `cond` this run takes. Untraced: the trace function
        would be called for each of the many calls z3's Python API makes
        (a third of a derivation's time went to those calls)."""
        trace = sys.gettrace()
        sys.settrace(None)
        try:
            return self._decide(cond, iterating)
        finally:
            sys.settrace(trace)

    def _decide(self, cond: z3.BoolRef, iterating: bool) -> bool:
        if self.stopped:
            raise Stopped()
        if z3.is_true(cond):
            return True
        if z3.is_false(cond):
            return False
        self.asked += 1
        known = self._known(cond)     # decided since the node already: no decision (in a replay too)
        if known is not None:
            return known
        if self.replaying:
            term, out = self.prefix[self.pos]
            if not term.eq(cond):
                raise oracle.OutsideSubset("the code is not deterministic: a replayed run branched on another "
                                           f"condition ({cond} where the first run had {term})")
            self.pos += 1
        else:
            out = self._choose(cond)
        self.log.append((cond, out, iterating))
        lit = cond if out else z3.Not(cond)
        self.lits.append(lit)
        self._index(lit)
        self.decided = True
        return out

    def _known(self, cond: z3.BoolRef) -> bool | None:
        """True if `cond` is one of the lits, False if `Not(cond)` is (the
        first of the lits that is either decides), else None."""
        return self.lit_ids.get(z3.Z3_get_ast_id(cond.ctx.ref(), cond.as_ast()))

    def _index(self, lit: z3.BoolRef) -> None:
        ctx, a = lit.ctx.ref(), lit.as_ast()
        self.lit_ids.setdefault(z3.Z3_get_ast_id(ctx, a), True)
        if (z3.Z3_get_ast_kind(ctx, a) == z3.Z3_APP_AST
                and z3.Z3_get_decl_kind(ctx, z3.Z3_get_app_decl(ctx, a)) == z3.Z3_OP_NOT):
            self.lit_ids.setdefault(z3.Z3_get_ast_id(ctx, z3.Z3_get_app_arg(ctx, a, 0)), False)

    def _choose(self, cond: z3.BoolRef) -> bool:
        yes, no = self._sides(cond)
        if yes and no:
            self.work.append([(t, o) for t, o, _ in self.log] + [(cond, False)])
        return yes or not no

    def possible(self, cond: z3.BoolRef) -> bool:
        """Whether `cond` can hold with the lits (no decision: nothing is
        recorded or queued; but the answer depends on the path, so a
        comprehension that asks is not kept as decision-free, comp.py)."""
        if z3.is_false(cond):
            return False
        if z3.is_true(cond):
            return True
        self.asked += 1
        known = self._known(cond)
        if known is not None:
            return known
        key = (tuple(lit.get_id() for lit in self.lits), cond.get_id(), "possible")
        hit = self.sides.get(key)
        if hit is None:
            hit = self.sides[key] = (self.solver.check(*self.lits, cond) != z3.unsat, tuple(self.lits), cond)
        return hit[0]

    def _sides(self, cond: z3.BoolRef) -> tuple[bool, bool]:
        """Whether `cond` and its negation are each possible with the lits;
        asked once per lits and condition (the key's terms are kept alive
        with the answer, so their ids are not reused)."""
        key = (tuple(lit.get_id() for lit in self.lits), cond.get_id())
        hit = self.sides.get(key)
        if hit is None:
            yes = self.solver.check(*self.lits, cond) != z3.unsat
            no = self.solver.check(*self.lits, z3.Not(cond)) != z3.unsat
            hit = self.sides[key] = (yes, no, tuple(self.lits), cond)
        return hit[0], hit[1]

    # -- tracing --------------------------------------------------------------------
    def _global(self, frame, event, arg):
        if frame.f_code.co_filename not in self.files:
            return None
        rec = self.recs.get(id(frame))
        if rec is None:
            rec = self.recs[id(frame)] = _Rec(frame, len(self.log))
        parent = frame.f_back
        while parent is not None:
            prec = self.recs.get(id(parent))
            if prec is not None and prec.frame is parent:
                prec.call = len(self.log)
                break
            parent = parent.f_back
        return self._local

    def _local(self, frame, event, arg):
        if event == "line" and not self.stopped:
            self._line(frame)
        return self._local

    def _line(self, frame) -> None:
        rec = self.recs.get(id(frame))
        if rec is None or rec.frame is not frame:
            return
        code, o = frame.f_code, frame.f_lasti
        info = analyse(code)
        o = info.alias.get(o, o)
        if rec.at_loop is not None and rec.at_loop in rec.loops:
            st = rec.loops[rec.at_loop]
            st[1] += tuple((t, out) for t, out, it in self.log[rec.since:] if not it)
        rec.at_loop = None
        if o in info.loops:
            st = rec.loops.setdefault(o, [0, (), None])
            st[0] += 1
            rec.at_loop = o
        elif o in info.entries:
            rec.loops[info.entries[o]] = [1, (), None]
            rec.at_loop = info.entries[o]
        for h in [h for h in rec.loops if not ((info.loops[h].entry or h) <= o < info.loops[h].end)]:
            del rec.loops[h]
        rec.since = rec.call = len(self.log)
        if self.merge and self.decided and info.mergeable and (o in info.starts or o in info.loops):
            self._merge_point(frame)

    def register_iter(self, it) -> bool:
        """An SSet iterator made by a `for` statement of the spec's code: its
        position stands for the loop's state (SetIter)."""
        frame = sys._getframe(3)
        rec = self.recs.get(id(frame))
        if rec is None or rec.frame is not frame or rec.at_loop is None:
            return False
        code = frame.f_code.co_code
        if code[frame.f_lasti] != _GET_ITER:
            return False
        rec.loops[rec.at_loop][2] = it
        return True

    def _merge_point(self, frame) -> None:
        key, keep = self._key(frame)
        if key is None:
            return
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = Node(key, keep)
            node.ins.append((self.node, tuple(self.lits)))
        elif not self.replaying:
            node.ins.append((self.node, tuple(self.lits)))
            self.stopped = True
            raise Merged()
        self.node, self.lits, self.lit_ids, self.decided = node, [], {}, False

    def _key(self, frame):
        chain = []
        f = frame
        while f is not None:
            rec = self.recs.get(id(f))
            if rec is not None and rec.frame is f:
                chain.append((f, rec))
            f = f.f_back
        keep: list = []
        parts = []
        canon = self.canon
        for n, (f, rec) in enumerate(reversed(chain)):
            inner = n == len(chain) - 1
            info = analyse(f.f_code)
            o = info.alias.get(f.f_lasti, f.f_lasti)
            live = (info.live_in if inner else info.live_out).get(o)
            if live is None:
                return None, None
            values = f.f_locals
            try:
                local = tuple((name, canon(values[name], keep)) for name in sorted(live | info.always)
                              if name in values)
            except canon.Unmergeable:
                return None, None
            loops = []
            for h in info.active(o):
                st = rec.loops.get(h)
                if st is None:
                    return None, None
                it = st[2]
                loops.append((h, ("it", it.pos) if it is not None else st[0], _ids(st[1], keep)))
            pending = () if inner else _ids([(t, out) for t, out, _ in self.log[rec.since:rec.call]], keep)
            parts.append((f.f_code, o, local, tuple(loops), pending))
        return tuple(parts), keep


_GET_ITER = __import__("dis").opmap["GET_ITER"]


def _ids(decisions, keep: list) -> tuple:
    keep.extend(t for t, _ in decisions)
    return tuple((t.get_id(), out) for t, out in decisions)


def _where(exc: BaseException, files: set[str]) -> str:
    """The innermost line of the spec's code in an exception's traceback
    (read from the frames: traceback.extract_tb also reads each line's
    columns, which took a third of a derivation where many paths raise)."""
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in files:
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where
