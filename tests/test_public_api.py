"""The public API: `txncheck.__all__` is the surface the tutorial, the
guide and the examples use, each name resolves (lazily: `import txncheck`
loads none of them), and every `from txncheck... import` in the docs and
examples names a public module or a name of `__all__`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import txncheck

ROOT = Path(__file__).resolve().parent.parent
# the modules a spec's author imports from; the rest of txncheck is internal
PUBLIC_MODULES = {"txncheck", "txncheck.spec.api", "txncheck.spec.schema"}


def test_every_public_name_resolves():
    for name in txncheck.__all__:
        assert getattr(txncheck, name) is not None, name
    assert sorted(dir(txncheck)) == sorted(txncheck.__all__)


def test_importing_txncheck_loads_no_engine():
    code = "import sys, txncheck; print(sorted(m for m in sys.modules if m.startswith(('txncheck.', 'z3'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_docs_and_examples_import_only_the_public_api():
    used = []
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").rglob("*.py")),
             ROOT / "checker" / "commands" / "new.py"]
    for f in files:
        for m in re.finditer(r"from (txncheck[\w.]*) import ([\w, ]+)", f.read_text()):
            used.append((f.relative_to(ROOT), m.group(1), [n.strip() for n in m.group(2).split(",")]))
    assert used
    for where, module, names in used:
        if module == "txncheck":
            assert set(names) <= set(txncheck.__all__), (where, names)
        else:
            assert module in PUBLIC_MODULES, (where, module)
            mod = __import__(module, fromlist=names)
            assert all(hasattr(mod, n) for n in names), (where, module, names)
