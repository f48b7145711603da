"""`txncheck prove MODEL --agreement`: is a hand-written relation the spec's?

The relation is compared with the spec's `next` and `observe`
(agreement.py) on every reachable state of the model, breadth first, up to
`states` of them (all of a small model), then on `walk_states` states of
biased random walks at the model's bounds (walks.py), which reach the rare
actions and deep interleavings a prefix of the breadth-first order does
not. The coverage report (coverage.py) says what the comparison exercised.

A passing run is recorded in the model file's [prove] table as a digest of
what it compared: the spec's and the relation's code (spec/source.py) and
the model's spec, variant and bounds. `prove` does not claim a proof of a
hand-written relation whose record is missing or stale: a relation that
disagrees with its spec proves things about another protocol.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ...spec.source import file_digest, package_files
from ...spec.symbolic import Relation
from .agreement import Agreement, Disagreement, reachable
from .walks import biased_walks

PACKAGE = Path(__file__).resolve().parents[2]   # txncheck: checker/, spec/, ...
FRAMEWORK = PACKAGE / "spec"                     # spec/api.py, schema.py, symbolic.py: the framework, not a spec


@dataclass
class AgreementRun:
    exhaustive: int = 0          # states compared breadth first
    complete: bool = False       # they were every reachable state
    walked: int = 0              # distinct states compared from the walks (not already compared)
    disagreement: Disagreement | None = None
    coverage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    digest: str = ""

    @property
    def agrees(self) -> bool:
        return self.disagreement is None

    def to_json(self) -> dict[str, Any]:
        d = self.disagreement
        return {"agrees": self.agrees, "exhaustive_states": self.exhaustive, "complete": self.complete,
                "walk_states": self.walked, "seconds": round(self.seconds, 3), "digest": self.digest,
                "disagreement": None if d is None else {"what": d.what, "action": list(d.action) if d.action else None,
                                                        "detail": d.detail, "state": repr(d.state)},
                "coverage": self.coverage}


def derived(relation: Relation) -> bool:
    """A relation made from the spec's own code needs no agreement record."""
    return bool(getattr(relation, "derived", False))


def agreement_digest(relation: Relation) -> str:
    """What an agreement run compared: the spec's name, variant and bounds,
    and the code of the spec and of the relation: the Python files of the
    folders that define their classes and bases and of their sub-packages
    (not the spec framework's, spec/*.py), each by its place in txncheck or
    beside the class's module, so that the digest is the same in every
    checkout and every process."""
    spec = relation.spec
    h = hashlib.sha256(json.dumps({"spec": spec.name, "variant": spec.variant, "bounds": dict(spec.constants)},
                                  sort_keys=True, default=str).encode())
    for cls in (type(spec), type(relation)):
        home = _folder(cls)
        for p in sorted({p for c in cls.__mro__ if (f := _folder(c)) and f != FRAMEWORK for p in package_files(f)}):
            where = (f"txncheck/{p.relative_to(PACKAGE)}" if p.is_relative_to(PACKAGE)
                     else os.path.relpath(p, home))
            h.update(f"{where}\0{file_digest(str(p))}\0".encode())
    return h.hexdigest()[:16]


def _folder(cls: type) -> Path | None:
    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return Path(file).resolve().parent if file else None


def run_agreement(relation: Relation, *, states: int = 20_000, walk_states: int = 10_000, depth: int = 100,
                  seed: int = 0, progress: Callable[[str], None] | None = None) -> AgreementRun:
    t0 = time.process_time()
    ag = Agreement(relation)
    spec = relation.spec
    run = AgreementRun(digest=agreement_digest(relation))
    seen = set()

    def compare(s) -> bool:
        seen.add(s)
        bad = ag.check(s)
        if bad:
            run.disagreement = bad[0]
        return not bad

    for s in reachable(spec, limit=states + 1):   # a state past `states` says the model has more
        if len(seen) == states:
            break
        if not compare(s):
            break
        run.exhaustive += 1
    else:
        run.complete = True
    if progress:
        progress(f"agreement: {run.exhaustive:,} states breadth first"
                 + (" (every reachable state)" if run.complete else ""))
    if run.agrees and walk_states and not run.complete:
        for s in biased_walks(spec, walk_states, seed=seed, depth=depth):
            if s in seen:
                continue
            if not compare(s):
                break
            run.walked += 1
        if progress:
            progress(f"agreement: {run.walked:,} more distinct states from biased walks")
    run.coverage = ag.coverage.summary()
    run.seconds = time.process_time() - t0
    return run
