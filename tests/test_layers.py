"""`checker/` has no import cycle, and each module imports only from its own
layer or a lower one (docs/adr/0009-layers-of-the-checker.md), no engine
importing another but bfs its own checkpoint/; `spec/` never
imports `checker/`, `reference/` imports nothing of the project outside itself
(it follows the real code, not the spec or the checker), and `counterexamples/`
has no import cycle either. spec/pip473's folders are layers too: protocol/,
reductions/, the top folder (the tables and the entry point), symbolic/.

The graph is read from the source with `ast`, so an import inside a function
counts as much as one at the top: a lazy import hides a cycle from Python,
not from this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import txncheck.checker

CHECKER = Path(txncheck.checker.__file__).resolve().parent
PACKAGE = "txncheck.checker"
SOURCE = CHECKER.parent  # the folders of the txncheck.* packages (pyproject.toml's package-dir)

# Lowest first. A module belongs to the first layer with a prefix of its name;
# every other module of checker/ is in the top layer, "front" (the API, the
# gate, the command line, rendering, reports, liveness, model files).
# failures.py is the process's exit-code contract and its record of signals,
# which an engine consults (Spark swallows Ctrl-C), so it is in the base, with
# reports/output.py, whose ReportError it maps; so is spec_errors.py, the guard
# of a user's spec, which Spark's executors put on the spec they rebuild.
LAYERS = [
    ("base", ["errors", "encoding", "invariants", "job", "verdicts", "progress", "exploration", "options",
              "failures", "reports.output", "spec_errors", "atomic", "revive"]),
    ("reductions", ["reductions"]),
    ("engines", ["engines"]),
]


def module_name(path: Path, root: Path = CHECKER, package: str = PACKAGE) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imports(root: Path = CHECKER, package: str = PACKAGE):
    """(module, imported name, line) for every import under `root`, anywhere in
    a module's body (`if TYPE_CHECKING:` too), relative imports made absolute;
    `from X import y` gives X.y when that is a module of `root`, else X."""
    modules = {module_name(p, root, package): p for p in root.rglob("*.py")}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                # `from . import bfs` imports the submodule; `from . import EngineError` the package
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                           for a in node.names]
            else:
                continue
            for t in targets:
                yield name, t, node.lineno


def import_graph(root: Path = CHECKER, package: str = PACKAGE) -> nx.DiGraph:
    """Module -> the modules of `root` it imports, anywhere in its body."""
    g = nx.DiGraph()
    g.add_nodes_from(module_name(p, root, package) for p in root.rglob("*.py"))
    for name, t, line in imports(root, package):
        if t in g and t != name:
            g.add_edge(name, t, line=line)
    return g


def layer(module: str) -> int:
    short = module.removeprefix(PACKAGE + ".")
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(short == p or short.startswith(p + ".") for p in prefixes):
            return rank
    return len(LAYERS)


def describe(g: nx.DiGraph, cycle: list[str]) -> str:
    steps = zip(cycle, cycle[1:] + cycle[:1])
    return " -> ".join(f"{a} (line {g.edges[a, b]['line']})" for a, b in steps) + f" -> {cycle[0]}"


def test_the_checker_has_no_import_cycle():
    g = import_graph()
    assert len(g) > 40  # the walk found checker/
    cycles = sorted(nx.simple_cycles(g), key=len)
    assert not cycles, "import cycles in checker/:\n" + "\n".join(describe(g, c) for c in cycles[:10])


def test_each_module_imports_from_its_layer_or_below():
    g = import_graph()
    names = [n for n, _ in LAYERS] + ["front"]
    upward = [f"{a} ({names[layer(a)]}) imports {b} ({names[layer(b)]}) at line {g.edges[a, b]['line']}"
              for a, b in g.edges if layer(b) > layer(a)]
    assert not upward, "imports against the layers of ADR 0009:\n" + "\n".join(sorted(upward))


# An engine imports no other engine: engines/__init__.py chooses between them by
# name, and a helper two engines share goes into the base (ADR 0009). The one
# exception ADR 0009's table names: checkpoint/ is bfs's own.
ENGINES = PACKAGE + ".engines"
OWN = {("bfs", "checkpoint")}   # (engine, the engine package it may import)


def engine_of(module: str) -> str | None:
    """The engine (engines/<X>.py or engines/<X>/) a module belongs to; None
    outside the engines, and for engines/__init__.py, the lookup by name."""
    if not module.startswith(ENGINES + "."):
        return None
    return module.removeprefix(ENGINES + ".").partition(".")[0]


def engine_crossings(g: nx.DiGraph) -> list[str]:
    return sorted(f"{a} imports {b} at line {g.edges[a, b]['line']}" for a, b in g.edges
                  if (x := engine_of(a)) and (y := engine_of(b)) and x != y and (x, y) not in OWN)


def test_no_engine_imports_another():
    g = import_graph()
    assert {engine_of(n) for n in g} >= {"bfs", "simulate", "parallel", "spark", "checkpoint"}
    crossings = engine_crossings(g)
    assert not crossings, "an engine imports another (ADR 0009):\n" + "\n".join(crossings)


def test_the_engine_rule_finds_a_lazy_import_of_another_engine(tmp_path):
    pkg = tmp_path / "checker"
    (pkg / "engines" / "parallel").mkdir(parents=True)
    (pkg / "engines" / "checkpoint").mkdir()
    for f in ["__init__.py", "engines/__init__.py", "engines/parallel/__init__.py", "engines/checkpoint/__init__.py"]:
        (pkg / f).write_text("")
    (pkg / "engines" / "bfs.py").write_text("from .checkpoint import store\n")   # bfs's own
    (pkg / "engines" / "checkpoint" / "store.py").write_text("")
    (pkg / "engines" / "parallel" / "moves.py").write_text("def f():\n    from ..bfs import run\n")
    assert engine_crossings(import_graph(pkg)) == [f"{ENGINES}.parallel.moves imports {ENGINES}.bfs at line 2"]


def outside(folder: str, allowed: tuple[str, ...]) -> list[str]:
    """The imports of txncheck packages by `folder`'s modules other than `allowed`."""
    return sorted(f"{m} imports {t} at line {line}" for m, t, line in imports(SOURCE / folder, f"txncheck.{folder}")
                  if t.startswith("txncheck.") and not t.startswith(allowed) or t.split(".")[0] in
                  {"spec", "checker", "reference", "counterexamples"})


