"""Where a model file's `spec = "..."` comes from.

A model file names its spec one of four ways:

    spec = "twophase"                    # a built-in spec, or one an installed
                                         # package registers under the entry-point
                                         # group `txncheck.specs`
    spec = "specs/mutex.py:Mutex"        # a Python file, relative to the model file
    spec = "mypkg.protocols:Mutex"       # a module on sys.path

Loading a spec runs its code: a model file runs the code it names. The
built-in specs are entry points of txncheck itself (pyproject.toml) and are
found the same way; the table below serves a source checkout that was never
installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from .api import Spec, SpecError
from .source import watch

GROUP = "txncheck.specs"

# The built-in specs (also declared as entry points in pyproject.toml).
SPECS: dict[str, str] = {
    "tcommit": "txncheck.spec.classic.tcommit:TCommit",
    "twophase": "txncheck.spec.classic.twophase:TwoPhase",
    "diehard": "txncheck.spec.classic.diehard:DieHard",
    "pip473": "txncheck.spec.pip473.spec:Pip473",
    "legacy_v4": "txncheck.spec.legacy_v4.spec:LegacyV4",
    "pip196": "txncheck.spec.pip196.spec:Pip196",
    "kip868": "txncheck.spec.kip868.spec:Kip868",
}


@dataclass(frozen=True)
class Resolved:
    """A spec class and where it came from (shown by `txncheck list`)."""

    cls: type[Spec]
    origin: str       # "built-in", "entry point (dist)", "file /abs/x.py", "module pkg.mod"
    builtin: bool
    source: str = ""  # the file that defines the class, when known


def registered() -> dict[str, tuple[str, str]]:
    """name -> (module:Class, origin) for the built-ins and every entry point."""
    out = {name: (target, "built-in") for name, target in SPECS.items()}
    for ep in entry_points(group=GROUP):
        if ep.name in SPECS and ep.value == SPECS[ep.name]:
            continue
        dist = getattr(ep.dist, "name", None) or "?"
        out.setdefault(ep.name, (ep.value, f"entry point of {dist}"))
    return out


def resolve(ref: str, base: str | Path | None = None) -> Resolved:
    """The spec class that `ref` names; `base` is the model file's folder. It imports the spec's code."""
    found = origin(ref, base)  # checks the name and finds the file, importing nothing
    watch()  # from here on the files the spec's code opens are recorded, for the checkpoints it binds
    if ":" not in ref:
        mod_name, cls_name = registered()[ref][0].split(":", 1)
        return _resolved(_import_module(mod_name, ref), cls_name, ref, found, builtin=found == "built-in")
    where, cls_name = ref.rsplit(":", 1)
    if found.startswith("file "):
        mod = _import_file(Path(found.removeprefix("file ")), ref)
    else:
        mod = _import_module(where, ref)
    return _resolved(mod, cls_name, ref, found, builtin=False)


def origin(ref: str, base: str | Path | None = None) -> str:
    """Where `ref` loads its spec from (`Resolved.origin`), found without
    importing anything: what `txncheck list` shows. SpecError for a name that
    is unknown, a malformed reference or a file that is missing."""
    if ":" not in ref:
        known = registered()
        hit = known.get(ref)
        if hit is None:
            raise SpecError(f"unknown spec {ref!r} (known: {', '.join(sorted(known))}; "
                            f"or name one as 'path/to/file.py:Class' or 'package.module:Class')")
        return hit[1]
    where, cls_name = ref.rsplit(":", 1)
    if not where or not cls_name:
        raise SpecError(f"spec {ref!r}: expected 'path/to/file.py:Class' or 'package.module:Class'")
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where)
        path = (path if path.is_absolute() else Path(base or ".") / path).resolve()
        if not path.is_file():
            raise SpecError(f"spec {ref!r}: no such file {path}")
        return f"file {path}"
    return f"module {where}"


def load_spec_class(name: str, base: str | Path | None = None) -> type[Spec]:
    return resolve(name, base).cls


def _resolved(mod, cls_name: str, ref: str, origin: str, builtin: bool) -> Resolved:
    cls = getattr(mod, cls_name, None)
    if cls is None:
        raise SpecError(f"spec {ref!r}: {getattr(mod, '__file__', mod.__name__)} defines no {cls_name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Spec)):
        raise SpecError(f"spec {ref!r}: {cls_name} is not a subclass of txncheck.spec.api.Spec")
    return Resolved(cls, origin, builtin, getattr(sys.modules.get(cls.__module__), "__file__", "") or "")


def _import_module(name: str, ref: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            if name.startswith("txncheck.spec"):
                raise SpecError(f"spec {ref!r} is not available in this installation") from None
            raise SpecError(f"spec {ref!r}: no module named {exc.name!r}") from None
        raise SpecError(_import_failure(ref, exc)) from exc
    except Exception as exc:  # the spec's own code failed at import
        raise SpecError(_import_failure(ref, exc)) from exc


def _import_file(path: Path, ref: str):
    if not path.is_file():
        raise SpecError(f"spec {ref!r}: no such file {path}")
    # One module per file, named after a stable hash of its path.
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    mod_name = f"txncheck_user_spec_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"spec {ref!r}: cannot load {path} as Python")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod  # NamedTuples and dataclasses look their module up
    # While it is imported, the file's folder comes first on sys.path, so a
    # spec split into several files imports its siblings by name.
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(mod)
    except BaseException as exc:
        del sys.modules[mod_name]
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise SpecError(_import_failure(ref, exc)) from exc
    finally:
        sys.path.remove(str(path.parent))
    return mod


def _import_failure(ref: str, exc: BaseException) -> str:
    """One line: where the spec's code failed while being imported."""
    if isinstance(exc, SyntaxError):
        return f"{exc.filename}:{exc.lineno}: syntax error in spec {ref!r}: {exc.msg}"
    where = innermost_user_frame(exc)
    loc = f"{where[0]}:{where[1]}: " if where else ""
    return f"{loc}spec {ref!r} failed to import: {type(exc).__name__}: {exc}"


_OWN = Path(__file__).resolve().parent.parent  # txncheck's own folders


def innermost_user_frame(exc: BaseException, files: tuple[str, ...] = ()) -> tuple[str, int, str, str] | None:
    """(file, line, function, source) of the innermost frame of `exc` in one of
    `files`, or, with none given, outside txncheck's checker and the stdlib."""
    wanted = {str(Path(f).resolve()) for f in files if f}
    best = None
    for fr in traceback.extract_tb(exc.__traceback__):
        name = fr.filename
        if name.startswith("<"):
            continue
        full = Path(name).resolve()
        if wanted:
            keep = str(full) in wanted
        else:
            keep = not ("site-packages" in full.parts or full.is_relative_to(_OWN / "checker") or full.is_relative_to(Path(traceback.__file__).parent)
                        or full.parent == Path(__file__).resolve().parent)
        if keep:
            best = (name, fr.lineno or 0, fr.name, (fr.line or "").strip())
    return best
