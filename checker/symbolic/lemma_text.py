"""The lemma language: lemmas written as text in a model file
(`[prove.formulas]`) or printed by `txncheck prove --infer`.

    lemma  := ("forall" | "exists") binds ":" lemma | iff
    binds  := NAME ("," NAME)* "in" SORT ("," NAME ("," NAME)* "in" SORT)*
    iff    := imp ("<->" imp)?
    imp    := or ("->" imp)?                  (right-associative)
    or     := and ("|" and)*
    and    := unary ("&" unary)*
    unary  := "!" unary | "(" lemma ")" | "forall" ... | "exists" ... | atom
    atom   := term (("=" | "!=" | "<" | "<=" | ">" | ">=") term)?
    term   := NAME ("[" arg ("," arg)* "]")? | STRING | INTEGER | "true" | "false"
    arg    := NAME | STRING                   (a bound variable or an element)

A NAME in a term is a bound variable, a state symbol of the relation's
schema (a scalar, or a function applied to its arguments) or an element of
an enum sort; a STRING is a string value ("committed"), or, as an argument,
an element's name, which may name bound variables in braces
(`msgs["Prepared_{r}"]`: the element named after r). Quantifiers range
over the model's finite sorts and are expanded (checker/symbolic/
lemma_z3.py): `forall` to the conjunction of its instances, `exists` to
their disjunction (Paxos's "some majority voted": `exists A, A2 in
Acceptor: A != A2 & p2b[R, A] & p2b[R, A2]`).

Lemma text is untrusted input: this parser is the only thing that reads it
(nothing is evaluated as Python), and it refuses text longer than
MAX_CHARS, nesting deeper than MAX_DEPTH and anything but printable ASCII.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

MAX_CHARS = 4000
MAX_DEPTH = 40
KEYWORDS = {"forall", "exists", "in", "true", "false"}
CMP_OPS = ("=", "!=", "<", "<=", ">", ">=")
NEGATED = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


class LemmaSyntaxError(ValueError):
    """Lemma text that does not parse, or that names what the schema lacks."""


# -- the syntax tree ------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A bare name: a bound variable, a scalar symbol or an element."""
    id: str


@dataclass(frozen=True)
class Quoted:
    """A quoted string: a string value, or as an argument an element's name
    with `{var}` holes."""
    text: str


@dataclass(frozen=True)
class Const:
    value: Union[int, bool]


@dataclass(frozen=True)
class Cell:
    """A function symbol applied to its arguments (Name or Quoted)."""
    symbol: str
    args: tuple


@dataclass(frozen=True)
class Cmp:
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Truth:
    """A term that is a formula by itself (a Bool cell, true, false)."""
    term: object


@dataclass(frozen=True)
class Not:
    arg: object


@dataclass(frozen=True)
class Nary:
    op: str          # "&" or "|"
    args: tuple


@dataclass(frozen=True)
class Binary:
    op: str          # "->" or "<->"
    left: object
    right: object


@dataclass(frozen=True)
class Forall:
    binds: tuple     # ((variable, sort), ...)
    body: object


@dataclass(frozen=True)
class Exists:
    binds: tuple     # ((variable, sort), ...)
    body: object


Expr = Union[Name, Quoted, Const, Cell, Cmp, Truth, Not, Nary, Binary, Forall, Exists]   # a parsed lemma or a part
QUANTIFIERS = {"forall": Forall, "exists": Exists}


