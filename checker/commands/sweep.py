"""`txncheck sweep SWEEP.toml`: run a campaign (a grid of models x variants x
bounds, one Spark task per cell) and write its table as Parquet, CSV and
Markdown. Exit 0 when every cell finished and every [[expect]] holds, 1 when
an expectation fails, 2 on bad input, 3 when a cell is incomplete or failed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..render import terminal_safe
from ..sweep import SweepOutputError, load_sweep, run_sweep, unmet_expectations


def register(sub) -> None:
    p = sub.add_parser("sweep", help="run a sweep campaign on Spark (models x variants x bounds)")
    p.add_argument("sweep", help="sweep file (TOML, e.g. models/sweeps/pip473-gc.toml)")
    p.add_argument("--out", metavar="DIR", help="where the table and traces go (default: out/sweeps/<name>)")
    p.add_argument("--master", metavar="URL", help="the Spark master (default local[*])")
    p.add_argument("--json", action="store_true", help="print the rows as one JSON object on stdout")
    p.set_defaults(run=run)


def run(args) -> int:
    sweep = load_sweep(args.sweep)
    out = Path(args.out) if args.out else Path("out") / "sweeps" / sweep.name
    print(f"sweep {sweep.path}: {len(sweep.cells)} cells, engine {sweep.engine} in each Spark task", file=sys.stderr)
    table_error = None
    try:
        rows = run_sweep(sweep, out, master=args.master)
        table = (out / "results.md").read_text(encoding="utf-8")
    except SweepOutputError as exc:  # the campaign ran: print its rows all the same
        rows, table, table_error = exc.rows, exc.table, str(exc)
    unmet = unmet_expectations(sweep, rows)
    if args.json:
        print(json.dumps({"sweep": str(sweep.path), "out": str(out), "rows": rows, "unmet": unmet}))
    else:
        print(terminal_safe(table), end="")  # the sweep file's description and bounds are untrusted text
        if not table_error:
            print(f"\ntable: {out / 'results.parquet'}, {out / 'results.csv'}, {out / 'results.md'}")
        for line in unmet:
            print(terminal_safe(f"unmet expectation: {line}"))
    # an output that could not be written: one line, after the results
    lost = [table_error] if table_error else []
    lost += [r["error"] for r in rows if r["verdict"] not in ("incomplete", "error") and r.get("error")]
    if lost:
        from ..failures import one_line

        more = f" (and {len(lost) - 1} more)" if len(lost) > 1 else ""
        print(f"txncheck: error: {one_line(lost[0])}{more}", file=sys.stderr)
    if unmet:
        return 1
    if lost or any(r["verdict"] in ("incomplete", "error") for r in rows):
        return 3
    return 0
