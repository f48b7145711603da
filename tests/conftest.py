"""Shared test set-up. The `ci` hypothesis profile is derandomized so CI is repeatable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from . import durations as tier
from .helpers import COLLECTED

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# Tests that share one server run on one xdist worker (`pytest -n 2`), so that it
# starts once and two JVMs never race: the Spark session of tests/spark/ and the
# ZooKeeper server of tests/zk/. Every other test file is a unit of its own, so
# that its module fixtures run once. (xdist's own `--dist loadgroup` does not
# group under pytest 9.2, which keeps node ids where xdist cannot rename them.)
SHARED = {"tests/spark/": "spark", "tests/test_hostile_spark.py": "spark", "tests/zk/": "zookeeper"}
# Files of several long, independent tests (minutes each in all): each test is a
# unit, so that two workers share them instead of one running them in turn at
# the end of the run (CI waited 40 minutes on test_symbolic_pip473.py's).
EACH_TEST = {"tests/test_symbolic_pip473.py", "tests/test_symbolic_paxos.py", "tests/test_symbolic_agreement.py",
             "tests/test_pip473_por.py", "tests/test_conformance_pip473.py", "tests/test_pruning_audit.py",
             "tests/test_pip473.py", "tests/test_user_specs_tlc.py"}


# A slow test counts this many CPU seconds when scopes are ordered (below): the
# record caps slow tests (scripts/record_durations.py --cap), so it cannot rank them.
# An unrecorded one (the examples of README.md and docs/, a new test) counts as
# the slowest of the fast tier.
SLOW_WEIGHT = 60.0


def scope(nodeid: str) -> str:
    """The unit of work one xdist worker runs whole."""
    path = nodeid.split("::", 1)[0]
    if path != "tests/spark/test_cluster_options.py":  # no Spark there
        for prefix, server in SHARED.items():
            if path.startswith(prefix):
                return server
    return nodeid if path in EACH_TEST else path


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerPerServer(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope(nodeid)

    config.option.loadscopereorder = False   # the scopes go out in collection order, which is ours (below)
    return OneWorkerPerServer(config, log)


def longest_first(items, recorded: dict[str, float]) -> list:
    """The items, scope by scope, the scopes in order of their CPU seconds
    (recorded; a slow test SLOW_WEIGHT at least, an unrecorded one
    SLOW_SECONDS), the longest first, and each scope's items in their own
    order: so that a worker never runs a long test alone at the end while the
    other idles (xdist's own order, the scopes with the most tests first, put
    single minute-long tests last)."""
    weight: dict[str, float] = {}
    for item in items:
        s = recorded.get(item.nodeid, tier.SLOW_SECONDS)
        if item.get_closest_marker("slow") is not None:
            s = max(s, SLOW_WEIGHT)
        weight[scope(item.nodeid)] = weight.get(scope(item.nodeid), 0.0) + s
    first = {}
    for k, item in enumerate(items):
        first.setdefault(scope(item.nodeid), k)
    return sorted(items, key=lambda i: (-weight[scope(i.nodeid)], first[scope(i.nodeid)]))


@pytest.hookimpl(tryfirst=True)  # before -m selects
def pytest_collection_modifyitems(config, items):
    """The `slow` tier: every test under tests/ whose recorded duration is
    SLOW_SECONDS or more. The examples of README.md and docs/ are never left
    out: they run in order in one folder, and each is a promise to the reader."""
    recorded = tier.read()
    slow = tier.slow(recorded)
    for item in items:
        if item.nodeid in slow and item.nodeid.startswith("tests/"):
            item.add_marker(pytest.mark.slow(recorded=True))   # tests/durations.py tells the two kinds apart
    items[:] = longest_first(items, recorded)
    config.stash[COLLECTED] = found = tier.collection(items, config.args)
    if os.environ.get("TXNCHECK_COLLECTED"):   # scripts/record_durations.py asks what the suite holds
        Path(os.environ["TXNCHECK_COLLECTED"]).write_text(json.dumps(found))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: the CI tier: a recorded duration of SLOW_SECONDS or more "
                                       "(tests/durations.py), or marked so (deselect with -m 'not slow')")
    config.addinivalue_line("markers", "spark: starts Spark (needs pyspark and Java; deselect with -m 'not spark')")
    config.addinivalue_line("markers", "zookeeper: needs the ZooKeeper server of tests/zk/ (deselect with -m 'not zookeeper')")
