"""`txncheck list [DIR]`: the model files (default: the shipped ones), each
with its spec and where that spec comes from (built-in, entry point, file or
module). It reads the model files only: no spec is imported, so listing runs
no code a model file names (checking does). `txncheck list --specs`: the
specs a model file can name."""

from __future__ import annotations

from pathlib import Path

from ...spec.api import SpecError
from ...spec.registry import origin, registered
from ..model import ModelError, find_models, load_model, shipped_models_dir
from ..render import terminal_safe


def register(sub) -> None:
    p = sub.add_parser("list", help="list the model files (default: the shipped models)")
    p.add_argument("dir", nargs="?", help="folder of model files")
    p.add_argument("--specs", action="store_true", help="list the registered specs and their origin instead")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.specs:
        for name, (target, source) in sorted(registered().items()):
            print(terminal_safe(f"{name}  {target}  ({source})"))
        return 0
    root = Path(args.dir) if args.dir else shipped_models_dir()
    if root is None or not root.exists():
        raise ModelError(f"{args.dir or 'models/'}: no such folder")
    for path in find_models(root):
        try:
            m = load_model(path)
            try:  # where the spec comes from, read without importing it: listing runs no spec code
                where = origin(m.spec_name, m.path.parent)
            except SpecError as exc:
                raise ModelError(f"{m.path}: {exc}") from None
            if where.startswith("file "):
                where = f"file {_shown(Path(where.removeprefix('file ')))}"
            if not where.startswith(("built-in", "entry point")):
                where += ": not imported by list; check runs it"
            desc = f"{m.spec_name} [{m.variant}] ({where})" + (f"  {m.description}" if m.description else "")
        except ModelError as exc:
            desc = f"(invalid: {exc})"
        print(terminal_safe(f"{_shown(path)}  {desc}"))  # a model file's description is untrusted text
    return 0


def _shown(path: Path) -> Path:
    """A path as given, or relative to the current folder when it lies below it."""
    try:
        return path.resolve().relative_to(Path.cwd()) if path.is_absolute() else path
    except ValueError:
        return path
