"""Engine options are one frozen object (checker/options.py), validated in
one place, and never changed by a run."""

from __future__ import annotations

import dataclasses

import pytest

from txncheck.checker.cli import main
from txncheck.checker.engines import EngineError, get_engine
from txncheck.checker.job import Job
from txncheck.checker.model import ModelError, load_model
from txncheck.checker.options import Options
from txncheck.checker.reductions import ReductionError
from txncheck.spec.classic.twophase import TwoPhase

from .helpers import MODELS


def test_options_are_frozen_and_read_from_the_apis_dict():
    o = Options.of({"workers": 2, "symmetry": True, "seed": None})
    assert (o.workers, o.symmetry, o.seed) == (2, True, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.workers = 3
    assert o.asked() == {"workers": 2, "symmetry": True}
    assert Options.of(o) is o and Options.of(None) == Options()
    with pytest.raises(EngineError, match="^no engine supports --no-such-flag$"):
        Options.of({"no_such_flag": True})


@pytest.mark.parametrize("options, engine, error, message", [
    ({"seed": 3}, "bfs", EngineError, "engine 'bfs' does not support --seed"),
    ({"workers": 2}, "simulate", EngineError, "engine 'simulate' does not support --workers"),
    ({"workers": 2, "exact": True}, "bfs", EngineError, "--workers keeps 64-bit fingerprints, so it excludes --exact"),
    ({"fingerprints": True, "exact": True}, "bfs", ReductionError, "--exact and --fingerprints exclude each other"),
    ({"fingerprints": True, "resume": "d"}, "bfs", ReductionError,
     "--fingerprints does not keep the states a checkpoint needs; use one or the other"),
    ({"checkpoint": "a", "resume": "b"}, "spark", EngineError,
     "--resume continues in its own directory: drop --checkpoint or give the same DIR"),
])
def test_validate_holds_the_rules(options, engine, error, message):
    with pytest.raises(error) as info:
        Options.of(options).validate(None, engine)
    assert str(info.value) == message
    Options().validate(None, engine)  # the defaults go with every engine


def test_a_reduction_the_model_file_switches_on_is_refused_with_its_off_switch(tmp_path, capsys):
    src = (MODELS / "classic" / "twophase-rm3.toml").read_text()
    model = tmp_path / "tp.toml"
    model.write_text(src.replace("[constants]", "fingerprints = true\n\n[constants]", 1))
    args = ["check", str(model), "--engine", "simulate", "--walks", "5", "--quiet"]
    assert main(args) == 2
    assert capsys.readouterr().err == ("txncheck: error: engine 'simulate' does not support --fingerprints "
                                       "(tp.toml switches it on; --exact turns it off)\n")
    assert main(args + ["--exact"]) == 3  # simulate never says ok
    capsys.readouterr()
    m = load_model(model)  # spark keeps fingerprints anyway: the file's key is accepted, --exact is not
    Options.of(m.reductions()).validate(m, "spark")
    with pytest.raises(EngineError, match="^engine 'spark' does not support --exact$"):
        Options.of(m.reductions({"exact": True})).validate(m, "spark")


def test_validate_refuses_what_temporal_properties_cannot_use():
    m = load_model(MODELS / "classic" / "twophase-rm3-liveness.toml")
    for opts, engine, keep, tail in [({}, "simulate", True, "are checked by the bfs engine only, not 'simulate'"),
                                     ({}, "bfs", False, "need the state graph; drop --no-graph"),
                                     ({"workers": 2}, "bfs", True, "cannot be checked with --workers"),
                                     ({"symmetry": True}, "bfs", True, "cannot be checked with --symmetry")]:
        with pytest.raises(ModelError, match=f"temporal properties {tail}$"):
            Options.of(opts).validate(m, engine, keep_graph=keep)
    Options.of({"workers": 1}).validate(m, "bfs")


def test_the_gate_derives_its_options_for_a_liveness_model():
    live = load_model(MODELS / "classic" / "twophase-rm3-liveness.toml")
    safe = load_model(MODELS / "classic" / "twophase-rm3.toml")
    given = Options(workers=2, symmetry=False)
    run, note = given.for_gate(live)
    assert run == Options(workers=1, symmetry=False) and note.startswith("in one process")
    assert given.workers == 2
    assert given.for_gate(safe) == (given, None)


def test_a_parallel_run_leaves_the_jobs_options_as_given(monkeypatch):
    from txncheck.checker.engines import parallel

    monkeypatch.setattr(parallel.coordinator, "SPLIT_AT", 2)
    spec = TwoPhase(rm=3)
    job = Job(spec=spec, properties=spec.invariants, keep_graph=False, options={"workers": 2})
    before = job.options
    out = get_engine("bfs")(job)
    assert out.extra["visited_set"] == "fingerprints" and out.extra["workers"]["forked"] == 2
    assert job.options is before and job.options == Options(workers=2)


def test_verdicts_and_violation_kinds_are_their_strings(tmp_path):
    """StrEnum members: the JSON report and the text read exactly as before."""
    import json

    from txncheck.checker.api import check_model
    from txncheck.checker.job import Verdict, ViolationKind

    assert [str(v) for v in Verdict] == ["ok", "violation", "incomplete"]
    assert [str(k) for k in ViolationKind] == ["invariant", "deadlock", "witness", "liveness"]
    r = check_model(MODELS / "classic" / "diehard.toml", out_dir=tmp_path)
    assert r.outcome.verdict is Verdict.VIOLATION and r.outcome.violations[0].kind is ViolationKind.INVARIANT
    doc = json.loads(json.dumps(r.to_json()))
    assert doc["verdict"] == "violation" and doc["violations"][0]["kind"] == "invariant"
    assert f"{r.outcome.verdict} {r.outcome.violations[0].kind}" == "violation invariant"
    assert json.loads((tmp_path / "diehard.itf.json").read_text())["#meta"]["kind"] == "invariant"


def test_the_checkers_errors_share_one_base_class():
    from txncheck.checker.encoding import EncodingError
    from txncheck.checker.engines.checkpoint import CheckpointError
    from txncheck.checker.errors import CheckerError, EnvironmentFault
    from txncheck.checker.invariants import PropertyError
    from txncheck.checker.itf import TraceError
    from txncheck.checker.liveness.syntax import TemporalSyntaxError
    from txncheck.checker.reports.output import ReportError
    from txncheck.checker.sweep import SweepError

    for cls in (EngineError, ReductionError, ModelError, SweepError, EncodingError, CheckpointError, PropertyError,
                TraceError, TemporalSyntaxError, ReportError, EnvironmentFault):
        assert issubclass(cls, CheckerError), cls
    assert issubclass(ModelError, ValueError) and not issubclass(EnvironmentFault, ValueError)