def test_the_spec_never_imports_the_checker():
    """A spec is the document made executable: it needs the spec API, not the checker."""
    assert outside("spec", ("txncheck.spec",)) == []


# spec/pip473's folders, lowest first (spec/pip473/spec.py's module map): the
# protocol's components, the reductions' contracts over them, the tables and
# the entry point (the top folder), and the hand-written symbolic relation,
# which reads the protocol's constants and the properties' table and which
# the spec never imports.
PIP473 = "txncheck.spec.pip473"
PIP473_LAYERS = ["protocol", "reductions", "", "symbolic"]


def pip473_layer(module: str) -> int:
    folder = module.removeprefix(PIP473 + ".").partition(".")[0]
    return PIP473_LAYERS.index(folder if folder in PIP473_LAYERS else "")


def test_spec_pip473_imports_from_its_folder_or_a_lower_one():
    g = import_graph(SOURCE / "spec", "txncheck.spec")
    mine = [n for n in g if n.startswith(PIP473 + ".")]
    assert {pip473_layer(n) for n in mine} == set(range(len(PIP473_LAYERS)))   # every folder has modules
    names = [f or "the top" for f in PIP473_LAYERS]
    upward = [f"{a} ({names[pip473_layer(a)]}) imports {b} ({names[pip473_layer(b)]}) at line {g.edges[a, b]['line']}"
              for a, b in g.edges(mine) if b.startswith(PIP473 + ".") and pip473_layer(b) > pip473_layer(a)]
    assert not upward, "imports against spec/pip473's folders:\n" + "\n".join(sorted(upward))
    cycles = list(nx.simple_cycles(g.subgraph(mine)))
    assert not cycles, "import cycles in spec/pip473:\n" + "\n".join(describe(g, c) for c in cycles[:10])


def test_the_reference_imports_nothing_of_the_project_outside_itself():
    """reference/ follows the real code: no spec, no checker, no replay."""
    assert outside("reference", ("txncheck.reference",)) == []


def test_the_counterexamples_have_no_import_cycle():
    """Replay's handlers import the Step and the Bridge protocol (replay_pip473/step.py),
    not the bridge that dispatches to them."""
    g = import_graph(SOURCE / "counterexamples", "txncheck.counterexamples")
    assert len(g) > 10
    cycles = sorted(nx.simple_cycles(g), key=len)
    assert not cycles, "import cycles in counterexamples/:\n" + "\n".join(describe(g, c) for c in cycles[:10])


def test_the_cycle_test_finds_a_lazy_import_cycle(tmp_path):
    """The walk sees imports inside functions, which is where cycles hide."""
    pkg = tmp_path / "checker"
    (pkg / "engines").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engines" / "__init__.py").write_text("")
    (pkg / "exploration.py").write_text("def f():\n    from .engines.bfs import run\n")
    (pkg / "engines" / "bfs.py").write_text("from ..exploration import f\n")
    g = import_graph(pkg)
    assert [sorted(c) for c in nx.simple_cycles(g)] == [[f"{PACKAGE}.engines.bfs", f"{PACKAGE}.exploration"]]
    assert layer(f"{PACKAGE}.exploration") < layer(f"{PACKAGE}.engines.bfs")


def test_no_module_of_the_checker_is_over_400_lines():
    """A module over 400 lines is doing more than one job: split it by job."""
    long = {str(p.relative_to(CHECKER)): n for p in CHECKER.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}


def test_no_test_imports_from_a_conftest():
    """conftest.py files hold pytest's hooks and fixtures; what tests share is
    in tests/helpers.py (tests/zk/helpers.py), so a test's imports say where
    a name comes from and a conftest never has to be imported twice."""
    tests, found = Path(__file__).resolve().parent, []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "conftest":
                found.append(f"{path.relative_to(tests.parent)}:{node.lineno}")
    assert found == []
