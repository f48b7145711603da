"""Model labels (issue 29): every kip868, pip196 and legacy_v4 model says
what its verdict holds for; the gate prints it, JUnit and SARIF carry it,
the user guide's tables show it, and a bad [label] is a one-line ModelError."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from txncheck.checker.commands.check_all import model_line
from txncheck.checker.gate import label_text, run_gate
from txncheck.checker.model import HOLDS_FOR, ModelError, load_model
from txncheck.checker.reports.junit import write_junit
from txncheck.checker.reports.sarif import write_sarif
from txncheck.checker.reports.validate import check_junit, check_sarif

from .helpers import MODELS, ROOT

LABELLED = sorted(p for d in ("kip868", "pip196", "legacy_v4") for p in (MODELS / d).glob("*.toml"))


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_model_carries_its_label(path):
    m = load_model(path)
    assert m.label["holds_for"] in HOLDS_FOR and m.label["source"].strip()
    if m.label["holds_for"] == "code":
        assert "@" in m.label["source"]  # the commit read
    text = label_text(m)
    not_code = m.label["holds_for"] != "code" and m.expect.get("verdict") == "violation"
    assert ("not a defect of the current code" in text) == not_code


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_readme_table_shows_the_label(path):
    rows = [line for line in (ROOT / "docs" / "guide.md").read_text().splitlines()
            if line.startswith("|") and f"models/{path.parent.name}/{path.stem}.toml" in line]
    assert rows, f"no user-guide row for {path}"
    want = {"code": "current code", "release": "past release", "text": "document's text"}[load_model(path).label["holds_for"]]
    assert all(want in row for row in rows)


def test_gate_junit_and_sarif_carry_the_label(tmp_path):
    models = [MODELS / "legacy_v4" / "timeout-race.toml", MODELS / "kip868" / "two-controllers-bootstrap.toml"]
    result = run_gate(models, out_dir=tmp_path / "out")
    past, code = result.results
    assert "holds for a past release" in model_line(past) and "not a defect of the current code" in model_line(past)
    assert "holds for the current code (apache/kafka@" in model_line(code)
    assert "not a defect" not in model_line(code)

    junit, sarif = write_junit(result, tmp_path / "j.xml"), write_sarif(result, tmp_path / "s.sarif")
    assert check_junit(junit) is None and check_sarif(sarif) is None
    suites = ET.parse(junit).getroot().findall("testsuite")
    props = [{p.get("name"): p.get("value") for p in s.find("properties")} for s in suites]
    assert [p["label.holds_for"] for p in props] == ["release", "code"]
    assert all(p["label"].startswith("holds for") for p in props)
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    by_model = {r["properties"]["model"]: r for r in results}
    assert {r["properties"]["label"]["holds_for"] for r in results} == {"release", "code"}
    assert all("holds for" in r["message"]["text"] for r in results)
    assert any("not a defect of the current code" in r["message"]["text"] for r in by_model.values())
    assert result.to_json()["models"][0]["label"]["holds_for"] == "release"


def test_a_finding_known_upstream_says_where():
    """issue 43: retry-current is relabelled as known upstream, not deleted."""
    m = load_model(MODELS / "legacy_v4" / "retry-current.toml")
    text = label_text(m)
    assert m.label["holds_for"] == "code" and "known upstream: apache/pulsar#19747" in text
    assert "PIP-254, apache/pulsar#19744" in text


@pytest.mark.parametrize("table,error", [
    ('label = "code"', "[label] must be a table"),
    ('[label]\nholds_for = "fact"\nsource = "x"', "[label] holds_for must be one of code, release, text"),
    ('[label]\nholds_for = "code"', "[label] source must name"),
    ('[label]\nholds_for = "code"\nsource = "x"\ncommit = "y"', "unknown key 'commit' in [label]"),
    ('[label]\nholds_for = "code"\nsource = "x"\nupstream = ""', "[label] upstream must name"),
])
def test_a_bad_label_is_a_one_line_model_error(tmp_path, table, error):
    p = tmp_path / "m.toml"
    p.write_text(f'spec = "kip868"\n{table}\n')
    with pytest.raises(ModelError) as exc:
        load_model(p)
    assert error in str(exc.value) and "\n" not in str(exc.value)
