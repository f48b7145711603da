"""The documentation's examples are all run (tests/docs_examples.py), and
the comparison of their output is strict where it should be."""

from __future__ import annotations

import re

from txncheck.checker.model import load_model

from .docs_examples import DOCUMENTS, LANGUAGES, ROOT, _loose, _matches

FENCE = re.compile(r"^```(.*)$", re.M)
SKIP = re.compile(r'<!-- skip: next "[^"]+" -->\n+$')


def documents():
    found = {p for pattern in DOCUMENTS for p in ROOT.glob(pattern)}
    return sorted(p for p in found if "findings" not in p.parts)


def fenced_blocks(text):
    """(language, text before the block) of each fenced block."""
    fences = list(FENCE.finditer(text))
    assert len(fences) % 2 == 0, "an unclosed code fence"
    return [(m.group(1).strip(), text[:m.start()]) for m in fences[::2]]


def test_every_code_block_has_a_language_that_runs():
    blocks = {p.relative_to(ROOT).as_posix(): fenced_blocks(p.read_text()) for p in documents()}
    assert {"README.md", "docs/guide.md", "docs/tutorial.md"} <= set(blocks)
    unrun = [(doc, lang or "(none)") for doc, bs in blocks.items() for lang, _ in bs if lang not in LANGUAGES]
    assert unrun == [], "give each block a language of tests/docs_examples.py, or skip it with a reason"
    # a language that cannot run here is only allowed where the block is skipped, with a reason
    unskipped = [doc for doc, bs in blocks.items() for lang, before in bs if lang == "yaml" and not SKIP.search(before)]
    assert unskipped == []
    assert sum(lang == "console" for bs in blocks.values() for lang, _ in bs) >= 15


def test_output_is_compared_loosely_only_for_times_memory_ports_and_spacing():
    want = _loose("288 distinct states, depth 11, 0.01s (321,220 states/s), peak memory 60 MiB\n"
                  "(store: private ZooKeeper at 127.0.0.1:43125)")
    same = _loose("288 distinct states, depth 11, 2.50s (1,002 states/s), peak memory 99 MiB\n"
                  "(store:   private ZooKeeper at 127.0.0.1:50001)")
    assert _matches(want, same)
    assert not _matches(want, _loose(same[0].replace("288", "289") + "\n" + same[1]))
    assert not _matches(want, _loose(same[0].replace("depth 11", "depth 12") + "\n" + same[1]))
    assert not _matches(want, same[:1])


def test_an_ellipsis_stands_for_lines_or_for_text_within_a_line():
    got = ["model m", "coverage:", "  A 1 / 1", "verdict: ok (P holds)"]
    assert _matches(["model m", "...", "verdict: ok ..."], got)
    assert _matches(["...", "verdict: ok (P holds)"], got)
    assert not _matches(["model m", "verdict: ok (P holds)"], got)      # lines left out need a ...
    assert not _matches(["...", "verdict: violation ..."], got)


# the bounds each spec's fields are sampled at, besides its defaults: those that add fields to a trace
GLOSSARY_BOUNDS = {"pip473": ({"apply": "steps", "unloads": 1, "sync": "steps", "tc": "steps", "plain": "0"},
                              {"subs": 2, "trim": True, "decisions": "both"})}


def printed_fields(spec, most: int = 300) -> tuple[set, dict]:
    """(the names a trace or a derived relation's CTI prints, the record
    classes among them) on the first `most` states of `spec`, breadth first:
    `state_vars`' keys and the keys of its records, and the fields of every
    NamedTuple in the state."""
    from collections import deque

    from txncheck.spec.api import Record

    names, classes = set(), {}

    def walk(v):
        if hasattr(v, "_fields"):
            classes[type(v).__name__] = type(v)
            names.update(v._fields)
        if isinstance(v, Record):
            names.update(v)
        for x in (v.values() if isinstance(v, dict) else v if isinstance(v, (tuple, frozenset)) else ()):
            walk(x)

    seen = set(spec.init_states())
    todo = deque(seen)
    while todo and len(seen) < most:
        for _, t in spec.next(todo.popleft()):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    for s in seen:
        names.update(spec.state_vars(s))
        walk(s)
        walk(spec.state_vars(s))
    return names, classes


