"""pyproject.toml lists every package of the source folders: a package left
out would be missing from a non-editable install (and setuptools warns about
it on every install)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_folder_of_python_files_is_a_listed_package():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = set()
    for name, folder in conf["package-dir"].items():
        base = ROOT / folder
        for d in [base, *(p for p in base.rglob("*") if p.is_dir())]:
            if not any(d.glob("*.py")):
                continue
            found.add(".".join([name, *d.relative_to(base).parts]))
    # the deepest mapping wins: txncheck.checker is checker/, not package/checker/
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    # and every listed package is a folder of Python files, or of package data
    assert listed - found <= set(conf["package-data"])
