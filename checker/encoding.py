"""Canonical binary encoding of states, and their stable 64-bit fingerprints.

States are nested tuples, frozensets, ints, strs, bools and None. The
encoding is canonical: equal states encode to equal bytes in every process
(frozenset members are sorted by their own encoding), so the fingerprint, a
blake2b-64 of the encoding, is stable across processes, machines and Spark
workers. Python's `hash()` never reaches a fingerprint.

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

MAX_DEPTH = 64


class EncodingError(ValueError):
    pass


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


def _enc(v, out: bytearray, memo: dict | None = None) -> None:
    t = type(v)
    if t is int:
        out.append(73)  # I
        _varint((v << 1) if v >= 0 else ((-v << 1) - 1), out)
    elif t is str:
        b = v.encode()
        out.append(83)  # S
        _varint(len(b), out)
        out += b
    elif t is bool:
        out.append(84 if v else 70)
    elif v is None:
        out.append(78)
    elif memo is not None and (hit := memo.get(id(v))) is not None and hit[0] is v:
        out += hit[1]
    elif isinstance(v, tuple):
        start = len(out)
        out.append(40)
        _varint(len(v), out)
        if memo is None:
            for x in v:
                _enc(x, out)
            return
        get, strs = memo.get, _STRS
        for x in v:  # the common items inline: small ints, strs, remembered parts
            tx = type(x)
            if tx is int and 0 <= x < 64:
                out.append(73)
                out.append(x << 1)
            elif tx is str:
                out += strs.get(x) or _str_code(x)
            elif (hit := get(id(x))) is not None and hit[0] is x:
                out += hit[1]
            elif tx is int or tx is bool or x is None:
                _enc(x, out)
            else:
                _enc(x, out, memo)
        memo[id(v)] = (v, bytes(out[start:]))
    elif t is frozenset:
        start = len(out)
        out.append(123)
        _varint(len(v), out)
        if memo is None:
            codes = [encode(x) for x in v]
        else:
            get, strs, codes = memo.get, _STRS, []
            for x in v:  # as for tuples: the common members without a call
                tx = type(x)
                if tx is int and 0 <= x < 64:
                    codes.append(_SMALL_INTS[x])
                elif tx is str:
                    codes.append(strs.get(x) or _str_code(x))
                elif (hit := get(id(x))) is not None and hit[0] is x:
                    codes.append(hit[1])
                else:
                    codes.append(encode(x, memo))
        codes.sort()
        out += b"".join(codes)
        if memo is not None:
            memo[id(v)] = (v, bytes(out[start:]))
    else:
        raise EncodingError(f"cannot encode a {t.__name__} in a state (use tuples, frozensets, ints, strs, bools)")


def encode(v, memo: dict | None = None) -> bytes:
    if memo is not None and (hit := memo.get(id(v))) is not None and hit[0] is v:
        return hit[1]
    out = bytearray()
    _enc(v, out, memo)
    return bytes(out)


class Fingerprinter:
    """`fingerprint` for the states of one run, faster: successors share most
    of their parts with their parent by identity, so the encoding of each
    tuple and frozenset is remembered by object identity (the memo holds the
    object, so its id cannot be reused while remembered). Identity, not
    equality, because 1 == True while their encodings differ. The bytes, and
    so the fingerprints, are exactly `encode`'s. The memo is dropped whenever
    it holds `limit` parts, which bounds its memory."""

    def __init__(self, limit: int = 1 << 16) -> None:
        self.memo: dict = {}
        self.limit = limit

    def __call__(self, v) -> int:
        if len(self.memo) > self.limit:
            self.memo = {}
        return fingerprint_bytes(encode(v, self.memo))


def fingerprint_bytes(data: bytes) -> int:
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def fingerprint(v) -> int:
    """Stable 64-bit fingerprint of a state."""
    return fingerprint_bytes(encode(v))


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
