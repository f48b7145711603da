"""Rebuilding state classes from the canonical encoding (no Spark needed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.encoding import decode, encode
from txncheck.checker.model import load_model
from txncheck.checker.revive import ShapeError, Shapes, class_name, resolve_class

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
    states = check_model(m, options={"exact": True}).outcome.exploration.states   # the file keeps fingerprints
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


def test_a_user_spec_s_classes_are_named_apart_from_where_it_was_loaded(tmp_path):
    """A spec loaded by path has a module name that depends on its folder, so
    the driver and an executor's copy (spark_ship) name its classes `<spec>:S`;
    a checkpoint's manifest (untrusted) resolves only to the spec's own tuple
    classes and txncheck's, never to another loaded module's, nor imports one."""
    import shutil
    import sys

    from txncheck.checker.revive import SPEC, ClassNames

    shutil.copytree(MODELS.parent / "examples" / "mutex", tmp_path / "m")
    (tmp_path / "m" / "mutex_extra.py").write_text("from typing import NamedTuple\n\n\nclass E(NamedTuple):\n    x: int\n")
    src = tmp_path / "m" / "mutex.py"
    src.write_text(src.read_text().replace("import z3\n", "import z3\nimport mutex_extra  # noqa: F401\n"))
    model = load_model(tmp_path / "m" / "racy.toml")
    cls = model.resolve_spec().cls
    names = ClassNames(cls)
    state = sys.modules[cls.__module__].S
    assert names.name(state) == f"{SPEC}:S" and names.resolve(f"{SPEC}:S") is state
    assert names.resolve("mutex_extra:E") is sys.modules["mutex_extra"].E   # a module of its folder
    assert names.resolve("builtins:tuple") is tuple
    pip473_state = type(next(iter(load_model(MODELS / "pip473" / "fixed.toml").instantiate().init_states())))
    assert names.resolve(class_name(pip473_state)) is pip473_state   # txncheck's own, by import
    for bad in ("os:stat_result", "os:system", f"{SPEC}:Mutex", f"{SPEC}:Nothing", "mutex_extra:NamedTuple",
                "txncheck_user_spec_other_0:S", "json:JSONDecoder", "txncheck.checker.encoding:encode"):
        with pytest.raises(ShapeError):
            names.resolve(bad)
    assert "json.tool" not in sys.modules
    with pytest.raises(ShapeError):
        names.resolve("json.tool:main")
    assert "json.tool" not in sys.modules   # nothing outside txncheck is imported by name
