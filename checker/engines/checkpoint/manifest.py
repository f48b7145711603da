"""A checkpoint's manifest (`store.py` writes and reads it): its JSON schema,
and what the checkpoint is valid for (`identity`), checked before anything
of it is restored (`check_identity`)."""

from __future__ import annotations

from hashlib import blake2b
from pathlib import Path

from ....spec import source
from .codec import CheckpointError

FORMAT = "txncheck-checkpoint"
VERSION = 3  # 3: the spec's code as a digest per file (spec/source.py)
MANIFEST = "checkpoint.json"
# Options that change the explored graph: a checkpoint is only valid for the same ones.
GRAPH_OPTIONS = ("symmetry", "por", "fingerprints")


_INT = {"type": "integer", "minimum": 0}
MANIFEST_SCHEMA = {
    "type": "object",
    "required": ["format", "version", "identity", "types", "segments", "run"],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "identity": {"type": "object", "required": ["code"], "properties": {"code": {
            "type": "object", "maxProperties": 100_000,
            "additionalProperties": {"type": "string", "pattern": "^([0-9a-f]{32}|unreadable)$"}}}},
        "types": {"type": "array", "items": {"type": "string", "maxLength": 300}},
        "segments": {"type": "array", "items": {
            "type": "object",
            "required": ["file", "bytes", "blake2b", "nodes", "actions", "states", "edges"],
            "properties": {
                "file": {"type": "string", "pattern": r"^seg-[0-9]{6}\.bin$"},
                "bytes": _INT, "nodes": _INT, "actions": _INT, "states": _INT, "edges": _INT,
                "blake2b": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
            },
        }},
        "run": {
            "type": "object",
            "required": ["generated", "depth", "lo", "hi", "next", "levels", "edges_kept",
                         "generated_by_action", "witnesses_found", "seconds"],
            "properties": {
                "generated": _INT, "depth": _INT, "lo": _INT, "hi": _INT, "next": _INT,
                "levels": {"type": "array", "items": _INT},
                "edges_kept": {"type": "boolean"},
                "generated_by_action": {"type": "array", "items": {
                    "type": "array", "prefixItems": [_INT, _INT], "minItems": 2, "maxItems": 2}},
                "witnesses_found": {"type": "array", "items": {"type": "string"}},
                "seconds": {"type": "number", "minimum": 0},
            },
        },
    },
}


def identity(job) -> dict:
    """What a checkpoint is valid for: the spec and its code, its bounds, the properties and the options."""
    spec = job.spec
    digest = lambda f: blake2b(f.sexpr().encode(), digest_size=8).hexdigest()
    return {
        "spec": spec.name,
        # each file of the spec's code and data (spec/source.py): resumed after an
        # edit of one, it would give the old code's verdict
        "code": source.sources(type(spec)),
        "variant": spec.variant,
        "bounds": {k: v for k, v in spec.constants.items()},
        "properties": {n: digest(f) for n, f in sorted(job.properties.items())},
        "witnesses": {n: digest(f) for n, f in sorted(job.witnesses.items())},
        "deadlock": bool(job.deadlock),
        "options": {k: getattr(job.options, k) for k in GRAPH_OPTIONS if getattr(job.options, k)},
    }


def check_identity(mine: dict, theirs: dict, folder: Path) -> None:
    """CheckpointError unless a checkpoint's identity (`theirs`, validated by
    the schema) is this run's (`mine`): the first difference, in one line. The
    spec's files are compared one by one (`source.first_change`); then `mine`
    holds every file the checkpoint's states were made with, for its writes."""
    for key in mine:
        if key == "code":
            change = source.first_change(theirs["code"], mine["code"])
            if change is not None:
                raise CheckpointError(f"{folder}: checkpoint was written by other code of spec {mine['spec']}: "
                                      f"{change}; start a fresh run")
            mine["code"] = {**theirs["code"], **mine["code"]}
        elif theirs.get(key) != mine[key]:
            raise CheckpointError(f"{folder}: checkpoint was written for {key} {theirs.get(key)!r}, "
                                  f"this run has {mine[key]!r}")
