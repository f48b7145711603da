"""Checkpoints of a `bfs` run, so that a killed run can be resumed.

A checkpoint folder holds a manifest and append-only segments:

    DIR/checkpoint.json     the manifest (JSON, validated with a JSON schema)
    DIR/seg-000001.bin      states, parent pointers, edges and actions added
    DIR/seg-000002.bin      since the previous segment, ...

Each write appends one segment with what was explored since the last write,
then replaces the manifest (temp file + fsync + rename). The manifest lists
every segment with its size and blake2b digest, so a run killed at any point
leaves a consistent checkpoint: a segment the manifest does not list is
ignored. Writing costs what was explored since the last write, not the whole
run.

A segment's format is `codec.py`'s. Segments are untrusted input: every
length, reference, parent pointer and edge is checked on load; nothing is
ever unpickled. A checkpoint also records what it was written for
(`manifest.identity`: spec, a digest of each file of its code and of the
data it read, variant, bounds, properties, reductions): resuming it with
another model, or after one of those files changed, is refused in one line,
naming the file. A run holds its folder (`files.lock_folder`): a second run on it is
refused while the first runs.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any

from ....spec import source
from .manifest import FORMAT, MANIFEST, MANIFEST_SCHEMA, VERSION, check_identity, identity
from .files import MAX_MANIFEST_BYTES, _write_atomic, lock_folder, read_file, read_segment
from .codec import SEGMENT_MAGIC, CheckpointError, CheckpointWriteError, _ints, _Nodes, _Reader, _resolve_types, _Types, _varint

DEFAULT_INTERVAL = 60.0


@dataclass
class Resumed:
    """The loop variables of a run, as a checkpoint restores them."""

    generated: int
    depth: int
    lo: int
    hi: int
    next: int
    generated_by_action: dict[int, int] = field(default_factory=dict)
    witnesses_found: list[str] = field(default_factory=list)
    seconds: float = 0.0


# -- writing and loading -------------------------------------------------------------


class Checkpointer:
    """Writes the checkpoints of one bfs run; `load` restores one into an Exploration."""

    def __init__(self, job, ex, folder: str, interval: float) -> None:
        self.job, self.ex = job, ex
        self.dir = Path(folder)
        self.interval = interval
        source.watch()  # a spec built in Python, not loaded by a model file: its reads from now on
        self.identity = identity(job)
        self.types = _Types()
        self.nodes = _Nodes(self.types)
        self.table: list = []  # nodes read back on resume
        self.segments: list[dict] = []
        self.saved = {"actions": 0, "states": 0, "edges": 0}
        self.last = time.monotonic()
        self.prior_seconds = 0.0
        self.t0 = time.monotonic()
        self.writes = 0
        self.resumed_from: int | None = None
        self.interrupted = False
        self.failed: str | None = None  # the write the disk refused; no write follows it
        self._old_sigint: Any = None   # the SIGINT handler this one replaced, restored by release_sigint
        self._sigint_at = 0.0
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointWriteError(f"{self.dir}: cannot create checkpoint folder ({exc.strerror})") from None
        self._lock = lock_folder(self.dir)  # released when the Checkpointer goes, or the process

    def release(self) -> None:
        """Let go of the folder now (otherwise when this Checkpointer is freed)."""
        self._lock.close()

    # Ctrl-C while checkpointing: the handler only sets a flag, which the bfs
    # loop reads between expansions, so the run stops at a consistent point and
    # writes a final checkpoint. A second Ctrl-C interrupts at once.
    def catch_sigint(self) -> None:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._old_sigint = signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum, frame) -> None:
        from ...failures import DUPLICATE_WITHIN, SignalInterrupt

        now = time.monotonic()
        if self.interrupted:
            if now - self._sigint_at < DUPLICATE_WITHIN:  # the same Ctrl-C, sent to the group and passed on
                return
            raise SignalInterrupt
        self.interrupted, self._sigint_at = True, now

    def release_sigint(self) -> None:
        import signal

        if self._old_sigint is not None:
            signal.signal(signal.SIGINT, self._old_sigint)
            self._old_sigint = None

    def summary(self) -> dict:
        out = {"dir": str(self.dir), "writes": self.writes, "resumed_from_states": self.resumed_from}
        if self.failed:
            out["error"] = self.failed
        return out

    def due(self, now: float) -> bool:
        return now - self.last >= self.interval

    # The caller passes the loop variables at a point where state `next - 1`
    # has been fully expanded, so `next` is where a resumed run starts.
    def write(self, *, generated: int, depth: int, lo: int, hi: int, next: int,
              generated_by_action: dict, witnesses_found) -> None:
        """CheckpointWriteError when the disk refuses: the last complete
        checkpoint stays, and no write follows."""
        if self.failed:
            return
        try:
            self._write(generated=generated, depth=depth, lo=lo, hi=hi, next=next,
                        generated_by_action=generated_by_action, witnesses_found=witnesses_found)
        except CheckpointWriteError as exc:
            self.failed = str(exc)
            raise

    def _write(self, *, generated: int, depth: int, lo: int, hi: int, next: int,
               generated_by_action: dict, witnesses_found) -> None:
        ex, saved = self.ex, self.saved
        n_act, n_st, n_ed = len(ex.actions), len(ex.states), len(ex.src)
        nodes = bytearray()
        n_nodes = len(self.nodes.objects)
        action_ids = [self.nodes.node(a, nodes) for a in ex.actions[saved["actions"]:n_act]]
        state_ids = [self.nodes.node(ex.states[j], nodes) for j in range(saved["states"], n_st)]
        out = bytearray(SEGMENT_MAGIC)
        _varint(len(self.nodes.objects) - n_nodes, out)
        out += nodes
        _varint(len(action_ids), out)
        _ints(action_ids, out)
        _varint(len(state_ids), out)
        _ints(state_ids, out)
        _ints(ex.parent[saved["states"]:n_st], out)
        _ints(ex.parent_action[saved["states"]:n_st], out)
        _varint(n_ed - saved["edges"], out)
        for column in (ex.src, ex.dst, ex.act):
            _ints(column[saved["edges"]:n_ed], out)
        name = f"seg-{len(self.segments) + 1:06d}.bin"
        _write_atomic(self.dir / name, bytes(out))
        segments = self.segments + [{
            "file": name, "bytes": len(out), "blake2b": blake2b(out, digest_size=16).hexdigest(),
            "nodes": len(self.nodes.objects) - n_nodes, "actions": n_act - saved["actions"],
            "states": n_st - saved["states"], "edges": n_ed - saved["edges"],
        }]
        # the files the spec's code has read since the run began join its code
        self.identity["code"] = {**self.identity["code"], **source.opened()}
        manifest = {
            "format": FORMAT, "version": VERSION, "identity": self.identity,
            "types": self.types.names, "segments": segments,
            "run": {
                "generated": generated, "depth": depth, "lo": lo, "hi": hi, "next": next,
                "levels": list(ex.levels), "edges_kept": ex.edges_kept,
                "generated_by_action": sorted([int(a), int(n)] for a, n in generated_by_action.items()),
                "witnesses_found": sorted(witnesses_found),
                "seconds": round(self.prior_seconds + time.monotonic() - self.t0, 3),
            },
        }
        _write_atomic(self.dir / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())
        self.segments = segments
        self.saved = {"actions": n_act, "states": n_st, "edges": n_ed}
        self.last = time.monotonic()
        self.writes += 1

    def load(self, folder: str) -> Resumed:
        """Restore the checkpoint in `folder` into the (empty) Exploration."""
        try:
            import jsonschema
        except ImportError:
            raise CheckpointError("--resume validates checkpoints with jsonschema, a txncheck dependency: pip install jsonschema") from None

        src_dir = Path(folder)
        where = src_dir / MANIFEST
        if not where.exists():
            raise CheckpointError(f"{src_dir}: no checkpoint here (no {MANIFEST})")
        try:
            data = read_file(where, MAX_MANIFEST_BYTES, "manifest", binary=True)
        except ValueError as exc:  # not a regular file, a link, too large, unreadable
            raise CheckpointError(f"{where}: {exc}") from None
        try:
            manifest = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # ValueError: bad JSON, UTF-8, or too many digits
            raise CheckpointError(f"{where}: not a readable JSON manifest ({str(exc).splitlines()[0][:200]})") from None
        err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(MANIFEST_SCHEMA).iter_errors(manifest))
        if err is not None:
            at = "/".join(str(p) for p in err.absolute_path) or "top level"
            raise CheckpointError(f"{where}: invalid checkpoint manifest at {at}: {err.message}")
        check_identity(self.identity, manifest["identity"], src_dir)
        run = manifest["run"]
        ex = self.ex
        if run["edges_kept"] != ex.edges_kept:
            raise CheckpointError(f"{src_dir}: checkpoint was written {'with' if run['edges_kept'] else 'without'} "
                                  "the state graph; resume with the same --no-graph setting")
        classes = _resolve_types(manifest["types"], self.job.spec, str(where))
        self.types = _Types(manifest["types"])
        self.types.classes = classes
        self.types.ids = {c: i for i, c in enumerate(classes)}
        for seg in manifest["segments"]:
            self._load_segment(src_dir, seg, classes)
        self._check_run(run, str(where))
        self.segments = list(manifest["segments"])
        self.saved = {"actions": len(ex.actions), "states": len(ex.states), "edges": len(ex.src)}
        self.prior_seconds = float(run["seconds"])
        self.resumed_from = len(ex.states)
        if src_dir.resolve() != self.dir.resolve():
            # Resuming into another folder: copy the segments so that it is complete on its own.
            for seg in self.segments:
                _write_atomic(self.dir / seg["file"], read_segment(src_dir / seg["file"], seg))
        return Resumed(run["generated"], run["depth"], run["lo"], run["hi"], run["next"],
                       {a: n for a, n in run["generated_by_action"]}, list(run["witnesses_found"]),
                       float(run["seconds"]))

    def _load_segment(self, folder: Path, seg: dict, classes: list[type]) -> None:
        path = folder / seg["file"]
        where = str(path)
        data = read_segment(path, seg)
        if not data.startswith(SEGMENT_MAGIC):
            raise CheckpointError(f"{where}: not a txncheck checkpoint segment")
        r = _Reader(data, where, classes, self.table)
        r.pos = len(SEGMENT_MAGIC)
        ex, table = self.ex, self.table
        n = r.count()
        if n != seg["nodes"]:
            r.fail("node count differs from the manifest")
        for _ in range(n):
            r.node()
        n = r.count()
        if n != seg["actions"]:
            r.fail("action count differs from the manifest")
        for k in r.ints(n):
            a = table[k] if 0 <= k < len(table) else None
            if not (isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], tuple)):
                r.fail("malformed action")
            if a in ex.action_ids:
                r.fail("duplicate action")
            ex.action_ids[a] = len(ex.actions)
            ex.actions.append(a)
        n = r.count()
        if n != seg["states"]:
            r.fail("state count differs from the manifest")
        ids, parents, actions = r.ints(n), r.ints(n), r.ints(n)
        if n and (min(ids) < 0 or max(ids) >= len(table)):
            r.fail("state refers to an undefined node")
        base, n_act = len(ex.states), len(ex.actions)
        for k in range(n):
            j, p, a = base + k, parents[k], actions[k]
            if not (-1 <= p < j) or not (-1 <= a < n_act) or ((p < 0) != (a < 0)):
                r.fail(f"state {j} has an invalid parent pointer")
            st = table[ids[k]]
            if ex.index.setdefault(st, j) != j:
                r.fail(f"state {j} repeats state {ex.index[st]}")
            ex.states.append(st)
        ex.parent.fromlist(parents.tolist())
        ex.parent_action.fromlist(actions.tolist())
        n = r.count()
        if n != seg["edges"]:
            r.fail("edge count differs from the manifest")
        src, dst, act = r.ints(n), r.ints(n), r.ints(n)
        if n and (min(min(src), min(dst), min(act)) < 0 or max(max(src), max(dst)) >= len(ex.states)
                  or max(act) >= len(ex.actions)):
            r.fail("edge refers to an unknown state or action")
        for column, values in ((ex.src, src), (ex.dst, dst), (ex.act, act)):
            column.fromlist(values.tolist())
        if r.pos != len(data):
            r.fail("trailing bytes")
        # Continue the node table where the checkpoint left it, so later
        # segments refer to these objects instead of writing them again.
        nodes = self.nodes
        for obj in table[len(nodes.objects):]:
            nodes.ids[id(obj)] = len(nodes.objects)
            nodes.objects.append(obj)

    def _check_run(self, run: dict, where: str) -> None:
        ex = self.ex
        n = len(ex.states)
        levels = run["levels"]
        ok = (
            0 <= run["lo"] <= run["next"] <= run["hi"] <= n
            and len(levels) == run["depth"]
            and all(a < b for a, b in zip(levels, levels[1:]))
            and (not levels or (levels[0] == 0 and levels[-1] == run["lo"]))
            and all(0 <= a < len(ex.actions) for a, _ in run["generated_by_action"])
            and run["generated"] >= n
        )
        if not ok:
            raise CheckpointError(f"{where}: inconsistent run counters (levels, queue bounds or counts)")
        if not ex.edges_kept and ex.src:
            raise CheckpointError(f"{where}: edges present in a checkpoint written without the state graph")
        ex.levels[:] = levels


def open_checkpointer(job, ex):
    """The run's Checkpointer and what it resumes from (None, None when not asked for)."""
    opts = job.options  # validated: not with --fingerprints (checker/options.py)
    folder = opts.checkpoint or opts.resume
    if not folder:
        return None, None
    interval = opts.checkpoint_interval or DEFAULT_INTERVAL
    if opts.resume and not os.path.lexists(Path(opts.resume) / MANIFEST):  # before anything is created
        raise CheckpointError(f"{opts.resume}: no checkpoint here (no {MANIFEST})")
    ck = Checkpointer(job, ex, folder, float(interval))
    try:
        if opts.resume:
            return ck, ck.load(opts.resume)
        # A fresh run: an older checkpoint in the folder would be overwritten piecemeal, so drop it first.
        for old in [ck.dir / MANIFEST, *ck.dir.glob("seg-*.bin")]:
            try:
                old.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise CheckpointWriteError(f"{old}: cannot replace the old checkpoint ({exc.strerror})") from None
    except BaseException:
        # the folder is free at once: the traceback holds `ck` until the garbage collector frees
        # it, and a second run in this process (the API, a test) found the folder still held
        ck.release()
        raise
    return ck, None
