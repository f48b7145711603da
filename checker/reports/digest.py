"""What a fix model's recorded figures are of (`model_digest`), so that a
report can tell current figures from stale ones."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from ...spec.source import code_of, package_files
from ..model import MEASURED


def model_digest(path: Path) -> str:
    """What a fix model's recorded figures are of: the model's settings and its spec's code
    (`spec/<name>/**.py`, its sub-packages too), so a change to either makes them stale. Comments, docstrings and
    layout are left out (the parsed TOML, the AST without docstrings or positions): a reworded
    docstring does not change a state count. The AST's dump is that of this interpreter
    (CI's Python 3.11); another version may call every figure stale, never a stale one current."""
    try:
        model = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        model = None
    if isinstance(model, dict) and isinstance(model.get("expect"), dict):  # what a run measured is not a setting
        model["expect"] = {k: v for k, v in model["expect"].items() if k not in MEASURED}
    if isinstance(model, dict):  # nor is how it is proved ([prove]), or whether states are kept as
        model.pop("prove", None)  # fingerprints: neither changes a figure (symmetry and POR do)
        model.pop("fingerprints", None)
    h = hashlib.sha256(json.dumps(model, sort_keys=True, default=str).encode() if model is not None
                       else path.read_bytes() if path.is_file() else b"")
    spec = model.get("spec") if isinstance(model, dict) else None
    specs = Path(__file__).resolve().parents[2] / "spec"   # txncheck/spec, beside txncheck/checker
    folder = specs / spec if isinstance(spec, str) and spec.isidentifier() else None
    if folder is not None and folder.is_dir():
        for src in package_files(folder):   # its sub-packages too (spec/pip473/protocol/, ...)
            h.update(src.relative_to(folder).as_posix().encode() + b"\0" + code_of(src) + b"\0")
    return h.hexdigest()[:16]
