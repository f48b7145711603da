"""Changing a guard in PIP-473's Python code changes what `txncheck prove
--derived` concludes, with no other file touched (issue 52): the spec's
package is copied, one line of the copy is edited, and the relation is
derived from the copy's code. The unedited copy proves append-before-op-
fixed's properties with fixed-standard's lemmas (proved: the steps only the
derived relation has, which no state of the invariant enables, are named in
the model's `derived_dead`); the
dispatcher reading past maxReadPosition gives a counterexample to
induction at `dispatch`, and a crash with no crash left one at `crash`."""

from __future__ import annotations

import re
import shutil
import sys

import pytest

from txncheck.checker.cli import main

from .helpers import ROOT

PIP473 = ROOT / "spec" / "pip473"
MODELS = ROOT / "models" / "pip473"
SPEC = "entry.py:Pip473"

# (file, the guard as the spec writes it, the edit)
EDITS = {
    "unedited": None,
    "dispatch": ("protocol/dispatcher.py", "    if pos > read_limit(m, s, j, p):\n",
                 "    if pos > len(s.ledger[j]):\n"),
    "crash": ("spec.py", "            if s.crashes > 0 and holds:\n", "            if holds:\n"),
}


def copy_spec(dest, name):
    """spec/pip473 as a package `name` of its own (imports of the spec API
    made absolute), without the hand-written relation, and an entry file."""
    pkg = dest / name
    shutil.copytree(PIP473, pkg, ignore=shutil.ignore_patterns("symbolic", "__pycache__", "*.md"))
    for f in pkg.rglob("*.py"):
        f.write_text(re.sub(r"from \.{2,3}(api|schema) import", r"from txncheck.spec.\1 import", f.read_text()))
    (dest / "entry.py").write_text(f"from {name}.spec import Pip473  # noqa: F401\n")
    for stem in ("append-before-op-fixed", "fixed-standard"):
        text = (MODELS / f"{stem}.toml").read_text().replace('spec = "pip473"', f'spec = "{SPEC}"')
        (dest / f"{stem}.toml").write_text(text)
    return pkg


@pytest.mark.slow
@pytest.mark.parametrize("edit", list(EDITS))
def test_a_guard_changed_in_pip473s_code_changes_what_prove_concludes(capsys, tmp_path, monkeypatch, edit):
    name = f"pip473_{edit}"     # a package per edit: a process imports each once
    monkeypatch.delitem(sys.modules, name, raising=False)
    pkg = copy_spec(tmp_path, name)
    if EDITS[edit]:
        path, guard, changed = EDITS[edit]
        src = (pkg / path).read_text()
        assert src.count(guard) == 1, f"{path} no longer has the guard {guard.strip()!r}"
        (pkg / path).write_text(src.replace(guard, changed))
    rc = main(["prove", str(tmp_path / "append-before-op-fixed.toml"), "--derived", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    if edit == "unedited":
        assert "inductive step: every action preserves all 61 clauses" in out, out[-2000:]
        # and nothing the model asks is left undecided: its derived-only dead steps are named
        assert rc == 0 and "verdict: proved" in out, out[-2000:]
        # the paths on which next raises are actions the proof itself refutes: not listed as dead
        assert "raises(" not in out, out[-2000:]
        return
    assert rc == 3 and "verdict: not inductive" in out, out[-2000:]
    assert re.search(rf"^  action {edit}\(seg=s1\)$", out, re.M), out[-3000:]
    # the CTI is a pair of the spec's states, in its own fields (not a relation's cells)
    # (which state 1 Z3 picks follows the samples the shape came from: any of the spec's ledgers)
    assert "  the fields' names: docs/pip473-state.md\n" in out and "    ledger = [s1 |-> " in out, out[-2500:]
