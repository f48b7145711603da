"""`txncheck show TRACE`: print a counterexample as a step table."""

from __future__ import annotations

from ..itf import read_trace
from ..render import terminal_safe
from ..render.dot import render_dot
from ..render.html import render_html
from ..render.mermaid import render_mermaid
from ..render.table import render_table

FORMATS = {"table": render_table, "mermaid": render_mermaid, "dot": render_dot, "html": render_html}


def register(sub) -> None:
    p = sub.add_parser("show", help="print an ITF trace as a readable step table")
    p.add_argument("trace", help="ITF JSON trace file")
    p.add_argument("--format", default="table", choices=sorted(FORMATS), help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(run=run)


def run(args) -> int:
    trace = read_trace(args.trace)
    text = terminal_safe(FORMATS[args.format](trace))
    if args.output:
        from ..reports.output import write_text_atomic

        write_text_atomic(args.output, text)
    else:
        print(text, end="")
    return 0
