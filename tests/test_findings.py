"""`txncheck report` and docs/findings/: the committed reports equal what the
models, their traces and the notes beside them give now; every defect of the
code has a report; the recorded fix figures are the gate's own; a report is
written for every trace in the corpus and a bad input is one line, exit 2.

The HTML page's diagram in a real browser: test_finding_html_renders_in_chromium.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from txncheck.checker.cli import main
from txncheck.checker.model import find_models, load_model
from txncheck.checker.reports.finding import build_finding, model_digest, render_markdown
from txncheck.checker.reports.finding_html import render_finding_html
from txncheck.checker.reports.notes import NotesError, notes_path, parse_notes

from .helpers import MODELS, ROOT

FINDINGS = ROOT / "docs" / "findings"
FIGURES = FINDINGS / "figures.json"
REGENERATE = "scripts/findings.sh"
CORPUS = sorted((ROOT / "counterexamples").rglob("*.itf.json"))


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("txncheck: error: "), err
    return lines[0]


def _normal(path: Path) -> object:
    """A generated file, with what may vary between runs or releases taken out
    (times; a trace's txncheck version)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        doc = json.loads(text)
        doc.get("#meta", {}).pop("txncheck_version", None)
        return doc
    return re.sub(r"\b\d+(\.\d+)?s\b", "<time>", text)


# -- docs/findings is what the models say now ------------------------------------------------


def test_committed_findings_equal_the_regenerated_ones(tmp_path, monkeypatch, capsys):
    """A model, trace or note change that alters a finding fails here until the
    reports are regenerated (scripts/findings.sh)."""
    monkeypatch.chdir(ROOT)  # the reports name paths relative to the repository, as the script runs it
    out = tmp_path / "findings"
    rc, _, err = run(capsys, "report", "--all", "models/", "-o", out, "--format", "md", "--figures", FIGURES,
                      "--as", "docs/findings")
    assert rc == 0, f"{err}\nfix the model or its notes (models/<system>/<model>.finding.md), then regenerate with: {REGENERATE}"
    assert not (out / "figures.json").exists()  # the committed figures were read, not rewritten
    fresh = {p.relative_to(out) for p in out.rglob("*") if p.is_file()}
    committed = {p.relative_to(FINDINGS) for p in FINDINGS.rglob("*") if p.is_file()
                 and p.suffix != ".html" and p.name != "figures.json"}
    stale = sorted(str(p) for p in committed ^ fresh)
    changed = sorted(str(p) for p in fresh & committed if _normal(out / p) != _normal(FINDINGS / p))
    assert not stale and not changed, (
        f"docs/findings/ is out of date (files added or removed: {stale}; changed: {changed}); "
        f"regenerate it with: {REGENERATE}")


def _owes_a_report(m) -> bool:
    """A model that finds a defect of the code as merged or shipped: a violation
    it expects, labelled as holding for the current code, or (PIP-473's models,
    which carry no label) of the `merged` variant."""
    if m.expect.get("verdict") != "violation":
        return False
    if m.label:
        return m.label["holds_for"] == "code"
    return m.spec_name == "pip473" and m.variant == "merged"


def _may_keep_a_report(m) -> bool:
    """A past release's defect (a violation labelled holds_for = "release") may
    keep its report; its label and status name the versions it holds for."""
    return m.expect.get("verdict") == "violation" and m.label.get("holds_for") == "release"


def test_every_code_defect_has_a_report_and_every_report_a_defect():
    models = find_models(MODELS)
    owed = {p for p in models if _owes_a_report(load_model(p))}
    allowed = {p for p in models if _may_keep_a_report(load_model(p))}
    noted = {p.with_name(p.name.removesuffix(".finding.md") + ".toml") for p in MODELS.rglob("*.finding.md")}
    assert owed - noted == set(), f"defects with no notes (write <model>.finding.md beside each): {sorted(owed - noted)}"
    assert noted - owed - allowed == set(), f"notes beside no model that finds a defect: {sorted(noted - owed - allowed)}"
    from txncheck.checker.reports.notes import load_notes

    for p in noted:
        page = FINDINGS / p.parent.name / f"{p.stem}.md"
        if same := load_notes(p).same_as:   # one report per defect: the named model's, which names this one
            assert not page.exists(), f"{p}: the same defect as {same}, yet a report of its own"
            page = FINDINGS / p.parent.name / f"{Path(same).stem}.md"
            assert page.is_file() and p.stem in page.read_text(), f"{page} does not name {p.stem}; run {REGENERATE}"
        assert page.is_file(), f"{p}: no report; run {REGENERATE}"
    from txncheck.checker.reports.index import unreported  # the rule `report --all` applies agrees

    assert unreported(models, load_model) == []


# -- the recorded fix figures are the gate's own ---------------------------------------------


def _gate_figures() -> dict[str, tuple[str, int, int, int]]:
    """Model path -> (verdict, distinct, generated, depth) of every model whose
    [expect] records its figures (the gate judges them)."""
    out = {}
    for path in find_models(MODELS):
        e = load_model(path).expect
        if all(k in e for k in ("distinct", "generated", "depth")):
            out[path.relative_to(ROOT).as_posix()] = (e.get("verdict", "ok"), e["distinct"], e["generated"], e["depth"])
    return out


SMALL = 5_000  # distinct states: a fix model this small is checked again here


def _recorded_fixes():
    return sorted(json.loads(FIGURES.read_text())["fix"].items()) if FIGURES.is_file() else []


def test_recorded_fix_figures_are_current_and_match_the_gate():
    recorded = _recorded_fixes()
    assert recorded, f"{FIGURES} records no fix figures; run {REGENERATE} --check-fix"
    gate = _gate_figures()
    for path, rec in recorded:
        assert (ROOT / path).is_file(), path
        assert rec["model"] == model_digest(ROOT / path), f"{path} changed since its figures were recorded; run {REGENERATE} --check-fix"
        got = (rec["verdict"], rec["distinct"], rec["generated"], rec["depth"])
        if path in gate:
            assert got == gate[path], f"{path}: recorded {got}, the model's [expect] says {gate[path]}"


@pytest.mark.parametrize("path", [p for p, rec in _recorded_fixes() if rec["distinct"] <= SMALL])
def test_small_fix_models_give_their_recorded_figures(path):
    from txncheck.checker.api import check_model

    rec = dict(_recorded_fixes())[path]
    m = load_model(ROOT / path)
    o = check_model(m, keep_graph=bool(m.temporal)).outcome
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == (
        rec["verdict"], rec["distinct"], rec["generated"], rec["depth"])


# -- report on every trace of the corpus; bad input --------------------------------------------


@pytest.mark.parametrize("trace", CORPUS, ids=[str(p.relative_to(ROOT)) for p in CORPUS])
def test_report_on_every_corpus_trace(trace, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    rc, out, err = run(capsys, "report", trace.relative_to(ROOT), "-o", tmp_path)
    assert rc == 0, err
    stem = trace.name.removesuffix(".itf.json")
    md = (tmp_path / f"{stem}.md").read_text()
    page = (tmp_path / f"{stem}.html").read_text()
    meta = json.loads(trace.read_text())["#meta"]
    assert f"`{meta['property']}`" in md and "```mermaid\nsequenceDiagram" in md and "| step | action |" in md
    assert "## Reproduce" in md and f"txncheck show {trace.relative_to(ROOT)}" in md
    assert "**On `reference/`**" in md and "**On the real system**: not reproduced" in md
    if meta["spec"] == "pip473":
        assert "reproduced" in md.split("**On `reference/`**")[1].splitlines()[0]
    assert page.startswith("<!DOCTYPE html>") and 'class="mermaid"' in page and meta["property"] in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # self-contained


def test_report_on_a_model_checks_it_and_writes_its_trace(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    rc, out, err = run(capsys, "report", "models/pip473/late-write-merged.toml", "-o", tmp_path, "--format", "md")
    assert rc == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late-write-merged.itf.json", "late-write-merged.md"]
    md = (tmp_path / "late-write-merged.md").read_text()
    assert md.startswith("# A cached OPEN header admits a send after the commit")  # the notes' title
    assert "MetadataTransactionBuffer.readStateCacheFirst" in md and "## Why the upstream tests miss it" in md


BAD_TRACES = {
    "missing": None,
    "not-json.itf.json": "{ not json",
    "empty.itf.json": "",
    "no-states.itf.json": json.dumps({"#meta": {"format": "ITF"}, "vars": [], "states": []}),
    "binary.itf.json": b"\x00\xff\xfe",
}


@pytest.mark.parametrize("name", sorted(BAD_TRACES))
def test_a_bad_trace_is_one_line_exit_2(name, tmp_path, capsys):
    path = tmp_path / name
    content = BAD_TRACES[name]
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    rc, out, err = run(capsys, "report", path, "-o", tmp_path / "out")
    assert rc == 2, err
    one_line(err)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_folder_as_trace_and_a_model_with_no_violation_are_exit_2(tmp_path, capsys):
    rc, _, err = run(capsys, "report", tmp_path, "-o", tmp_path / "out")
    assert rc == 2 and "directory" in one_line(err)
    rc, _, err = run(capsys, "report", MODELS / "classic" / "tcommit-rm3.toml", "-o", tmp_path / "out")
    assert rc == 2 and "nothing to report" in one_line(err)


def test_a_trace_edited_off_the_spec_is_exit_2(tmp_path, capsys):
    doc = json.loads((ROOT / "counterexamples" / "pip473" / "merged.itf.json").read_text())
    doc["states"][2]["#meta"]["action"] = "gcSweep"
    bad = tmp_path / "forged.itf.json"
    bad.write_text(json.dumps(doc))
    rc, _, err = run(capsys, "report", bad, "-o", tmp_path / "out")
    assert rc == 2, err
    one_line(err)


def test_usage_errors_are_exit_2(tmp_path, capsys):
    trace = ROOT / "counterexamples" / "pip473" / "merged.itf.json"
    for argv in (["report", trace], ["report", "-o", tmp_path], ["report", trace, trace, "-o", tmp_path],
                 ["report", trace, "-o", tmp_path, "--format", "pdf"]):
        rc, _, err = run(capsys, *argv)
        assert rc == 2, argv
        one_line(err)


# -- the notes ------------------------------------------------------------------------------------

GOOD_NOTES = """+++
title = "t"
system = "s"
code = "o/r@0123456789ab"
status = "st"
+++

## Impact

i

## Where in the code

`o/r@0123456789ab:src/A.java#L12`

## Known upstream?

k

## Who can trigger it

t

## Why the upstream tests miss it

u

## What the model abstracts away

a
"""


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace('title = "t"\n', ""), "needs title"),
    (lambda s: s.replace('status = "st"', 'status = "st"\nowner = "x"'), "unknown key 'owner'"),
    (lambda s: s.replace('o/r@0123456789ab"', 'c"'), "must be owner/repo@commit"),
    (lambda s: s.replace("`o/r@0123456789ab:", "`o/r@fedcba987654:"), "is not at the commit stated for its file"),
    (lambda s: s.replace("\nk\n", "\n"), "'## Known upstream?' is missing or empty"),
    (lambda s: s.replace("\nt\n", "\n"), "'## Who can trigger it' is missing or empty"),
    (lambda s: s.replace("## Impact", "## Impacts"), "unknown section '## Impacts'"),
    (lambda s: s.replace("\na\n", "\n"), "'## What the model abstracts away' is missing or empty"),
    (lambda s: s.replace("+++\n", "", 1), "front matter"),
    (lambda s: s.replace('status = "st"', 'status = "st"\nfix = 3'), "fix must name a model file"),
])
def test_bad_notes_are_one_clear_error(edit, message, tmp_path):
    assert parse_notes(GOOD_NOTES, tmp_path / "m.finding.md").title == "t"
    with pytest.raises(NotesError, match=re.escape(message)):
        parse_notes(edit(GOOD_NOTES), tmp_path / "m.finding.md")


