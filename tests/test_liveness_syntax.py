"""The model-file syntax of temporal properties and fairness."""

from __future__ import annotations

import pytest

from txncheck.checker.liveness.syntax import (
    EVENTUALLY, LEADS_TO, TRUE, TemporalSyntaxError, parse_fairness, parse_property,
)


def test_the_three_forms_and_their_tla_spellings():
    p = parse_property("P", "eventually Done")
    assert (p.kind, p.trigger, p.goal) == (EVENTUALLY, TRUE, ("name", "Done"))
    t = parse_property("P", "<>Done")
    assert (t.kind, t.trigger, t.goal) == (p.kind, p.trigger, p.goal)
    q = parse_property("Q", "Asked leads_to Done")
    assert (q.kind, q.trigger, q.goal) == (LEADS_TO, ("name", "Asked"), ("name", "Done"))
    assert parse_property("Q", "Asked ~> Done").goal == q.goal
    r = parse_property("R", "always eventually Idle")
    assert (r.kind, r.trigger, r.goal) == (LEADS_TO, TRUE, ("name", "Idle"))
    assert parse_property("R", "[]<> Idle").goal == r.goal


def test_precedence_not_over_and_over_or():
    p = parse_property("P", "eventually not A and B or C")
    assert p.goal == ("or", ("and", ("not", ("name", "A")), ("name", "B")), ("name", "C"))
    p = parse_property("P", "eventually not (A or B)")
    assert p.goal == ("not", ("or", ("name", "A"), ("name", "B")))


@pytest.mark.parametrize("text", [
    "", "eventually", "A", "A leads_to", "leads_to A", "eventually A B", "always A",
    "eventually (A", "eventually A)", "eventually and", "eventually A $ B",
])
def test_malformed_properties_are_rejected(text):
    with pytest.raises(TemporalSyntaxError):
        parse_property("P", text)


def test_fairness_forms():
    wf_all, sf, per, fixed = parse_fairness(["WF(*)", "SF(Deliver)", "WF(Rcv(rm=*))", "WF(Send(a=1, b=*))"])
    assert (wf_all.kind, wf_all.action, wf_all.params) == ("WF", "*", ())
    assert (sf.kind, sf.action) == ("SF", "Deliver")
    assert per.params == (("rm", None),)
    assert fixed.params == (("a", "1"), ("b", None))


@pytest.mark.parametrize("item", ["WF", "XF(A)", "WF(A(b))", "WF(*(a=1))", "WF(A(a=1, a=2))", 3, "WF(A)(B)"])
def test_malformed_fairness_is_rejected(item):
    with pytest.raises(TemporalSyntaxError):
        parse_fairness([item])
