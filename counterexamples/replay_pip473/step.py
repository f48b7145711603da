"""What a handler is given: the step it drives (`Step`) and the bridge it
drives it through (`Bridge`, the part of `bridge.Pip473Bridge` that the
handlers and the abstraction function use). The handler modules and
abstraction.py import these, never bridge.py or actions.py, so that the
package has no import cycle (tests/test_layers.py)."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Protocol

from ...reference.behaviour import Behaviour
from ...reference.cluster import Cluster


class Step(NamedTuple):
    params: Mapping[str, Any]
    txn: str | None     # the spec's txn name, for the actions that take one
    tid: str | None     # its implementation id (None before newTxn)
    before: Any = None  # the spec's states around the step (tcFinalize reads them)
    after: Any = None


class Bridge(Protocol):
    """One replay's implementation and its ghosts (bridge.Pip473Bridge)."""

    spec: Any
    behaviour: Behaviour
    cluster: Cluster
    # the plan and the names of the spec's model
    writes: dict[str, Any]
    acks: dict[str, Any]
    plain: dict[str, Any]
    txn_names: tuple[str, ...]
    seg_names: tuple[str, ...]
    pos_names: tuple[str, ...]
    parents: list[str]
    children: dict[str, Any]
    # the implementation's names, requests and the spec's ghosts as recorded
    ids: dict[str, str]
    names: dict[str, str]
    requests: dict[str, Any]
    client: dict[str, str]
    decided: dict[str, str]
    fincnt: dict[str, int]
    late: set[str]
    dlv: set[tuple[tuple[str, str], str]]
    ackw: set[tuple[str, str, str, bool, int]]
    gcsnap: dict[str, tuple[int, int]]
    fence: dict[str, int]
    ops_created: dict[str, int]
    crashes: int
    unloads: int
    failovers: int
    reshape: int
    plain_sent: int

    def header(self, t: str) -> str: ...

    def run(self, *label) -> Any: ...

    def live_broker(self, seg: str) -> Any: ...

    def note_admission(self, t: str) -> None: ...
