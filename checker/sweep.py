"""Sweep campaigns: a grid of models x variants x bounds, each cell checked
in its own Spark task, the results collected into one table.

A sweep file (TOML; shipped ones live in models/sweeps/):

    description = "what the campaign shows"
    engine = "bfs"            # the engine each cell runs inside its Spark task (bfs, the default)
    max_seconds = 120         # optional budget per cell (verdict incomplete when hit)
    max_states = 1000000      # optional budget per cell

    [[grid]]                  # one or more grids; the campaign is all their cells
    model = "../pip473/fixed.toml"   # a model file, relative to the sweep file
    variants = ["pip-text", "fixed"] # optional; default: the model's variant
    properties = ["NoLostCommittedAck"]  # optional; default: the model's
    witnesses = []                   # optional; default: the model's
    [grid.constants]          # bounds: a value, or a list of values to sweep
    retention = [0, 1]
    crashes = 0

    [[expect]]                # optional: checked after the run (exit 1 when unmet)
    where = { variant = "fixed" }    # cells whose model stem, variant or bounds match
    verdict = "ok"                   # ok | violation | incomplete
    property = "NoLostCommittedAck"  # optional, for violations

The cells are the product of the variants and the listed bound values, in
file order. Each row of the table has the cell's parameters (model,
variant, every bound swept as a list) and its verdict, violated
property, trace length, distinct states, states generated, depth, seconds
and trace path. `run_sweep` writes it as `results.parquet`, `results.csv`
and `results.md` in the output folder; traces go to `traces/<cell>/`.

Every problem with the file is a `SweepError` naming it, in one line; every
cell is instantiated on the driver before Spark starts, so a bad bound never
reaches a task.
"""

from __future__ import annotations

import itertools
import math
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from .itf import read_untrusted_text
from .model import MAX_MODEL_BYTES, VERDICTS, ModelError, load_model

TOP_KEYS = {"description", "engine", "max_seconds", "max_states", "grid", "expect"}
GRID_KEYS = {"model", "variants", "properties", "witnesses", "constants"}
EXPECT_KEYS = {"where", "verdict", "property"}
MAX_CELLS = 10_000  # cells in one campaign: each is instantiated on the driver, then one Spark task
RESULT_COLUMNS = ("verdict", "property", "length", "distinct", "generated", "depth", "seconds", "trace", "error")


class SweepError(ModelError):
    """A bad sweep file; the message names the file."""


class SweepOutputError(OSError):
    """The campaign ran but its table could not be written (a full disk):
    the rows and the Markdown table are kept, so the command still prints them."""

    def __init__(self, message: str, rows: list[dict], table: str) -> None:
        super().__init__(message)
        self.rows, self.table = rows, table


@dataclass
class Cell:
    index: int
    model_path: str
    model_name: str
    variant: str
    constants: dict[str, Any]       # the swept bounds (given as lists: the table's columns)
    all_constants: dict[str, Any]   # every bound the cell sets
    properties: list[str] | None
    witnesses: list[str] | None

    @property
    def label(self) -> str:
        bounds = "-".join(f"{k}{v}" for k, v in self.constants.items())
        return f"{self.index:03d}-{self.model_name}-{self.variant}" + (f"-{bounds}" if bounds else "")


@dataclass
class Sweep:
    path: Path
    description: str
    engine: str
    max_seconds: float | None
    max_states: int | None
    cells: list[Cell]
    expect: list[dict] = field(default_factory=list)
    bound_names: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem


def load_sweep(path: str | Path) -> Sweep:
    path = Path(path)

    def bad(msg: str) -> NoReturn:
        raise SweepError(f"{path}: {msg}")

    try:  # untrusted: a regular file, capped (checker/itf.py)
        raw = tomllib.loads(read_untrusted_text(path, MAX_MODEL_BYTES, "sweep"))
    except tomllib.TOMLDecodeError as exc:
        bad(f"malformed TOML: {exc}")
    except RecursionError:
        bad("malformed TOML: nests too deeply")
    except ValueError as exc:
        bad(str(exc).splitlines()[0])
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        bad(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(TOP_KEYS))})")
    engine = raw.get("engine", "bfs")
    if engine != "bfs":
        bad(f"engine must be 'bfs' (each cell runs it inside a Spark task), not {engine!r}")
    max_seconds = raw.get("max_seconds")
    if max_seconds is not None and (isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float))
                                    or not 0 < max_seconds < math.inf):
        bad("max_seconds must be a positive number")
    max_states = raw.get("max_states")
    if max_states is not None and (isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1):
        bad("max_states must be a positive integer")
    grids = raw.get("grid")
    if not isinstance(grids, list) or not grids or not all(isinstance(g, dict) for g in grids):
        bad("needs at least one [[grid]] table")
    cells: list[Cell] = []
    bound_names: list[str] = []
    for gi, g in enumerate(grids, 1):
        where = f"[[grid]] #{gi}"
        unknown = sorted(set(g) - GRID_KEYS)
        if unknown:
            bad(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(GRID_KEYS))})")
        if not isinstance(g.get("model"), str):
            bad(f"{where}: needs model = \"path/to/model.toml\"")
        if "\0" in g["model"]:
            bad(f"{where}: model path holds a NUL character")
        model_path = (path.parent / g["model"]).resolve()
        try:
            model = load_model(model_path)
        except ModelError as exc:
            bad(f"{where}: {exc}")
        variants = g.get("variants", [model.variant])
        if not isinstance(variants, list) or not variants or not all(isinstance(v, str) for v in variants):
            bad(f"{where}: variants must be a non-empty list of names")
        for key in ("properties", "witnesses"):
            v = g.get(key)
            if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) for x in v)):
                bad(f"{where}: {key} must be a list of names")
        consts = g.get("constants", {})
        if not isinstance(consts, dict):
            bad(f"{where}: [grid.constants] must be a table")
        axes, fixed = [], {}
        for name, values in consts.items():
            if not isinstance(values, list):
                fixed[name] = values
                continue
            if not values:
                bad(f"{where}: bound {name} has an empty list of values")
            axes.append((name, values))
            if name not in bound_names:
                bound_names.append(name)
        n_cells = len(cells) + len(variants) * math.prod(len(vals) for _, vals in axes)
        if n_cells > MAX_CELLS:  # counted before any is made: every cell is instantiated here
            bad(f"{where}: the grids make {n_cells:,} cells (at most {MAX_CELLS:,}); split the campaign")
        for variant in variants:
            for combo in itertools.product(*[vals for _, vals in axes]):
                swept = {name: v for (name, _), v in zip(axes, combo)}
                cell = Cell(len(cells), str(model_path), model.name, variant, swept,
                            {**model.constants, **fixed, **swept}, g.get("properties"), g.get("witnesses"))
                try:
                    cell_model(cell).instantiate()
                except ModelError as exc:
                    bad(f"{where}, cell {cell.label}: {str(exc).split(': ', 1)[-1]}")
                cells.append(cell)
    expect = raw.get("expect", [])
    if not isinstance(expect, list) or not all(isinstance(e, dict) for e in expect):
        bad("[[expect]] entries must be tables")
    for ei, e in enumerate(expect, 1):
        unknown = sorted(set(e) - EXPECT_KEYS)
        if unknown:
            bad(f"[[expect]] #{ei}: unknown key {unknown[0]!r} (known: {', '.join(sorted(EXPECT_KEYS))})")
        if e.get("verdict") not in VERDICTS:
            bad(f"[[expect]] #{ei}: verdict must be one of {', '.join(VERDICTS)}")
        if not isinstance(e.get("where", {}), dict):
            bad(f"[[expect]] #{ei}: where must be a table")
    desc = raw.get("description", "")
    return Sweep(path, desc if isinstance(desc, str) else "", engine, max_seconds, max_states, cells,
                 expect, bound_names)


def cell_model(cell: Cell):
    m = load_model(cell.model_path)
    m = replace(m, variant=cell.variant, constants=dict(cell.all_constants))
    if cell.properties is not None:
        m = replace(m, properties=list(cell.properties))
    if cell.witnesses is not None:
        m = replace(m, witnesses=list(cell.witnesses))
    return m