# -- parsing ----------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<op><->|->|!=|<=|>=|[=<>!&|()\[\],:])
  | (?P<int>-?[0-9]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
""", re.VERBOSE)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise LemmaSyntaxError(f"unexpected {text[pos]!r} at column {pos + 1}")
        kind = m.lastgroup or ""   # every alternative of _TOKEN is a named group
        if kind != "ws":
            value = m.group()
            if kind == "str":
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            elif kind == "name" and value in KEYWORDS:
                kind = "op"
            out.append((kind, value, pos + 1))
        pos = m.end()
    out.append(("end", "", len(text) + 1))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self, value: str | None = None, kind: str = "op") -> bool:
        k, v, _ = self.toks[self.i]
        return k == kind and (value is None or v == value)

    def take(self, value: str | None = None, kind: str = "op") -> str:
        k, v, col = self.toks[self.i]
        if k != kind or (value is not None and v != value):
            want = repr(value) if value else {"name": "a name", "int": "a number", "end": "the end"}.get(kind, kind)
            got = "the end" if k == "end" else repr(v)
            raise LemmaSyntaxError(f"expected {want} at column {col}, found {got}")
        self.i += 1
        return v

    def nested(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise LemmaSyntaxError(f"nests deeper than {MAX_DEPTH}")

    def quantifier(self) -> bool:
        return self.peek("forall") or self.peek("exists")

    def lemma(self):
        if self.quantifier():
            return self.quantified()
        return self.iff()

    def quantified(self):
        kind = QUANTIFIERS[self.take()]
        binds = []
        while True:
            names = [self.take(kind="name")]
            while self.peek(","):
                self.take(",")
                names.append(self.take(kind="name"))
            self.take("in")
            sort = self.take(kind="name")
            binds += [(n, sort) for n in names]
            if not self.peek(","):
                break
            self.take(",")
        self.take(":")
        self.nested()
        body = self.lemma()
        self.depth -= 1
        return kind(tuple(binds), body)

    def iff(self):
        left = self.imp()
        if self.peek("<->"):
            self.take("<->")
            return Binary("<->", left, self.imp())
        return left

    def imp(self):
        left = self.or_()
        if self.peek("->"):
            self.take("->")
            self.nested()
            right = self.lemma() if self.quantifier() else self.imp()
            self.depth -= 1
            return Binary("->", left, right)
        return left

    def or_(self):
        return self.nary("|", self.and_)

    def and_(self):
        return self.nary("&", self.unary)

    def nary(self, op: str, operand):
        args = [operand()]
        while self.peek(op):
            self.take(op)
            args.append(operand())
        return args[0] if len(args) == 1 else Nary(op, tuple(args))

    def unary(self):
        self.nested()
        try:
            if self.peek("!"):
                self.take("!")
                return Not(self.unary())
            if self.peek("("):
                self.take("(")
                inner = self.lemma()
                self.take(")")
                return inner
            if self.quantifier():
                return self.quantified()
            return self.atom()
        finally:
            self.depth -= 1

    def atom(self):
        left = self.term()
        for op in CMP_OPS:
            if self.peek(op):
                self.take(op)
                return Cmp(op, left, self.term())
        return Truth(left)

    def term(self):
        if self.peek(kind="str"):
            return Quoted(self.take(kind="str"))
        if self.peek(kind="int"):
            return Const(int(self.take(kind="int")))
        if self.peek("true") or self.peek("false"):
            return Const(self.take() == "true")
        name = self.take(kind="name")
        if not self.peek("["):
            return Name(name)
        self.take("[")
        args = [self.arg()]
        while self.peek(","):
            self.take(",")
            args.append(self.arg())
        self.take("]")
        return Cell(name, tuple(args))

    def arg(self):
        if self.peek(kind="str"):
            return Quoted(self.take(kind="str"))
        if self.peek(kind="int"):     # an element of an integer sort ("1")
            return Name(self.take(kind="int"))
        return Name(self.take(kind="name"))


def parse(text: str):
    """The syntax tree of a lemma, or LemmaSyntaxError in one line."""
    if not isinstance(text, str):
        raise LemmaSyntaxError("a lemma is a string")
    if len(text) > MAX_CHARS:
        raise LemmaSyntaxError(f"longer than {MAX_CHARS} characters")
    if any(not (" " <= ch <= "~") and ch not in "\t\n" for ch in text):
        raise LemmaSyntaxError("only printable ASCII text is allowed")
    p = _Parser(text)
    out = p.lemma()
    p.take(kind="end")
    return out


# -- printing ---------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PREC = {"forall": 0, "<->": 1, "->": 2, "|": 3, "&": 4, "!": 5, "atom": 6}


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def show_arg(a) -> str:
    """An argument: a variable, or an element, bare when its name is a plain
    name (the printer's variables are never named like an element)."""
    if isinstance(a, Name):
        return a.id
    return a.text if _PLAIN.match(a.text) and a.text not in KEYWORDS else quote(a.text)


def show_term(t) -> str:
    if isinstance(t, Name):
        return t.id
    if isinstance(t, Quoted):
        return quote(t.text)
    if isinstance(t, Const):
        return ("true" if t.value else "false") if isinstance(t.value, bool) else str(t.value)
    return f"{t.symbol}[{', '.join(show_arg(a) for a in t.args)}]"


def show(node, outer: int = 0) -> str:
    """The text of a syntax tree; `parse(show(x)) == x` up to parentheses."""
    if isinstance(node, (Forall, Exists)):
        groups: list[tuple[list[str], str]] = []
        for v, s in node.binds:
            if groups and groups[-1][1] == s:
                groups[-1][0].append(v)
            else:
                groups.append(([v], s))
        word = "forall" if isinstance(node, Forall) else "exists"
        text = f"{word} {', '.join(', '.join(vs) + ' in ' + s for vs, s in groups)}: {show(node.body, 0)}"
        prec = _PREC["forall"]
    elif isinstance(node, Binary):
        prec = _PREC[node.op]
        left = show(node.left, prec + 1)
        right = show(node.right, prec if node.op == "->" else prec + 1)
        text = f"{left} {node.op} {right}"
    elif isinstance(node, Nary):
        prec = _PREC[node.op]
        text = f" {node.op} ".join(show(a, prec + 1) for a in node.args)
    elif isinstance(node, Not):
        prec = _PREC["!"]   # `!(a < b)`, not `!a < b`, which reads as if `!` took `a` alone
        text = "!" + (f"({show(node.arg)})" if isinstance(node.arg, Cmp) else show(node.arg, prec))
    elif isinstance(node, Cmp):
        prec = _PREC["atom"]
        text = f"{show_term(node.left)} {node.op} {show_term(node.right)}"
    else:
        prec = _PREC["atom"]
        text = show_term(node.term)
    return f"({text})" if prec < outer else text
