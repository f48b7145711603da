"""Lemmas a model file states as text, `[prove.formulas]`, and writing the
inferred ones there (`txncheck prove --infer --write`).

    [prove.formulas]
    rmState_msgs = 'forall R in RM: rmState[R] = "committed" -> msgs[Commit]'

A model file is untrusted: each name must be a plain name, each text parses
in the lemma language (lemma_text.py, never evaluated as Python) and names
only what the spec's schema has (the properties' vocabulary); the first that does not is reported
in one line with the file, the line and the lemma.

Writing edits the file's text, not its parsed table, so its comments and
layout stay: the `[prove.formulas]` table is replaced (or added after
`[prove]`, or at the end), the result is parsed again and must give
exactly the lemmas written, and it replaces the file in one rename.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import z3

from ..atomic import write_text_atomic
from ..errors import ModelError
from ..model import Model, key_line
from .lemma_text import LemmaSyntaxError
from .lemma_z3 import compile_text

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
MAX_FORMULAS = 1000
_HEADER = re.compile(r"\s*\[\s*([^\]\s]+)\s*\]")


def written_lemmas(m: Model, schema, taken=()) -> dict[str, z3.BoolRef]:
    """The model file's [prove.formulas], compiled against the spec's schema
    (the properties' vocabulary: a proof states them as it states the
    properties, so they do not depend on how the relation is written)."""
    table = m.raw.get("prove", {}).get("formulas", {})
    if len(table) > MAX_FORMULAS:
        raise ModelError(f"{m.path}: [prove.formulas] has more than {MAX_FORMULAS} lemmas")
    out = {}
    for name, text in table.items():
        line = key_line(m.text, name, "prove.formulas")
        where = f"{m.path}:{line}" if line else str(m.path)
        if not NAME.match(name):
            raise ModelError(f"{where}: [prove.formulas] {name!r}: a lemma's name is letters, digits and "
                             f"underscores (at most 64), not starting with a digit")
        if name in taken:
            raise ModelError(f"{where}: [prove.formulas] {name!r} is also the name of a lemma of the relation")
        try:
            out[name] = compile_text(text, schema)
        except LemmaSyntaxError as exc:
            raise ModelError(f"{where}: [prove.formulas] {name}: {exc}") from None
    return out


def toml_string(text: str) -> str:
    if "'" not in text and "\n" not in text:
        return f"'{text}'"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def section(lemmas: list[tuple[str, str]], note: str) -> str:
    lines = [f"[prove.formulas]  # {note}"] if note else ["[prove.formulas]"]
    lines += [f"{name} = {toml_string(text)}" for name, text in lemmas]
    return "\n".join(lines) + "\n"


def with_formulas(text: str, lemmas: list[tuple[str, str]], note: str = "") -> str:
    """The model file's text with its [prove.formulas] table replaced by `lemmas`."""
    lines = text.splitlines(keepends=True)
    heads = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _HEADER.match(line))]

    def end_of(i: int) -> int:
        later = [j for j, _ in heads if j > i]
        return later[0] if later else len(lines)

    old = [i for i, name in heads if name == "prove.formulas"]
    if old:
        i = old[0]
        j = end_of(i)
        while j > i + 1 and not lines[j - 1].strip():     # keep the blank lines before the next table
            j -= 1
        lines[i:j] = []
    else:
        raw = tomllib.loads(text)
        if "formulas" in raw.get("prove", {}):
            raise ModelError("its [prove] formulas are not a [prove.formulas] table of their own: edit them by hand")
        heads = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _HEADER.match(line))]
        prove = [i for i, name in heads if name == "prove"]
        i = end_of(prove[0]) if prove else len(lines)
    block = section(lemmas, note)
    before = lines[:i]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"
    if before and before[-1].strip():
        block = "\n" + block
    after = lines[i:]
    if after and after[0].strip():
        block += "\n"
    return "".join(before) + block + "".join(after)


def write_formulas(path: str | Path, lemmas: list[tuple[str, str]], note: str = "") -> None:
    """Write `lemmas` into the model file's [prove.formulas] in place."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    new = with_formulas(text, lemmas, note)
    got = tomllib.loads(new).get("prove", {}).get("formulas", {})
    if got != dict(lemmas):
        raise ModelError(f"{path}: the lemmas written would not read back as written; nothing written")
    write_text_atomic(path, new)
