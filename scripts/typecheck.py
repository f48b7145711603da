"""Type-check checker/ and spec/api.py with mypy, configured in pyproject.toml
([tool.mypy]: what is checked, how strictly, which libraries have no types).

    .venv/bin/python scripts/typecheck.py        # = make typecheck; exit 0 when clean

mypy finds modules by their folders, and txncheck's folders are not named
after its modules: pyproject.toml's package-dir maps `txncheck.checker` to
checker/, `txncheck.spec` to spec/, and the editable install resolves that
with an import hook that mypy does not run. So this script first lays the
package out as the import system sees it, out/typecheck/txncheck/, of
symbolic links made from that same mapping, and mypy reads it from there
(`mypy_path`); its cache is under out/typecheck/cache, so that a second run
checks only what changed. Its messages name the files in the repository.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "out" / "typecheck"


def link(path: Path, target: Path) -> None:
    """`path` a symbolic link to `target`, whatever was there (another run may make it too)."""
    want = os.path.relpath(target, path.parent)
    if path.is_symlink() and os.readlink(path) == want:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    os.symlink(want, tmp)
    os.replace(tmp, path)


def lay_out() -> dict[str, str]:
    """out/typecheck/txncheck/ as pyproject.toml's package-dir maps the
    folders; returns {path in it: path in the repository} for mypy's messages."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    top = TREE / "txncheck"
    top.mkdir(parents=True, exist_ok=True)
    for name in sorted(package_dir):   # parents before children
        source = ROOT / package_dir[name]
        if name == "txncheck":
            for f in source.glob("*.py"):
                link(top / f.name, f)
        elif name.count(".") == 1:     # txncheck.X
            link(top / name.split(".")[1], source)
        else:                          # a deeper one must be its parent's sub-folder, which the link shows
            parent, leaf = name.rsplit(".", 1)
            if (ROOT / package_dir.get(parent, "?") / leaf).resolve() != source.resolve():
                raise SystemExit(f"typecheck: package-dir maps {name} away from its parent's folder; link it here")
    here = top.relative_to(ROOT).as_posix()
    return {f"{here}/{name.partition('.')[2].replace('.', '/')}/".replace("//", "/"): f"{folder}/"
            for name, folder in sorted(package_dir.items(), reverse=True)}   # children before parents


def main(argv: list[str]) -> int:
    paths = lay_out()
    try:
        from mypy import api
    except ImportError:
        raise SystemExit("typecheck: mypy is not installed in this environment; run scripts/install.sh") from None

    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), *argv])
    for linked, real in paths.items():
        out = out.replace(linked, real)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return status


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main(sys.argv[1:]))
