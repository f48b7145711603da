"""Canonical binary encoding of states, and their stable 64-bit fingerprints.

States are nested tuples, frozensets, ints, strs, bools and None. The
encoding is canonical and lossless: a state encodes to the same bytes in
every process (frozenset members are sorted by their own encoding), and
decodes to an equal state. The fingerprint is a blake2b-64 of the same
encoding with each bool written as the int it equals (`_fcode`), so that
states equal in Python have one fingerprint, in every process, machine and
Spark worker. Python's `hash()` never reaches a fingerprint.

The decoder treats its input as untrusted: it checks every length, tag and
nesting depth and raises `EncodingError` with one line, and it builds only
the value types above. Nothing is ever unpickled.

    tag  value
    N    None
    T/F  True/False
    I    int, zigzag varint
    S    str, varint byte length + UTF-8
    (    tuple, varint count + items
    {    frozenset, varint count + items in sorted encoded order
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any

from .errors import CheckerError

MAX_DEPTH = 64
# The tags above, by name, for other codecs that write them (checker/engines/checkpoint/codec.py).
# This module's own hot loops spell them as literals.
NONE, TRUE, FALSE, INT, STR, TUPLE, FROZENSET = b"NTFIS({"


class EncodingError(CheckerError, ValueError):
    pass


def _unsupported(t: type) -> EncodingError:
    return EncodingError(f"cannot encode a {t.__name__} in a state (use tuples, frozensets, ints, strs, bools)")


def _zigzag(n: int) -> int:
    return (n << 1) if n >= 0 else ((-n << 1) - 1)


def _varint(n: int, out: bytearray) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


_SMALL_INTS = [bytes((73, n << 1)) for n in range(64)]
_STRS: dict[str, bytes] = {}  # str -> its encoding: a spec's strs are a small vocabulary


def _str_code(x: str) -> bytes:
    b = x.encode()
    out = bytearray(b"S")
    _varint(len(b), out)
    out += b
    code = bytes(out)
    if len(_STRS) < 4096:
        _STRS[x] = code
    return code


def _enc(v, out: bytearray) -> None:
    t = type(v)
    if t is int:
        out.append(73)  # I
        _varint(_zigzag(v), out)
    elif t is str:
        b = v.encode()
        out.append(83)  # S
        _varint(len(b), out)
        out += b
    elif t is bool:
        out.append(84 if v else 70)
    elif v is None:
        out.append(78)
    elif isinstance(v, tuple):
        out.append(40)
        _varint(len(v), out)
        for x in v:
            _enc(x, out)
    elif t is frozenset:
        out.append(123)
        _varint(len(v), out)
        out += b"".join(sorted(encode(x) for x in v))
    else:
        raise _unsupported(t)


def encode(v) -> bytes:
    out = bytearray()
    _enc(v, out)
    return bytes(out)


def _int_code(n: int) -> bytes:
    if 0 <= n < 64:
        return _SMALL_INTS[n]
    out = bytearray(b"I")
    _varint(_zigzag(n), out)
    return bytes(out)


def _fcode(v, cache: dict | None, remember: bool = True) -> bytes:
    """The fingerprint's encoding of `v`: `encode`'s, except that a bool is
    written as the int it equals. Values equal in Python (1 == True,
    (1,) == (True,)) then have one code, so the fingerprint follows the
    states' equality, as the exact visited set does, and `cache` may
    remember the code of each tuple and frozenset by value (of v itself
    too, unless `remember` is false)."""
    t = type(v)
    if t is int or t is bool:
        return _int_code(int(v))
    if t is str:
        return _STRS.get(v) or _str_code(v)
    if v is None:
        return b"N"
    if t is not frozenset and not isinstance(v, tuple):
        raise _unsupported(t)
    if cache is not None:
        try:
            hit = cache.get(v)
        except TypeError:  # an unhashable member: the loop below names it
            hit, cache = None, None
        if hit is not None:
            return hit
    if cache is not None:  # members are mostly remembered: look them up without a call
        get = cache.get
        codes = [get(x) or _fcode(x, cache) for x in v]
    else:
        codes = [_fcode(x, cache) for x in v]
    head = bytearray(b"(" if t is not frozenset else b"{")
    _varint(len(codes), head)
    if t is frozenset:
        codes.sort()
    code = bytes(head) + b"".join(codes)
    if cache is not None and remember:
        cache[v] = code
    return code


class Fingerprinter:
    """`fingerprint` for the states of one run, faster. A state space is the
    combinations of few distinct parts (the larger PIP-473 model's first
    200,000 states have under a thousand distinct fields), so the code of
    each field of a state, and of each tuple and frozenset in it, is
    remembered by value, which `_fcode` makes sound. The memory is dropped
    whenever it holds `limit` parts."""

    def __init__(self, limit: int = 1 << 16) -> None:
        self.cache: dict = {}
        self.limit = limit

    def __call__(self, v) -> int:
        cache = self.cache
        if len(cache) > self.limit:
            cache = self.cache = {}
        if not isinstance(v, tuple):
            return fingerprint_bytes(_fcode(v, cache))
        try:  # a state's fields: mostly remembered parts, small ints and strs
            codes: list[Any] = list(map(cache.get, v))   # None for a part not remembered: join fails
        except TypeError:  # an unhashable part (a list, say): _fcode names it in one line
            return fingerprint_bytes(_fcode(v, None))
        try:
            body = b"".join(codes)
        except TypeError:  # a field not remembered yet (None in codes)
            for i, code in enumerate(codes):
                if code is None:
                    x = v[i]
                    codes[i] = cache[x] = _fcode(x, cache)
            body = b"".join(codes)
        return fingerprint_bytes(_tuple_head(len(v)) + body)


def _tuple_head(n: int) -> bytes:
    head = _HEADS.get(n)
    if head is None:
        out = bytearray(b"(")
        _varint(n, out)
        head = _HEADS[n] = bytes(out)
    return head


_HEADS: dict[int, bytes] = {}


def fingerprint_bytes(data: bytes) -> int:
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def fingerprint(v) -> int:
    """Stable 64-bit fingerprint of a state (of its equality class: see `_fcode`)."""
    return fingerprint_bytes(_fcode(v, None))


def field_key(i: int, code: bytes) -> int:
    """The 64-bit key of the value whose `_fcode` is `code` at field `i`."""
    return int.from_bytes(blake2b(code, digest_size=8, salt=i.to_bytes(16, "little")).digest(), "little")


def shape_key(n: int | None) -> int:
    """The key of a state of `n` fields; None: of a state that is not a tuple."""
    return int.from_bytes(blake2b(b"S" if n is None else _tuple_head(n), digest_size=8,
                                  person=b"txncheck-shape").digest(), "little")


def field_fingerprint(v, cache: dict | None = None) -> int:
    """A second stable 64-bit fingerprint of a state, the fingerprint
    search's: the XOR of its shape's key and of each field's key (Zobrist
    hashing). A successor's is then its parent's with the keys of the fields
    that changed swapped; as keys are pseudo-random, two given distinct
    states collide with probability 2^-64, as with `fingerprint`. Equal
    states (in Python) have one, as `_fcode` makes their codes one."""
    if not isinstance(v, tuple):
        return shape_key(None) ^ field_key(0, _fcode(v, cache))
    f = shape_key(len(v))
    for i, x in enumerate(v):
        f ^= field_key(i, _fcode(x, cache))
    return f


def decode(data: bytes):
    """Inverse of `encode` (NamedTuples come back as plain tuples)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise EncodingError("encoded state must be bytes")
    data = bytes(data)
    value, pos = _dec(data, 0, 0)
    if pos != len(data):
        raise EncodingError(f"trailing bytes after encoded state at offset {pos}")
    return value


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= len(data):
            raise EncodingError("truncated encoded state")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7
        if shift > 630:
            raise EncodingError("varint too long in encoded state")


