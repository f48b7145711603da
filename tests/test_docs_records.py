"""Tables in the docs that a bench writes from its record (bench/records/): the
doc's section is the bench's rendering of the record, so a figure is changed by
re-measuring (one command), never by editing the doc."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_agreement_table_is_the_records():
    b = _bench("prove")
    record = json.loads(b.RECORD.read_text())
    text = b.DOC.read_text()
    assert text[text.index(b.BEGIN):text.index(b.END) + len(b.END)] == b.render_agreement(record)
    assert [r["model"] for r in record["rows"]] == b.AGREEMENT
    assert all(r["disagreements"] == 0 and r["states"] == 2000 for r in record["rows"])
