"""A deterministic scheduler on a simulated clock: no threads, no wall clock.

Every asynchronous step of the reference implementation (a ledger append
completing, a watch event reaching a participant, a timer firing) is a `Task`
held here until someone runs it. Tests and replay pick tasks explicitly by
label; `run_until_idle` runs them in submission order.

A task may belong to a FIFO `queue`: only the head of a queue is runnable,
which is how "delivered late but in order" is expressed. A task has an
`owner` (a broker, the coordinator): a crash drops the owner's tasks.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Task:
    seq: int
    label: tuple
    fn: Callable[[], None]
    owner: str = ""
    queue: str | None = None
    payload: object = None  # what the task carries (a watch event), for inspection

    def __repr__(self) -> str:  # labels are what people read in failures
        return f"Task#{self.seq}{self.label}"


@dataclass(order=True)
class _Timer:
    when_ms: int
    seq: int
    label: tuple = field(compare=False)
    fn: Callable[[], None] = field(compare=False)
    owner: str = field(compare=False, default="")
    cancelled: bool = field(compare=False, default=False)


class Scheduler:
    def __init__(self) -> None:
        self.now_ms = 0
        self._seq = 0
        self._tasks: list[Task] = []
        self._timers: list[_Timer] = []

    # -- tasks ----------------------------------------------------------------
    def submit(self, label: tuple, fn: Callable[[], None], *, owner: str = "", queue: str | None = None,
               payload: object = None, first: bool = False) -> Task:
        """`first`: at the head of its queue, ahead of what waits there (the
        rest of a callback the running task started)."""
        self._seq += 1
        task = Task(self._seq, label, fn, owner, queue, payload)
        if first:
            self._tasks.insert(0, task)
        else:
            self._tasks.append(task)
        return task

    def runnable(self) -> list[Task]:
        """Tasks that may run now: unqueued ones and the head of each queue."""
        seen: set[str] = set()
        out = []
        for t in self._tasks:
            if t.queue is None:
                out.append(t)
            elif t.queue not in seen:
                seen.add(t.queue)
                out.append(t)
        return out

    def pending(self, *prefix) -> list[Task]:
        """Every queued task whose label starts with `prefix`, runnable or not."""
        n = len(prefix)
        return [t for t in self._tasks if t.label[:n] == prefix]

    def find(self, *prefix) -> Task | None:
        """The first runnable task whose label starts with `prefix`."""
        n = len(prefix)
        for t in self.runnable():
            if t.label[:n] == prefix:
                return t
        return None

    def run(self, task: Task) -> None:
        if task not in self.runnable():
            raise RuntimeError(f"{task!r} is not runnable")
        self._tasks.remove(task)
        task.fn()

    def run_until_idle(self, limit: int = 100_000) -> int:
        n = 0
        while self._tasks:
            if n >= limit:
                raise RuntimeError(f"no quiescence after {limit} tasks")
            self.run(self.runnable()[0])
            n += 1
        return n

    def reassign(self, owner: str, new_owner: str, *prefix) -> None:
        """Tasks of `owner` whose label starts with `prefix` now belong to
        `new_owner` (a closed component that goes on with them)."""
        n = len(prefix)
        for t in self._tasks:
            if t.owner == owner and t.label[:n] == prefix:
                t.owner = new_owner

    def drop_owner(self, owner: str) -> int:
        """A crash: forget every task and timer of `owner`."""
        before = len(self._tasks)
        self._tasks = [t for t in self._tasks if t.owner != owner]
        for tm in self._timers:
            if tm.owner == owner:
                tm.cancelled = True
        return before - len(self._tasks)

    # -- the clock ------------------------------------------------------------
    def call_at(self, when_ms: int, label: tuple, fn: Callable[[], None], *, owner: str = "") -> _Timer:
        self._seq += 1
        tm = _Timer(max(when_ms, self.now_ms), self._seq, label, fn, owner)
        heapq.heappush(self._timers, tm)
        return tm

    def call_later(self, delay_ms: int, label: tuple, fn: Callable[[], None], *, owner: str = "") -> _Timer:
        return self.call_at(self.now_ms + delay_ms, label, fn, owner=owner)

    @staticmethod
    def cancel(timer: _Timer | None) -> None:
        if timer is not None:
            timer.cancelled = True

    def next_timer_ms(self) -> int | None:
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].when_ms if self._timers else None

    def advance_to(self, t_ms: int) -> int:
        """Move the clock to `t_ms`; each timer due by then becomes a task
        (labelled ("timer", *label)), in deadline order. Returns how many."""
        if t_ms < self.now_ms:
            raise ValueError(f"the clock cannot go back from {self.now_ms} to {t_ms}")
        fired = 0
        while True:
            nxt = self.next_timer_ms()
            if nxt is None or nxt > t_ms:
                break
            tm = heapq.heappop(self._timers)
            self.now_ms = tm.when_ms
            self.submit(("timer",) + tm.label, tm.fn, owner=tm.owner)
            fired += 1
        self.now_ms = t_ms
        return fired

    def advance(self, delta_ms: int) -> int:
        return self.advance_to(self.now_ms + delta_ms)