def test_bad_notes_beside_a_model_are_exit_2_and_the_notes_survive_regeneration(tmp_path, monkeypatch, capsys):
    model = tmp_path / "late-write-merged.toml"
    shutil.copy(MODELS / "pip473" / "late-write-merged.toml", model)
    notes_path(model).write_text(GOOD_NOTES.replace("## Impact", "## Impakt"))
    rc, _, err = run(capsys, "report", model, "-o", tmp_path / "out")
    assert rc == 2 and "Impakt" in one_line(err)
    assert not (tmp_path / "out").exists()  # refused before the model was checked or a file written
    notes_path(model).write_text(GOOD_NOTES.replace("\ni\n", "\nA hand-written impact paragraph.\n"))
    for _ in range(2):  # regenerating keeps the hand-written text
        rc, _, err = run(capsys, "report", model, "-o", tmp_path / "out", "--format", "md")
        assert rc == 0, err
        assert "A hand-written impact paragraph." in (tmp_path / "out" / "late-write-merged.md").read_text()


def test_a_report_holds_no_time_and_does_not_depend_on_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    trace = Path("counterexamples/pip473/merged.itf.json")
    a = render_markdown(build_finding(trace))
    b = render_markdown(build_finding(trace))
    assert a == b and not re.search(r"\d\.\d+s\b", a)


