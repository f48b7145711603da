"""Rebuilding state classes from the canonical encoding (no Spark needed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.encoding import decode, encode
from txncheck.checker.model import load_model
from txncheck.checker.engines.spark_revive import ShapeError, Shapes, class_name, resolve_class

MODELS = Path(__file__).resolve().parents[2] / "models"


def _strict(a, b) -> bool:
    """Equal values of the same classes all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_strict(x, y) for x, y in zip(a, b))
    if isinstance(a, frozenset):
        return a == b and _strict(tuple(sorted(a, key=encode)), tuple(sorted(b, key=encode)))
    return a == b


def test_pip473_states_rebuild_exactly():
    m = replace(
        load_model(MODELS / "pip473" / "fixed.toml"),
        constants={"txns": 1, "writes": "t1:0", "acks": "t1:s1:1:ind", "reshape": "none", "crashes": 1,
                   "failovers": 0, "ticks": 1, "timeout": 1, "retention": 0},
    )
    states = check_model(m).outcome.exploration.states
    assert len(states) > 100
    shapes = Shapes()
    for s in states:
        shapes.learn(s)
    shapes.freeze()
    for s in states:
        assert _strict(shapes.revive(decode(encode(s))), s)
    # The records round-trip through their names (what the manifest stores).
    again = Shapes()
    for path, n, cls in shapes.records():
        again.add(path, n, resolve_class(class_name(cls)))
    again.freeze()
    assert all(_strict(again.revive(decode(encode(s))), s) for s in states[:50])


class A(NamedTuple):
    x: int
    y: int


class B(NamedTuple):
    u: int
    v: int


def test_two_classes_of_one_length_at_one_place_are_refused():
    shapes = Shapes()
    shapes.learn((A(1, 2),))
    with pytest.raises(ShapeError, match="cannot tell them apart"):
        shapes.learn((B(1, 2),))


def test_only_tuple_classes_under_the_package_resolve():
    with pytest.raises(ShapeError):
        resolve_class("os:system")
    with pytest.raises(ShapeError):
        resolve_class("txncheck.checker.encoding:encode")
