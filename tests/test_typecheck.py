"""The type check: mypy finds no error in checker/ and the spec API
(scripts/typecheck.py, configured by pyproject.toml's [tool.mypy]), and it
checked every module of checker/, so a narrowed configuration cannot pass
by checking less. Slow tier: mypy without its cache takes seconds of CPU;
`make typecheck` is the quick way to run it (a second run reads its cache
under out/typecheck/)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_checker_and_spec_api_type_check():
    run = subprocess.run([sys.executable, "scripts/typecheck.py"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, f"mypy (make typecheck) found errors:\n{run.stdout}{run.stderr}"
    checked = re.search(r"^Success: no issues found in (\d+) source files$", run.stdout, re.M)
    assert checked, run.stdout
    # every module of checker/, the spec API with its package's __init__, and txncheck's own
    want = len(list((ROOT / "checker").rglob("*.py"))) + 3
    assert int(checked.group(1)) == want, run.stdout
