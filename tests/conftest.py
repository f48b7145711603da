"""Shared test set-up. The `ci` hypothesis profile is derandomized so CI is repeatable."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running checks (deselect with -m 'not slow')")
    config.addinivalue_line("markers", "spark: starts Spark (needs pyspark and Java; deselect with -m 'not spark')")
    config.addinivalue_line("markers", "zookeeper: needs the ZooKeeper server of tests/zk/ (deselect with -m 'not zookeeper')")