# -- the HTML page in a real browser ----------------------------------------------------------------

from .test_render import assert_diagram_drawn, needs_chromium  # noqa: E402

HTML_CASES = ["counterexamples/pip473/merged.itf.json",              # an invariant, routed diagram
              "counterexamples/pip473/op-write-fails-merged.itf.json",  # a lasso
              "counterexamples/kip868/kafka-loader.itf.json"]           # a generic diagram


@needs_chromium
@pytest.mark.parametrize("trace", HTML_CASES)
def test_finding_html_renders_in_chromium(trace, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    f = build_finding(Path(trace))
    page = tmp_path / "finding.html"
    page.write_text(render_finding_html(f), encoding="utf-8")
    dom = assert_diagram_drawn(page, f.trace)
    assert f.prop in dom and "What was shown, and where" in dom and 'id="steps"' in dom


def test_model_digest_ignores_comments_and_docstrings_but_not_code(tmp_path, monkeypatch):
    """A reworded docstring must not make every recorded figure stale (it did, at 13ba44e);
    a changed line of code must."""
    from txncheck.checker.reports import digest

    spec = tmp_path / "spec" / "toy"
    spec.mkdir(parents=True)
    (tmp_path / "checker" / "reports").mkdir(parents=True)
    monkeypatch.setattr(digest, "__file__", str(tmp_path / "checker" / "reports" / "digest.py"))
    src = spec / "actions.py"
    model = tmp_path / "m.toml"
    model.write_text('spec = "toy"\n[bounds]\nn = 2\n')
    src.write_text('"""The module."""\n\ndef step(s):\n    """One step."""\n    return s + 1  # grows\n')
    before = model_digest(model)
    src.write_text('"""The module, reworded."""\n\n\ndef step(s):\n    """One step, reworded."""\n    # a new comment\n    return s + 1\n')
    model.write_text('# a comment\nspec = "toy"\n\n[bounds]\nn = 2  # why two\n')
    assert model_digest(model) == before
    src.write_text('"""The module."""\n\ndef step(s):\n    """One step."""\n    return s + 2\n')
    assert model_digest(model) != before
    src.write_text('"""The module."""\n\ndef step(s):\n    """One step."""\n    return s + 1\n')
    assert model_digest(model) == before
    model.write_text('spec = "toy"\nfingerprints = true\n[bounds]\nn = 2\n')   # changes no figure
    assert model_digest(model) == before
    model.write_text('spec = "toy"\nsymmetry = true\n[bounds]\nn = 2\n')       # changes the counts
    assert model_digest(model) != before
    model.write_text('spec = "toy"\n[bounds]\nn = 3\n')
    assert model_digest(model) != before
    # the code of a sub-package counts (spec/pip473/protocol/), and where it lives
    model.write_text('spec = "toy"\n[bounds]\nn = 2\n')
    (spec / "protocol").mkdir()
    (spec / "protocol" / "__init__.py").write_text("")
    (spec / "protocol" / "coordinator.py").write_text("def end(s):\n    return s\n")
    nested = model_digest(model)
    (spec / "protocol" / "coordinator.py").write_text("def end(s):\n    return -s\n")
    assert model_digest(model) != nested
    (spec / "protocol" / "coordinator.py").rename(spec / "coordinator.py")
    (spec / "coordinator.py").write_text("def end(s):\n    return s\n")
    assert model_digest(model) != nested


# -- each report stands on the code (issue 43) -------------------------------------------------

from txncheck.checker.reports.notes import load_notes, permalinks, same_commit  # noqa: E402

REPORTS = sorted(p for p in FINDINGS.rglob("*.md") if p.name != "index.md")


def _notes_of(report: Path):
    return load_notes(MODELS / report.parent.name / f"{report.stem}.toml")


def _section(md: str, name: str) -> str:
    m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", md, re.M | re.S)
    return m.group(1).strip() if m else ""


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_report_says_who_can_trigger_it_and_what_is_known_upstream(report):
    md = report.read_text(encoding="utf-8")
    known, who = _section(md, "Known upstream?"), _section(md, "Who can trigger it")
    assert known and who, f"{report}: missing 'Known upstream?' or 'Who can trigger it'"
    assert "apache/" in known or "none found" in known.lower(), f"{report}: name the issues found, or the queries"
    reproduce = _section(md, "Reproduce")
    assert "inside txncheck" in reproduce and "None of them runs the real system" in reproduce


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_report_cites_its_code_by_permalink_at_the_commit_stated_for_each_file(report):
    """Each file at the commit it was read at: the system's `code` commit, or
    the one the notes' `files` names (the search index keeps a file only at
    the commits that changed it, so PIP-473's pending-ack store, handle and
    coordinator are read at others than the buffer's)."""
    notes = _notes_of(report)
    repo, commit = notes.code.split("@")
    links = [link for link in permalinks(_section(report.read_text(encoding="utf-8"), "Where in the code"))
             if link.repo == repo]
    assert links, f"{report}: 'Where in the code' has no permalink into {repo}"
    wrong = [f"{x.path}@{x.ref}" for x in links if x.is_commit and not same_commit(x.ref, notes.files.get(x.path, commit))]
    assert wrong == [], f"{report}: permalinks not at their file's stated commit"


def test_one_commit_per_system():
    by_system: dict[str, set[str]] = {}
    for report in REPORTS:
        by_system.setdefault(report.parent.name, set()).add(_notes_of(report).code)
    assert by_system and all(len(codes) == 1 for codes in by_system.values()), by_system


# A fix model may differ from its bug model only in the variant and in these switches of the fix.
FIX_SWITCHES = {"lso_from_committed", "deactivate_resets_txn", "end_waits_first_snapshot"}
# Fix models at other bounds, with why: the same-bounds model is out of reach for now.
FIX_BOUNDS_PENDING = {
    "models/pip473/merged.toml": "fixed at merged's four writes is far beyond fixed.toml's 12 million states",
    "models/pip473/merged-gc-redrive-liveness.toml": "fixed-liveness with two txns not yet checked",
}


@pytest.mark.parametrize("model", sorted(str(p.relative_to(ROOT)).removesuffix(".finding.md") + ".toml"
                                         for p in MODELS.rglob("*.finding.md")))
def test_the_fix_model_uses_the_bug_models_bounds(model, request):
    from txncheck.checker.reports.notes import fix_model_path

    if model in FIX_BOUNDS_PENDING:
        request.applymarker(pytest.mark.xfail(strict=True, reason=FIX_BOUNDS_PENDING[model]))
    path = ROOT / model
    fix = fix_model_path(path, load_notes(path))
    if fix is None:
        pytest.skip("no fix model")
    bug, fixed = load_model(path).instantiate().constants, load_model(fix).instantiate().constants
    differ = {k for k in set(bug) | set(fixed) if bug.get(k) != fixed.get(k)} - FIX_SWITCHES
    assert not differ, {k: (bug.get(k), fixed.get(k)) for k in differ}


def test_figures_no_report_shows_are_dropped_only_below_the_reported_folders():
    """`report --all` keeps the fix figures its reports show: a model that
    became the same defect as another's leaves its fix's figure behind
    otherwise, which no one re-checks (gc-forced-delete-fixed's did)."""
    from txncheck.checker.reports.figures import Figures

    f = Figures(None, {"fix": {"models/a/x.toml": {}, "models/a/y.toml": {}, "models/b/z.toml": {}}})
    f.keep_only("fix", {"models/a/x.toml"}, ["models/a/"])
    assert set(f.data["fix"]) == {"models/a/x.toml", "models/b/z.toml"} and f.changed
