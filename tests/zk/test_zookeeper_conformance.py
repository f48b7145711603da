"""The conformance walks of `tests/test_conformance_pip473.py`, on a live
ZooKeeper server: random walks of the PIP-473 spec replayed step by step on
the reference implementation over the ZooKeeper store; at every step the
implementation's abstraction must equal the spec's observation.

CI runs a few walks per variant, configuration and store watch style
(one-shot or persistent recursive), each walk in a fresh namespace on the
shared server. TXNCHECK_ZK_CONFORMANCE_EXAMPLES (walks)
and TXNCHECK_ZK_CONFORMANCE_DEPTH (steps) give a longer profile.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.counterexamples.replay_pip473 import Pip473Bridge
from txncheck.reference.store.zookeeper import ZooKeeperMetadataStore

from ..test_conformance_pip473 import VARIANTS, spec_for, walk_on
from .helpers import needs_zookeeper

pytestmark = needs_zookeeper

EXAMPLES = int(os.environ.get("TXNCHECK_ZK_CONFORMANCE_EXAMPLES", "3"))
DEPTH = int(os.environ.get("TXNCHECK_ZK_CONFORMANCE_DEPTH", "30"))


@pytest.mark.parametrize("watches", ["oneshot", "persistent"])
@pytest.mark.parametrize("config", ["standard", "split"])
@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_random_walk_conforms_on_zookeeper(zk_server, variant, config, watches, data):
    stores: list[ZooKeeperMetadataStore] = []

    def make() -> ZooKeeperMetadataStore:
        stores.append(ZooKeeperMetadataStore(zk_server.hosts, watches=watches))
        return stores[-1]

    try:
        walk_on(spec_for(variant, config), Pip473Bridge(spec_for(variant, config), store=make), data,
                strict=False, depth=DEPTH)
    finally:
        for store in stores:
            store.close()
