"""Guards that name the bug (issue 51 item 7): each survivor of the hand
mutation audit, put back in, now changes a verdict here, not a recorded
figure. Each test runs its guard on the real code and then on the code with
the bug put in (a monkeypatch), and asserts the guard's verdict flips: a
guard that cannot fail is no guard.

- a reference commit that swaps cumulative and individual acks: an
  edge-complete conformance case with a cumulative ack above position 1;
- a pending-ack handle that does not queue acks while its store replays, and
  a dispatcher that does not wait for that replay: the reference's own
  contract, asserted on a restart;
- a reference that forgets the hold on a recovered entry: a fast
  edge-complete case of a recovered OPEN txn whose entry is on the ledger;
- a spec whose buffer recovery also deletes the stores' ACK ops: a small
  fixed model (a send and an ack of one txn, a crash, both decisions) whose
  NoLostCommittedAck breaks.
"""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model
from txncheck.counterexamples.replay import StepRefused
from txncheck.reference.cluster import Cluster
from txncheck.reference.dispatcher import Dispatcher
from txncheck.reference.ledger import ManagedCursor
from txncheck.reference.pending_ack import MetadataPendingAckStore
from txncheck.reference.transaction_buffer import MetadataTransactionBuffer
from txncheck.spec.pip473.protocol import recovery
from txncheck.spec.pip473.spec import Pip473

from .helpers import MODELS
from .test_conformance_pip473 import walk_every_transition

PIP = MODELS / "pip473"


def _conforms(spec) -> bool:
    """Every transition of the model replays on reference/ with equal states."""
    try:
        walk_every_transition(spec)
    except (AssertionError, StepRefused):
        return False
    return True


def test_a_cumulative_ack_above_the_first_position_names_swapped_ack_kinds(monkeypatch):
    spec = Pip473("merged", client="permissive", txns=1, writes="", plain="0", acks="t1:s1:2:cum", reshape="none",
                  decisions="commit", crashes=0, failovers=0, timeout=1)
    assert _conforms(spec)
    mark, single = ManagedCursor.mark_delete, ManagedCursor.individual_ack
    monkeypatch.setattr(ManagedCursor, "mark_delete", single)   # the bug: the two kinds swapped
    monkeypatch.setattr(ManagedCursor, "individual_ack", mark)
    assert not _conforms(spec)


def _restarted(behaviour: str):
    c = Cluster(behaviour, {"s1": (0, 4)}, ["sub"], seed_entries=True)
    c.brokers["s1"].ledger.add_entry_now(("plain", None, "p2"))
    c.crash("s1")
    c.restart("s1")
    return c


def _replay_contract(c) -> bool:
    """While the store replays, an ack is held (no task for it) and the
    consumer reads nothing; once it is done, the consumer reads."""
    req = c.ack("s1", c.tc.new_txn(), 1)
    waiting = req.stage == "todo" and c.scheduler.find("ack", "s1", "sub") is None and c.dispatch("s1") is None
    c.scheduler.run(c.scheduler.find("pas-recover", "s1", "sub"))
    return waiting and c.dispatch("s1") is not None


@pytest.mark.parametrize("bug", ["handle", "dispatcher"])
def test_acks_and_the_consumer_wait_for_the_pending_ack_stores_replay(bug, monkeypatch):
    assert _replay_contract(_restarted("merged"))
    if bug == "handle":   # the handle hands acks to the store at once
        monkeypatch.setattr(MetadataPendingAckStore, "append_ack", lambda self, req: self.env.scheduler.submit(
            ("ack", self.segment, self.subscription, req.rid), lambda: self._ack(req), owner=self.owner))
    else:                 # the consumer is let in before the store is ready
        monkeypatch.setattr(Dispatcher, "can_read", lambda self: self.cursor.read_position <= min(
            self.ledger.last_confirmed, self.tb.get_max_read_position()))
    assert not _replay_contract(_restarted("merged"))


def test_a_recovered_open_entry_stays_held(monkeypatch):
    spec = Pip473("merged", client="permissive", txns=1, writes="t1:0", acks="", reshape="none",
                  decisions="commit", crashes=1, failovers=0, recovery="steps", timeout=1)
    assert _conforms(spec)

    def forgets(self, txn, positions):   # the bug: recovery tracks the txn, without its hold
        self.recovery_discovered.add(txn)

    monkeypatch.setattr(MetadataTransactionBuffer, "recover_positions", forgets)
    assert not _conforms(spec)


def test_the_buffers_recovery_leaves_the_stores_ack_ops(monkeypatch):
    model = PIP / "acks-across-recovery-fixed.toml"
    assert check_model(model).verdict == "ok"
    real = recovery.materialize

    def also_acks(m, s, j, t, decision, tb=True, pas=True, sub=0, found=False):   # the bug
        s2 = real(m, s, j, t, decision, tb, pas, sub, found)
        if tb and found:
            s2 = s2._replace(ops=frozenset(o for o in s2.ops if not (o.txn == t and o.seg == j)))
        return s2

    monkeypatch.setattr(recovery, "materialize", also_acks)
    assert [v.property for v in check_model(model).outcome.violations] == ["NoLostCommittedAck"]
