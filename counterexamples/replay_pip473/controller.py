"""Handlers of the segment controller's split or merge, in PIP-468 order."""

from __future__ import annotations

from ..replay import StepRefused
from .step import Bridge, Step


def create_children(b: Bridge, step: Step) -> None:
    """Steps 1-2: read the parents' subscriptions, create the children."""
    b.cluster.create_children(b.parents, b.children)
    b.reshape = 1


def terminate_parents(b: Bridge, step: Step) -> None:
    """Step 3: terminate the parent ledgers; the ghost `fence` records what each held."""
    c = b.cluster
    c.controller.terminate(b.parents)
    b.fence = {seg: len(c.ledgers[seg].entries) for seg in b.parents if seg in c.ledgers}
    b.reshape = 2


def cas_segment_metadata(b: Bridge, step: Step) -> None:
    """Step 4: one CAS, parents SEALED, children ACTIVE."""
    if not b.cluster.controller.seal(b.parents, list(b.children)):
        raise StepRefused("the segment-layout CAS failed")
    b.reshape = 3
