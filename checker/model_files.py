"""Which files are model files: a `.toml` file that names a spec (a
top-level `spec` key), or one too broken to tell, which is then reported
rather than skipped. Other TOML files (`pyproject.toml`, a sweep campaign
under `sweeps/`) are not models, so `check --all .` on a repository root
checks its models and nothing else. Read as untrusted: only a regular file
of at most MAX_MODEL_BYTES is parsed; a larger one counts as a model, so
that loading it says it is too large. Cheap to import (the pytest plugin
uses it at collection)."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

MAX_MODEL_BYTES = 1024 * 1024


def is_model_file(path: Path) -> bool:
    path = Path(path)
    if path.suffix != ".toml" or "sweeps" in path.parts:
        return False
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            data = f.read(MAX_MODEL_BYTES + 1)
    except OSError:
        return False
    if len(data) > MAX_MODEL_BYTES:
        return True
    try:
        return "spec" in tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError, ValueError):  # nesting, digit limit
        return True


def find_models(root: str | Path) -> list[Path]:
    """Model files under a folder, in a stable order (a file given is taken
    as it is: naming it says it is one)."""
    root = Path(root)
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.toml")
                  if "sweeps" not in p.relative_to(root).parts and is_model_file(p))
