"""The visited set of the fingerprint search: 64-bit fingerprints in one
numpy array, open addressing with linear probing, 8 bytes a slot.

A Python set of ints costs about 60 bytes per fingerprint (the int object
and a set entry, plus the table's slack); here a fingerprint costs 8 bytes
over the load factor (between 0.35 and 0.7 after growth), so 11 to 23
bytes. Lookups and insertions take a whole batch at a time, so the probing
runs in numpy, not in Python.

The slots may be shared (`shared=True`): they then live in an anonymous
memory file (`memfd_create`), which another process maps through
`/proc/<pid>/fd/<fd>` (the coordinator writes its table, its workers read it
between its writes; each worker's table of a level is read by the others at
the level's end). The memory goes back to the system when the last process
lets go of it, even one that is killed. Slot 0 means
empty; the fingerprint 0 is stored as `ZERO` (a second value that could
collide with it, at the same 2^-64 odds as any other pair).
"""

from __future__ import annotations

import os

import numpy as np

ZERO = np.uint64(0x9E3779B97F4A7C15)
MAX_LOAD = 0.7
MIN_LOG2 = 12
GROW = 1 << 22  # old slots moved per insert when the table grows


def _nonzero(fps: np.ndarray) -> np.ndarray:
    fps = np.asarray(fps, dtype=np.uint64)
    if fps.size and not fps.all():
        fps = np.where(fps == 0, ZERO, fps)
    return fps


class FingerprintTable:
    """`add(fps)` inserts a batch and says which were new; `contains(fps)`
    only asks. `shared`: the slots live in a memory file that other
    processes open by `path` (`open_shared`); each growth makes a new one."""

    def __init__(self, log2: int = MIN_LOG2, shared: bool = False) -> None:
        self.shared = shared
        self.fd: int | None = None
        self.path: str | None = None
        self.count = 0
        self.slots = self._alloc(max(MIN_LOG2, log2))

    # -- storage ------------------------------------------------------------
    def _alloc(self, log2: int) -> np.ndarray:
        self.log2 = log2
        self.mask = np.uint64((1 << log2) - 1)
        if not self.shared:
            return np.zeros(1 << log2, dtype=np.uint64)
        fd = os.memfd_create("txncheck-fingerprints")
        os.ftruncate(fd, 8 << log2)  # pages appear as they are written
        self._release()
        self.fd, self.path = fd, f"/proc/{os.getpid()}/fd/{fd}"
        return np.memmap(self.path, dtype=np.uint64, mode="r+", shape=(1 << log2,))

    def _release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = self.path = None

    def close(self) -> None:
        """Let go of the slots."""
        self.slots = np.zeros(0, dtype=np.uint64)
        self._release()

    @property
    def capacity(self) -> int:
        return 1 << self.log2

    @property
    def nbytes(self) -> int:
        return 8 << self.log2

    def __len__(self) -> int:
        return self.count

    # -- queries ------------------------------------------------------------
    def contains(self, fps) -> np.ndarray:
        """A bool per fingerprint: whether the table holds it."""
        fps = _nonzero(fps)
        found = np.zeros(fps.size, dtype=bool)
        slots, mask = self.slots, self.mask
        idx = np.arange(fps.size)
        pos = fps & mask
        want = fps
        while idx.size:
            cur = slots[pos]
            hit = cur == want
            found[idx[hit]] = True
            go = ~hit & (cur != 0)  # another fingerprint there: probe on
            idx, want, pos = idx[go], want[go], (pos[go] + np.uint64(1)) & mask
        return found

    def add(self, fps) -> np.ndarray:
        """Insert a batch of distinct fingerprints (the caller removes
        repeats: a dict does it in Python at C speed); a bool per
        fingerprint: True where the table did not hold it before."""
        fps = _nonzero(fps)
        if self.count + fps.size > MAX_LOAD * self.capacity:
            self._grow(self.count + fps.size)
        return self._insert(fps)

    def _insert(self, fps: np.ndarray) -> np.ndarray:
        new = np.zeros(fps.size, dtype=bool)
        slots, mask = self.slots, self.mask
        idx, want, pos = np.arange(fps.size), fps, fps & mask
        while idx.size:
            cur = slots[pos]
            empty = cur == 0
            if empty.any():
                # Several may reach one empty slot: write them all, and the
                # one whose value stayed there took it (they are distinct).
                at = pos[empty]
                slots[at] = want[empty]
                won = np.zeros(idx.size, dtype=bool)
                won[empty] = slots[at] == want[empty]
                new[idx[won]] = True
                cur = np.where(won, want, cur)
            else:
                won = empty
            # a loser looks at its slot again (now taken); one that met
            # another fingerprint probes on; one that met itself is done
            go = (cur != want) | (empty & ~won)
            step = (~empty[go]).astype(np.uint64)
            idx, want, pos = idx[go], want[go], (pos[go] + step) & mask
        self.count += int(new.sum())
        return new

    def _grow(self, need: int) -> None:
        """Move the fingerprints to a larger table, a slice of the old slots
        at a time: an insert's work arrays are several times its batch, and
        at the growth of a table of a hundred million states both tables
        are already in memory."""
        log2 = self.log2
        while need > MAX_LOAD * (1 << log2):
            log2 += 1
        old = self.slots  # a shared table's old mapping outlives its file descriptor
        self.slots = self._alloc(log2)
        self.count = 0
        for lo in range(0, old.size, GROW):
            part = old[lo:lo + GROW]
            held = part[part != 0]
            if held.size:
                self._insert(held)

    def values(self) -> np.ndarray:
        """Every fingerprint held (ZERO for 0), in slot order."""
        return self.slots[self.slots != 0]


def open_shared(path: str, log2: int) -> np.ndarray:
    """A worker's read-only view of a table's slots file."""
    return np.memmap(path, dtype=np.uint64, mode="r", shape=(1 << log2,))


def contains_in(slots: np.ndarray, fps) -> np.ndarray:
    """`FingerprintTable.contains` on a view of its slots (from `open_shared`)."""
    view = FingerprintTable.__new__(FingerprintTable)
    view.slots, view.log2 = slots, int(slots.size).bit_length() - 1
    view.mask = np.uint64(slots.size - 1)
    return FingerprintTable.contains(view, fps)
