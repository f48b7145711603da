"""`txncheck replay`: spec traces driven into the reference implementation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.counterexamples.replay import replay
from txncheck.reference.pending_ack import MetadataPendingAckStore

from .helpers import MODELS, ROOT
from .docs_patches.broken_pending_ack.store_first import store_first

CORPUS = sorted((ROOT / "counterexamples" / "pip473").glob("*.itf.json"))


def cli(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_line_error(rc, err, *needles):
    assert rc == 2, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("txncheck: error: ") and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], (n, lines[0])


# Small models of our own, so these tests do not depend on the corpus or on
# the bounds of models/pip473: one txn, one write, one ack, no reshape.
OWN_MODELS = {
    "pip-text": ("pip-text", "MaxReadPositionSafe"),
    "merged": ("merged", "Atomicity"),
}
MODEL_TEXT = """spec = "pip473"
variant = "{variant}"
properties = ["{prop}"]
[constants]
txns = 1
writes = "t1:0"
acks = "t1:s1:1:ind"
reshape = "none"
decisions = "commit"
crashes = 0
failovers = 0
ticks = 0
"""


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    """Fresh counterexamples from the checker, one per small model."""
    out = tmp_path_factory.mktemp("found")
    traces = {}
    for name, (variant, prop) in OWN_MODELS.items():
        m = out / f"{name}.toml"
        m.write_text(MODEL_TEXT.format(variant=variant, prop=prop))
        rep = check_model(m, out_dir=out, keep_graph=False)
        assert rep.verdict == "violation", name
        v = rep.outcome.violations[0]
        traces[name] = (Path(v.trace_file), v.property, v.length)
    return traces


@pytest.mark.parametrize("trace", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus_trace_reproduces_on_its_own_variant(trace):
    doc = json.loads(trace.read_text())
    res = replay(trace)
    assert res.verdict == "reproduced", (res.note, res.diff)
    assert res.property == doc["#meta"]["property"]
    if doc.get("loop") is not None:
        assert (res.kind, res.step) == ("lasso", doc["loop"])
    else:
        assert res.step == len(doc["states"]) - 1


@pytest.mark.parametrize("trace", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus_trace_on_fixed(trace):
    """Where the trace is not fixed's own, the fixed behaviour must not
    reproduce it; where a step is disabled, replay says which."""
    if json.loads(trace.read_text())["#meta"]["variant"] == "fixed":
        pytest.skip("a counterexample of the fixed variant itself")
    res = replay(trace, variant="fixed")
    assert res.verdict == "not_reproduced", (res.note, res.diff)
    assert res.note == "" or "not enabled under variant fixed" in res.note or "does not lead back" in res.note \
        or "so the cycle does not violate" in res.note


def test_found_traces_reproduce_at_the_same_step_and_property(found):
    for name, (path, prop, length) in found.items():
        res = replay(path)
        assert (res.verdict, res.property, res.step) == ("reproduced", prop, length - 1), name
        assert len(res.actions) == length - 1


def test_fixed_does_not_reproduce_and_names_a_disabled_step(found):
    path, _, _ = found["pip-text"]
    res = replay(path, variant="fixed")
    assert res.verdict == "not_reproduced"
    # pip-text appends before the op put; fixed only appends after validating
    assert "publishAppend" in res.note and "not enabled under variant fixed" in res.note
    path, _, _ = found["merged"]
    res = replay(path, variant="fixed")
    assert res.verdict == "not_reproduced" and res.note == ""


def test_cli_exit_codes_and_json(found, capsys):
    path, prop, length = found["merged"]
    rc, out, _ = cli(["replay", str(path), "--json"], capsys)
    doc = json.loads(out)
    assert rc == 1 and {"verdict", "step", "property", "diff"} <= set(doc)
    assert (doc["verdict"], doc["property"], doc["step"], doc["diff"]) == ("reproduced", prop, length - 1, {})
    rc, out, _ = cli(["replay", str(path), "--variant", "fixed"], capsys)
    assert rc == 0 and "not reproduced" in out
    rc, out, _ = cli(["replay", str(path)], capsys)
    assert rc == 1 and f"reproduced at step {length - 1}: {prop}" in out


def test_divergence_names_the_step_and_the_fields(found, capsys, monkeypatch):
    """An implementation whose pending-ack store reads the header from the
    store first (the merged one reads nothing) refuses the late ack the spec
    admits: replay reports where and how the two part ways instead of a
    verdict on the property."""
    monkeypatch.setattr(MetadataPendingAckStore, "_ack", store_first(MetadataPendingAckStore._ack))
    path, _, length = found["merged"]
    rc, out, _ = cli(["replay", str(path), "--json"], capsys)
    doc = json.loads(out)
    assert (rc, doc["verdict"], doc["step"], doc["property"]) == (4, "diverged", length - 1, None)
    assert doc["diff"]["late"] == {"spec": ["t1"], "impl": []}
    assert doc["diff"]["opsleft"]["spec"] != doc["diff"]["opsleft"]["impl"]
    rc, out, _ = cli(["replay", str(path)], capsys)
    assert rc == 4 and f"diverged at step {length - 1}" in out and "late" in out


# -- bad input ------------------------------------------------------------------------


def _doc(found, name="merged"):
    return json.loads(found[name][0].read_text())


def _write(tmp_path, doc):
    p = tmp_path / "t.itf.json"
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["states"][1]["#meta"].update(action="launchMissiles"), "unknown action 'launchMissiles'"),
    (lambda d: d["states"][1]["#meta"]["params"].update(txn={"#bigint": "1"}), "parameter txn must be str"),
    (lambda d: d["states"][1]["#meta"]["params"].update(txn="t9"), "txn='t9' is out of range"),
    (lambda d: d["states"][1]["#meta"]["params"].update(extra=True), "takes parameters"),
    (lambda d: (d["states"][1]["#meta"].update(fingerprint="0" * 16), d["states"][1].update(now={"#bigint": "7"})),
     "is not a step of"),
    (lambda d: d["states"].insert(1, d["states"].pop(2)), "state 1"),
    (lambda d: d["#meta"].update(variant="nope"), "unknown variant"),
    (lambda d: d["#meta"].update(spec="diehard"), "no reference implementation"),
    (lambda d: d["#meta"]["bounds"].update(txns=10**9), "out of range"),
    (lambda d: d.update(loop=99), "'loop'"),
])
def test_hostile_traces_exit_2_with_one_line(found, tmp_path, capsys, mutate, needle):
    doc = _doc(found)
    mutate(doc)
    for k, st in enumerate(doc["states"]):
        st["#meta"]["index"] = k
    rc, _, err = cli(["replay", _write(tmp_path, doc)], capsys)
    one_line_error(rc, err, needle)


def test_missing_and_non_json_files(tmp_path, capsys):
    rc, _, err = cli(["replay", str(tmp_path / "none.itf.json")], capsys)
    one_line_error(rc, err, "no such trace file")
    p = tmp_path / "x.itf.json"
    p.write_text("{not json")
    rc, _, err = cli(["replay", str(p)], capsys)
    one_line_error(rc, err, "not JSON")


def test_unknown_variant_flag(found, capsys):
    rc, _, err = cli(["replay", str(found["merged"][0]), "--variant", "bogus"], capsys)
    one_line_error(rc, err, "unknown variant 'bogus'")


def test_lasso_with_stutter_runs_the_stem_and_comes_back(found, tmp_path):
    doc = _doc(found)
    doc["states"] = doc["states"][:3]
    doc["#meta"].update(property="EventuallyCommitted", kind="liveness", loop_action="stutter")
    doc["loop"] = 2
    res = replay(_write(tmp_path, doc))
    assert (res.verdict, res.property, res.step) == ("reproduced", "EventuallyCommitted", 2)
    doc["loop"] = 1  # a stutter must loop on the last state itself
    with pytest.raises(ValueError, match="stutter"):
        replay(_write(tmp_path, doc))
    doc["#meta"]["loop_action"] = {"action": "tick", "params": {}}
    res = replay(_write(tmp_path, doc))
    assert res.verdict == "not_reproduced" and "does not lead back" in res.note


def test_liveness_lasso_replays_stem_and_one_turn(tmp_path):
    model = MODELS / "pip473" / "merged-gc-redrive-liveness.toml"
    if not model.exists():
        pytest.skip("no liveness model for the GC re-drive")
    rep = check_model(model, out_dir=tmp_path)
    v = rep.outcome.violations[0]
    assert v.kind == "liveness" and v.loop is not None
    res = replay(v.trace_file)
    assert (res.verdict, res.kind, res.property, res.step) == ("reproduced", "lasso", v.property, v.loop)
    assert res.actions[-1].endswith("(closes the cycle)")
    fixed = replay(v.trace_file, variant="fixed")
    assert fixed.verdict == "not_reproduced" and "not enabled under variant fixed" in fixed.note


def test_a_stale_fingerprint_with_the_spec_values_is_accepted(found, tmp_path):
    """An engine may record a fingerprint over an equal but differently typed
    value (1 for True); the state's variables still identify the step."""
    doc = _doc(found)
    for st in doc["states"][1:]:
        st["#meta"]["fingerprint"] = "0" * 16
    res = replay(_write(tmp_path, doc))
    assert (res.verdict, res.property) == ("reproduced", found["merged"][1])


