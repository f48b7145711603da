"""Record each model's figures into its own [expect] table, where the CI gate
judges them (checker/gate.py): `distinct`, `generated` and `depth` of an
in-process bfs run with the model's own options, and the runtime class,
`runtime = "heavy"` for a model over the quick gate's budget (else the key is
left out: quick is the default); for a model with a [prove] table, the CPU
seconds of `txncheck prove` (`prove_seconds`), after recording the
relation's agreement again if the spec or the relation changed.

    .venv/bin/python scripts/record_figures.py [--jobs N] [MODEL.toml | DIR] ...

Each model runs in a process of its own (`txncheck check --json`), N at a
time (default 2), so that its CPU time and peak memory are its own. A model is
heavy when it takes over HEAVY_CPU_SECONDS of CPU or HEAVY_MIB of memory: the
quick ones together must keep `make check` within 4 minutes and 2 GiB on two
cores. A run that stops at a limit other than the model's own max_depth has
no figures to record, and is reported (exit 1). Re-record after a change to
a spec that is meant to change its state space, and say so in the commit;
the gate, not this script, is the check that the figures still hold. The
figures the docs' tables quote are then rewritten (scripts/doc_figures.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from txncheck.checker.atomic import write_text_atomic
from txncheck.checker.model import MEASURED, find_models, load_model
from txncheck.checker.model_edit import set_table_keys

HEAVY_CPU_SECONDS = 20.0
HEAVY_MIB = 1024


def measure(path: Path, n: int, out: Path):
    """Start `txncheck check --json` on one model, its output to files of its own."""
    stdout, stderr = open(out / f"{n}.json", "w+"), open(out / f"{n}.err", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", str(path), "--json", "--quiet",
                             "--out", str(out / "traces")], stdout=stdout, stderr=stderr)
    return proc, stdout, stderr


def run_all(paths: list[Path], jobs: int) -> dict[Path, tuple[dict | None, float, float, str]]:
    """path -> (the JSON report or None, CPU seconds, peak MiB, stderr)."""
    results, running, todo = {}, {}, list(paths)
    with tempfile.TemporaryDirectory() as tmp:
        while todo or running:
            while todo and len(running) < jobs:
                p = todo.pop(0)
                proc, stdout, stderr = measure(p, len(results) + len(running), Path(tmp))
                running[proc.pid] = (p, proc, stdout, stderr)
            pid, status, usage = os.wait4(-1, 0)  # this child's own CPU time and peak memory
            if pid not in running:
                continue
            p, proc, stdout, stderr = running.pop(pid)
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
            text, err = _drain(stdout), _drain(stderr)
            try:
                doc = json.loads(text)
            except json.JSONDecodeError:
                doc = None
            # the run's own peak (its report's: a child's ru_maxrss counts this process's too)
            mib = doc.get("peak_memory_mb", 0.0) if isinstance(doc, dict) else usage.ru_maxrss / 1024
            results[p] = (doc, usage.ru_utime + usage.ru_stime, mib, err)
            print(f"{p}: {_summary(doc, results[p][1], results[p][2], err)}", file=sys.stderr, flush=True)
    return results


def _drain(f) -> str:
    f.seek(0)
    text = f.read()
    f.close()
    return text


def _summary(doc, cpu, mib, err) -> str:
    if doc is None:
        return "no report: " + (err.strip().splitlines() or ["?"])[-1]
    return (f"{doc['verdict']}, {doc['distinct_states']:,} distinct, {doc['states_generated']:,} generated, "
            f"depth {doc['depth']}, {cpu:.1f} CPU s, {mib:.0f} MiB")


def figures_of(path: Path, doc: dict, cpu: float, mib: float) -> dict | None:
    """The [expect] keys to record, or None when the run has none to give."""
    m = load_model(path)
    bound = m.raw.get("max_depth")
    if doc["verdict"] == "incomplete" and doc.get("incomplete_reason") != f"max-depth {bound} reached":
        return None
    figures = {"distinct": doc["distinct_states"], "generated": doc["states_generated"], "depth": doc["depth"]}
    if cpu > HEAVY_CPU_SECONDS or mib > HEAVY_MIB:
        figures["runtime"] = "heavy"
    return figures


def rewrite_expect(text: str, figures: dict) -> str:
    """The model file's text with these [expect] keys (the others of MEASURED dropped)."""
    return set_table_keys(text, "expect", figures, drop=MEASURED)


def prove_seconds(path: Path) -> float | None:
    """The CPU seconds of `txncheck prove` on a model with a [prove] table,
    once the relation's agreement is recorded (a stale one is recorded
    again: `prove --agreement --record`); None when it does not prove."""
    def prove() -> tuple[dict | None, float]:
        proc = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "prove", str(path), "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        try:
            return json.loads(out), usage.ru_utime + usage.ru_stime
        except json.JSONDecodeError:
            return None, 0.0

    doc, cpu = prove()
    if doc is not None and any("agreement" in x for x in doc.get("not_proved", [])):
        subprocess.run([sys.executable, "-m", "txncheck.checker.cli", "prove", str(path), "--agreement",
                        "--record", "--quiet"], stdout=subprocess.DEVNULL, check=False)
        doc, cpu = prove()
    if doc is None or doc.get("verdict") != "proved":
        print(f"record_figures: {path}: prove says {doc and doc.get('verdict')}: "
              f"{'; '.join((doc or {}).get('not_proved', [])) or 'see txncheck prove'}", file=sys.stderr)
        return None
    return round(cpu, 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=["models"], help="model files or folders (default: models)")
    ap.add_argument("--jobs", type=int, default=2, help="models checked at once (default 2)")
    args = ap.parse_args(argv)
    paths = [p for root in args.paths for p in find_models(Path(root))]
    changed, failed = [], []
    for path, (doc, cpu, mib, err) in sorted(run_all(paths, max(1, args.jobs)).items()):
        figures = figures_of(path, doc, cpu, mib) if doc is not None else None
        if figures is not None and "prove" in load_model(path).raw:
            seconds = prove_seconds(path)
            figures = None if seconds is None else {**figures, "prove_seconds": seconds}
        if figures is None:
            failed.append(path)
            continue
        text = path.read_text(encoding="utf-8")
        new = rewrite_expect(text, figures)
        if new != text:
            changed.append(path)
            write_text_atomic(path, new)
    if changed:   # the docs' tables quote the figures: set them to the new records
        subprocess.run([sys.executable, str(Path(__file__).with_name("doc_figures.py")), "--write"], check=True)
    for p in failed:
        print(f"record_figures: {p}: no figures (the run did not finish, nor stop at its max_depth, "
              "or a [prove] table that does not prove)", file=sys.stderr)
    print(f"record_figures: {len(paths)} models, {len(changed)} changed, {len(failed)} without figures "
          "(or not proved)",
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
