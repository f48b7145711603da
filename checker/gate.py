"""The CI gate: `txncheck check --all [DIR ...]`.

Checks every model file under the given folders once, and judges each result
against the model's own `[expect]` table (checker/model.py): a model that
expects a violation of P passes only while P is still violated (with the
expected shortest length, when one is given), and a model with no `[expect]`
must hold. The verdicts become one test case per model and property, which the
JUnit and SARIF reports (checker/reports/) and the pytest plugin render.

A model with a [prove] table is also proved (`txncheck prove`), one more
case, "Proof", which passes only when every property the model asks for is
proved; its CPU seconds are recorded as [expect] prove_seconds.

A model's [expect] may also record the run's figures and the depth to which
it expects no violation (checker/expectations.py judges them), and a runtime
class: a model whose `runtime = "heavy"` is run only when the gate is asked
for the heavy models (`--runtime heavy` or `all`, as CI does), else it is
listed as skipped; `--runtime heavy` leaves the quick ones out.

Exit code of the gate, worst first: 2 if a model could not be checked, 1 if an
expectation failed, 3 if a run stopped at a limit it was not expected to hit
(or was interrupted), else 0.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .api import Report, check_model, write_traces
from .expectations import ERROR, FAILED, PASSED, SKIPPED, Case, judge  # noqa: F401 - the reports' names
from .isolation import INTERRUPTED, run_isolated
from .model import HOLDS_FOR, Model, ModelError, find_models, load_model
from .options import Options

HEAVY_NOT_RUN = "heavy: not run (--runtime all runs it, as CI does)"
QUICK_LEFT_OUT = "quick: not run (--runtime heavy)"


@dataclass
class ModelResult:
    path: Path
    shown: str                     # the path as reports show it (relative to the cwd when possible)
    model: Model | None = None
    report: Report | None = None
    error: str | None = None
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0
    interrupted: bool = False
    note: str | None = None        # how the gate ran this model differently from the command line
    not_run: str | None = None     # why the gate did not run it (a heavy model without --heavy)
    fault: str | None = None       # an environment fault: a missing extra, a trace the disk refused (exit 3)
    prove_seconds: float | None = None  # the CPU seconds of its proof, when it has a [prove] table

    def ran(self) -> tuple[Model, Report]:
        """The model and its report, of a result that was run (loaded without error, not skipped)."""
        assert self.model is not None and self.report is not None, f"{self.shown} was not run"
        return self.model, self.report

    @property
    def exit_code(self) -> int:
        if self.interrupted and self.report is None:   # Ctrl-C before the search began
            return 3
        if self.fault is not None and self.report is None:  # the machine, not the model
            return 3
        if self.error is not None or any(c.status == ERROR for c in self.cases):
            return 2
        if any(c.status == FAILED for c in self.cases) and not self._only_incomplete():
            return 1
        if self.interrupted or self._only_incomplete() or self.fault is not None:
            return 3
        return 0

    def _only_incomplete(self) -> bool:
        """Every failure is an unexpected stop at a limit, not a wrong verdict."""
        o = self.report.outcome if self.report else None
        fails = [c for c in self.cases if c.status == FAILED]
        return bool(fails) and o is not None and o.verdict == "incomplete" and all(
            c.message.startswith("incomplete") for c in fails)

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def label(self) -> str:
        """What the verdict holds for, from the model's [label] ("" when it has none)."""
        return label_text(self.model) if self.model is not None else ""


def label_text(m: Model) -> str:
    """One line: what the model's verdict holds for. A violation expected of a
    model that holds for the document's text or a past release is said not to
    be a defect of the current code."""
    if not m.label:
        return ""
    kind = m.label["holds_for"]
    text = f"holds for {HOLDS_FOR[kind]} ({m.label['source']})"
    if kind != "code" and m.expect.get("verdict") == "violation":
        text += "; not a defect of the current code"
    if m.label.get("upstream"):
        text += f"; known upstream: {m.label['upstream']}"
    return text


@dataclass
class GateResult:
    results: list[ModelResult]
    roots: list[Path]
    interrupted: bool = False   # Ctrl-C stopped it: the models after were not checked

    @property
    def cases(self) -> list[tuple[ModelResult, Case]]:
        return [(r, c) for r in self.results for c in r.cases]

    def counts(self) -> dict[str, int]:
        out = {PASSED: 0, FAILED: 0, ERROR: 0, SKIPPED: 0}
        for _, c in self.cases:
            out[c.status] += 1
        return out

    @property
    def exit_code(self) -> int:
        codes = {r.exit_code for r in self.results} | ({3} if self.interrupted else set())
        for code in (2, 1, 3):
            if code in codes:
                return code
        return 0

    def to_json(self) -> dict[str, Any]:
        models = []
        for r in self.results:
            entry: dict[str, Any] = {"model": r.shown, "exit_code": r.exit_code, "seconds": round(r.seconds, 3)}
            if r.model is not None:
                entry["expect"] = r.model.expect
                if r.model.label:
                    entry["label"] = {**r.model.label, "text": r.label}
            if r.report is not None:
                entry["report"] = r.report.to_json()
            if r.error is not None:
                entry["error"] = r.error
            if r.note is not None:
                entry["note"] = r.note
            if r.prove_seconds is not None:
                entry["prove_seconds"] = round(r.prove_seconds, 3)
            if r.not_run is not None:
                entry["not_run"] = r.not_run
            entry["cases"] = [{"name": c.name, "kind": c.kind, "status": c.status, "message": c.message}
                              for c in r.cases]
            models.append(entry)
        return {"gate": [str(p) for p in self.roots], "exit_code": self.exit_code, "interrupted": self.interrupted,
                "summary": {"models": len(self.results), **self.counts()}, "models": models}


