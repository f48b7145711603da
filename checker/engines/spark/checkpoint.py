"""The `spark` engine's run directory: one folder of Parquet files per BFS
level, plus a manifest. It is the checkpoint, written as the search goes.

    DIR/manifest.json    which model, which levels are complete, totals so far
    DIR/level-0001/      part-00000.parquet ... one per partition (`spark/level.py`)
    DIR/level-0002/      ...

Each level holds the states first reached at that depth, partitioned by
fingerprint (`fp mod P`, P in the manifest), with their parent pointer
(parent fingerprint, encoded action). So the frontier is the last level, the
visited set is the union of the levels' `fp` columns, and the parent
pointers are every level's (fp, pfp, act). A level counts only once the
manifest lists it: the manifest is replaced atomically after every part of
the level is written, so a run killed at any point resumes from the last
complete level.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ...errors import EngineError
from ...atomic import write_text_atomic
from .level import level_path, part_path

FORMAT = "txncheck-spark-levels"
VERSION = 3  # 2: fingerprints write a bool as the int it equals (encoding._fcode); 3: owned parts, packed states
MANIFEST = "manifest.json"
MAX_PARTITIONS = 1 << 16


@dataclass
class Manifest:
    job: dict                                   # the model's identity (see `identity`)
    levels: list[int] = field(default_factory=list)  # distinct states per complete level
    expanded: int = 0                           # levels whose successors are counted
    generated: int = 0                          # initial states + successors of expanded levels
    coverage: dict = field(default_factory=dict)     # action -> {"generated", "distinct"}
    witnesses: dict = field(default_factory=dict)    # witness -> found
    done: bool = False                          # the last level has no new successor
    seconds: float = 0.0                        # time spent by earlier runs
    shapes: list = field(default_factory=list)  # [[path], length, "module:Class"]: revive.ClassNames
    partitions: int = 2                         # P: state fp belongs to part fp mod P of its level

    @property
    def distinct(self) -> int:
        return sum(self.levels)


def identity(wj) -> dict:
    """What must match for a checkpoint to be resumed by a job."""
    out = {
        "spec": wj.spec, "variant": wj.variant, "constants": [list(kv) for kv in wj.constants],
        "properties": list(wj.properties), "witnesses": list(wj.witnesses), "deadlock": wj.deadlock,
    }
    if wj.source.files:   # a spec shipped by its files: resumed only with the same code, as bfs's checkpoints
        out["code"] = wj.source.code
    return out


def is_remote(root: str) -> bool:
    return "://" in root and not root.startswith("file://")


def write_manifest(root: str, m: Manifest) -> None:
    if is_remote(root):
        raise EngineError(f"{root}: checkpoints on remote storage are not supported yet; use a shared mount")
    doc = {"format": FORMAT, "version": VERSION, **asdict(m)}
    write_text_atomic(Path(root) / MANIFEST, json.dumps(doc, indent=1) + "\n", private=True)


def check_writable(root: str) -> None:
    """Create the run directory and a file in it (removed at once), before
    Spark starts: a read-only or unusable folder is one line (exit 3), not a
    failed Spark job with a Java stack trace."""
    from ...failures import EnvironmentFault

    try:
        Path(root).mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=root)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise EnvironmentFault(f"{root}: cannot write checkpoint ({exc.strerror or exc})") from None


def read_manifest(root: str) -> Manifest:
    """The manifest of a run directory; any problem is one line (EngineError)."""
    path = Path(root) / MANIFEST
    if not Path(root).is_dir():
        raise EngineError(f"{root}: no such checkpoint directory")
    if not path.is_file():
        raise EngineError(f"{root}: not a spark checkpoint (no {MANIFEST})")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON, UTF-8, or too many digits
        raise EngineError(f"{path}: corrupt checkpoint manifest ({str(exc).splitlines()[0][:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise EngineError(f"{path}: not a txncheck spark checkpoint manifest")
    if doc.get("version") != VERSION:
        raise EngineError(f"{path}: checkpoint version {doc.get('version')!r} (this txncheck reads {VERSION})")
    try:
        m = Manifest(
            job=_typed(doc["job"], dict), levels=_typed(doc["levels"], list), expanded=_typed(doc["expanded"], int),
            generated=_typed(doc["generated"], int), coverage=_typed(doc["coverage"], dict),
            witnesses=_typed(doc["witnesses"], dict), done=_typed(doc["done"], bool),
            seconds=float(_typed(doc["seconds"], (int, float))),
            shapes=_typed(doc["shapes"], list), partitions=_typed(doc["partitions"], int),
        )
    except (KeyError, TypeError) as exc:
        raise EngineError(f"{path}: corrupt checkpoint manifest (bad or missing {exc})") from None
    if not m.levels or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in m.levels):
        raise EngineError(f"{path}: corrupt checkpoint manifest (levels must be positive counts)")
    if not (len(m.levels) - 1 <= m.expanded <= len(m.levels)):
        raise EngineError(f"{path}: corrupt checkpoint manifest (expanded {m.expanded} of {len(m.levels)} levels)")
    if not 1 <= m.partitions <= MAX_PARTITIONS:
        raise EngineError(f"{path}: corrupt checkpoint manifest (partitions {m.partitions})")
    for k in range(1, len(m.levels) + 1):
        if not Path(level_path(root, k)).is_dir():
            raise EngineError(f"{root}: checkpoint level {k} is missing")
        for j in range(m.partitions):
            if not Path(part_path(root, k, j)).is_file():
                raise EngineError(f"{root}: checkpoint level {k} lacks part {j} (or it is not a regular file)")
    return m


def _typed(v, t):
    if isinstance(v, bool) and t is not bool:
        raise TypeError(repr(v))
    if not isinstance(v, t):
        raise TypeError(repr(v))
    return v


def check_identity(root: str, m: Manifest, want: dict) -> None:
    if m.job != want:
        diff = next(k for k in sorted(set(want) | set(m.job)) if m.job.get(k) != want.get(k))
        raise EngineError(
            f"{root}: the checkpoint is of another model ({diff}: {m.job.get(diff)!r}, this job: {want.get(diff)!r})"
        )
