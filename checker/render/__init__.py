"""Renderings of traces and state graphs for people (tables, diagrams, pages)."""

import re

# C0/C1 controls (but newline and tab) and lone surrogates: trace text is
# untrusted, and an escape sequence must not reach a terminal raw.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """`text` with every control character and lone surrogate shown as an escape."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                       text)
