"""Temporal properties and fairness as written in model files.

    fairness = ["WF(*)", "WF(Sweep)", "SF(Deliver(txn=t1))", "WF(RMRcvCommitMsg(rm=*))"]

    [temporal]
    Decided   = "eventually AllDecided"
    Applied   = "Committed_t1 leads_to (MaterializedByLive_t1 or not Started_t1)"
    Recurring = "always eventually Idle"

A property is one of
    eventually F            (TLA+ <>F; also written `<> F`)
    F leads_to G            (TLA+ F ~> G, that is [](F => <>G); also `F ~> G`)
    always eventually F     (TLA+ []<>F, the same as TRUE ~> F; also `[]<> F`)
where F and G are state formulas: names of the spec's predicates, invariants
or witnesses, TRUE, FALSE, combined with `not`, `and`, `or` and parentheses.

A fairness condition is `WF(A)` or `SF(A)` (weak or strong fairness of A):
    A = *                 every action: WF(*) is TLA+'s WF_vars(Next)
    A = Name              the action family Name, all parameters together
    A = Name(p=v, ...)    the instances whose parameter p has value v
    A = Name(p=*)         one separate condition per value of p, like
                          TLA+'s \\A p: WF_vars(Name(p))

Parsing here only checks the text; names are resolved against the spec
when the model is checked (`checker.liveness.resolve`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import CheckerError

EVENTUALLY, LEADS_TO = "eventually", "leads_to"


class TemporalSyntaxError(CheckerError, ValueError):
    """A temporal property or fairness condition that does not parse."""


# -- state formulas ------------------------------------------------------------------
# A formula is a nested tuple: ("name", str) | ("const", bool) | ("not", f) |
# ("and", f, g) | ("or", f, g).

TRUE = ("const", True)
MAX_DEPTH = 100  # how deep a formula may nest (parentheses, not, and, or)

_TOKEN = re.compile(r"\s*(<>|~>|\[\]|\(|\)|[A-Za-z_][A-Za-z0-9_.]*)")
_KEYWORDS = {"not", "and", "or", "eventually", "leads_to", "always", "TRUE", "FALSE"}


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TemporalSyntaxError(f"unexpected {text[pos:].strip()[:20]!r} in {text!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.opened = 0  # `not`s and parentheses open

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            found = "the end" if tok is None else repr(tok)
            raise TemporalSyntaxError(f"expected {want or 'a formula'}, found {found} in {self.text!r}")
        self.i += 1
        return tok

    # Each returns a formula and its depth, so that one nested too deeply for
    # the recursive passes over it (here, `names`, `show`, the checker) is refused.
    def formula(self):
        f, d = self.conj()
        while self.peek() == "or":
            self.take()
            g, e = self.conj()
            f, d = ("or", f, g), self.deeper(max(d, e))
        return f, d

    def conj(self):
        f, d = self.unary()
        while self.peek() == "and":
            self.take()
            g, e = self.unary()
            f, d = ("and", f, g), self.deeper(max(d, e))
        return f, d

    def unary(self):
        tok = self.take()
        if tok in ("not", "("):  # the parser recurses here: as deep as the text nests
            self.opened = self.deeper(self.opened)
            if tok == "not":
                f, d = self.unary()
                f, d = ("not", f), self.deeper(d)
            else:
                f, d = self.formula()
                self.take(")")
            self.opened -= 1
            return f, d
        if tok in ("TRUE", "FALSE"):
            return ("const", tok == "TRUE"), 1
        if tok in _KEYWORDS or not (tok[0].isalpha() or tok[0] == "_"):
            raise TemporalSyntaxError(f"expected a predicate name, found {tok!r} in {self.text!r}")
        return ("name", tok), 1

    @staticmethod
    def deeper(depth: int) -> int:
        if depth >= MAX_DEPTH:
            raise TemporalSyntaxError(f"formula nests more than {MAX_DEPTH} deep")
        return depth + 1

    def done(self) -> None:
        if self.peek() is not None:
            raise TemporalSyntaxError(f"unexpected {self.peek()!r} in {self.text!r}")


def names(f) -> list[str]:
    """The predicate names a formula uses, in order of appearance."""
    if f[0] == "name":
        return [f[1]]
    if f[0] == "const":
        return []
    return [n for g in f[1:] for n in names(g)]


def show(f) -> str:
    kind = f[0]
    if kind == "name":
        return f[1]
    if kind == "const":
        return "TRUE" if f[1] else "FALSE"
    if kind == "not":
        return f"not {show(f[1])}" if f[1][0] in ("name", "const") else f"not ({show(f[1])})"
    return "(" + f" {kind} ".join(show(g) for g in f[1:]) + ")"


@dataclass(frozen=True)
class TemporalProperty:
    """`kind` eventually: <>goal from the initial states. `kind` leads_to:
    [](trigger => <>goal); `always eventually G` is `TRUE leads_to G`."""

    name: str
    kind: str
    trigger: tuple
    goal: tuple
    text: str


def parse_property(name: str, text: str) -> TemporalProperty:
    if name == "fairness" and isinstance(text, list):
        raise TemporalSyntaxError("'fairness' sits inside [temporal]: move it above the [temporal] table")
    if not isinstance(text, str) or not text.strip():
        raise TemporalSyntaxError(f"temporal property {name!r} must be a non-empty string")
    p = _Parser(text)
    first = p.peek()
    if first in ("eventually", "<>"):
        p.take()
        goal, _ = p.formula()
        p.done()
        return TemporalProperty(name, EVENTUALLY, TRUE, goal, text)
    if first in ("always", "[]"):
        p.take()
        if p.peek() not in ("eventually", "<>"):
            raise TemporalSyntaxError(
                f"temporal property {name!r}: only 'always eventually F' is supported after 'always' "
                "(state invariants go in 'properties')")
        p.take()
        goal, _ = p.formula()
        p.done()
        return TemporalProperty(name, LEADS_TO, TRUE, goal, text)
    trigger, _ = p.formula()
    if p.peek() not in ("leads_to", "~>"):
        raise TemporalSyntaxError(
            f"temporal property {name!r} must read 'eventually F', 'F leads_to G' or 'always eventually F'")
    p.take()
    goal, _ = p.formula()
    p.done()
    return TemporalProperty(name, LEADS_TO, trigger, goal, text)


def parse_temporal(table) -> dict[str, TemporalProperty]:
    """The [temporal] table of a model file: property name -> formula text."""
    if not isinstance(table, dict):
        raise TemporalSyntaxError("[temporal] must be a table of name = \"formula\"")
    return {name: parse_property(name, text) for name, text in table.items()}


# -- fairness ---------------------------------------------------------------------

_FAIR = re.compile(r"^\s*(WF|SF)\s*\(\s*(\*|[A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*\)\s*$")
_PARAM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^,=()\s]+)\s*$")


@dataclass(frozen=True)
class Fairness:
    """WF or SF of an action (name "*" for every action). `params` fixes
    some parameters to values (compared as text); a value of None means
    "each value separately"."""

    kind: str
    action: str
    params: tuple[tuple[str, str | None], ...]
    text: str


def parse_fairness_item(text) -> Fairness:
    if not isinstance(text, str):
        raise TemporalSyntaxError("'fairness' entries must be strings like \"WF(Sweep)\"")
    m = _FAIR.match(text)
    if m is None:
        raise TemporalSyntaxError(
            f"fairness {text!r} must read WF(Action), SF(Action), WF(Action(p=v, ...)) or WF(*)")
    kind, action, inner = m.groups()
    params: list[tuple[str, str | None]] = []
    if inner is not None:
        if action == "*":
            raise TemporalSyntaxError(f"fairness {text!r}: '*' takes no parameters")
        for part in inner.split(","):
            pm = _PARAM.match(part)
            if pm is None:
                raise TemporalSyntaxError(f"fairness {text!r}: parameter {part.strip()!r} must read p=value or p=*")
            p, v = pm.groups()
            if any(p == q for q, _ in params):
                raise TemporalSyntaxError(f"fairness {text!r}: parameter {p!r} given twice")
            params.append((p, None if v == "*" else v))
    return Fairness(kind, action, tuple(params), text.strip())


def parse_fairness(items) -> list[Fairness]:
    if not isinstance(items, list):
        raise TemporalSyntaxError("'fairness' must be a list like [\"WF(*)\", \"SF(Deliver)\"]")
    return [parse_fairness_item(x) for x in items]
