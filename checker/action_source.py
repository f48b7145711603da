"""Where a spec implements an action: the file and line the SARIF report's
code flows point at (checker/reports/sarif.py), found by reading the spec's
source, never by running it."""

from __future__ import annotations

import inspect
import re
from functools import lru_cache
from pathlib import Path


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@lru_cache(maxsize=None)
def _package_sources(cls: type) -> list[tuple[str, list[str]]]:
    """The spec class's module, then the other modules of its folder (a spec may
    spread its actions over several)."""
    try:
        source = inspect.getsourcefile(cls)
    except TypeError:
        return []
    if source is None:
        return []
    own = Path(source)
    out = []
    for p in [own] + sorted(p for p in own.parent.glob("*.py") if p != own):
        try:
            out.append((str(p), p.read_text(encoding="utf-8").splitlines()))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def action_source(spec_cls: type, action: str) -> tuple[str, int] | None:
    """(file, line) where the spec implements `action`, best guess first: a
    function named for it, a function whose docstring opens with its name, a
    comment naming it, a `yield` of a variable named for it, then its name as
    a string."""
    key = _norm(action)
    sources = _package_sources(spec_cls)
    for pattern in (
        r"^\s*def\s+_?(?:act_|action_|do_)?(\w+)\s*\(",  # def endTxn(...) / def act_end_txn(...)
        r"^\s*(?:\"\"\"|\'\'\')\s*(\w+)\s*:",            # a docstring opening with "publishAppend: ..."
        r"^\s*#\s*(\w+)\b",                              # # TMCommit
        r"\byield\s+(?:self\.)?(\w+)",                    # yield big_to_small, ...
        r"[\"'](\w+)[\"']",                                # "BigToSmall"
    ):
        for path, lines in sources:
            for k, text in enumerate(lines):
                if any(_norm(m.group(1)) == key for m in re.finditer(pattern, text)):
                    if k and lines[k - 1].lstrip().startswith("def "):  # a docstring: point at its def
                        return path, k
                    return path, k + 1
    # Last resort: the spec's next() method.
    try:
        step = getattr(spec_cls, "next")   # a Spec's (a plain type here: the lru_cache above wants it hashable)
        lines, first = inspect.getsourcelines(step)
        source = inspect.getsourcefile(step)
        return (source, first) if source is not None else None
    except (OSError, TypeError, AttributeError):
        return None
