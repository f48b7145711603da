"""`txncheck report TRACE|MODEL -o DIR`: a counterexample as a bug report.

Writes `<name>.md` and `<name>.html` (self-contained, diagram rendered in the
page) into DIR; for a model, it checks the model first and writes its trace
there too (`<name>.itf.json`). `--all [FOLDER ...]` reports every model that
has notes beside it (`<stem>.finding.md`, checker/reports/notes.py) into
DIR/<folder>/, plus DIR/index.md: that is how docs/findings/ is made
(scripts/findings.sh).

Exit codes (checker/failures.py): 0 written; 2 bad input (a bad trace, a
model with no violation, bad notes), one line; 3 a ZooKeeper replay asked for
with --zookeeper could not run (the reports are written and say so); 4 the
replay on `reference/` diverged (the reports are written and say so).
"""

from __future__ import annotations

import sys
from pathlib import Path

FORMATS = ("md", "html")


def register(sub) -> None:
    p = sub.add_parser("report", help="write a counterexample (or a model's) as a Markdown and an HTML bug report "
                                       "(exit 0 written, 2 bad input, 3 ZooKeeper replay incomplete, 4 diverged)")
    p.add_argument("source", nargs="*", metavar="TRACE|MODEL",
                   help="an ITF trace, or a model file with a violation; with --all, folders of models")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder the reports go to")
    p.add_argument("--all", action="store_true",
                   help="report every model with notes beside it (<stem>.finding.md) under the folders "
                        "(default: models/), and write DIR/index.md")
    p.add_argument("--format", default="md,html", metavar="md,html",
                   help="which pages to write: md, html or both (default md,html)")
    p.add_argument("--figures", metavar="FILE",
                   help="the recorded figures (fix models, ZooKeeper replays) to read and update "
                        "(default: DIR/figures.json)")
    p.add_argument("--as", dest="as_dir", metavar="DIR",
                   help="write the pages as if into DIR: their links and commands name DIR, not -o "
                        "(tests/test_findings.py regenerates docs/findings elsewhere to compare)")
    p.add_argument("--check-fix", action="store_true",
                   help="check exhaustively each fix model whose recorded figures are missing or stale (its file "
                        "changed), and record them (slow for big models such as models/pip473/fixed.toml)")
    p.add_argument("--zookeeper", action="store_true",
                   help="also replay each trace over a private ZooKeeper server and record the result")
    p.set_defaults(run=run)


def _formats(text: str) -> tuple[str, ...]:
    from ..errors import UsageError

    got = tuple(x.strip() for x in text.split(",") if x.strip())
    if not got or any(x not in FORMATS for x in got):
        raise UsageError(f"--format {text}: expected md, html or md,html")
    return got


def run(args) -> int:
    from ..errors import UsageError
    from ..reports.figures import NAME, Figures

    formats = _formats(args.format)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {args.output}: not a folder")
    if not args.all and len(args.source) != 1:
        raise UsageError("report takes one TRACE or MODEL (or --all [FOLDER ...])")
    figures = Figures.load(args.figures or out / NAME)
    zk = _zookeeper() if args.zookeeper else None
    try:
        factory = zk.__enter__() if zk is not None else None
    except Exception as exc:  # noqa: BLE001 - reported below as one line, exit 3
        return _zk_missing(exc)
    try:
        if args.all:
            codes = _report_all(args, out, formats, figures, factory)
        else:
            codes = [_report_one(Path(args.source[0]), out, formats, figures, args.check_fix, factory,
                                 shown_dir=Path(args.as_dir) if args.as_dir else None)[0]]
    finally:
        if zk is not None:
            zk.__exit__(None, None, None)
    figures.save()
    return 3 if 3 in codes else 4 if 4 in codes else 0


def _zookeeper():
    from ...reference.store.zk_factory import zookeeper_stores

    return zookeeper_stores(None, timeout=5.0, watches="oneshot")


def _zk_missing(exc: BaseException) -> int:
    from ..failures import one_line

    print(f"txncheck: error: {one_line(f'--zookeeper: cannot start a ZooKeeper server: {exc}')}", file=sys.stderr)
    return 3


