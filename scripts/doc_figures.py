"""The figures the docs' tables quote for a model, held to the model's own
record, its `[expect]` table (written by scripts/record_figures.py, judged
by the gate). A table row whose last cell runs exactly one model
(`txncheck check models/....toml`) may quote, in its figure columns
("verdict", "trace", "trace length", "trace / states"): `N distinct`,
`N generated`, `depth N`, `N states` (a violation's trace length, else its
distinct states) and, in a trace column, a bare trace length. Each must be
the record's; re-recording a model and then

    .venv/bin/python scripts/doc_figures.py --write

rewrites them; without --write it lists what differs (exit 1).
tests/test_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND = re.compile(r"txncheck check (models/[\w/.-]+\.toml)")
FIGURE_COLUMNS = {"verdict", "trace", "trace length", "trace / states"}
# (pattern, the [expect] key; None: `length` for a violation, else `distinct`)
FIGURES = [(re.compile(r"([\d,]+)(?= distinct)"), "distinct"), (re.compile(r"([\d,]+)(?= generated)"), "generated"),
           (re.compile(r"(?<=depth )(\d+)"), "depth"), (re.compile(r"(?<![\w-])([\d,]+)(?= states)"), None)]


def _number(n: int, like: str) -> str:
    return f"{n:,}" if "," in like or n >= 1000 else str(n)


def _fix_cell(cell: str, header: str, expect: dict, wrong: list) -> str:
    def sub(key):
        def repl(m):
            k = key or ("length" if expect.get("verdict") == "violation" else "distinct")
            want = expect.get(k)
            if want is None or int(m[1].replace(",", "")) == want:
                return m[0]
            wrong.append(f"{m[0]} ({k} is {want:,})")
            return _number(want, m[1])
        return repl

    for pattern, key in FIGURES:
        cell = pattern.sub(sub(key), cell)
    if header in ("trace", "trace length") and re.fullmatch(r"\s*\d+\s*", cell):
        cell = re.sub(r"(\d+)", sub("length"), cell)
    return cell


def fix(text: str, where: str = "") -> tuple[str, list[str]]:
    """The text with every model figure of its tables set to the record; what differed."""
    out, problems, head = [], [], None
    for i, line in enumerate(text.split("\n"), 1):
        if not line.startswith("|"):
            head = None
        elif head is None:
            head = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        else:
            cells = line.split("|")   # cells[0] and cells[-1] are the text outside the table's bars
            models = set(COMMAND.findall(cells[-2]))
            if len(models) == 1 and len(cells) - 2 == len(head):
                expect = tomllib.loads((ROOT / models.pop()).read_text()).get("expect", {})
                wrong: list[str] = []
                cells = [cells[0]] + [_fix_cell(c, h, expect, wrong) if h in FIGURE_COLUMNS else c
                                      for c, h in zip(cells[1:-1], head)] + [cells[-1]]
                problems += [f"{where}:{i}: {w}" for w in wrong]
                line = "|".join(cells)
        out.append(line)
    return "\n".join(out), problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the figures from the records")
    a = ap.parse_args()
    problems = []
    for doc in DOCS:
        text = doc.read_text()
        new, wrong = fix(text, str(doc.relative_to(ROOT)))
        problems += wrong
        if a.write and new != text:
            doc.write_text(new)
    for p in problems:
        print(p)
    return 1 if problems and not a.write else 0


if __name__ == "__main__":
    sys.exit(main())
