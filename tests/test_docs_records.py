"""Tables in the docs that a bench writes from its record (bench/records/): the
doc's section is the bench's rendering of the record, so a figure is changed by
re-measuring (one command), never by editing the doc."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("table", ["proofs", "bounded", "agreement"])
def test_the_prove_benchs_tables_are_its_records(table):
    b = _bench("prove")
    record = json.loads(b.record_of(table).read_text())
    begin, end = b.markers(table)
    text = b.DOC.read_text()
    assert text[text.index(begin):text.index(end) + len(end)] == b.render(table, record)
    rows = record["rows"]
    if table == "proofs":
        assert [r["model"] for r in rows] == b.PROOFS and {r["verdict"] for r in rows} == {"proved"}
    elif table == "bounded":
        assert rows and all(r["length"] == r["bfs_length"] for r in rows)
    else:
        assert [r["model"] for r in rows] == b.AGREEMENT
        assert all(r["disagreements"] == 0 and r["states"] == 2000 for r in rows)


def test_the_profile_block_is_its_record():
    """The profile of the standard model in docs/performance.md is bench/profile.py's
    rendering of its record; the record is the command's own output."""
    b = _bench("profile")
    record = json.loads(b.RECORD.read_text())
    text = b.DOC.read_text()
    assert text[text.index(b.BEGIN):text.index(b.END) + len(b.END)] == b.render(record)
    assert record["command"] == "txncheck " + " ".join(b.ARGS)
    assert record["output"].startswith(f"profile of {b.ARGS[1]}:")


def test_the_console_blocks_are_their_records():
    """Every console block of docs/performance.md but the profile's is
    bench/console.py's rendering of its record, and every record has its
    block: re-measuring one is `bench/console.py --measure NAME`."""
    b = _bench("console")
    records = json.loads(b.RECORD.read_text())
    text = b.DOC.read_text()
    assert sorted(b.blocks_of(text)) == sorted(records)
    for name, r in records.items():
        begin, end = b.markers(name)
        assert text[text.index(begin):text.index(end) + len(end)] == b.render(name, r)
    # no console block of the page is left outside a record
    inside = len(records) + 1   # and the profile's (bench/profile.py)
    assert text.count("```console\n$ ") == inside


def test_the_derive_table_is_its_record():
    """docs/performance.md's table of derived relations is bench/derive.py's
    rendering of its record, and every model the bench measures by default
    has its row."""
    b = _bench("derive")
    record = json.loads(b.RECORD.read_text())
    text = b.DOC.read_text()
    assert text[text.index(b.BEGIN):text.index(b.END) + len(b.END)] == b.render(record)
    assert set(b.MODELS) <= {r["model"] for r in record["rows"]}


# Outside the blocks a script writes, docs/performance.md quotes no figure of
# the forms a hand copied from a bench's output: a ratio ("1.83x"), a timing
# comparison ("237.9 s against 436.2 s"), a state count ("12,078,783
# distinct"). Such a sentence is written under its block from the record
# (bench/console.py's NOTES) or points to the table.
PERFORMANCE = ROOT / "docs" / "performance.md"
WRITTEN = re.compile(r"<!-- (?P<kind>[\w-]+)(?P<name> [\w.-]+)?: written by [^\n]*?-->.*?<!-- /(?P=kind)(?P=name)? -->",
                     re.S)
HAND_FIGURES = re.compile(r"\b\d+\.\d+x\b"                                  # a ratio
                          r"|\b\d[\d,.]*\s*s\s+against\s+\d"                 # a timing against another
                          r"|\b\d{1,3}(?:,\d{3}){2,}\s+(?:distinct|generated)\b")  # a count of millions
# (a count under a million is left out: the page's thresholds and sample
# sizes, "100,000 generated states", "2,000 distinct states", are of that form)


def hand_written_figures(text: str) -> list[str]:
    """`line N: figure` for each figure of those forms outside the written blocks."""
    prose = WRITTEN.sub(lambda m: "\n" * m[0].count("\n"), text)
    return [f"line {prose.count(chr(10), 0, m.start()) + 1}: {m[0]}" for m in HAND_FIGURES.finditer(prose)]


def test_the_performance_pages_prose_quotes_no_measured_figure():
    """A figure in docs/performance.md is written by the script that measured
    it, inside its block; prose outside the blocks points to the table."""
    assert hand_written_figures(PERFORMANCE.read_text()) == [], \
        "move the figure into its block's rendering (bench/console.py NOTES) or point to the table"
    # the check sees what it should: a block's figures are its own, a pasted one is not
    block = ("<!-- console x: written by bench/console.py from bench/records/console.json -->\n"
             "1.83x, 237.9 s against 436.2 s, 12,078,783 distinct\n<!-- /console x -->\n")
    assert hand_written_figures(block) == []
    assert hand_written_figures(block + "two workers: 1.83x (237.9 s against 436.2 s)\n"
                                "12,078,783 distinct, 71,167,998 generated\n") == [
        "line 4: 1.83x", "line 4: 237.9 s against 4", "line 5: 12,078,783 distinct", "line 5: 71,167,998 generated"]


def test_a_record_of_code_not_yet_committed_says_so(tmp_path):
    """A bench run on a working tree whose code differs from HEAD records
    the commit with a "+": its figures are of changes on top of it."""
    import subprocess

    records = _bench("records")
    git = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "x.py").write_text("x = 1\n")
    (tmp_path / "docs.md").write_text("figures\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    clean = records.provenance(tmp_path)["commit"]
    (tmp_path / "docs.md").write_text("other figures\n")     # not code
    assert records.provenance(tmp_path)["commit"] == clean and not clean.endswith("+")
    (tmp_path / "checker" / "x.py").write_text("x = 2\n")
    assert records.provenance(tmp_path)["commit"] == clean + "+"
