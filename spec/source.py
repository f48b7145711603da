"""The code a spec runs, file by file, with a digest of each: what a checkpoint
(checker/engines/checkpoint/) is bound to, and the code behind a fix model's
recorded figures (checker/reports/digest.py, which uses `code_of`).

A spec's files are
* the Python files of the folders that define its class and the classes it
  derives from (a spec split into several files imports its siblings), and
  every module loaded from below those folders (a helper in a sub-folder);
* every file the spec's own code opened for reading: the modules it imported
  from anywhere and the data files it read. `watch` (called before a model
  file's spec is imported: spec/registry.py) sets an audit hook that records
  each such file with its digest as read (again when it changed since).

"The spec's own code" (`owner`) is code that is neither txncheck's (its
checker, its tests, the spec framework of this folder) nor the standard
library's nor an installed package's; the one test of it, which
checker/failures.py also uses to name a spec's file and line. A Python
file's digest leaves out comments, docstrings and layout (`code_of`): a
reworded docstring changes no state. Another file's is of its bytes.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import sys
import sysconfig
import threading
from pathlib import Path

from .api import Spec

_PACKAGE = Path(__file__).resolve().parent.parent  # txncheck: checker/, spec/, reference/, ...
_SPECS = _PACKAGE / "spec"
_FRAMEWORK = {"__init__.py", "api.py", "registry.py", "schema.py", "source.py"}  # the spec API, not a spec
_LIBRARY = tuple({Path(p).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")
                  if (p := sysconfig.get_paths().get(k))})
_VOLATILE = ("/proc/", "/sys/", "/dev/")  # files that change by themselves: not bound


@functools.lru_cache(maxsize=1 << 14)
def owner(file: str) -> str:
    """Whose code a source file (a frame's `co_filename`) is: "spec" (a spec's
    own), "txncheck" (txncheck's, but for its specs) or "library" (the
    standard library's, an installed package's, or not a file)."""
    if file.startswith("<"):
        return "library"
    p = Path(file).resolve()
    if p.is_relative_to(_SPECS):
        return "txncheck" if p.parent == _SPECS and p.name in _FRAMEWORK else "spec"
    if any(p.is_relative_to(d) for d in _LIBRARY):  # first: a venv may live in a source checkout
        return "library"
    return "txncheck" if p.is_relative_to(_PACKAGE) else "spec"


def code_of(src: Path) -> bytes:
    """A Python source's code without its comments, docstrings and layout;
    the bytes if it does not parse. The AST's dump is that of this
    interpreter: another Python version may call a digest changed, never an
    edited file unchanged."""
    raw = src.read_bytes()
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
        return raw
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False).encode()


def file_digest(path: str) -> str | None:
    """A file's digest (a Python file's by `code_of`); None when it is not a
    regular file or cannot be read."""
    h = hashlib.blake2b(digest_size=16)
    try:
        if not os.path.isfile(path):
            return None
        if path.endswith(".py"):
            h.update(code_of(Path(path)))
        else:
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
    except (OSError, ValueError):  # ValueError: a NUL in a path from a manifest
        return None
    return h.hexdigest()


def package_files(folder: Path) -> list[Path]:
    """The Python files of `folder` and of its sub-packages (sub-folders with
    an `__init__.py`, at any depth): a spec split into folders by concern
    (spec/pip473/protocol/, ...) is one body of code."""
    files = [p for p in folder.glob("*.py") if p.is_file()]
    for sub in sorted(folder.iterdir()):
        if sub.is_dir() and (sub / "__init__.py").is_file():
            files += package_files(sub)
    return sorted(files)


def code_files(cls: type) -> list[Path]:
    """The Python files of the folders that define `cls` and its bases (not
    the Spec framework's) and of their sub-packages, and the modules loaded
    from below them."""
    folders = []
    for c in cls.__mro__:
        if c is object or c is Spec:
            continue
        file = getattr(sys.modules.get(c.__module__), "__file__", None)
        if file and (folder := Path(file).resolve().parent) not in folders:
            folders.append(folder)
    files = {p for folder in folders for p in package_files(folder)}
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if file and file.endswith(".py") and owner(file) == "spec":
            p = Path(file).resolve()
            if any(p.is_relative_to(folder) for folder in folders):
                files.add(p)
    return sorted(files)


def sources(cls: type) -> dict[str, str]:
    """Path -> digest of every file `cls`'s spec runs or read: `code_files`
    now, and what `watch` recorded (as it was when read)."""
    out = {str(p): file_digest(str(p)) or "unreadable" for p in code_files(cls)}
    out.update(_opened)
    return out


def opened() -> dict[str, str]:
    """The files the spec's own code opened for reading so far (path -> digest as read)."""
    return dict(_opened)


def first_change(recorded: dict[str, str], now: dict[str, str]) -> str | None:
    """What differs between the files a run `recorded` (`sources` then) and
    this one's (`now`): the first file of theirs that changed or is gone, or
    one of this run's that the other did not have; None when nothing did."""
    for path in sorted(recorded):
        digest = now[path] if path in now else file_digest(path) or "unreadable"
        if digest != recorded[path]:
            return f"{path} changed since" if os.path.exists(path) else f"{path} is gone"
    for path in sorted(now):
        if path not in recorded:
            return f"{path} was not part of it"
    return None


# -- the files a spec's code opens ----------------------------------------------------------------

_opened: dict[str, str] = {}  # path -> digest, as last read (a process may run a spec again after an edit)
_stamps: dict[str, tuple] = {}  # path -> (mtime, size, inode) when its digest was taken
_busy = threading.local()  # the hook's own reads are not recorded
_watching: list[bool] = []


def watch() -> None:
    """Record, from now on in this process, every file that a spec's own code
    opens for reading (audit hooks cannot be removed: set once)."""
    if not _watching:
        sys.addaudithook(_on_audit)
        _watching.append(True)


def _on_audit(event: str, args: tuple) -> None:
    if event != "open" or getattr(_busy, "on", False):
        return
    path, mode, flags = args
    if isinstance(path, int) or not (("r" in mode) if isinstance(mode, str) else flags & os.O_ACCMODE != os.O_WRONLY):
        return
    _busy.on = True
    try:
        _record(os.fsdecode(path), sys._getframe(1))
    except Exception:  # noqa: BLE001 - the open itself must go on
        pass
    finally:
        _busy.on = False


def _record(path: str, frame) -> None:
    """Record `path` if the code that opens it (`frame` and its callers) is a
    spec's: the innermost frame that is not a library's decides."""
    full = os.path.realpath(path)
    if full.endswith(".pyc") and "__pycache__" in full:  # an import reads the cached code: bind the source
        import importlib.util

        try:
            full = importlib.util.source_from_cache(full)
        except ValueError:
            return
    if full.startswith(_VOLATILE) or owner(full) != "spec":
        return
    try:
        st = os.stat(full)
    except OSError:
        return
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    if _stamps.get(full) == stamp:  # read before as it is: its digest stands
        return
    while frame is not None and owner(frame.f_code.co_filename) == "library":
        frame = frame.f_back
    if frame is None or owner(frame.f_code.co_filename) != "spec":
        return
    digest = file_digest(full)
    if digest is not None:
        _opened[full], _stamps[full] = digest, stamp