def test_the_glossary_lists_every_field_of_every_spec():
    """Every registered spec has a glossary (checker/glossary.py: the page
    `show` and the reports link), whose tables have a row for each name a
    trace or a derived relation's CTI prints, and none for a name that is not
    one: the first cell's names, or those of a record spelled out as
    `Name(a, b)` or `(a, b)` (which lists all of a state class's fields).
    The names are sampled on reachable states (GLOSSARY_BOUNDS)."""
    from txncheck.checker.glossary import anchor, glossary
    from txncheck.spec.registry import SPECS, load_spec_class

    problems = []
    for name in SPECS:
        where = glossary(name)
        if not where:
            problems.append(f"{name}: no glossary")
            continue
        page, _, section = where.partition("#")
        text = (ROOT / page).read_text().split(CELLS_HEADING)[0]
        if section:   # its section of a shared page
            parts = re.split(r"^## (.+)$", text, flags=re.M)
            text = next(body for head, body in zip(parts[1::2], parts[2::2]) if anchor(head) == section)
        rows = {n for line in text.splitlines() if line.startswith("| ")
                for n in re.findall(r"`(\w+)`", line.split("|")[1])}
        spelled = {}
        for record, fields in re.findall(r"`(\w*)\(([\w, ]+)\)`", text):
            spelled.setdefault(record, set()).update(f.strip() for f in fields.split(",") if f.strip())
        cls = load_spec_class(name)
        printed, classes = set(), {}
        for bounds in ({}, *GLOSSARY_BOUNDS.get(name, ())):
            spec = cls(cls.variants[-1], **bounds) if cls.variants else cls(**bounds)
            more, found = printed_fields(spec)
            printed |= more
            classes.update(found)
        listed = rows.union(*spelled.values())
        problems += [f"{name}: {n} is printed, not in the glossary" for n in sorted(printed - listed)]
        problems += [f"{name}: the glossary has a row for {n}, which is printed nowhere" for n in sorted(rows - printed)]
        problems += [f"{name}: `{r}(...)` lists {sorted(f)}, its fields are {sorted(classes[r]._fields)}"
                     for r, f in spelled.items() if r in classes and f != set(classes[r]._fields)]
    assert not problems, "\n".join(problems)


CELLS_HEADING = "## The proof's cells"


def test_the_pip473_glossary_lists_every_cell_of_the_proof():
    """Its last section has a row for each cell the relation declares, over
    models that between them declare every kind (pip-text's event queues,
    merged's coalesced flag, acks, unloads), and none that is not one."""
    from txncheck.spec.pip473.symbolic.relation_state import Layout

    text = (ROOT / "docs" / "pip473-state.md").read_text().split(CELLS_HEADING)[1]
    rows = set(re.findall(r"^\| `(\w+)` \|", text, re.M))
    declared = set()
    for stem in ("fixed-standard-unload", "pip-text", "two-subs-fixed"):
        spec = load_model(ROOT / "models" / "pip473" / f"{stem}.toml").instantiate()
        declared |= set(Layout(spec).schema.symbols)
    assert rows == declared


def test_the_glossaries_are_named_where_their_names_are_printed():
    """`show`'s table and HTML page of a trace name the glossary of the
    state's fields (PIP-473's page, another built-in spec's section of the
    shared one), a CTI of PIP-473's proof the section on the cells (an
    anchor of a heading that exists); a spec without a glossary (a user's)
    gets no line."""
    from txncheck.checker.glossary import CELLS, glossary
    from txncheck.checker.itf import read_trace
    from txncheck.checker.render.html import render_html
    from txncheck.checker.render.table import render_table
    from txncheck.checker.symbolic.induction import CTI, show_cti

    pip473 = read_trace(ROOT / "counterexamples" / "pip473" / "append-before-op.itf.json")
    kip868 = read_trace(ROOT / "counterexamples" / "kip868" / "dropping-loader.itf.json")
    assert "\nfields: docs/pip473-state.md\n" in render_table(pip473)
    assert " · fields: docs/pip473-state.md · " in render_html(pip473)
    assert "\nfields: docs/glossary.md#kip868\n" in render_table(kip868)
    kip868.meta["spec"] = "x.py:Spec"
    assert "fields:" not in render_table(kip868) and "fields:" not in render_html(kip868)
    assert glossary("pip473", CELLS) == "docs/pip473-state.md#the-proofs-cells"
    assert glossary("kip868", CELLS) == glossary("x.py:Spec") == ""
    cti = CTI("P", {("big", ()): 0, ("small", ()): 0}, ("FillBigJug", ()), {("big", ()): 5, ("small", ()): 0}, ["P"])
    schema = load_model(ROOT / "models" / "classic" / "diehard.toml").instantiate().schema
    assert show_cti(schema, cti, "g.md")[-1] == "  the cells' names: g.md"


