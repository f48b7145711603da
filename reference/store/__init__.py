"""The metadata store: an interface (`api`), an in-memory backend (`memory`)
and the watch delivery styles (`watches`)."""

from .api import BadVersion, ChangeEvent, Index, MetadataStore, Record
from .memory import InMemoryMetadataStore
from .watches import OneShotWatches, PointWatches, SequenceStreams

__all__ = [
    "BadVersion", "ChangeEvent", "Index", "MetadataStore", "Record", "InMemoryMetadataStore",
    "OneShotWatches", "PointWatches", "SequenceStreams",
]
