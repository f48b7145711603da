"""`txncheck list [DIR]`: the shipped model files."""

from __future__ import annotations

from pathlib import Path

from ..model import ModelError, find_models, load_model, shipped_models_dir


def register(sub) -> None:
    p = sub.add_parser("list", help="list the model files (default: the shipped models)")
    p.add_argument("dir", nargs="?", help="folder of model files")
    p.set_defaults(run=run)


def run(args) -> int:
    root = Path(args.dir) if args.dir else shipped_models_dir()
    if root is None or not root.exists():
        raise ModelError(f"{args.dir or 'models/'}: no such folder")
    for path in find_models(root):
        try:
            m = load_model(path)
            desc = f"{m.spec_name} [{m.variant}]" + (f"  {m.description}" if m.description else "")
        except ModelError as exc:
            desc = f"(invalid: {exc})"
        try:
            shown = path.relative_to(Path.cwd())
        except ValueError:
            shown = path
        print(f"{shown}  {desc}")
    return 0
