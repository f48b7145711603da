"""A sweep's result table, written three ways: Parquet (for tools), CSV and
Markdown (for people)."""

from __future__ import annotations

import csv
from pathlib import Path

from .atomic import replace_atomically, write_text_atomic


def markdown(rows: list[dict], columns: list[str]) -> str:
    """A GitHub Markdown table; empty columns (e.g. no errors) are left out."""
    cols = [c for c in columns if any(r.get(c) is not None for r in rows)]
    cells = [[_fmt(r.get(c)) for c in cols] for r in rows]
    numeric = [all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows) for c in cols]
    head = "| " + " | ".join(cols) + " |"
    rule = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
    body = ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join([head, rule, *body])


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v).replace("|", "\\|")


def write_tables(rows: list[dict], columns: list[str], out: Path, *, title: str = "") -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    paths = {"parquet": out / "results.parquet", "csv": out / "results.csv", "md": out / "results.md"}
    schema = _schema(pa, rows, columns)
    strings = {f.name for f in schema if f.type == pa.string()}
    typed = [{c: (str(v) if c in strings and v is not None else v) for c, v in r.items()} for r in rows]
    table = pa.Table.from_pylist(typed, schema=schema)
    replace_atomically(paths["parquet"], lambda tmp: pq.write_table(table, tmp))

    def write_csv(tmp: str) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            w.writerows(rows)

    replace_atomically(paths["csv"], write_csv)
    write_text_atomic(paths["md"], (f"{title}\n\n" if title else "") + markdown(rows, columns) + "\n")
    return paths


def _schema(pa, rows, columns):
    """One Arrow type per column: int64, float64, bool or string (mixed -> string)."""
    fields = []
    for c in columns:
        kinds = {type(r.get(c)) for r in rows if r.get(c) is not None}
        if kinds == {int}:
            t = pa.int64()
        elif kinds <= {int, float} and kinds:
            t = pa.float64()
        elif kinds == {bool}:
            t = pa.bool_()
        else:
            t = pa.string()
        fields.append(pa.field(c, t))
    return pa.schema(fields)
