"""Writing recorded values into a model file's text: the keys of one table
set, the table's other lines kept as they are (comments included), the
table added at the end if the file has none. scripts/record_figures.py
writes [expect]'s figures this way, and `txncheck prove --agreement
--record` the relation's agreement into [prove]."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any, Iterable


def set_table_keys(text: str, table: str, values: dict[str, Any], drop: Iterable[str] = ()) -> str:
    """The text with `values` as keys of [table] (after the table's other
    keys), and the keys named in `drop` (or in `values`) removed from it."""
    lines = text.splitlines()
    head = re.compile(rf"\s*\[\s*{re.escape(table)}\s*\]\s*(#.*)?$")
    start = next((k for k, line in enumerate(lines) if head.match(line)), None)
    new = [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    gone = "|".join(re.escape(k) for k in {*drop, *values})
    if start is None:
        body = lines + ([""] if lines and lines[-1].strip() else []) + [f"[{table}]", *new]
    else:
        end = next((k for k in range(start + 1, len(lines)) if re.match(r"\s*\[[^\]]", lines[k])
                    and not _inside_array(lines[start + 1:k])), len(lines))
        own = _without_keys(lines[start + 1:end], gone)
        while own and not own[-1].strip():
            own.pop()
        rest = lines[end:]
        body = lines[:start + 1] + own + new + ([""] if rest else []) + rest
    out = "\n".join(body) + "\n"
    got = tomllib.loads(out).get(table, {})
    assert all(got.get(k) == v for k, v in values.items()), "the rewritten table does not hold the values"
    return out


def _inside_array(lines: list[str]) -> bool:
    """Do these lines leave a multi-line array open (a `[` of a value, not a table)?"""
    depth = 0
    for line in lines:
        code = line.split("#", 1)[0]
        depth += code.count("[") - code.count("]")
    return depth > 0


def _without_keys(lines: list[str], keys: str) -> list[str]:
    """The lines of a table without the assignments of these keys (a value
    that spans lines, a multi-line array, goes with its key)."""
    out, skipping = [], 0
    for line in lines:
        if skipping:
            code = line.split("#", 1)[0]
            skipping += code.count("[") - code.count("]")
            continue
        if keys and re.match(rf"\s*({keys})\s*=", line):
            code = line.split("=", 1)[1].split("#", 1)[0]
            skipping = max(0, code.count("[") - code.count("]"))
            continue
        out.append(line)
    return out
