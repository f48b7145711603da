"""API additions for user specs: subset constraints, structured constants,
schema checks of observations."""

from __future__ import annotations

import pytest
import z3

from txncheck.checker.invariants import compile_predicate
from txncheck.spec.api import Bound, SpecError
from txncheck.spec.schema import Bool, Int, Schema, Str


def _schema():
    sc = Schema()
    sc.enum("Node", ("n1", "n2", "n3"))
    return sc, sc.set("up", "Node"), sc.set("known", "Node")


def test_subset_of_a_set_and_of_listed_elements():
    sc, up, known = _schema()
    p = compile_predicate(sc, sc.subset(up, known))
    assert p({"up": {"n1"}, "known": {"n1", "n2"}}) and not p({"up": {"n1", "n3"}, "known": {"n1", "n2"}})
    q = compile_predicate(sc, sc.subset(up, ["n1", "n2"]))
    assert q({"up": {"n2"}, "known": set()}) and not q({"up": {"n3"}, "known": set()})
    with pytest.raises(ValueError, match="n9 is not an element"):
        sc.subset(up, ["n9"])


def test_structured_constants_become_nested_tuples():
    b = Bound((("a1", "a2"),), "quorums")
    assert b.check("quorums", [["a1", "a2"], ["a2", "a3"]]) == (("a1", "a2"), ("a2", "a3"))
    with pytest.raises(SpecError, match="must be an array"):
        b.check("quorums", "a1")
    with pytest.raises(SpecError, match="not 1.5"):
        b.check("quorums", [[1.5]])


@pytest.mark.parametrize("obs, needle", [
    ({"up": {"n1": True}, "known": set(), "x": 1, "s": "a"}, "symbol up is a set"),
    ({"known": set(), "x": 1, "s": "a"}, "symbol up is declared but missing"),
    ({"up": {"n7"}, "known": set(), "x": 1, "s": "a"}, "'n7' is not an element of sort Node"),
    ({"up": set(), "known": set(), "x": True, "s": "a"}, "symbol x: expected an int"),
    ({"up": set(), "known": set(), "x": 9, "s": "a"}, "symbol x: 9 is outside its declared range"),
    ({"up": set(), "known": set(), "x": 1, "s": 3}, "symbol s: expected a str"),
    ({"up": set(), "known": set(), "x": 1, "s": "a", "zz": 0}, "'zz', which the schema does not declare"),
])
def test_the_schema_names_the_first_mismatching_symbol(obs, needle):
    sc, _, _ = _schema()
    sc.var("x", Int(0, 3))
    sc.var("s", Str())
    assert needle in sc.mismatch(obs)
    good = {"up": {"n1"}, "known": frozenset(), "x": 1, "s": "a"}
    assert sc.mismatch(good) is None


def test_a_function_without_default_must_cover_its_domain():
    sc = Schema()
    sc.enum("Node", ("n1", "n2"))
    sc.fun("f", "Node", Str())
    assert "no value at 'n2'" in sc.mismatch({"f": {"n1": "a"}})
    assert sc.mismatch({"f": {"n1": "a", "n2": "b"}}) is None


def test_a_bool_valued_function_is_a_set_and_a_dict_for_it_is_named():
    """The issue's false violation: {"n1": False} read as a set holds n1."""
    sc = Schema()
    sc.enum("Node", ("n1", "n2"))
    f = sc.fun("f", "Node", Bool())
    assert "symbol f is a set (a Bool-valued function)" in sc.mismatch({"f": {"n1": False, "n2": False}})
    assert compile_predicate(sc, z3.Not(f(sc.const("Node", "n1"))))({"f": {"n1"}}) is False


def test_integer_sorts_compare_as_integers():
    """EWD840's `\\A i \\in Node: tpos < i => ~active[i]`, with Node = 0..2."""
    sc = Schema()
    sc.int_sort("Node", 0, 2)
    active = sc.set("active", "Node")
    tpos = sc.var("tpos", Int(0, 2))
    p0 = compile_predicate(sc, sc.forall("Node", lambda i: z3.Implies(tpos < sc.as_int("Node", i), z3.Not(active(i)))))
    assert sc.elements("Node") == ("0", "1", "2")
    assert p0({"active": {"0", "1"}, "tpos": 1}) and not p0({"active": {"2"}, "tpos": 1})
    assert sc.mismatch({"active": {"3"}, "tpos": 0}) == "symbol active: '3' is not an element of sort Node"