def test_the_readme_quotes_the_spec_error_line_the_cli_prints(tmp_path, capsys):
    """README's exit-code table quotes the line a spec whose `next` raises gets."""
    from txncheck.checker.cli import main

    quoted = re.search(r"e\.g\. `(txncheck: error: lock\.py:9: in next: [^`]+)`",
                       (ROOT / "README.md").read_text())
    assert quoted, "README no longer quotes the spec-error line"
    (tmp_path / "lock.py").write_text(
        "from txncheck.spec.api import Spec\n\n\nclass Lock(Spec):\n    name = 'lock'\n\n"
        "    def next(self, s):\n        yield from ()\n        raise ValueError('boom')\n\n"
        "    def setup(self):\n        pass\n\n    def init_states(self):\n        yield 0\n\n"
        "    def observe(self, s):\n        return {}\n")
    (tmp_path / "lock.toml").write_text('spec = "lock.py:Lock"\n')
    assert main(["check", str(tmp_path / "lock.toml"), "--quiet", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().replace(f"{tmp_path}/", "") == quoted.group(1)


def test_tests_readme_lists_every_test_file():
    """tests/README.md says what each test file guards: every one is listed."""
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", (ROOT / "tests" / "README.md").read_text(), re.M))
    files = {p.relative_to(ROOT / "tests").as_posix() for p in (ROOT / "tests").rglob("test_*.py")}
    assert files - listed == set(), "say in tests/README.md what these files guard"
    assert listed - files == set(), "tests/README.md lists files that are gone"


def test_the_readme_lists_every_finding_as_docs_findings_does():
    """README's findings table is docs/findings/index.md's (generated by
    `txncheck report`), row for row: the report, its title, property and length."""
    def rows(text: str, prefix: str) -> set:
        out = set()
        for line in text.splitlines():
            m = re.search(r"\[([^\]]+)\]\(" + re.escape(prefix) + r"([\w/.-]+\.md)\)", line)
            p = re.search(r"`(\w+)`", line.split("](", 1)[1]) if m else None
            n = re.search(r"(\d+) states", line)
            if m and p and n:
                out.add((m.group(2), m.group(1), p.group(1), int(n.group(1))))
        return out

    readme = rows((ROOT / "README.md").read_text(), "docs/findings/")
    index = rows((ROOT / "docs" / "findings" / "index.md").read_text(), "")
    assert readme and readme == index


def test_the_readme_reads_in_ten_minutes():
    """At most 2,000 words, as `wc -w` counts them: the rest is in docs/."""
    assert len((ROOT / "README.md").read_text().split()) <= 2000


def test_the_docs_figures_of_a_model_are_its_expect():
    """Every figure a docs table quotes for a model (distinct, generated,
    depth, trace length) is the model's recorded [expect]
    (scripts/doc_figures.py --write rewrites them)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    problems = [p for doc in mod.DOCS for p in mod.fix(doc.read_text(), doc.name)[1]]
    assert problems == []
    # the check reads what it should: a wrong figure in a row is named
    row = ("| model | verdict | trace / states | reproduce |\n|---|---|---|---|\n"
           "| x | ok | 1 distinct, 2 generated, depth 3 | `txncheck check models/pip473/fixed.toml` |")
    assert [p.split(": ", 1)[1].split(" (")[1] for p in mod.fix(row)[1]] == [
        "distinct is 1,186,442)", "generated is 4,759,853)", "depth is 14)"]