def _dec(data: bytes, pos: int, depth: int):
    if depth > MAX_DEPTH:
        raise EncodingError("encoded state nests too deeply")
    if pos >= len(data):
        raise EncodingError("truncated encoded state")
    tag = data[pos]
    pos += 1
    if tag == 73:
        z, pos = _read_varint(data, pos)
        return ((z >> 1) if not z & 1 else -((z + 1) >> 1)), pos
    if tag == 83:
        n, pos = _read_varint(data, pos)
        if pos + n > len(data):
            raise EncodingError("truncated string in encoded state")
        try:
            return data[pos:pos + n].decode(), pos + n
        except UnicodeDecodeError:
            raise EncodingError("invalid UTF-8 in encoded state") from None
    if tag == 84:
        return True, pos
    if tag == 70:
        return False, pos
    if tag == 78:
        return None, pos
    if tag in (40, 123):
        n, pos = _read_varint(data, pos)
        if n > len(data) - pos:
            raise EncodingError("collection longer than the encoded state")
        items = []
        for _ in range(n):
            x, pos = _dec(data, pos, depth + 1)
            items.append(x)
        if tag == 40:
            return tuple(items), pos
        try:
            return frozenset(items), pos
        except TypeError:
            raise EncodingError("unhashable set member in encoded state") from None
    raise EncodingError(f"unknown tag {tag!r} in encoded state")
