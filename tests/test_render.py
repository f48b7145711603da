"""Pictures: Mermaid sequence diagrams, DOT, the self-contained HTML page (rendered
in real headless Chromium), and `txncheck graph` exports."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import networkx as nx
import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.itf import parse_trace, read_trace
from txncheck.checker.render.dot import render_dot
from txncheck.checker.render.html import render_html
from txncheck.checker.render.mermaid import render_mermaid
from txncheck.spec.pip473.spec import Pip473

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "counterexamples").rglob("*.itf.json"))


@pytest.fixture(scope="module")
def diehard_trace(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("traces")
    report = check_model(ROOT / "models/classic/diehard.toml", out_dir=out)
    return Path(report.outcome.violations[0].trace_file)


def _state(**fields) -> dict:
    return {k: {"#bigint": str(v)} if isinstance(v, int) else v for k, v in fields.items()}


def pip473_trace(steps: list[tuple[str, dict]], prop: str = "NoLostCommittedAck"):
    """A hand-made PIP-473 trace with the given (action, params) steps."""
    states = []
    for k, (action, params) in enumerate([("init", {})] + steps):
        states.append({"#meta": {"index": k, "action": action, "params": params}, **_state(now=k, note=f"v{k}")})
    doc = {"#meta": {"spec": "pip473", "variant": "merged", "bounds": {"txns": 1}, "property": prop,
                     "kind": "invariant"}, "vars": ["now", "note"], "states": states}
    return parse_trace(doc)


ALL_PIP473_STEPS = [
    ("newTxn", {"txn": "t1"}),
    ("publishCheck", {"op": "w1", "txn": "t1", "seg": "s1"}),
    ("publishPutOp", {"op": "w1", "txn": "t1", "seg": "s1"}),
    ("publishAppend", {"op": "w1", "txn": "t1", "seg": "s1"}),
    ("publishValidate", {"op": "w1", "txn": "t1", "seg": "s1"}),
    ("appendAck", {"op": "a1", "txn": "t1", "seg": "s2", "pos": {"#bigint": "1"}, "cumulative": False}),
    ("endTxn", {"txn": "t1", "decision": "COMMITTED"}),
    ("tcFinalize", {"txn": "t1"}),
    ("timeoutSweep", {"txn": "t1"}),
    ("tick", {}),
    ("tcFailover", {}),
    ("deliverEvent", {"seg": "s1"}),
    ("crash", {"seg": "s2"}),
    ("recover", {"seg": "s2"}),
    ("createChildren", {}),
    ("terminateParents", {}),
    ("casSegmentMetadata", {}),
    ("dispatch", {"seg": "s1"}),
    ("gcSweep", {"txn": "t1"}),
]


def participants(diagram: str) -> list[str]:
    return re.findall(r"^\s*participant \w+ as (.+)$", diagram, re.M)


# -- Mermaid ---------------------------------------------------------------------


def test_every_pip473_action_has_a_route():
    """The spec's table gives every action of spec/pip473/ACTIONS.md messages to draw."""
    names = re.findall(r"^\| `(\w+)` \|", (ROOT / "spec/pip473/ACTIONS.md").read_text(), re.M)
    assert len(names) >= 15
    assert sorted(n for n in names if not Pip473.diagram.get(n)) == []


def test_pip473_diagram_in_the_pips_style():
    d = render_mermaid(pip473_trace(ALL_PIP473_STEPS))
    assert d.startswith("sequenceDiagram\n")
    assert participants(d) == ["Client", "TC", "Metadata Store", "TB s1", "TB s2",
                               "PendingAck s1", "PendingAck s2", "Dispatcher"]
    alias = dict((name, a) for a, name in re.findall(r"participant (\w+) as (.+)", d))
    c, tc, m = alias["Client"], alias["TC"], alias["Metadata Store"]
    tb1, pa2, disp = alias["TB s1"], alias["PendingAck s2"], alias["Dispatcher"]
    assert f"{c}->>{tc}: 1. newTxn → t1" in d
    assert f"{c}->>{tb1}: 2. send(t1, w1)" in d
    assert f"{c}->>{pa2}: 6. ack(t1, a1, 1, FALSE)" in d
    assert f"{tc}->>{m}: CAS /txn/t1.state OPEN→COMMITTED" in d
    assert f"{tc}-->>{c}: endTxn reply (t1)" in d
    assert f"{m}-->>{tb1}: 12. header watch / event fires" in d
    assert f"{disp}->>{tb1}: 18. getMaxReadPosition / isTxnAborted" in d
    # The breaking step (the last) sits in a red rect with a note naming the property.
    tail = d[d.index("rect rgb(255, 205, 205)"):]
    assert "19. GC sweep: /txn-op/t1/* then the header" in tail
    assert "✗ step 19 (gcSweep) breaks NoLostCommittedAck" in tail and tail.rstrip().endswith("end")
    assert d.count("rect ") == 1


