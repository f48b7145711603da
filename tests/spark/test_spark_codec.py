"""The Spark engine's field-at-a-time packing of states (spark_codec): no
Spark needed. A packed state unpacks to an equal state of the same classes,
its fingerprint is `encoding.fingerprint`'s (so bools count as the ints they
equal, as bfs's visited set does), and damaged bytes are one EncodingError."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from txncheck.checker.encoding import EncodingError, encode, fingerprint
from txncheck.checker.engines.spark.codec import FieldCodec, signed
from txncheck.checker.revive import Shapes

from .test_spark_revive import _strict


class Inner(NamedTuple):
    a: int
    b: frozenset


class State(NamedTuple):
    x: int
    flag: bool
    inner: tuple
    name: str
    tags: frozenset


atoms = st.one_of(st.integers(-2**70, 2**70), st.booleans(), st.none(), st.text(max_size=5))
values = st.recursive(atoms, lambda kids: st.one_of(st.tuples(kids, kids), st.frozensets(kids, max_size=3)),
                      max_leaves=8)
states = st.builds(State, st.integers(-5, 5), st.booleans(),
                   st.tuples(st.builds(Inner, st.integers(0, 3), st.frozensets(st.integers(0, 3), max_size=3))),
                   st.text(max_size=3), st.frozensets(values, max_size=3))




@given(st.lists(states, min_size=1, max_size=20))
def test_states_round_trip_with_their_classes_and_bfs_s_fingerprint(samples):
    learner = Shapes()
    packer = FieldCodec(Shapes().freeze(), learner, limit=7)   # a small memory: it is emptied mid-way
    packed = [packer.pack(s) for s in samples]
    learner.freeze()
    unpacker = FieldCodec(learner, limit=7)
    for s, (fp, data) in zip(samples, packed):
        assert fp == signed(fingerprint(s))
        assert _strict(unpacker.unpack(data), s)


@given(values)
def test_any_value_as_a_state(v):
    """A state that is not a tuple is packed whole."""
    fp, data = FieldCodec(Shapes().freeze(), Shapes()).pack(v)
    assert fp == signed(fingerprint(v))
    assert _strict(FieldCodec(Shapes().freeze()).unpack(data), v)


def test_a_bool_and_the_int_it_equals_share_one_fingerprint():
    a = State(1, True, (Inner(1, frozenset({True})),), "n", frozenset())
    b = State(1, 1, (Inner(True, frozenset({1})),), "n", frozenset())
    assert a == b and encode(a) != encode(b)
    codec = FieldCodec(Shapes().freeze(), Shapes())
    assert codec.pack(a)[0] == FieldCodec(Shapes().freeze(), Shapes()).pack(b)[0] == signed(fingerprint(a))


@given(st.binary(max_size=40))
def test_damaged_bytes_are_an_encoding_error(data):
    codec = FieldCodec(Shapes().freeze())
    try:
        codec.unpack(data)
    except EncodingError:
        pass


GOOD = FieldCodec(Shapes().freeze(), Shapes()).pack((5, "x"))[1]


@pytest.mark.parametrize("data", [b"", b"\x02", b"\x05\x01I", b"\x02\x05I\x02", b"\x02\x80", GOOD[:-1],
                                  GOOD + b"\x00", b"\x00" + encode((1,)) + b"\x00"])
def test_truncated_or_padded_states_are_refused(data):
    assert FieldCodec(Shapes().freeze()).unpack(GOOD) == (5, "x")
    with pytest.raises(EncodingError):
        FieldCodec(Shapes().freeze()).unpack(data)
