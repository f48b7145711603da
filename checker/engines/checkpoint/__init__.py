"""Checkpoints of a bfs run (`--checkpoint DIR`, `--resume DIR`): the segment
codec (`codec.py`) and the folder of segments and manifest (`store.py`)."""

from __future__ import annotations

from .codec import CheckpointError
from .store import open_checkpointer

__all__ = ["CheckpointError", "open_checkpointer"]
