"""Tables in the docs that a bench writes from its record (bench/records/): the
doc's section is the bench's rendering of the record, so a figure is changed by
re-measuring (one command), never by editing the doc."""

from __future__ import annotations

import importlib.util
import json
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
