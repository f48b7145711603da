"""How a Spark executor gets the spec's code (`SpecSource`, plain values).

A spec txncheck ships, or one a package installed on every executor
provides (`spec = "name"` through an entry point, `spec = "pkg.mod:Class"`),
is imported there by name. A spec named by path (`spec = "bank.py:Bank"`)
lives only where the driver runs, so its code travels with the job: the
Python files of its folder, and what below that folder it imported or read
(a package `lib/` beside it, a data file: spec.source.sources). A worker writes
them once into a folder of its own (under Spark's per-application files
folder, which Spark removes with the application) and imports the spec from
there, as the driver did: the folder first on sys.path while it loads, so
siblings import by name. What the spec imports from elsewhere (txncheck,
z3, a package of the user's) must be installed on the executors.

The driver never imports its own copy again: `register` maps the source's
digest to the class it already loaded, so the driver's expansion of a small
level (`spark/driver.py`) makes states of the very classes its initial states
have. Class names that cross between the two (revive.ClassNames) do
not depend on the folder the module was loaded from.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import EngineError

MAX_BYTES = 16 * 1024 * 1024   # a spec's files shipped with every task: a folder of its own, not a home folder


@dataclass(frozen=True)
class SpecSource:
    """How a worker imports the spec class: `ref` (`name`, `pkg.mod:Class`,
    or with `files`, `file.py:Class` inside them); equal by `digest`."""

    ref: str
    digest: str = ""
    files: tuple = field(default=(), compare=False, repr=False)   # ((relative path, bytes), ...)
    folder: str = field(default="", compare=False)   # where the driver has them (for messages)
    code: str = field(default="", compare=False)     # the files' spec.source digests: what a checkpoint binds


_CLASSES: dict[SpecSource, type] = {}   # in this process: the sources it already imported or registered


def by_name(ref: str) -> SpecSource:
    return SpecSource(ref, digest=ref)


def shipped(cls: type) -> SpecSource:
    """The files of `cls`'s folder that its spec runs or reads (see the
    module doc), as a source that imports `cls` from them; `code` is their
    digests (spec.source.file_digest), what a checkpoint of the run is bound to."""
    from ....spec.source import file_digest, sources

    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if not file:
        raise EngineError(f"engine 'spark' cannot ship spec {cls.__name__}: its class is defined in no file")
    main = Path(file).resolve()
    folder = main.parent
    files = {p for p in folder.glob("*.py") if p.is_file()}
    files.update(p for p in map(Path, sources(cls)) if p.is_relative_to(folder) and p.is_file())
    rows, size = [], 0
    for p in sorted(files):
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise EngineError(f"engine 'spark' cannot ship spec {cls.__name__}: {p}: {exc.strerror or exc}") from None
        size += len(data)
        rows.append((p.relative_to(folder).as_posix(), data))
    if size > MAX_BYTES:
        raise EngineError(f"engine 'spark' ships spec {cls.__name__}'s folder {folder} to the executors, and its "
                          f"files hold {size / 2**20:.0f} MiB (at most {MAX_BYTES // 2**20}): "
                          "give the spec a folder of its own")
    h, code = hashlib.sha256(), hashlib.sha256()
    for name, data in rows:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        code.update(f"{name}\0{file_digest(str(folder / name))}\0".encode())
    src = SpecSource(f"{main.name}:{cls.__qualname__}", digest=h.hexdigest()[:16], files=tuple(rows),
                     folder=str(folder), code=code.hexdigest()[:16])
    _CLASSES[src] = cls
    return src


def register(src: SpecSource, cls: type) -> None:
    """`src` is `cls` in this process (the driver's own class for it)."""
    _CLASSES[src] = cls


def spec_class(src: SpecSource) -> type:
    """The spec class of `src` in this process: imported by name, or from its
    files written into a folder of this worker's (once per process)."""
    cls = _CLASSES.get(src)
    if cls is None:
        from ....spec.registry import load_spec_class

        if not src.files:
            cls = load_spec_class(src.ref)
        else:
            file, _, cls_name = src.ref.rpartition(":")
            cls = load_spec_class(f"{_unpack(src) / file}:{cls_name}")
        _CLASSES[src] = cls
    return cls


def _unpack(src: SpecSource) -> Path:
    """A folder holding `src`'s files: written under a temporary name, then
    renamed, so two workers of one executor never see half of it."""
    home = Path(_files_root()) / f"txncheck-spec-{src.digest}"
    if home.is_dir():
        return home
    tmp = Path(tempfile.mkdtemp(prefix=f".txncheck-spec-{src.digest}-", dir=home.parent))
    for rel, data in src.files:
        target = tmp.joinpath(*Path(rel).parts)
        if Path(rel).is_absolute() or ".." in Path(rel).parts or not target.is_relative_to(tmp):
            raise EngineError(f"spec file {rel!r} outside its folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    try:
        os.rename(tmp, home)
    except OSError:   # another worker was first: use its copy
        shutil.rmtree(tmp, ignore_errors=True)
        if not home.is_dir():
            raise
    return home


def _files_root() -> str:
    """Spark's files folder of this application on an executor (removed with
    it), else the temporary folder."""
    try:
        from pyspark.files import SparkFiles

        if SparkFiles._is_running_on_worker and SparkFiles._root_directory:
            return SparkFiles._root_directory
    except ImportError:
        pass
    return tempfile.gettempdir()


_WORKER_ERROR = re.compile(r"^(?:[\w.]+\.)?(SpecCodeError|SpecError): (.+)$")


def from_executor(exc: BaseException, src: SpecSource) -> BaseException:
    """A Python worker's failure as the driver tells it: a bug in the spec's
    code (the worker's guard named it: spec_errors) in its one line, the
    shipped copy's paths replaced by the driver's folder; a spec that does
    not import on an executor as an environment fault; anything else as it is."""
    from ....spec.api import SpecError
    from ...errors import EnvironmentFault
    from ...spec_errors import SpecCodeError

    for line in reversed(str(exc).strip().splitlines()):
        m = _WORKER_ERROR.match(line.strip())
        if m is None:
            continue
        text = m.group(2)
        if src.files:
            text = re.sub(rf"[^\s'\"]*/txncheck-spec-{src.digest}(?=/)", lambda _: src.folder, text)
        if "failed to import" in text:
            return EnvironmentFault(f"on a Spark executor: {text}; what the spec imports from outside its folder "
                                    "must be installed on every executor")
        return (SpecCodeError if m.group(1) == "SpecCodeError" else SpecError)(text)
    return exc