def collect(roots: list[str | Path]) -> list[Path]:
    """Model files under the roots, each once, in a stable order; none at
    all is bad input (exit 2)."""
    seen: set[Path] = set()
    out = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise ModelError(f"{root}: no such folder or model file")
        for p in find_models(root):
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                out.append(p)
    if not out:  # a typo in a CI path must not turn the gate off without a sound
        raise ModelError(f"{', '.join(str(r) for r in roots)}: no model files here (a model file is a .toml "
                         "file with a top-level spec key); the gate would check nothing")
    return out


def shown_path(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def run_gate(
    roots: list[str | Path],
    *,
    engine: str | None = None,
    out_dir: str | Path = "out",
    max_seconds: float | None = None,
    max_states: int | None = None,
    progress_factory: Callable[[str], Any] | None = None,
    on_result: Callable[[ModelResult], None] | None = None,
    options: Options | dict | None = None,
    runtime: str = "all",
) -> GateResult:
    """Check every model under `roots` against its expectation: those whose
    [expect] runtime is `runtime` ("quick", "heavy"), or all of them ("all")."""
    paths = collect(roots)
    results: list[ModelResult] = []
    gate = GateResult(results, [Path(r) for r in roots])
    try:
        for path in paths:
            r = check_isolated(path, engine=engine, out_dir=_trace_dir(out_dir, path, roots),
                               max_seconds=max_seconds, max_states=max_states, options=options, runtime=runtime,
                               progress=progress_factory(f"{shown_path(path)}: ") if progress_factory else None)
            if r.not_run == QUICK_LEFT_OUT:  # --runtime heavy: the quick models are not its business
                continue
            results.append(r)
            if on_result:
                on_result(r)
            if r.interrupted:  # Ctrl-C: stop the gate, report what was done
                gate.interrupted = True
                break
    except KeyboardInterrupt:  # between two models: the same
        gate.interrupted = True
    return gate


GRACE = 0.7   # seconds of its own time (checker/grace.py) a model's child has, after Ctrl-C, to report before it is killed


def check_isolated(path: Path, *, engine: str | None = None, progress=None, **kw) -> ModelResult:
    """`check_one` in a forked child (checker/isolation.py), so that a spec's
    code cannot end the gate (`os._exit`), and a Ctrl-C stops the model at
    once while the gate reports what it did. A model on the spark engine runs
    in this process: its JVM session is the process's, shared by the models."""
    from .gate_wire import from_wire, to_wire

    r = ModelResult(path, shown_path(path))
    try:
        r.model = load_model(path)   # reads the file; runs no spec code
    except ModelError:
        return check_one(path, engine=engine, progress=progress, **kw)   # its error, as check_one says it
    except KeyboardInterrupt:   # Ctrl-C: this model is the one the gate stopped at
        r.error, r.interrupted = f"{path}: interrupted", True
        r.cases = [Case("load", ERROR, r.error, kind="model")]
        return r
    if (engine or r.model.raw.get("engine")) == "spark" or kw.get("runtime", "all") not in (
            "all", r.model.expect.get("runtime", "quick")):   # not run at all: nothing to isolate
        return check_one(path, engine=engine, progress=progress, **kw)
    value, why = run_isolated(lambda: to_wire(check_one(path, engine=engine, progress=progress, **kw)),
                              grace=GRACE, in_child=_own_signals)
    if value is not None:
        from_wire(r, value)
        r.interrupted = r.interrupted or why == INTERRUPTED
        return r
    r.interrupted = why == INTERRUPTED
    r.error = f"{path}: {why}"
    if not r.interrupted:  # the process ended before a verdict: an incomplete run (exit 3), the gate goes on
        r.fault = r.error
    r.cases = [Case("load", ERROR, r.error, kind="model")]
    return r


def _own_signals() -> None:
    """In a model's child: Ctrl-C stops this process's check (a forked
    process otherwise leaves the signal to the one that installed the handlers)."""
    from . import failures

    if failures._owner:
        failures._owner[:] = [os.getpid()]


def _trace_dir(out_dir, path: Path, roots) -> Path:
    """Traces go to OUT/<folder of the model relative to its root>, so equal stems do not collide."""
    out = Path(out_dir)
    for root in roots:
        root = Path(root)
        if root.is_dir():
            try:
                return out / path.resolve().parent.relative_to(root.resolve())
            except ValueError:
                continue
    return out


def check_one(path: Path, *, engine: str | None = None, out_dir: str | Path = "out", progress=None,
              max_seconds: float | None = None, max_states: int | None = None,
              options: Options | dict | None = None, runtime: str = "all") -> ModelResult:
    """Check one model file and judge it, if its [expect] runtime is `runtime`
    (or that is "all"); never raises for a bad model."""
    from .cli import bad_input_errors
    from .failures import classify, is_interrupt

    r = ModelResult(path, shown_path(path))
    t0 = time.monotonic()
    try:
        r.model = load_model(path)
        if runtime not in ("all", r.model.expect.get("runtime", "quick")):
            r.not_run = HEAVY_NOT_RUN if runtime == "quick" else QUICK_LEFT_OUT
            r.cases = [Case("run", SKIPPED, r.not_run, kind="model")]
            return r
        engine_name = engine or r.model.raw.get("engine") or "bfs"
        if not isinstance(engine_name, str):
            raise ModelError(f"{path}: 'engine' must be a string")
        options, r.note = Options.of(options).for_gate(r.model)
        r.report = check_model(r.model, engine=engine_name, out_dir=None, progress=progress,
                               max_seconds=max_seconds, max_states=max_states, options=options)
        try:  # a trace the disk refuses loses no verdict: the model is judged, the write reported
            write_traces(r.model, r.report.spec, r.report.outcome, out_dir)
        except OSError as exc:
            r.fault = f"{exc.filename or out_dir}: trace not written ({exc.strerror or exc})"
            r.note = r.fault if r.note is None else f"{r.note}; {r.fault}"
    except bad_input_errors() as exc:
        r.error = str(exc)
    except BaseException as exc:  # a crash inside a spec (or its sys.exit) must not stop the gate
        if is_interrupt(exc):
            r.error = f"{path}: interrupted"  # outside the search loop (loading, Z3's checks): stop, report
            r.interrupted = True
        else:
            code, line = classify(exc, bad_input_errors())
            r.error = f"{path}: {line}"
            if code == 3:  # a missing extra, no Java: exit 3, not bad input
                r.fault = r.error
    if r.error is not None:
        r.cases = [Case("load", ERROR, r.error, kind="model")]
    else:
        model, report = r.ran()
        r.cases = judge(model, report)
        r.interrupted = report.outcome.incomplete_reason == "interrupted"
        report.outcome.exploration = None  # the state graph is not needed any more; a gate holds many models
        if "prove" in model.raw and not r.interrupted:
            case, r.prove_seconds = prove_case(model)
            r.cases.append(case)
            r.interrupted = case.message == INTERRUPTED
    r.seconds = time.monotonic() - t0
    return r


PROVE_BUDGET = (60.0, 10.0)   # a proof in the gate stops after max(60 s, 10 x its recorded prove_seconds)


def prove_case(m: Model) -> tuple[Case, float | None]:
    """`txncheck prove` of a model with a [prove] table, as one case of the
    gate: passed when proved; its CPU seconds beside it. A proof that
    outruns its budget (PROVE_BUDGET) fails, so a relation whose code never
    returns cannot hang the gate."""
    from .cli import bad_input_errors
    from .failures import BudgetExpired, budget_alarm, classify, is_interrupt
    from .symbolic.induction import z3_deadline
    from .symbolic.run import prove_model

    budget = max(PROVE_BUDGET[0], PROVE_BUDGET[1] * float(m.expect.get("prove_seconds", 0)))
    t0 = time.process_time()
    try:
        with budget_alarm(budget), z3_deadline(budget):
            rep = prove_model(m)
    except BudgetExpired:
        return Case("Proof", FAILED, f"the proof did not end within its budget of {budget:g} s "
                                     "(max(60 s, 10 x [expect] prove_seconds))", kind="proof"), None
    except BaseException as exc:  # a relation's bug, or Ctrl-C: the gate goes on, or stops, as for a check
        if is_interrupt(exc):  # skipped, and the model interrupted: the gate stops with exit 3
            return Case("Proof", SKIPPED, INTERRUPTED, kind="proof"), None
        code, line = classify(exc, bad_input_errors())
        return Case("Proof", ERROR, f"{m.path}: prove: {line}", kind="proof"), None
    cpu = time.process_time() - t0
    if rep.verdict == "proved":
        p = rep.proof
        assert p is not None   # proved: by a proof, not a bounded check
        return Case("Proof", PASSED, f"proved: {len(p.clauses)} clauses inductive ({len(rep.lemmas)} lemmas), "
                                     f"{cpu:.1f} CPU s", kind="proof"), cpu
    why = {"violation": "an initial state violates the invariant",
           "not inductive": f"not inductive: {rep.proof.cti.clause} fails at "
                            f"{rep.proof.cti.action[0]}" if rep.proof and rep.proof.cti else "not inductive",
           "unknown": f"unknown: {rep.proof.unknown}" if rep.proof else "unknown",
           "not proved": "not proved: " + "; ".join(rep.unproved)}[rep.verdict]
    return Case("Proof", FAILED, f"{why} (txncheck prove {m.path} says more)", kind="proof"), cpu
