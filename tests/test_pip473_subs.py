"""Two subscriptions on a segment (bound `subs`): each has its own cursor,
dispatcher and pending-ack store, the ledger trims at the slower cursor,
and the properties about acks range over cursors. One subscription keeps
the state space and the labels it had (the corpus and the figures pin
that); these tests pin what the second one adds."""

from __future__ import annotations

import re

import pytest

from txncheck.checker.cli import main
from txncheck.spec.api import SpecError
from txncheck.spec.pip473.protocol import segments
from txncheck.spec.pip473.spec import Pip473

from .test_pip473_por import _reachable
from .test_pruning_audit import first_violations

TWO = dict(participants="split", subs=2, recovery="steps", txns=2, writes="t1:0",
           acks="t2:s1:2:cum t2:s1:1:cum:sub2", reshape="none", decisions="both", crashes=0, failovers=0,
           trim=True)


@pytest.mark.parametrize("bounds,message", [
    ({"subs": 2, "participants": "joint"}, 'bound subs = 2 needs participants = "split"'),
    ({"acks": "t1:s1:1:ind:sub2"}, "bound acks: 't1:s1:1:ind:sub2' names subscription 'sub2'; with subs = 1 "
                                   "it is one of sub1"),
    ({"subs": 2, "participants": "split", "acks": "t1:s1:1:ind:sub3"}, "names subscription 'sub3'"),
])
def test_bad_subscription_bounds_are_refused(bounds, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        Pip473("fixed", **bounds)


def test_the_cli_refuses_two_subscriptions_on_a_joint_participant_in_one_line(tmp_path, capsys):
    model = tmp_path / "m.toml"
    model.write_text('spec = "pip473"\nvariant = "fixed"\nproperties = ["Atomicity"]\n[constants]\nsubs = 2\n'
                     'participants = "joint"\n')
    assert main(["check", str(model), "--quiet", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'needs participants = "split"' in err[0]


def test_each_subscription_acks_its_own_cursor():
    """A committed ack of sub2 covers sub2's cursor only; the observation
    names the second cursor after its subscription."""
    spec = Pip473("fixed", **{**TWO, "txns": 1, "writes": "", "acks": "t1:s1:1:cum:sub2", "trim": False})
    assert spec.schema.elements("Cur") == ("s1", "s2", "s1/sub2", "s2/sub2")
    seen = False
    for s in _reachable(spec):
        obs = spec.observe(s)
        if obs["acked"]:
            assert obs["acked"] == {("s1/sub2", "p1")} and s.cursor == ((0, frozenset()),) * 2
            seen = True
    assert seen


def test_fixed_is_safe_with_two_subscriptions_and_trims_at_the_slower_cursor(monkeypatch):
    """The ledger may trim only what both cursors acknowledged. Trimming at
    the faster one lets the buffer prune an aborted record while the slower
    subscription has the txn's entry still to read."""
    first, reached, _ = first_violations(Pip473("fixed", **TWO))
    assert not any(first.values())
    assert {"AbortedEntrySkipped", "CommittedAckApplied"} <= reached

    def trim_at_the_faster(m, s, j):
        first = max(s.cursor[j][0], s.cursor2[j][0]) + 1
        if s.part[j] is None or first <= s.retained[j]:
            return None
        return s._replace(retained=s.retained[:j] + (first,) + s.retained[j + 1:])

    monkeypatch.setattr(segments, "trim_ledger", trim_at_the_faster)
    first, _, _ = first_violations(Pip473("fixed", **TWO))
    assert first["ReadCommitted"] == 17   # the stock client (the default since issue 51) waits for its sends: one step more


def test_a_pending_ack_store_applies_only_its_own_subscriptions_acks(monkeypatch):
    """fixed F3 applies the acks of the op records: of its own subscription
    (`idx:acks-by-segment-subscription`). Reading the segment's acks of
    every subscription puts t2's sub1 ack on sub2's cursor."""
    from txncheck.spec.pip473.protocol import pendingack, store

    every = store.acks_by_segment_subscription
    monkeypatch.setattr(pendingack, "acks_by_segment_subscription",
                        lambda s, seg, sub=0: every(s, seg, 0) + every(s, seg, 1))
    first, _, _ = first_violations(Pip473("fixed", **TWO))
    assert first["NoAbortedAck"] == 14


def test_a_second_subscription_is_dispatched_and_acked_on_its_own():
    """Its actions name it; the first subscription's keep their labels."""
    spec = Pip473("merged", **TWO)
    labels = {(name, dict(params).get("sub", "")) for s in _reachable(spec) for (name, params), _ in spec.next(s)}
    assert {("dispatch", ""), ("dispatch", "sub2"), ("appendAck", ""), ("appendAck", "sub2"),
            ("deliverAckEvent", ""), ("deliverAckEvent", "sub2")} <= labels

