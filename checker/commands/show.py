"""`txncheck show TRACE`: print a counterexample as a step table."""

from __future__ import annotations

from ..itf import read_trace
from ..render.table import render_table

FORMATS = {"table": render_table}


def register(sub) -> None:
    p = sub.add_parser("show", help="print an ITF trace as a readable step table")
    p.add_argument("trace", help="ITF JSON trace file")
    p.add_argument("--format", default="table", choices=sorted(FORMATS), help="output format (default: table)")
    p.set_defaults(run=run)


def run(args) -> int:
    trace = read_trace(args.trace)
    print(FORMATS[args.format](trace), end="")
    return 0
