"""Where the names a trace or a proof prints are explained: for a built-in
spec, `docs/<spec>-state.md` of the source checkout when it exists (PIP-473's
is docs/pip473-state.md), and a heading of it for the proof's cells;
otherwise the spec's section of docs/glossary.md (a heading named for the
spec). A trace names its spec, but no code it names is imported to find the
page."""

from __future__ import annotations

import re
from pathlib import Path

from ..spec.registry import SPECS

DOCS = Path(__file__).resolve().parents[1] / "docs"
CELLS = "The proof's cells"      # the heading that names a hand-written relation's cells
SHARED = DOCS / "glossary.md"    # the specs without a page of their own, a section each


def anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


def glossary(spec: object, section: str = "") -> str:
    """The page (`docs/...`) for the built-in spec named `spec`, with
    `#anchor` when `section` is given or the page is the shared one; "" when
    there is none."""
    if not isinstance(spec, str) or spec not in SPECS:
        return ""
    page = DOCS / f"{spec}-state.md"
    if not page.is_file():
        if section:   # the shared page has no proof's cells
            return ""
        page, section = SHARED, spec
        if not page.is_file():
            return ""
    if section and not re.search(rf"^#+ {re.escape(section)}$", page.read_text(encoding="utf-8"), re.M):
        return ""
    return f"docs/{page.name}" + (f"#{anchor(section)}" if section else "")


def cti_glossary(rel) -> tuple[str, str]:
    """(where the names a proof's CTI prints are explained, what they are):
    a derived relation's CTI prints the spec's fields, a hand-written
    relation's its cells."""
    if getattr(rel, "derived", False):
        return glossary(rel.spec.name), "fields"
    return glossary(rel.spec.name, CELLS), "cells"