def run_cell(cell: Cell, engine: str, max_seconds, max_states, trace_root: str) -> dict:
    """Check one cell (inside a Spark task); returns its table row."""
    from .api import check_model, write_traces

    row: dict[str, Any] = {"cell": cell.index, "model": cell.model_name, "variant": cell.variant, **cell.constants}
    t0 = time.monotonic()
    try:
        report = check_model(cell_model(cell), engine=engine, max_seconds=max_seconds, max_states=max_states,
                             keep_graph=False)
    except ValueError as exc:  # bad input that slipped past validation: keep the campaign going
        row.update({c: None for c in RESULT_COLUMNS})
        row.update(verdict="error", error=str(exc).splitlines()[0], seconds=round(time.monotonic() - t0, 2))
        return row
    o = report.outcome
    write_error = None
    try:  # a trace that cannot be written (a full disk) loses no verdict: the row says so
        write_traces(report.model, report.spec, o, Path(trace_root) / cell.label)
    except OSError as exc:
        write_error = f"{exc.filename}: trace not written ({exc.strerror or exc})"
    v = next((v for v in o.violations if v.path), o.violations[0] if o.violations else None)
    row.update(
        verdict=o.verdict,
        property=v.property if v else None,
        length=v.length if v and v.path else None,
        distinct=o.distinct_states,
        generated=o.states_generated,
        depth=o.depth,
        seconds=round(o.seconds, 2),
        trace=v.trace_file if v else None,
        error=write_error,
    )
    return row


def run_sweep(sweep: Sweep, out_dir: str | Path, *, master: str | None = None, progress=None) -> list[dict]:
    """Run every cell as one Spark task; write the table; return its rows in cell order."""
    from .engines.spark.session import spark_session
    from .sweep_table import write_tables

    out = Path(out_dir).resolve()
    _writable(out / "traces")  # a read-only --out fails here, in one line, before Spark starts
    traces = str(out / "traces")
    session = spark_session(master)
    engine, max_seconds, max_states = sweep.engine, sweep.max_seconds, sweep.max_states
    rdd = session.sparkContext.parallelize(sweep.cells, max(1, len(sweep.cells)))
    rows = rdd.map(lambda c: run_cell(c, engine, max_seconds, max_states, traces)).collect()
    rows.sort(key=lambda r: r["cell"])
    for r in rows:
        if r.get("trace"):
            r["trace"] = str(Path(r["trace"]).relative_to(out)) if Path(r["trace"]).is_relative_to(out) else r["trace"]
    columns = ["cell", "model", "variant", *sweep.bound_names, *RESULT_COLUMNS]
    rows = [{c: r.get(c) for c in columns} for r in rows]
    models = sorted({c.model_path for c in sweep.cells})
    title = sweep.description
    if len(models) == 1:  # one model: name it once above the table instead of in every row
        shown = [c for c in columns if c != "model"]
        title += f"\n\nModel: {Path(models[0]).relative_to(Path.cwd()) if Path(models[0]).is_relative_to(Path.cwd()) else models[0]}"
    else:
        shown = columns
    try:
        write_tables([{c: r[c] for c in shown} for r in rows], shown, out, title=title)
    except OSError as exc:
        from .sweep_table import markdown

        text = (f"{title}\n\n" if title else "") + markdown([{c: r[c] for c in shown} for r in rows], shown) + "\n"
        where = exc.filename or out
        raise SweepOutputError(f"{where}: cannot write the sweep table ({exc.strerror or exc})", rows, text) from None
    return rows


def _writable(folder: Path) -> None:
    """Create the folder and a file in it (removed at once); an OSError names the folder."""
    import os
    import tempfile

    folder.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(prefix=".probe-", dir=folder)
    os.close(fd)
    os.unlink(probe)


def unmet_expectations(sweep: Sweep, rows: list[dict]) -> list[str]:
    """One line per cell that an [[expect]] entry covers and the result contradicts."""
    out = []
    for e in sweep.expect:
        where = e.get("where", {})
        for r in rows:
            if all(str(r.get(k)) == str(v) for k, v in where.items()):
                if r["verdict"] != e["verdict"] or ("property" in e and r["property"] != e["property"]):
                    got = r["verdict"] + (f" ({r['property']})" if r.get("property") else "")
                    want = e["verdict"] + (f" ({e['property']})" if "property" in e else "")
                    params = ", ".join(f"{k}={r[k]}" for k in ("model", "variant", *sweep.bound_names)
                                       if r.get(k) is not None)
                    out.append(f"cell {r['cell']} ({params}): expected {want}, got {got}")
    return out
