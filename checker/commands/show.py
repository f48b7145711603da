"""`txncheck show TRACE`: print a counterexample as a step table."""

from __future__ import annotations

from ..itf import read_trace
from ..render.dot import render_dot
from ..render.html import render_html
from ..render.mermaid import render_mermaid
from ..render.table import render_table

FORMATS = {"table": render_table, "mermaid": render_mermaid, "dot": render_dot, "html": render_html}
# A trace's strings are untrusted: no escape sequence of theirs reaches the
# terminal (or a file) raw.
_CONTROLS = {c: f"\\x{c:02x}" for c in range(32) if chr(c) not in "\n\t"} | {127: "\\x7f"}


def _escape_controls(text: str) -> str:
    return text.translate(_CONTROLS)


def register(sub) -> None:
    p = sub.add_parser("show", help="print an ITF trace as a readable step table")
    p.add_argument("trace", help="ITF JSON trace file")
    p.add_argument("--format", default="table", choices=sorted(FORMATS), help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(run=run)


def run(args) -> int:
    trace = read_trace(args.trace)
    text = _escape_controls(FORMATS[args.format](trace))
    if args.output:
        from ..reports.output import write_text_atomic

        write_text_atomic(args.output, text)
    else:
        print(text, end="")
    return 0
