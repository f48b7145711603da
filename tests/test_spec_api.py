"""Helpers of the spec API (spec/api.py) that specs build successors with."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from txncheck.spec.api import quick_replace, replace_at
from txncheck.spec.pip473.protocol.state import S


class Plain(NamedTuple):
    a: int
    b: str
    c: tuple


@quick_replace
class Quick(NamedTuple):
    a: int
    b: str
    c: tuple


values = st.fixed_dictionaries({}, optional={"a": st.integers(), "b": st.text(max_size=3),
                                             "c": st.tuples(st.integers())})


@given(values)
def test_quick_replace_is_the_standard_replace(changes):
    q = Quick(1, "x", ())._replace(**changes)
    assert type(q) is Quick
    assert tuple(q) == tuple(Plain(1, "x", ())._replace(**changes))


def test_quick_replace_names_an_unknown_field():
    with pytest.raises(ValueError, match="^Quick has no field 'd'$"):
        Quick(1, "x", ())._replace(d=2)
    assert S._replace.__qualname__ == Quick._replace.__qualname__ != Plain._replace.__qualname__  # PIP-473 uses it


@given(st.lists(st.integers(), min_size=1, max_size=6), st.data())
def test_replace_at_is_except(items, data):
    t = tuple(items)
    i = data.draw(st.integers(0, len(t) - 1))
    assert replace_at(t, i, "v") == t[:i] + ("v",) + t[i + 1:]