def test_generic_fallback_and_escaping(diehard_trace):
    d = render_mermaid(read_trace(diehard_trace))
    assert participants(d) == ["System"]
    assert "P0->>P0: 6. BigToSmall" in d and "breaks NotSolved" in d
    # Process-like parameters become participants; ';', '#', '<' and '>' are escaped.
    t = parse_trace({"#meta": {"spec": "twophase", "variant": "default"}, "vars": ["x"], "states": [
        {"#meta": {"index": 0, "action": "init"}, "x": "a"},
        {"#meta": {"index": 1, "action": "RMPrepare", "params": {"rm": "r1"}}, "x": "b;#<c>"},
        {"#meta": {"index": 2, "action": "Send", "params": {"from": "r1", "to": "r2", "m": "x;y#z", "d": "commit"}}, "x": "c"},
    ]})
    d = render_mermaid(t)
    assert participants(d) == ["r1", "r2"]  # indexed names are processes; commit is a value
    assert "P0->>P0: 1. RMPrepare rm=r1" in d
    assert "P0->>P1: 2. Send from=r1, to=r2, m=x#59;y#35;z, d=commit" in d
    assert ";" not in "".join(line.split(":", 1)[1] for line in d.splitlines() if "->>" in line).replace("#59;", "").replace("#35;", "")