def _report_one(src: Path, out: Path, formats, figures, check_fix: bool, factory, *, name: str | None = None,
                shown_dir: Path | None = None):
    """Report one trace, or one model (checked first); returns (its exit code, the Finding).
    With `shown_dir`, the page links and names files as if it were written there."""
    from ..reports.finding import build_finding, shown

    shown_trace = None
    if src.suffix == ".toml":
        trace_path, model_path = _check_model(src, out, name or src.stem)
        if shown_dir is not None:
            shown_trace = shown(shown_dir / trace_path.name)
    else:
        trace_path, model_path = src, None
    f = build_finding(trace_path, model_path=model_path, figures=figures, check_fixes=check_fix,
                      zk_factory=factory, links_from=shown_dir or out, trace_shown=shown_trace)
    stem = name or (src.stem if src.suffix == ".toml" else src.name.removesuffix(".json").removesuffix(".itf"))
    written = _write(f, out, stem, formats)
    print(f"{f.model_shown or f.trace_shown}: {f.prop} in {f.trace.length} states -> {', '.join(written)}")
    if f.zookeeper_failed:
        return 3, f
    return (4 if f.reference_verdict == "diverged" else 0), f


def _check_model(model: Path, out: Path, name: str) -> tuple[Path, Path]:
    import shutil
    import tempfile

    from ..api import check_model, write_traces
    from ..model import load_model
    from ..reports.notes import NotesError, fix_model_path, load_notes

    m = load_model(model)
    fix_model_path(model, load_notes(model))  # bad notes fail before anything is checked or written
    r = check_model(m, keep_graph=bool(m.temporal))
    if not any(v.path for v in r.outcome.violations):
        raise NotesError(f"{model}: the check ends {r.verdict} with no counterexample, so there is nothing to "
                         "report")
    out.mkdir(parents=True, exist_ok=True)
    trace = out / f"{name}.itf.json"
    with tempfile.TemporaryDirectory(prefix=".txncheck-report-", dir=out) as tmp:
        write_traces(m, r.spec, r.outcome, tmp)
        first = next(t for v in r.outcome.violations if (t := v.trace_file))  # the first property's trace
        shutil.move(first, trace)
    return trace, model


def _write(f, out: Path, stem: str, formats) -> list[str]:
    from ..reports.finding import render_markdown, shown
    from ..reports.output import write_text_atomic

    written = []
    if "md" in formats:
        written.append(shown(write_text_atomic(out / f"{stem}.md", render_markdown(f))))
    if "html" in formats:
        from ..reports.finding_html import render_finding_html

        written.append(shown(write_text_atomic(out / f"{stem}.html", render_finding_html(f))))
    return written


def _report_all(args, out: Path, formats, figures, factory) -> list[int]:
    from ..model import find_models, load_model
    from ..reports.index import findings_index, unreported
    from ..reports.notes import notes_path
    from ..reports.output import write_text_atomic

    roots = [Path(s) for s in args.source] or [Path("models")]
    models = []
    for root in roots:
        if not root.exists():
            from ..errors import UsageError

            raise UsageError(f"{root}: no such folder or model file")
        models += [p for p in find_models(root) if notes_path(p).is_file()]
    codes, rows = [], []
    from ..reports.notes import load_notes

    for model in models:
        notes = load_notes(model)
        if notes is not None and notes.same_as:   # the same defect as another model's report, which names this one
            continue
        folder = out / model.parent.name
        code, f = _report_one(model, folder, formats, figures, args.check_fix, factory, name=model.stem,
                              shown_dir=Path(args.as_dir) / model.parent.name if args.as_dir else None)
        codes.append(code)
        rows.append((f, folder / f"{model.stem}.md"))
        figures.save()   # a fix model's check can take many minutes: keep each figure as soon as it exists
    write_text_atomic(out / "index.md", findings_index(rows, out))
    from ..reports.finding import shown

    under = [shown(r).rstrip("/") + "/" for r in roots if r.is_dir()]
    figures.keep_only("fix", {f.fix_shown for f, _ in rows if f.fix_shown}, under)
    figures.keep_only("zookeeper", {shown(m) for m in models}, under)
    figures.save()
    for model in unreported([p for root in roots for p in find_models(root)], load_model):
        print(f"note: {model} finds a defect of the code but has no notes beside it "
              f"({notes_path(model).name}), so it has no report", file=sys.stderr)
    return codes
