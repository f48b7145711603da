"""Canonical encoding and stable fingerprints."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from txncheck.checker.encoding import EncodingError, Fingerprinter, decode, encode, fingerprint

atoms = st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8), st.booleans(), st.none())
values = st.recursive(
    atoms,
    lambda inner: st.one_of(st.lists(inner, max_size=4).map(tuple), st.frozensets(inner, max_size=4)),
    max_leaves=20,
)


@given(values)
def test_roundtrip(v):
    assert decode(encode(v)) == v


@given(st.frozensets(st.text(max_size=6), max_size=8))
def test_frozenset_encoding_ignores_construction_order(s):
    items = list(s)
    assert encode(frozenset(items)) == encode(frozenset(reversed(items)))


@given(st.lists(values, min_size=1, max_size=6), st.integers(1, 8))
def test_the_run_fingerprinter_gives_fingerprint_exactly(vs, limit):
    """States that share parts by identity, equal parts as distinct objects,
    1 next to True (equal in Python), and a memory small enough to be
    dropped mid-run."""
    fp = Fingerprinter(limit=limit)
    mixed = [(1, (1,)), (True, (True,)), ((1,), frozenset({(True,)})), ((True,), frozenset({(1,)}))]
    states = []
    for v in vs + mixed:
        states += [v, (v, vs[0]), (vs[0], v), (v, tuple(x for x in vs))]
    for s in states + states:
        assert fp(s) == fingerprint(s)


@given(values)
def test_equal_states_have_one_fingerprint(v):
    """A bool and the int it equals (True == 1) share a fingerprint, as
    they share a slot in an exact visited set; `encode` still keeps them
    apart, so a state decodes to its own types."""
    as_ints = _bools_to_ints(v)
    assert as_ints == v
    assert fingerprint(as_ints) == fingerprint(v) == Fingerprinter()(v) == Fingerprinter()(as_ints)
    assert encode(decode(encode(v))) == encode(v)


def _bools_to_ints(v):
    if type(v) is bool:
        return int(v)
    if isinstance(v, tuple):
        return tuple(_bools_to_ints(x) for x in v)
    if isinstance(v, frozenset):
        return frozenset(_bools_to_ints(x) for x in v)
    return v


def test_a_bool_and_its_int_differ_in_the_encoding_only():
    assert fingerprint((True, frozenset({(1, False)}))) == fingerprint((1, frozenset({(True, 0)})))
    assert encode(True) != encode(1) and decode(encode(True)) is True
    assert fingerprint(2) != fingerprint(True) != fingerprint(0)


def test_the_str_cache_stays_bounded():
    """The run fingerprinter remembers the encodings of strs; a state with
    more distinct strs than it keeps is still encoded exactly."""
    from txncheck.checker import encoding

    fp = Fingerprinter()
    words = tuple(f"w{i}" for i in range(6000))
    assert fp(words) == fingerprint(words)
    assert fp(frozenset(words)) == fingerprint(frozenset(words))
    assert 0 < len(encoding._STRS) <= 4096


def test_fingerprint_is_the_same_in_every_process():
    state = (("working", "prepared"), "init", frozenset({"r1", "r2", "r10"}), frozenset({("Prepared", "r1")}))
    code = ("from txncheck.checker.encoding import fingerprint;"
            "print(fingerprint((('working', 'prepared'), 'init', frozenset({'r1', 'r2', 'r10'}),"
            " frozenset({('Prepared', 'r1')}))))")
    seen = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        seen.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout.strip())
    assert seen == {str(fingerprint(state))}


def test_fingerprint_is_pinned():
    # A fixed value: changing the encoding changes every stored trace and checkpoint.
    assert f"{fingerprint((1, 'a', frozenset({3, 2}))):016x}" == "85d99900227f785d"
    assert fingerprint(("x",)) != fingerprint("x")


@pytest.mark.parametrize("data", [b"", b"I", b"S\x05ab", b"(\x05I\x02", b"Z", b"I\x02I\x02", b"S\x02\xff\xfe",
                                  b"(" * 200 + b"\x01" * 200, b"I" + b"\xff" * 200])
def test_hostile_encodings_are_rejected(data):
    with pytest.raises(EncodingError):
        decode(data)


def test_unsupported_values_are_rejected():
    with pytest.raises(EncodingError):
        encode({"a": 1})
    with pytest.raises(EncodingError):
        encode([1, 2])
    for state in ((1, ([2],)), ((1, [2]),), (frozenset({1}), [3])):  # the run fingerprinter too
        with pytest.raises(EncodingError, match="cannot encode a list"):
            Fingerprinter()(state)
        with pytest.raises(EncodingError, match="cannot encode a list"):
            fingerprint(state)
