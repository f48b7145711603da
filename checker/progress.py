"""Progress on stderr for long runs, in the spirit of TLC's progress lines.

Silent for the first `delay` seconds, so short runs print nothing. On a TTY
the line is rewritten in place; otherwise a plain line is printed every
`interval` seconds.
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str = "", *, stream=None, delay: float = 2.0, interval: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = label
        self.delay = delay
        self.interval = interval if interval is not None else (0.5 if self.tty else 10.0)
        self.t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def update(self, *, distinct: int, generated: int, queue: int, depth: int) -> None:
        now = time.monotonic()
        elapsed = now - self.t0
        if elapsed < self.delay or now - self._last < self.interval:
            return
        self._last = now
        rate = generated / elapsed if elapsed > 0 else 0.0
        line = (f"{self.label}{distinct:,} distinct, {generated:,} generated, queue {queue:,}, "
                f"depth {depth}, {rate:,.0f} states/s, {elapsed:,.0f}s")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._shown = True

    def line(self, text: str) -> None:
        """A plain progress line (for engines that report per level)."""
        if self.tty and self._shown:
            self.stream.write("\r\x1b[2K")
        self.stream.write(text + "\n")
        self.stream.flush()
        self._shown = False

    def done(self) -> None:
        if self.tty and self._shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
        self._shown = False
