"""What every component of one simulated cluster shares: the store, the
scheduler and clock, the watch delivery styles and the behaviour flags."""

from __future__ import annotations

from dataclasses import dataclass, field

from .behaviour import Behaviour
from .records import install_indexes
from .scheduler import Scheduler
from .store import InMemoryMetadataStore, MetadataStore, OneShotWatches, PointWatches, SequenceStreams


@dataclass
class Env:
    behaviour: Behaviour
    store: MetadataStore = field(default_factory=InMemoryMetadataStore)
    scheduler: Scheduler = field(default_factory=Scheduler)
    watch_style: str = "point"  # "point" (Oxia) | "oneshot" (ZooKeeper)

    def __post_init__(self) -> None:
        install_indexes(self.store)
        cls = {"point": PointWatches, "oneshot": OneShotWatches}.get(self.watch_style)
        if cls is None:
            raise ValueError(f"unknown watch style {self.watch_style!r} (known: point, oneshot)")
        self.watches = cls(self.store, self.scheduler)
        self.streams = SequenceStreams(self.store, self.scheduler)

    @property
    def now_ms(self) -> int:
        return self.scheduler.now_ms

    def forget(self, owner: str) -> None:
        """A crash of `owner`: its sessions, watches and queued work are gone."""
        self.scheduler.drop_owner(owner)
        self.watches.drop_owner(owner)
        self.streams.drop_owner(owner)
