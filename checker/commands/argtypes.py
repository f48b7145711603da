"""The types of the command line's numbers, one description each.

A number on the command line is read strictly: an integer is ASCII digits
only (Python's `int()` also takes `٣`, `1_000` and spaces), a number of
seconds a finite, positive decimal (`float()` also takes `inf` and `nan`).
argparse reports a value these refuse as one line, naming the type by the
function's `__name__`, exit 2.
"""

from __future__ import annotations

import re

_INT = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")

MAX_SECONDS = 366 * 86400.0   # a budget of over a year is a typo


def _int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise ValueError(text)
    return int(text)


def int_from(lo: int, hi: int | None = None, name: str | None = None):
    """An integer in [lo, hi] (no upper bound when hi is None)."""
    def parse(text: str) -> int:
        v = _int(text)
        if v < lo or (hi is not None and v > hi):
            raise ValueError(text)
        return v
    parse.__name__ = name or (f"integer from {lo} to {hi}" if hi is not None
                              else "positive integer" if lo == 1 else "non-negative integer" if lo == 0
                              else f"integer of at least {lo}")
    return parse


def seconds(text: str) -> float:
    if not _DECIMAL.fullmatch(text):
        raise ValueError(text)
    v = float(text)
    if not 0 < v <= MAX_SECONDS:
        raise ValueError(text)
    return v


seconds.__name__ = "positive number of seconds"
positive_int = int_from(1)
natural = int_from(0)
