"""A pytest plugin (entry point `pytest11: txncheck`), two ways in:

- `pytest --txncheck models/` collects model files as tests: one item per
  property of each model (`models/classic/diehard.toml::NotSolved`), judged
  against the model's `[expect]` table exactly as `txncheck check --all`
  judges it. Each model is checked once, when its first item runs. A failing
  item shows the counterexample's step table.
- the `txncheck` fixture, for a user's own tests:

      def test_known_bug_is_still_found(txncheck):
          result = txncheck.expect("models/pip473/pip-text.toml")  # fails the test unless [expect] holds
          assert result.report.outcome.violations[0].length == 9

      def test_figures(txncheck):
          report = txncheck.check("models/classic/twophase-rm3.toml")
          assert report.outcome.distinct_states == 288

Importing this module is cheap (pytest loads it in every run of an
environment where txncheck is installed); the checker loads on first use.

A collected model runs the code its spec names, and that code could end the
process: `os._exit(0)` in a spec would end the whole session with exit 0. So
each collected model is loaded, and checked, in a forked child process
(checker/isolation.py) that sends back only its judgement as JSON; a child that ends
without one fails its items. Counterexample traces go to one temporary
folder, removed when the session ends (`--txncheck-out DIR` keeps them).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from .isolation import run_isolated
from .model_files import is_model_file


def pytest_addoption(parser) -> None:
    group = parser.getgroup("txncheck", "txncheck model checking")
    group.addoption("--txncheck", action="store_true",
                    help="collect txncheck model files (*.toml) as tests, judged against their [expect] tables")
    group.addoption("--txncheck-engine", metavar="NAME", default=None,
                    help="engine for collected models (default: the model's own, else bfs)")
    group.addoption("--txncheck-out", metavar="DIR", default=None,
                    help="where counterexample traces of collected models go (default: a temporary folder)")


def pytest_collect_file(file_path: Path, parent):
    if parent.config.getoption("txncheck") and is_model_file(file_path):
        return ModelFile.from_parent(parent, path=file_path)
    return None


class ModelCheckFailure(Exception):
    """A property whose [expect] does not hold; carries the text to show."""


class ModelFile(pytest.File):
    def collect(self):
        names, _ = run_isolated(_property_names, self.path)  # loading a spec runs its code
        self.items = [ModelItem.from_parent(self, name=n) for n in names or ["load"]]
        return self.items

    def result(self):
        """The gate's judgement of this model, computed once for all its items."""
        cached = getattr(self, "_result", None)
        if cached is None:
            config = self.config
            out = config.getoption("txncheck_out") or _session_traces(config)
            judged, error = run_isolated(_judge, self.path, config.getoption("txncheck_engine"), out)
            cached = self._result = _result(judged) if judged is not None else SimpleNamespace(
                shown=str(self.path), error=f"{self.path}: {error}", cases=[])
        return cached


def _property_names(path: str) -> list[str]:
    """The items of a model file: its properties, witnesses, deadlock and temporal
    properties, and its figures when [expect] records them (the gate's case)."""
    from .model import FIGURES, load_model

    try:
        m = load_model(path)
        spec = m.instantiate()
        names = list(m.selected_properties(spec)) + list(m.witnesses)
    except Exception:  # a model or spec that cannot load: its error shows when the item runs
        return []
    if m.deadlock:
        names.append("Deadlock")
    names += list(getattr(m, "temporal", {}) or {})
    names += ["Proof"] if "prove" in m.raw else []
    return names + (["figures"] if any(k in m.expect for k in FIGURES) else [])


def _judge(path: str, engine: str | None, out: str) -> dict:
    """The gate's judgement of a model (checker/gate.py), as JSON can carry it."""
    from .gate import check_one

    r = check_one(Path(path), engine=engine, out_dir=out)
    return {"shown": r.shown, "error": r.error,
            "cases": [{"name": c.name, "status": c.status, "message": c.message, "detail": c.detail,
                       "trace": c.violation.trace_file if c.violation is not None else None} for c in r.cases]}


def _result(judged: dict) -> SimpleNamespace:
    cases = [SimpleNamespace(name=c["name"], status=c["status"], message=c["message"], detail=c["detail"],
                             violation=SimpleNamespace(trace_file=c["trace"]) if c["trace"] else None)
             for c in judged["cases"]]
    return SimpleNamespace(shown=judged["shown"], error=judged["error"], cases=cases)


def _session_traces(config) -> str:
    """One temporary folder for the session's traces, removed when it ends."""
    folder = getattr(config, "_txncheck_traces", None)
    if folder is None:
        import shutil
        import tempfile

        folder = config._txncheck_traces = tempfile.mkdtemp(prefix="txncheck-traces-")
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


class ModelItem(pytest.Item):
    def runtest(self) -> None:
        from .gate import ERROR, FAILED, SKIPPED

        parent = self.parent
        assert isinstance(parent, ModelFile), "collected by a ModelFile"
        r = parent.result()
        if r.error is not None:
            raise ModelCheckFailure(r.error)
        cases = [c for c in r.cases if c.name == self.name]
        items = parent.items
        if items[0] is self:  # cases the collection could not foresee (e.g. a bad [expect]) show on the first item
            known = {i.name for i in items}
            cases += [c for c in r.cases if c.name not in known]
        bad = [c for c in cases if c.status in (FAILED, ERROR)]
        if bad:
            raise ModelCheckFailure("\n\n".join(_explain(r, c) for c in bad))
        if cases and all(c.status == SKIPPED for c in cases):
            pytest.skip(cases[0].message)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ModelCheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{self.name}"


def _explain(r, c) -> str:
    text = f"{r.shown}: {c.name}: {c.message}"
    if c.violation is not None and c.violation.trace_file and not c.detail:
        text += f"\ntrace: {c.violation.trace_file}"
    if c.detail:
        text += "\n\n" + c.detail
    return text


class Txncheck:
    """The `txncheck` fixture: run a model from a test."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir

    def check(self, model, **options):
        """Check a model file (or Model); returns the `checker.api.Report`. Options as `check_model`."""
        from .api import check_model

        options.setdefault("out_dir", self.out_dir)
        return check_model(model, **options)

    def expect(self, model, *, engine: str | None = None, **kwargs):
        """Check a model and fail the test, with the trace table, unless its [expect] table holds.
        Returns the gate's `ModelResult`."""
        from .gate import ERROR, FAILED, check_one

        r = check_one(Path(model), engine=engine, out_dir=self.out_dir, **kwargs)
        bad = [c for c in r.cases if c.status in (FAILED, ERROR)]
        if r.error is not None or bad:
            pytest.fail(r.error or "\n\n".join(_explain(r, c) for c in bad), pytrace=False)
        return r


@pytest.fixture
def txncheck(tmp_path) -> Txncheck:
    """Run txncheck models from a test: `txncheck.check(path)` and `txncheck.expect(path)`."""
    return Txncheck(tmp_path / "traces")
