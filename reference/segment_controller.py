"""The scalable-topic controller's part in PIP-473 (PIP-460/468, as summarised
in the protocol notes, "Scalable topics"). The topic's layout is one
metadata record, `/topics/<topic>`: each segment's hash range and state
(CREATED, ACTIVE, SEALED). A split or merge runs in PIP-468 order:

1. read the parents' subscriptions,
2. create the children (CREATED) with cursors at the earliest position,
3. terminate the parents' ledgers (producers then get TopicTerminated),
4. one CAS on the layout: parents SEALED, children ACTIVE.

Producers route a key to the ACTIVE segment whose range holds it.
Materialization never writes to a ledger, so sealing strands no txn.
"""

from __future__ import annotations

from .env import Env
from .ledger import CursorState, LedgerStorage
from .store import BadVersion

CREATED, ACTIVE, SEALED = "CREATED", "ACTIVE", "SEALED"


class SegmentController:
    def __init__(self, env: Env, topic: str, ledgers: dict[str, LedgerStorage]) -> None:
        self.env = env
        self.path = f"/topics/{topic}"
        self.ledgers = ledgers

    def layout(self) -> dict:
        rec = self.env.store.get(self.path)
        return dict(rec.value["segments"]) if rec else {}

    def create_topic(self, ranges: dict[str, tuple[int, int]], subscriptions: list[str]) -> None:
        self.env.store.put(self.path, {"segments": {
            seg: {"state": ACTIVE, "lo": lo, "hi": hi} for seg, (lo, hi) in ranges.items()}})
        for seg in ranges:
            self._create_ledger(seg, subscriptions)

    def _create_ledger(self, seg: str, subscriptions: list[str]) -> LedgerStorage:
        storage = self.ledgers.setdefault(seg, LedgerStorage(seg))
        for sub in subscriptions:
            storage.cursors.setdefault(sub, CursorState())
        return storage

    def route(self, key: int) -> str | None:
        for seg, info in sorted(self.layout().items()):
            if info["state"] == ACTIVE and info["lo"] <= key < info["hi"]:
                return seg
        return None

    def state(self, seg: str) -> str | None:
        info = self.layout().get(seg)
        return info["state"] if info else None

    # -- split / merge, PIP-468 order ----------------------------------------------
    def create_children(self, parents: list[str], children: dict[str, tuple[int, int]]) -> list[str]:
        """Steps 1-2; returns the children created."""
        subs = sorted({sub for p in parents for sub in self.ledgers[p].cursors})
        rec = self.env.store.get(self.path)
        segs = dict(rec.value["segments"])
        for child, (lo, hi) in children.items():
            segs[child] = {"state": CREATED, "lo": lo, "hi": hi}
            self._create_ledger(child, subs)
        self.env.store.put(self.path, {"segments": segs}, expected_version=rec.version)
        return list(children)

    def terminate(self, parents: list[str]) -> None:
        """Step 3: the parents' ledgers refuse appends from now on."""
        for p in parents:
            self.ledgers[p].terminated = True

    def seal(self, parents: list[str], children: list[str]) -> bool:
        """Step 4: one CAS, parents SEALED and children ACTIVE."""
        rec = self.env.store.get(self.path)
        segs = {k: dict(v) for k, v in rec.value["segments"].items()}
        for p in parents:
            segs[p]["state"] = SEALED
        for c in children:
            segs[c]["state"] = ACTIVE
        try:
            self.env.store.put(self.path, {"segments": segs}, expected_version=rec.version)
        except BadVersion:
            return False
        return True
