"""The timing record behind the tiers (tests/durations.txt) cannot drift from
the suite: every test of the fast tier has a recorded time, every recorded id
names a test, and tests/README.md's figure for the fast tier is the record's.
scripts/record_durations.py --missing mends the first two; a whole
re-recording (tests/README.md) all three."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from . import durations as tier
from .helpers import COLLECTED

ROOT = Path(__file__).resolve().parent.parent
FIX = "record them with: .venv/bin/python scripts/record_durations.py --missing (tests/README.md, Tiers)"


def _show(ids: list[str]) -> str:
    return "\n  ".join(ids[:15]) + (f"\n  ... and {len(ids) - 15} more" if len(ids) > 15 else "")


def test_every_fast_test_has_a_recorded_time_and_every_record_a_test(request):
    unrecorded, stale = tier.drift(tier.read(), request.config.stash[COLLECTED])
    assert not unrecorded, f"{len(unrecorded)} fast-tier tests have no recorded time; {FIX}:\n  {_show(unrecorded)}"
    assert not stale, f"{len(stale)} recorded ids name no test; {FIX}:\n  {_show(stale)}"


def test_tests_readme_gives_the_recorded_cpu_seconds_of_the_fast_tier(request):
    found = request.config.stash[COLLECTED]
    if not {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")} <= set(found["whole"]):
        pytest.skip("the fast tier's figure is judged when the whole suite is collected")
    text = (ROOT / "tests" / "README.md").read_text()
    m = re.search(tier.FIGURE_PATTERN, text)
    assert m, "tests/README.md no longer gives the fast tier's recorded CPU seconds"
    assert m.group(0) == tier.figure(tier.fast_seconds(tier.read(), found["fast"])), FIX


def test_drift_names_a_new_test_a_removed_one_and_a_removed_file():
    """`drift` on a made-up collection: the new fast test and the two dead
    records are named; a slow test needs no time; a file not collected whole
    (run alone, or narrowed to some of its tests by `file::test`) is not judged."""
    me, other = "tests/test_durations.py", "tests/test_docs.py"
    rec = {f"{me}::old": 1.0, f"{me}::kept": 0.5, "tests/test_gone.py::x": 0.1, f"{other}::not_collected_now": 0.2}
    collected = {"all": [f"{me}::kept", f"{me}::new", f"{me}::heavy"], "fast": [f"{me}::kept", f"{me}::new"],
                 "whole": [me]}
    assert tier.drift(rec, collected) == ([f"{me}::new"], [f"{me}::old", "tests/test_gone.py::x"])


def test_the_fast_tier_figure_reads_back():
    assert re.fullmatch(tier.FIGURE_PATTERN, tier.figure(1234.4)) and tier.figure(1234.4) == "1,234 CPU s recorded"
