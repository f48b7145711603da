"""How the `spark` engine moves states: one top-level field at a time.

A state is a NamedTuple of a few dozen fields, and a state space is the
combinations of few distinct field values (TwoPhase with 7 RMs: 4 fields,
some thousands of values; PIP-473: 28 fields, about a thousand values in
200,000 states). So a state is written as its fields' canonical encodings
(`checker/encoding.py`), each with its length in front,

    varint(n + 1) | varint(len 1) encode(field 1) | ... | varint(len n) encode(field n)

(`varint(0)` then `encode(state)` for a state that is not a tuple), and
each side remembers what it has already seen:

- `FieldCodec.pack` keeps, per field value, its encoding and its fingerprint
  code, so a successor costs a dict lookup per field. Its 64-bit fingerprint
  is `encoding.fingerprint`'s: the blake2b of the fingerprint codes under the
  tuple's head, a bool written as the int it equals (`_fcode` there).
  The memory is by value, so equal values (1 and True) share the encoding of
  the first one met: the search identifies states by equality, as bfs's
  visited set and the fingerprints do.
- `FieldCodec.unpack` keeps, per (position, encoded field), the field
  rebuilt with its classes (`revive.Shapes`), so a frontier state
  costs a slice and a dict lookup per field. The bytes are untrusted (they
  come from checkpoint files): lengths are checked, and each field not yet
  seen is decoded by `encoding.decode`, which checks everything else.

A codec also learns the state classes of what it packs (`Shapes.learn_field`,
once per distinct field value). Both memories are dropped at `limit`
entries. Nothing here is pickled or uses Python's hash() for anything kept.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any

from ...encoding import EncodingError, _read_varint, _varint, decode, encode
from ...revive import Shapes


def _has_bool(v) -> bool:
    t = type(v)
    if t is bool:
        return True
    if t is frozenset or isinstance(v, tuple):
        return any(_has_bool(x) for x in v)
    return False


def _as_ints(v):
    """`v` with every bool replaced by the int it equals (an equal value)."""
    t = type(v)
    if t is bool:
        return int(v)
    if t is frozenset:
        return frozenset(_as_ints(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_as_ints(x) for x in v)
    return v


def _head(n: int) -> bytes:
    out = bytearray(b"(")
    _varint(n, out)
    return bytes(out)


def signed(fp: int) -> int:
    """A 64-bit fingerprint as Spark's and Arrow's int64: the same bits, two's complement."""
    return fp - (1 << 64) if fp >= 1 << 63 else fp


def _fingerprint(fcode: bytes) -> int:
    """`encoding.fingerprint_bytes`, read as a signed 64-bit int (`signed`)."""
    return int.from_bytes(blake2b(fcode, digest_size=8).digest(), "little", signed=True)


class FieldCodec:
    def __init__(self, shapes: Shapes, learner: Shapes | None = None, limit: int = 1 << 17) -> None:
        self.shapes = shapes          # frozen: what unpack rebuilds classes with
        self.learner = learner        # what pack teaches the classes it meets (None: learn nothing)
        self.limit = limit
        self.codes: list[dict] = []   # per position: field value -> (varint(len) + encoding, fingerprint code)
        self.fields: list[dict] = []  # per position: encoded field -> rebuilt field
        self.size = 0                 # entries in both
        self.top: type | None = None  # the last top-level class packed
        self.heads: dict[int, tuple[bytes, bytes]] = {}   # n -> (varint(n + 1), the tuple's fingerprint head)

    def _room(self, n: int) -> None:
        """Per-position memories for n fields, emptied when they hold `limit` entries."""
        self.size += 1
        if self.size > self.limit or len(self.codes) < n:
            self.codes = [{} for _ in range(max(n, len(self.codes)))]
            self.fields = [{} for _ in range(len(self.codes))]
            self.size = 0

    # -- packing -------------------------------------------------------------
    def _code(self, i: int, v) -> tuple[bytes, bytes]:
        self._room(i + 1)
        enc = encode(v)   # refuses what a state cannot hold (so v is hashable below)
        fcode = encode(_as_ints(v)) if _has_bool(v) else enc
        if self.learner is not None:
            self.learner.learn_field(i, v)
        framed = bytearray()
        _varint(len(enc), framed)
        c = self.codes[i][v] = (bytes(framed) + enc, fcode)
        return c

    def pack(self, s) -> tuple[int, bytes]:
        """(signed fingerprint, packed bytes) of state `s`."""
        if not isinstance(s, tuple):
            if self.learner is not None:
                self.learner.learn(s)
            enc = encode(s)
            return _fingerprint(encode(_as_ints(s)) if _has_bool(s) else enc), b"\x00" + enc
        n = len(s)
        if type(s) is not self.top:
            if self.learner is not None:
                self.learner.learn_top(s)
            self.top = type(s)
        heads = self.heads.get(n)
        if heads is None:
            count = bytearray()
            _varint(n + 1, count)
            heads = self.heads[n] = (bytes(count), _head(n))
        if len(self.codes) < n:
            self._room(n)
        try:
            cs: list[Any] = [d.get(v) for d, v in zip(self.codes, s)]   # None: not known yet
        except TypeError:   # an unhashable value: encode() names it
            cs = [None] * n
        if None in cs:
            cs = [c if c is not None else self._code(i, s[i]) for i, c in enumerate(cs)]
        return (_fingerprint(heads[1] + b"".join([c[1] for c in cs])),
                heads[0] + b"".join([c[0] for c in cs]))

    # -- unpacking -----------------------------------------------------------
    def unpack(self, data: bytes):
        """The state that `data` packs, with its classes rebuilt."""
        n1, pos = _read_varint(data, 0)
        if n1 == 0:
            return self.shapes.revive(decode(data[pos:]))
        n = n1 - 1
        if n > len(data):
            raise EncodingError("more fields than bytes in a state")
        if len(self.fields) < n:
            self._room(n)
        fields = self.fields
        out = []
        for i in range(n):
            if pos >= len(data):
                raise EncodingError("truncated state")
            b = data[pos]
            if b < 0x80:   # a one-byte length: most fields
                pos += 1
                end = pos + b
            else:
                ln, pos = _read_varint(data, pos)
                end = pos + ln
            if end > len(data):
                raise EncodingError("truncated field in a state")
            f = data[pos:end]
            v = fields[i].get(f, _MISSING)
            if v is _MISSING:
                self._room(n)
                fields = self.fields
                v = fields[i][f] = self.shapes.revive_field(i, decode(f))
            out.append(v)
            pos = end
        if pos != len(data):
            raise EncodingError("trailing bytes after a state")
        return self.shapes.make_top(out)


_MISSING = object()