def test_every_spec_action_has_a_handler_with_its_parameters():
    """The bridge's table (replay_pip473/actions.py) has one row per action of
    spec/pip473/ACTIONS.md, with the parameters listed there (`sub?`: one a
    label may leave out), and each handler says what it calls."""
    import re

    from txncheck.counterexamples.replay_pip473 import TABLE

    actions_md = ROOT / "spec/pip473/ACTIONS.md"
    if not actions_md.exists():
        pytest.skip("spec/pip473/ACTIONS.md is not present")
    rows = re.findall(r"^\| `(\w+)` \|\s*([\w, ?]*?)\s*\|", actions_md.read_text(), re.M)
    assert len(rows) >= 20
    spec_params = {name: [p.strip() for p in params.split(",") if p.strip()] for name, params in rows}
    assert {name: list(TABLE[name].params) + [f"{p}?" for p in TABLE[name].optional]
            for name in spec_params if name in TABLE} == spec_params
    assert set(TABLE) == set(spec_params)
    assert all(a.handler.__doc__ for a in TABLE.values())


def test_every_spec_action_has_a_replay_handler():
    """No handler is left over: each names an action of the spec's catalog.
    That every catalog action has one, so that a new action cannot reach a
    trace that replay does not know, is the catalog test's (each row's places:
    tests/test_pip473.py, test_the_catalog_names_every_action_and_its_function)."""
    from txncheck.counterexamples.replay_pip473.actions import HANDLERS
    from txncheck.spec.pip473 import catalog

    assert set(HANDLERS) <= {a.name for a in catalog.ACTIONS}, set(HANDLERS) - {a.name for a in catalog.ACTIONS}


def test_a_parameter_the_bridge_has_no_range_for_is_refused(found, tmp_path, capsys, monkeypatch):
    """A parameter renamed in the catalog (and so in the trace and the
    table) but not in the bridge's ranges would go unchecked: replay says so."""
    from txncheck.counterexamples.replay_pip473 import actions

    doc = _doc(found)
    meta = doc["states"][1]["#meta"]
    name, params = meta["action"], meta["params"]
    row = actions.TABLE[name]
    assert "txn" in row.params, name
    monkeypatch.setitem(actions.TABLE, name, row._replace(
        params={("transaction" if p == "txn" else p): t for p, t in row.params.items()}))
    params["transaction"] = params.pop("txn")
    rc, _, err = cli(["replay", _write(tmp_path, doc)], capsys)
    one_line_error(rc, err, "parameter transaction has no range")