def test_show_formats_through_the_cli(diehard_trace, tmp_path, capsys):
    for fmt in ("mermaid", "dot", "html", "table"):
        assert main(["show", str(diehard_trace), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert {"mermaid": "sequenceDiagram", "dot": "digraph trace", "html": "<!DOCTYPE html>",
                "table": "step  action"}[fmt] in out
    assert main(["show", str(diehard_trace), "--format", "html", "-o", str(tmp_path / "p.html")]) == 0
    assert (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["show", str(diehard_trace), "--format", "svg"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# -- DOT ---------------------------------------------------------------------------


def test_dot_trace(diehard_trace):
    d = render_dot(read_trace(diehard_trace))
    assert d.startswith("digraph trace {") and d.rstrip().endswith("}")
    assert len(re.findall(r"^\s*s\d+ \[", d, re.M)) == 7
    assert len(re.findall(r"^\s*s\d+ -> s\d+", d, re.M)) == 6
    assert re.search(r's6 \[label="state 6\\nbig = 4\\nsmall = 3", fillcolor="#ffcccc"', d)
    assert 's5 -> s6 [label="BigToSmall"]' in d
    t = pip473_trace([("endTxn", {"txn": 't"1', "decision": "C\\D"})])
    assert r'label="endTxn(txn=t\"1, decision=C\\D)"' in render_dot(t)


def test_dot_renders_with_graphviz_when_installed(diehard_trace, tmp_path):
    if not shutil.which("dot"):
        pytest.skip("graphviz 'dot' is not installed (apt-get install graphviz)")
    p = subprocess.run(["dot", "-Tsvg"], input=render_dot(read_trace(diehard_trace)), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "<svg" in p.stdout


# -- txncheck graph --------------------------------------------------------------------


def test_graph_exports_match_the_exploration(tmp_path, capsys):
    model = ROOT / "models/classic/tcommit-rm3.toml"
    assert main(["graph", str(model), "--format", "graphml", "-o", str(tmp_path / "g.graphml")]) == 0
    g = nx.read_graphml(tmp_path / "g.graphml")
    assert g.number_of_nodes() == 34  # TLC's distinct states
    assert sum(1 for _, d in g.nodes(data=True) if d["initial"]) == 1
    report = check_model(model)
    full = report.outcome.exploration.graph()
    assert g.number_of_edges() == full.number_of_edges()
    capsys.readouterr()
    assert main(["graph", str(model), "--depth", "1"]) == 0
    dot = capsys.readouterr().out
    # Within one step of the initial state: the initial state and its 6 successors.
    assert len(re.findall(r"^\s*n[0-9a-f]{16} \[", dot, re.M)) == 7
    assert "doublecircle" in dot
    assert main(["graph", str(ROOT / "models/classic/twophase-rm6.toml"), "--max-states", "500"]) == 2
    assert "more than 500 states" in capsys.readouterr().err


# -- HTML in a real browser ----------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium); the HTML is untested")


def chromium(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    profile = tempfile.mkdtemp(prefix="txncheck-chromium-")
    try:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--virtual-time-budget=15000", *args],
            capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def rendered_dom(page: Path) -> str:
    p = chromium("--dump-dom", page.as_uri())
    assert p.returncode == 0, p.stderr[-2000:]
    return re.sub(r"<script\b.*?</script>", "", p.stdout, flags=re.S)  # the page's text, not the inlined bundle


def assert_diagram_drawn(page: Path, trace) -> str:
    """Chromium renders the page's sequence diagram without a Mermaid error and
    draws every participant of the trace's diagram text; returns the DOM."""
    dom = rendered_dom(page)
    assert 'data-rendered="ok"' in dom, "Mermaid did not finish rendering"
    assert 'id="render-error"' not in dom
    svg = re.search(r'<svg[^>]*aria-roledescription="sequence"[^>]*>.*?</svg>', dom, re.S)
    assert svg, "no sequence-diagram <svg> in the page"
    assert "Syntax error" not in svg.group(0) and 'class="error-icon"' not in svg.group(0)
    for name in participants(render_mermaid(trace)):
        assert name in svg.group(0)
    return dom


def test_html_is_self_contained(diehard_trace):
    page = render_html(read_trace(diehard_trace))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script src" not in page
    assert page.count("</script>") == 2


def test_html_carries_the_vendored_bundle_gzipped(diehard_trace):
    """The page holds Mermaid's dist bundle, byte for byte once unpacked (its
    recorded sha256), gzipped: a seven-state trace's page is 1.4 MB at most,
    not the 3.5 MB of the bundle itself."""
    import base64
    import gzip
    import hashlib

    from txncheck.checker.render.html import MERMAID_SHA256

    page = render_html(read_trace(diehard_trace))
    packed = re.search(r'var MERMAID_GZIP = "([A-Za-z0-9+/=]+)";', page).group(1)
    bundle = gzip.decompress(base64.b64decode(packed))
    assert hashlib.sha256(bundle).hexdigest() == MERMAID_SHA256 and len(bundle) > 3_000_000
    assert len(page.encode()) < 1_400_000


PAGES = ["diehard", "pip473-all-actions"] + [str(p.relative_to(ROOT)) for p in CORPUS]


@needs_chromium
@pytest.mark.parametrize("which", PAGES)
def test_html_page_renders_its_diagram_in_chromium(which, diehard_trace, tmp_path):
    if which == "diehard":
        trace = read_trace(diehard_trace)
    elif which == "pip473-all-actions":
        trace = pip473_trace(ALL_PIP473_STEPS)
    else:
        trace = read_trace(ROOT / which)
    page = tmp_path / "trace.html"
    page.write_text(render_html(trace), encoding="utf-8")
    dom = assert_diagram_drawn(page, trace)
    if trace.meta.get("property"):
        assert trace.meta["property"] in dom


@needs_chromium
def test_html_screenshot(tmp_path):
    page = tmp_path / "pip473.html"
    page.write_text(render_html(pip473_trace(ALL_PIP473_STEPS)), encoding="utf-8")
    shot = tmp_path / "pip473.png"
    p = chromium("--window-size=1400,2400", f"--screenshot={shot}", page.as_uri())
    assert p.returncode == 0, p.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 2400)
    assert len(data) > 50_000  # a drawn diagram, not a blank page
    keep = Path(tempfile.gettempdir()) / "txncheck-render-screenshot.png"
    shutil.copy(shot, keep)  # for a person to look at
