"""Counterexamples as ITF JSON (the Informal Trace Format of Apalache and Quint).

    {"#meta": {...}, "params": [], "vars": [...], "states": [...], "loop": k?}

Each state is `{"#meta": {"index", "action", "params", "fingerprint"}, var: value, ...}`.
Values: bool and str as themselves; int as {"#bigint": "n"}; tuple as
{"#tup": [...]}; frozenset as {"#set": [...]} in canonical order; mapping as
{"#map": [[k, v], ...]}; a record (`spec.api.Record`, named fields) as a
JSON object {"field": v, ...}; None as {"#unserializable": "None"}.

The file's `#meta` names the spec, variant, bounds, property, model and
txncheck version, so the trace alone is enough to check or replay it again.

Trace files are untrusted input: `read_trace` checks size, JSON, structure,
types and nesting, and raises `TraceError` with one line.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, NoReturn

from .. import __version__
from ..spec.api import Record, Spec
from .atomic import write_text_atomic
from .encoding import encode, fingerprint
from .errors import CheckerError

MAX_TRACE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64
MAX_BIGINT_DIGITS = 100
FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"


MAX_RECORD_FIELDS = 64
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_BIGINT = re.compile(r"-?[0-9]+")  # ASCII digits only: '²'.isdigit() is true, int('²') fails
_NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f\ud800-\udfff]{1,200}")  # printable, no lone surrogate


class TraceError(CheckerError, ValueError):
    """A bad trace file; the message names the file."""


# -- values ---------------------------------------------------------------------


def _canonical(v) -> bytes:
    """The order of a set's elements and a map's keys: their encoding (a
    record, which has none, as its sorted (field, value) pairs)."""
    def plain(x):
        if isinstance(x, Mapping):
            return tuple(sorted((k, plain(y)) for k, y in x.items()))
        if isinstance(x, tuple):
            return tuple(plain(y) for y in x)
        if isinstance(x, frozenset):
            return frozenset(plain(y) for y in x)
        return x
    return encode(plain(v))


def to_itf(v) -> Any:
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int):
        return {"#bigint": str(v)}
    if v is None:
        return {"#unserializable": "None"}
    if isinstance(v, tuple):
        return {"#tup": [to_itf(x) for x in v]}
    if isinstance(v, (frozenset, set)):
        return {"#set": [to_itf(x) for x in sorted(v, key=_canonical)]}
    if isinstance(v, Record):   # an ITF record: a JSON object of its fields
        if not v or any(not isinstance(k, str) or not _FIELD.fullmatch(k) for k in v):
            raise TypeError("a record needs fields named by identifiers")
        return {k: to_itf(x) for k, x in v.items()}
    if isinstance(v, Mapping):
        return {"#map": [[to_itf(k), to_itf(x)] for k, x in sorted(v.items(), key=lambda kv: _canonical(kv[0]))]}
    if isinstance(v, list):
        return {"#tup": [to_itf(x) for x in v]}
    raise TypeError(f"cannot write a {type(v).__name__} to ITF")


def from_itf(j, depth: int = 0) -> Any:
    """Decode an ITF value (a #map becomes a hashable `ItfMap`)."""
    if depth > MAX_DEPTH:
        raise ValueError("value nests too deeply")
    if isinstance(j, bool) or isinstance(j, str):
        return j
    if isinstance(j, dict) and j and not any(k.startswith("#") for k in j):   # an ITF record
        if len(j) > MAX_RECORD_FIELDS or not all(_FIELD.fullmatch(k) for k in j):
            raise ValueError(f"a record's fields must be at most {MAX_RECORD_FIELDS} identifiers")
        return Record((k, from_itf(x, depth + 1)) for k, x in j.items())
    if isinstance(j, dict):
        if len(j) != 1:
            raise ValueError(f"value object must have exactly one '#' key, has {sorted(j)[:3]}")
        (k, x), = j.items()
        if k not in ("#bigint", "#unserializable", "#tup", "#set", "#map"):
            raise ValueError(f"unknown value kind {k!r}")
        if k == "#bigint":
            if not isinstance(x, str) or not _BIGINT.fullmatch(x) or len(x) > MAX_BIGINT_DIGITS:
                raise ValueError("#bigint must be a string of at most 100 digits")
            return int(x)
        if k == "#unserializable":
            if x == "None":
                return None
            raise ValueError("unsupported #unserializable value")
        if not isinstance(x, list):
            raise ValueError(f"{k} must hold a list")
        if k == "#tup":
            return tuple(from_itf(e, depth + 1) for e in x)
        if k == "#set":
            return frozenset(from_itf(e, depth + 1) for e in x)
        if k == "#map":
            pairs = []
            for e in x:
                if not isinstance(e, list) or len(e) != 2:
                    raise ValueError("#map entries must be [key, value] pairs")
                pairs.append((from_itf(e[0], depth + 1), from_itf(e[1], depth + 1)))
            return ItfMap(pairs)
        raise ValueError(f"unknown value kind {k!r}")
    if isinstance(j, int) and not isinstance(j, bool):
        return j  # tolerated: plain JSON numbers
    raise ValueError(f"unsupported JSON value {type(j).__name__}")


class ItfMap(dict):
    """A decoded #map; hashable so it can sit inside sets and tuples."""

    def __hash__(self):  # in-memory use only, never a fingerprint
        return hash(frozenset(self.items()))


# -- traces ---------------------------------------------------------------------


@dataclass
class Trace:
    meta: dict
    vars: list[str]
    states: list[dict]  # decoded variable values per state
    steps: list[dict]   # per state: {"index", "action", "params", "fingerprint"}
    loop: int | None = None
    path: Path | None = None

    @property
    def length(self) -> int:
        return len(self.states)


def trace_document(spec: Spec, path, *, meta: Mapping[str, Any], loop: int | None = None) -> dict:
    """Build the ITF document for a path [(action | None, state), ...]."""
    states = []
    var_names: list[str] = []
    for k, (action, s) in enumerate(path):
        vars_ = spec.state_vars(s)
        if not var_names:
            var_names = list(vars_)
        name, params = action if action is not None else ("init", ())
        entry = {"#meta": {
            "index": k,
            "action": name,
            "params": {p: to_itf(v) for p, v in params},
            "fingerprint": f"{fingerprint(s):016x}",
        }}
        for n, v in vars_.items():
            entry[n] = to_itf(v)
        states.append(entry)
    doc_meta = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "txncheck_version": __version__,
        "spec": spec.name,
        "variant": spec.variant,
        # a reduction's bound is recorded at its default: the path is a run of the unreduced spec
        "bounds": {k: (spec.bounds[k].default if getattr(spec.bounds.get(k), "reduction", False) else v)
                   for k, v in spec.constants.items()},
        "length": len(path),
        **meta,
    }
    doc: dict[str, Any] = {"#meta": doc_meta, "params": [], "vars": var_names, "states": states}
    if loop is not None:
        doc["loop"] = loop
    return doc


