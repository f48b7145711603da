"""The fingerprint-only visited set (`--fingerprints`), as TLC keeps it:
64-bit stable fingerprints (`encoding.fingerprint`) instead of states. The
search that keeps them is checker/engines/parallel/ (in one process, or in
N workers); this module holds what the reports say of it.

Two distinct states with one fingerprint would make the second look visited,
so the result holds with the probability TLC reports (optimistic estimate):
P = distinct x (generated - distinct) / 2^64.
"""

from __future__ import annotations


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision."""
    return distinct * max(generated - distinct, 0) / 2.0 ** 64
