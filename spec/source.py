"""The code a spec runs, as a digest: what a checkpoint (checker/engines/checkpoint/)
and a fix model's recorded figures (checker/reports/digest.py) are valid for.

A spec's code is the Python files of the folders that define its class and
the classes it derives from (a spec split into several files imports its
siblings). Comments, docstrings and layout are left out (`code_of`): a
reworded docstring changes no state.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from pathlib import Path

from .api import Spec


def code_of(src: Path) -> bytes:
    """A Python source's code without its comments, docstrings and layout;
    the bytes if it does not parse. The AST's dump is that of this
    interpreter: another Python version may call a digest changed, never an
    edited file unchanged."""
    raw = src.read_bytes()
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
        return raw
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False).encode()


def code_files(cls: type) -> list[Path]:
    """The Python files of the folders that define `cls` and its bases (not the Spec framework's)."""
    folders = []
    for c in cls.__mro__:
        if c is object or c is Spec:
            continue
        file = getattr(sys.modules.get(c.__module__), "__file__", None)
        if file and (folder := Path(file).resolve().parent) not in folders:
            folders.append(folder)
    return sorted({p for folder in folders for p in folder.glob("*.py") if p.is_file()})


def code_digest(cls: type) -> str:
    """A digest of the code that `cls`'s spec runs (`code_files`, each by name and `code_of`)."""
    h = hashlib.sha256()
    for src in code_files(cls):
        try:
            code = code_of(src)
        except OSError:
            code = b"(unreadable)"
        h.update(src.name.encode() + b"\0" + code + b"\0")
    return h.hexdigest()[:16]