def write_json_atomic(path: str | Path, doc: Any) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, json.dumps(doc, indent=1) + "\n")


def write_trace(path: str | Path, spec: Spec, states_path, *, meta: Mapping[str, Any], loop: int | None = None) -> Path:
    return write_json_atomic(path, trace_document(spec, states_path, meta=meta, loop=loop))


def read_untrusted_text(path: str | Path, limit: int, kind: str) -> str:
    """The text of an untrusted input file: a regular file only (a FIFO would
    block, /dev/zero never ends), at most `limit` bytes, UTF-8 without lone
    surrogates. Raises ValueError with a one-line message (without the path)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"no such {kind} file") from None
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"is a directory, not a {kind} file")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"not a regular file (a {kind} file must be one)")
    if st.st_size > limit:
        raise ValueError(f"{kind} file is too large ({st.st_size} bytes; limit {limit})")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since the stat
                raise ValueError(f"not a regular file (a {kind} file must be one)")
            data = f.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise ValueError(f"{kind} file is too large (limit {limit} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not a UTF-8 text file") from None


def read_trace(path: str | Path) -> Trace:
    path = Path(path)

    def bad(msg: str) -> NoReturn:
        raise TraceError(f"{path}: {msg}")

    try:
        text = read_untrusted_text(path, MAX_TRACE_BYTES, "trace")
    except ValueError as exc:
        bad(str(exc))
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        bad(f"not JSON ({exc.msg} at line {exc.lineno})")
    except RecursionError:
        bad("JSON nests too deeply")
    except ValueError as exc:  # an integer over Python's digit limit
        bad(f"unreadable number ({str(exc).splitlines()[0]})")
    return parse_trace(doc, path)


def parse_trace(doc: Any, path: Path | None = None) -> Trace:
    where = f"{path}: " if path else ""

    def bad(msg: str) -> NoReturn:
        raise TraceError(f"{where}{msg}")

    if not isinstance(doc, dict):
        bad("an ITF trace must be a JSON object")
    meta = doc.get("#meta")
    if not isinstance(meta, dict):
        bad("missing '#meta' object")
    for key in ("spec", "variant"):
        if not isinstance(meta.get(key), str):
            bad(f"'#meta' lacks the string field {key!r}")
    if not isinstance(meta.get("bounds", {}), dict):
        bad("'#meta.bounds' must be an object")
    for key in ("property", "kind", "model", "engine"):
        if key in meta and not (isinstance(meta[key], str) and _NAME.fullmatch(meta[key])):
            bad(f"'#meta.{key}' must be a printable string")
    vars_ = doc.get("vars")
    if not isinstance(vars_, list) or not all(isinstance(v, str) and _NAME.fullmatch(v) for v in vars_):
        bad("'vars' must be a list of variable names")
    raw_states = doc.get("states")
    if not isinstance(raw_states, list) or not raw_states:
        bad("'states' must be a non-empty list")
    loop = doc.get("loop")
    if loop is not None and (isinstance(loop, bool) or not isinstance(loop, int) or not 0 <= loop < len(raw_states)):
        bad(f"'loop' must be a state index in 0..{len(raw_states) - 1}")
    states, steps = [], []
    for k, st in enumerate(raw_states):
        if not isinstance(st, dict):
            bad(f"state {k} is not an object")
        m = st.get("#meta")
        if not isinstance(m, dict):
            bad(f"state {k} lacks '#meta'")
        if m.get("index") != k or isinstance(m.get("index"), bool):
            bad(f"state {k} has '#meta.index' {m.get('index')!r}, expected {k}")
        action = m.get("action")
        if not isinstance(action, str) or not action:
            bad(f"state {k} lacks an action name")
        if not _NAME.fullmatch(action):
            bad(f"state {k} has an action name that is not printable text")
        params = m.get("params", {})
        if not isinstance(params, dict):
            bad(f"state {k} has non-object params")
        fp = m.get("fingerprint")
        if fp is not None and not (isinstance(fp, str) and len(fp) <= 32 and all(c in "0123456789abcdef" for c in fp)):
            bad(f"state {k} has a malformed fingerprint")
        missing = [v for v in vars_ if v not in st]
        if missing:
            bad(f"state {k} lacks variable {missing[0]!r}")
        extra = [x for x in st if x != "#meta" and x not in vars_]
        if extra:
            bad(f"state {k} has undeclared variable {extra[0]!r}")
        try:
            values = {v: from_itf(st[v]) for v in vars_}
            dparams = {p: from_itf(x) for p, x in params.items()}
        except (ValueError, RecursionError) as exc:
            bad(f"state {k}: {exc}")
        states.append(values)
        steps.append({"index": k, "action": action, "params": dparams, "fingerprint": fp})
    return Trace(meta, list(vars_), states, steps, loop, path)
