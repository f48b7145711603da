"""PIP-473: the corpus is found again, the properties are sane and
non-vacuous, and each change of `fixed` is necessary. Each model's verdict
and figures are the gate's, from its [expect] table (the fixed models pass
there, every witness reached).
"""

from __future__ import annotations

import tomllib

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.invariants import check_sanity, compile_predicate, Z3Evaluator
from txncheck.checker.itf import read_trace
from txncheck.checker.model import load_model
from txncheck.spec.pip473 import variants
from txncheck.spec.registry import load_spec_class

from .helpers import MODELS, ROOT

PIP = MODELS / "pip473"
CORPUS = ROOT / "counterexamples" / "pip473"

# model stem -> (property, length): every scenario that has a counterexample.
VIOLATIONS = {
    "gc-forced-delete": ("NoLostCommittedAck", 6),
    "gc-forced-delete-merged": ("NoLostCommittedAck", 7),
    "unknown-is-aborted": ("CommittedVisible", 8),
    "unknown-is-aborted-merged": ("CommittedVisible", 12),
    "append-before-op": ("ReadCommitted", 5),
    "recovery-watermark": ("ReadCommitted", 9),
    "late-write": ("NoLateAdmission", 5),
    "late-write-merged": ("NoLateAdmission", 5),
    "coalesced-events": ("NoMissedDecision", 6),
    "orphan-op": ("NoOrphanOp", 11),
    "pip-text": ("MaxReadPositionSafe", 4),
    "merged": ("Atomicity", 4),
    "late-ack-merged": ("AcksFixedAtDecision", 4),
    "pas-restart-merged": ("NoLostCommittedAck", 7),
    "tb-recovery-dispatch-merged": ("ReadCommitted", 9),
    "tb-recovery-publish-merged": ("WatermarkSafe", 8),
    "prune-after-trim-merged": ("ReadCommitted", 14),
    "tc-failover-fanout-merged": ("NoMissedDecision", 7),
    "unload-merged": ("NoOrphanOp", 12),
    "late-cache-put-merged": ("GcSafety", 11),
}

SIX = ("Atomicity", "NoLostCommittedAck", "SingleFinalization", "ReadCommitted", "GcSafety",
       "MaxReadPositionSafe")


@pytest.mark.parametrize("stem", sorted(VIOLATIONS))
def test_corpus_trace_is_found_again(stem, tmp_path):
    prop, length = VIOLATIONS[stem]
    stored = read_trace(CORPUS / f"{stem}.itf.json")
    assert stored.meta["property"] == prop and stored.length == length
    r = check_model(PIP / f"{stem}.toml", out_dir=tmp_path)
    assert r.verdict == "violation"
    (v,) = r.outcome.violations
    assert (v.property, v.length) == (prop, length)
    again = read_trace(tmp_path / f"{stem}.itf.json")
    assert [s["action"] for s in again.steps] == [s["action"] for s in stored.steps]
    expect = tomllib.loads((PIP / f"{stem}.toml").read_text())["expect"]
    assert (expect["verdict"], expect["property"], expect["length"]) == ("violation", prop, length)


def test_every_scenario_has_a_model_and_evidence():
    scenarios = ["gc-forced-delete", "unknown-is-aborted", "append-before-op", "late-write",
                 "sealed-mid-txn", "coalesced-events", "orphan-op"]
    for name in scenarios:
        assert (PIP / f"{name}.toml").exists()
        has_trace = (CORPUS / f"{name}.itf.json").exists()
        passes = tomllib.loads((PIP / f"{name}.toml").read_text())["expect"]["verdict"] == "ok"
        assert has_trace or passes, name


@pytest.mark.parametrize("variant", ["pip-text", "merged", "fixed"])
def test_properties_and_witnesses_are_sane(variant):
    spec = load_spec_class("pip473")(variant)
    for p in SIX:
        assert p in spec.invariants
    # satisfiable and not implied by the schema's types alone (raises otherwise)
    check_sanity(spec.schema, {**spec.invariants, **spec.witnesses})
    for t in spec.txn_names:
        for pred in ("Started", "Finalized", "Committed", "MaterializedByLive", "Collected", "NoOpsLeft"):
            assert f"{pred}_{t}" in spec.predicates


def test_compiled_properties_agree_with_z3_on_reachable_states():
    r = check_model(PIP / "orphan-op-fixed.toml")
    spec = r.spec
    ev = Z3Evaluator(spec.schema, spec.invariants)
    preds = {n: compile_predicate(spec.schema, f) for n, f in {**spec.invariants, **spec.witnesses}.items()}
    states = r.outcome.exploration.states
    seen = {n: set() for n in preds}
    for s in states[:: max(1, len(states) // 150)]:
        obs = spec.observe(s)
        for n, f in {**spec.invariants, **spec.witnesses}.items():
            got = preds[n](obs)
            assert got == ev.evaluate(f, obs), n
            seen[n].add(got)
    assert all(seen[n] == {True} for n in spec.invariants)


def test_pip_text_gc_loses_the_committed_ack():
    """The review's bug, step by step: the forced delete runs before the
    participant materializes, so the cursor never gets the committed ack."""
    trace = read_trace(CORPUS / "gc-forced-delete.itf.json")
    actions = [s["action"] for s in trace.steps]
    assert actions == ["init", "newTxn", "appendAck", "endTxn", "tcFinalize", "gcSweep"]
    last = trace.states[-1]
    assert last["ops"] == {} and last["cursor"]["s1"] == {"markDelete": 0, "acked": frozenset()}


def test_fixed_crash_anywhere_turns_every_pruning_rule_off():
    """The model the audit's finding (CommittedVisible in 14 states before F4)
    came from: a crash in every state. The gate checks that fixed passes it."""
    assert load_model(PIP / "fixed-crash-anywhere.toml").instantiate().constants["prune"] is False


@pytest.mark.parametrize("bounds, message", [
    ({"writes": "t9:0"}, "bound writes: 't9' is not a txn id"),
    ({"writes": "t1"}, "is not txn:key"),
    ({"acks": "t1:s1:3:ind"}, "bound acks: '3' must be an integer in 1..2"),
    ({"acks": "t1:s1:1:both"}, "is not txn:segment:position:ind|cum"),
    ({"reshape": "shuffle"}, "is not one of"),
    ({"plain": "0 x"}, "bound plain: 'x' must be an integer in 0..3"),
    ({"plain": "4"}, "bound plain: '4' must be an integer in 0..3"),
    # a bound the variant never reads is refused, not dropped (variants.BOUND_NEEDS)
    ({"watches": "zk-oneshot"}, "bound watches = 'zk-oneshot' has no effect on variant fixed"),
])
def test_bad_bounds_are_one_clear_error(bounds, message):
    from txncheck.spec.api import SpecError

    with pytest.raises(SpecError, match=message.replace("|", r"\|").replace("(", r"\(")):
        load_spec_class("pip473")("fixed", **bounds)


@pytest.mark.parametrize("change, evidence", [(c.name, e) for c in variants.FIXES for e in c.necessary],
                         ids=lambda x: x if isinstance(x, str) else "-".join((x.model, *x.only)))
def test_every_change_of_fixed_is_necessary(change, evidence, monkeypatch):
    """Each change of `fixed` left out in turn (spec/pip473/variants.py FIXES),
    the model it names fails: that property, that shortest-trace length."""
    stem, prop, length, only = evidence.model, evidence.property, evidence.length, evidence.only
    monkeypatch.setitem(variants.VARIANTS, "fixed", variants.without("fixed", change, only))
    r = check_model(PIP / f"{stem}.toml", keep_graph=stem.endswith("liveness"))   # liveness needs the graph
    assert r.verdict == "violation"
    assert [(v.property, v.length) for v in r.outcome.violations] == [(prop, length)]


def test_fixed_is_merged_plus_its_changes():
    """Every flag on which merged and fixed differ is set by a fix, and the fixes
    set no flag merged already has."""
    merged, fixed = variants.VARIANTS["merged"], variants.VARIANTS["fixed"]
    differ = {f for f in variants.Flags._fields if getattr(merged, f) != getattr(fixed, f)}
    set_by_fixes = {f for c in variants.FIXES for f in c.sets}
    assert differ == set_by_fixes and len(variants.FIXES) == 11
    assert variants.VARIANTS["pip-text"] == variants.Flags()


def test_f5_keeps_the_cache_entry_while_another_send_is_in_progress(monkeypatch):
    """F5's guard (found by fixed-mechanisms.toml): without it, a failed send
    drops the entry a second send of the txn still needs, and that send's
    entry goes untracked."""
    from txncheck.spec.pip473.protocol import buffer

    monkeypatch.setattr(buffer, "IN_FLIGHT", ())
    r = check_model(PIP / "op-write-fails-two-sends-fixed.toml")
    assert [(v.property, v.length) for v in r.outcome.violations] == [("MaxReadPositionSafe", 8)]


def test_f5_counts_only_the_buffers_own_ops_with_split_participants():
    """With split participants an ACK op's event reaches the pending-ack
    store, never the buffer: F5 counting it kept the buffer's entry of a txn
    whose send the terminated parent rejected, and no event ever cleared it
    (fixed-split-liveness.toml: Materialized failed in a 13-state lasso). The
    joint participant hid that stall, since there the ack's event cleared the
    shared cache."""
    r = check_model(PIP / "fixed-split-liveness.toml", keep_graph=True)
    assert r.verdict == "ok" and r.outcome.distinct_states == 27661


def test_every_shipped_model_splits_the_participants():
    """The joint participant is not a safe abstraction (the bound's help), so
    no shipped verdict rests on it."""
    for path in sorted(PIP.glob("*.toml")):
        assert tomllib.loads(path.read_text())["constants"].get("participants") == "split", path.name


def test_the_standard_model_is_fixed_with_two_sends_per_txn():
    """fixed-standard.toml (issue 23's standard bounds, too large to finish:
    docs/pip473.md) stays fixed.toml's model but for the sends; the gate checks
    it to its max_depth (a bounded [expect]); `txncheck prove` proves it."""
    fixed = tomllib.loads((PIP / "fixed.toml").read_text())
    std = tomllib.loads((PIP / "fixed-standard.toml").read_text())
    assert std["constants"] == {**fixed["constants"], "writes": "t1:0 t1:3 t2:0 t2:3"}
    for key in ("spec", "variant", "properties", "witnesses", "deadlock"):
        assert std[key] == fixed[key], key
    assert std["expect"]["verdict"] == "incomplete" and std["max_depth"] >= 10


def test_every_model_names_the_bounds_that_cut_behaviour():
    for path in sorted(PIP.glob("*.toml")):
        assert "Bounds that cut behaviour:" in tomllib.loads(path.read_text())["description"], path.name


def test_the_joint_participant_makes_a_run_the_code_does_not_have(tmp_path):
    """The bound `participants`: with one joint participant, orphan-op's old bounds
    (one txn, a send and an ack) give an orphan op in 8 states, because the ack's
    event evicts the buffer's cache entry; with the buffer and the pending-ack
    store split, as the merged code has them, those bounds are safe, and
    orphan-op.toml needs a second txn (11 states)."""
    text = (PIP / "orphan-op.toml").read_text()
    old = text.replace('txns = 2\nwrites = "t1:0 t2:0"\nacks = ""\n', 'txns = 1\nwrites = "t1:0"\nacks = "t1:s1:1:ind"\n')
    old = old.split("[expect]")[0]
    assert old != text.split("[expect]")[0]
    for participants, want in (("split", []), ("joint", [("NoOrphanOp", 8)])):
        path = tmp_path / f"{participants}.toml"
        path.write_text(old.replace('participants = "split"', f'participants = "{participants}"'))
        r = check_model(path, out_dir=tmp_path)
        assert [(v.property, v.length) for v in r.outcome.violations] == want, participants


@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_no_write_op_of_a_segment_changes_while_its_buffer_recovers(variant):
    """The claim that lets `recoverComplete` scan the WRITE ops and read their
    headers in one step (recovery.py): from a state where a segment's buffer
    recovers, no other action puts or deletes a WRITE op of that segment.
    Checked on every transition of bounds with two sends of a txn, failing op
    writes, a timeout racing the sends, a plain send and two crashes."""
    from collections import deque
    from txncheck.spec.pip473.protocol.store import writes_by_segment
    spec = load_spec_class("pip473")(variant, txns=1, writes="t1:0 t1:0", plain="0", acks="", reshape="none",
                                     decisions="both", crashes=2, failovers=0, opfail=True, recovery="steps",
                                     participants="split")
    (s0,) = spec.init_states()
    seen, queue, recovering = {s0}, deque([s0]), 0
    while queue:
        s = queue.popleft()
        for (name, params), t in spec.next(s):
            for j, p in enumerate(s.part):
                if p is not None and not p.ready and (name, params) != ("recoverComplete", (("seg", spec.seg_names[j]),)):
                    recovering += 1
                    assert writes_by_segment(s, j) == writes_by_segment(t, j), (name, params)
            if t not in seen:
                seen.add(t)
                queue.append(t)
    assert recovering > 1000, recovering


def test_liveness_models_give_every_recovery_step_fairness():
    """A recovery left unfair stalls in a lasso no broker has: without weak
    fairness for its two loads, fixed-liveness.toml with recovery = "steps"
    failed `Collected` in 7 states; without it for the pending-ack store's
    replay (`recoverAcks`), tc-steps-fixed-liveness.toml failed `Collected`
    in 12."""
    steps = ["WF(recover(seg=*))", "WF(recoverWatermark(seg=*))", "WF(recoverAborted(seg=*))",
             "WF(recoverComplete(seg=*))", "WF(recoverAcks(seg=*))"]
    for path in sorted(PIP.glob("*.toml")):
        fairness = tomllib.loads(path.read_text()).get("fairness", [])
        if any(f.startswith("WF(recover") for f in fairness):
            assert all(f in fairness for f in steps), path.name


def test_actions_md_is_what_the_catalog_writes():
    """spec/pip473/ACTIONS.md is generated from catalog.py and variants.py
    (`python -m txncheck.spec.pip473.catalog > spec/pip473/ACTIONS.md`)."""
    from txncheck.spec.pip473 import catalog

    assert (ROOT / "spec" / "pip473" / "ACTIONS.md").read_text() == catalog.markdown()


# where each place a catalog row names lives
PLACES = {"impl": "txncheck.spec.pip473", "ref": "txncheck.reference", "relation": "txncheck.spec.pip473.symbolic"}


def test_the_catalog_names_every_action_and_its_function():
    """Each catalog row names every place its action lives, and each is there:
    the function under spec/pip473 that computes it (`impl`, such as
    `protocol.coordinator.new_txn`), the reference implementation's
    (`ref`, under reference/), the Z3 relation's (`relation`, under
    spec/pip473/symbolic; empty where the relation does not state it), each
    defined where the row says; found by the action's name: its replay
    handler (counterexamples/replay_pip473/actions.py) and, on a busy model
    whose bounds declare footprints, a footprint (reductions/footprints.py)
    for every label of it that `next` yields. Every action `next` yields is
    in the catalog, every action the footprints name too, and every flow has
    actions. That `ref` and `relation` are the functions that run the action:
    the two tests below. (The ACTIONS.md row is the catalog's by
    construction: test_actions_md_is_what_the_catalog_writes.)"""
    from txncheck.counterexamples.replay_pip473 import TABLE
    from txncheck.spec.pip473 import catalog

    missing = []
    for a in catalog.ACTIONS:
        for field, root in PLACES.items():
            path = getattr(a, field)
            if (path or field != "relation") and not callable(defined_at(root, path)):
                missing.append(f"{a.name}: no function {path} defined under {root}")
        if a.name not in TABLE:
            missing.append(f"{a.name}: no replay handler in counterexamples/replay_pip473/actions.py")
        assert a.flow in {f.name for f in catalog.FLOWS}, a.name
    assert all(any(a.flow == f.name for a in catalog.ACTIONS) for f in catalog.FLOWS)
    spec = load_spec_class("pip473")("fixed", writes="t1:0 t1:1", plain="0", reshape="split", decisions="both",
                                     opfail=True, trim=True, tc="steps", recovery="steps", ticks=1)
    (s,) = spec.init_states()
    seen, frontier = set(), [s]
    for _ in range(6):
        frontier = [t for x in frontier for label, t in spec.next(x) if not seen.add(label)][:400]
    fps = spec.footprints()
    missing += [f"{label[0]}: no footprint of {label} in reductions/footprints.py" for label in seen
                if label not in fps]
    assert not missing, "places the catalog names that are not there:\n" + "\n".join(missing)
    names = {label[0] for label in seen}
    assert names <= set(catalog.BY_NAME) and len(names) > 10, names - set(catalog.BY_NAME)
    # each label `next` yields carries the row's params, in its order, then any of its optional ones
    for name, params in sorted(seen):
        row = catalog.BY_NAME[name]
        want, got = [p for p, _ in row.params], [p for p, _ in params]
        assert got[:len(want)] == want and set(got[len(want):]) <= {p for p, _ in row.optional}, \
            f"{name} yields params {got}; its catalog row says {want}, optional {[p for p, _ in row.optional]}"
    assert {label[0] for label in fps} <= set(catalog.BY_NAME), {label[0] for label in fps} - set(catalog.BY_NAME)


def defined_at(root: str, path: str):
    """The object `path` names under the package `root`: its longest prefix
    that is a module, then attributes; None if there is none, or if it is
    defined elsewhere (imported there)."""
    import importlib

    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join([root, *parts[:i]])
        try:
            obj = importlib.import_module(module)
        except ModuleNotFoundError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part, None)
        here = getattr(obj, "__module__", None) == module and getattr(obj, "__qualname__", None) == ".".join(parts[i:])
        return obj if here else None
    return None


# Small bounds under which, between them, every action is taken within a few
# thousand states of the initial one (breadth first, REF_STATES at most each).
REF_SEARCH = (
    ("fixed", dict(txns=1, writes="t1:0", acks="t1:s1:1:ind", reshape="split", decisions="commit", crashes=1,
                   failovers=1, opfail=True, plain="0", tc="steps")),
    ("merged", dict(txns=1, writes="t1:0", acks="t1:s1:1:ind", reshape="none", decisions="abort", crashes=0,
                    failovers=0, apply="steps", plain="0")),
    ("merged", dict(txns=1, writes="t1:0", acks="", reshape="none", decisions="commit", crashes=0, failovers=0,
                    recovery="steps", unloads=1, plain="0", check="steps", track="steps", sync="steps")),
    ("merged", dict(txns=1, writes="t1:0", acks="t1:s1:1:ind", reshape="none", decisions="commit", crashes=0,
                    failovers=0, tc="publishes", ticks=1, timeout=1, retention=1)),
    ("merged", dict(txns=2, writes="t1:0", acks="t2:s1:1:cum", reshape="none", decisions="both", crashes=0,
                    failovers=0, client="stock", trim=True)),
)
REF_STATES = 5_000


def test_each_actions_reference_function_runs_when_replay_drives_it():
    """A catalog row's `ref` is the reference implementation's function that
    the replay's handler of the action runs (counterexamples/replay_pip473):
    replaying on the reference implementation the shortest run of the spec
    that ends with the action, under the first bounds of REF_SEARCH that
    reach it, its last step calls the function, or a callback defined in it."""
    import sys
    import types

    from txncheck.counterexamples.replay_pip473 import Pip473Bridge
    from txncheck.spec.pip473 import catalog

    def codes(fn):   # fn's code and the code defined in it; none when fn is not there (the test above says so)
        out, todo = set(), [fn.__code__] if fn else []
        while todo:
            code = todo.pop()
            out.add(code)
            todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        return out

    left = {a.name for a in catalog.ACTIONS}
    wrong = []
    for variant, bounds in REF_SEARCH:
        spec = load_spec_class("pip473")(variant, **bounds)
        (s0,) = spec.init_states()
        parent, frontier, runs = {s0: None}, [s0], {}
        while frontier and len(parent) < REF_STATES and not left <= set(runs):   # breadth first: the shortest runs
            frontier, level = [], frontier
            for s in level:
                for label, t in sorted(spec.next(s), key=lambda x: repr(x[0])):
                    if label[0] in left:
                        runs.setdefault(label[0], (label, s, t))
                    if t not in parent:
                        parent[t] = (label, s)
                        frontier.append(t)
        for name, (label, s, t) in runs.items():
            path = [(label, s, t)]
            while parent[s]:
                path.insert(0, (parent[s][0], parent[s][1], s))
                s = parent[s][1]
            bridge = Pip473Bridge(spec)
            bridge.start()
            for (step, params), before, after in path[:-1]:
                bridge.apply(step, dict(params), before, after)
            mine, ran = codes(defined_at(PLACES["ref"], catalog.BY_NAME[name].ref)), []
            sys.setprofile(lambda frame, event, _: event == "call" and frame.f_code in mine and ran.append(1))
            try:
                bridge.apply(name, dict(label[1]), s, t)
            finally:
                sys.setprofile(None)
            if not ran:
                wrong.append(f"{name}: {catalog.BY_NAME[name].ref} did not run ({variant}, {bounds})")
        left -= set(runs)
    wrong += [f"{name}: no run of REF_SEARCH's bounds takes it" for name in sorted(left)]
    assert not wrong, "the catalog's `ref` is not what replay runs for the action:\n" + "\n".join(wrong)


def test_each_actions_relation_function_is_the_relations():
    """A catalog row's `relation` is a function the hand-written relation
    (spec/pip473/symbolic/relation.py) registers for the action, on a model
    that enables every action the relation states; a row names none exactly
    where the relation does not state its action (on that model, and
    relation.py does not name it)."""
    import ast
    from pathlib import Path

    from txncheck.checker.symbolic.load import hand_written
    from txncheck.spec.pip473 import catalog
    from txncheck.spec.pip473.symbolic import relation as module

    cls = load_spec_class("pip473")
    rel = hand_written(cls)(cls("fixed", reshape="split", decisions="both", opfail=True, tc="steps", unloads=1,
                                plain="0", acks="t1:s1:1:ind", crashes=1))
    rel.state_schema()
    rel.actions()
    named = {a.name for a in catalog.ACTIONS if a.relation}
    source = Path(module.__file__).read_text()
    literals = {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)}
    assert named == set(rel.functions), named ^ set(rel.functions)
    assert literals & set(catalog.BY_NAME) <= named, (literals & set(catalog.BY_NAME)) - named
    wrong = [f"{name}: {catalog.BY_NAME[name].relation}" for name, fns in rel.functions.items()
             if defined_at(PLACES["relation"], catalog.BY_NAME[name].relation) not in fns]
    assert not wrong, "the catalog's `relation` is not a function the relation runs for the action:\n" + \
        "\n".join(wrong)


def test_the_module_map_names_every_module_and_only_modules():
    """spec.py's docstring maps spec/pip473/ by folder: every module under it
    (but the packages' __init__.py) is named there, under its folder, and
    every file named there exists."""
    import re

    from txncheck.spec.pip473 import spec as module

    base = ROOT / "spec" / "pip473"
    text = module.__doc__.split("The modules, by folder", 1)[1].split("\n", 1)[1]
    folder, named = "", set()
    for line in text.splitlines():
        if line and not line.startswith(" "):   # the map ends at the next paragraph
            break
        if heading := re.match(r" {2}(\w+)/ ", line):
            folder = heading.group(1) + "/"
        named |= {folder + name for name in re.findall(r"\b\w+\.(?:py|md)\b", line)}
    modules = {p.relative_to(base).as_posix() for p in base.rglob("*.py") if p.name != "__init__.py"}
    assert {n for n in named if n.endswith(".py")} == modules, {n for n in named if n.endswith(".py")} ^ modules
    assert all((base / n).is_file() for n in named), [n for n in named if not (base / n).is_file()]


def test_the_trace_view_names_every_field_and_loses_nothing():
    """`state_vars` (spec/pip473/view.py), what traces and `show` print: no
    value is a bare tuple of positions (every field named, per txn and per
    segment a map by name), and two reachable states never look the same,
    since replay finds the trace's state by its view."""
    from txncheck.checker.itf import from_itf, to_itf
    from txncheck.spec.api import Record

    def unnamed(v, where):
        if isinstance(v, tuple) and not all(isinstance(x, Record) for x in v):
            return where
        if isinstance(v, dict):
            return next((w for k, x in v.items() if (w := unnamed(x, f"{where}[{k}]"))), None)
        if isinstance(v, frozenset):
            return next((w for x in v if (w := unnamed(x, where + "{}"))), None)
        return None

    def freeze(v):
        if isinstance(v, dict):
            return frozenset((k, freeze(x)) for k, x in v.items())
        if isinstance(v, (tuple, frozenset)):
            return type(v)(map(freeze, v))
        return v

    for variant, more in (("pip-text", {}), ("merged", {"subs": 2, "trim": True, "tc": "steps"}),
                          ("fixed", {"recovery": "steps", "plain": "0"})):
        spec = load_spec_class("pip473")(variant, decisions="both", **more)
        (s,) = spec.init_states()
        seen, frontier = {s}, [s]
        for _ in range(7):
            frontier = [t for x in frontier for _, t in spec.next(x) if t not in seen and not seen.add(t)][:120]
        views = {}
        for i, x in enumerate(seen):
            v = spec.state_vars(x)
            assert unnamed(v, "") is None, (variant, unnamed(v, ""))
            if i % 40 == 0:   # the ITF round trip (slow: a record has no encoding to sort by)
                assert {k: from_itf(to_itf(y)) for k, y in v.items()} == v
            assert views.setdefault(freeze(v), x) == x, variant
        assert len(seen) > 400


def _walk(spec, *names):
    """Take the first enabled step of each named action (with an op name: `publishCheck:w1`)."""
    (s,) = spec.init_states()
    for want in names:
        name, _, op = want.partition(":")
        s = next(t for (a, p), t in spec.next(s) if a == name and (not op or dict(p).get("op") == op))
    return s


def _enabled(spec, s) -> set:
    return {a for (a, _), _ in spec.next(s)}


@pytest.mark.parametrize("variant, held", [("merged", True), ("fixed", False)])
def test_a_failed_op_write_holds_the_read_position_from_the_header_read(variant, held):
    """Issue 43 item 1: the merged buffer's header read makes the txn's entry,
    and an OPEN entry with no position holds maxReadPosition
    (recomputeMaxReadPositionLocked): the hold starts at the check, before any
    op, and a failed op write leaves it, so a later plain entry is not
    dispatched until an event reaches the buffer. fixed F5 drops the entry."""
    spec = load_spec_class("pip473")(variant, txns=1, writes="t1:0", plain="0", acks="", reshape="none",
                                     opfail=True, crashes=0, failovers=0)
    s = _walk(spec, "newTxn", "publishCheck", "publishPlain")
    assert spec.observe(s)["maxread"]["s1"] == 1 and "dispatch" not in _enabled(spec, s)   # held at the check
    s = _walk(spec, "newTxn", "publishCheck", "publishOpFails", "publishPlain")
    assert len(s.ledger[0]) == 2 and s.pubs[0].stage == "rejected"
    assert (spec.observe(s)["maxread"]["s1"] == 1) == held
    assert ("dispatch" in _enabled(spec, s)) != held


def test_f6_gates_the_getter_so_a_plain_send_does_not_open_dispatch(monkeypatch):
    """Issue 43 item 3: F6 is a gate on getMaxReadPosition while the buffer
    recovers, not a value: without F7 a plain send during recovery moves the
    field to the LAC (and persists it), yet the dispatcher still reads nothing."""
    monkeypatch.setitem(variants.VARIANTS, "fixed", variants.without("fixed", "F7"))
    spec = load_spec_class("pip473")("fixed", txns=1, writes="t1:0", plain="0", acks="", reshape="none",
                                     crashes=1, failovers=0, prune=False)
    s = _walk(spec, "crash", "recover", "publishPlain")
    assert not s.part[0].ready and s.part[0].hold == 2 and s.wmark[0] == 2   # the field moved, and is persisted
    assert spec.observe(s)["maxread"]["s1"] == 0 and "dispatch" not in _enabled(spec, s)


@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_the_pending_ack_store_replays_without_the_buffer(variant):
    """Issue 43 item 2: after a restart the pending-ack store's replay
    (recoverAcks) is its own, as the code's replayAsync is: it can finish
    while the buffer still recovers, and then the store takes acks and its
    consumer is let back in (merged: the dispatcher reads up to the LAC, the
    tb-recovery-dispatch finding; fixed F6: nothing yet); before it, neither.
    The reference does the same: its "pas-recover" task gates the dispatcher."""
    from txncheck.reference.cluster import Cluster

    spec = load_spec_class("pip473")(variant, txns=1, writes="t1:0", plain="0", acks="t1:s1:1:ind",
                                     reshape="none", crashes=1, failovers=0, prune=False)
    s = _walk(spec, "newTxn", "publishPlain", "crash", "recover")
    assert not s.part[0].ready and not s.part[0].aready
    assert "recoverAcks" in _enabled(spec, s) and not {"dispatch", "appendAck"} & _enabled(spec, s)
    s = _walk(spec, "newTxn", "publishPlain", "crash", "recover", "recoverAcks")
    assert not s.part[0].ready and s.part[0].aready
    assert {"appendAck", "recoverComplete"} <= _enabled(spec, s)
    assert ("dispatch" in _enabled(spec, s)) == (variant == "merged")
    c = Cluster(variant, {"s1": (0, 10)}, seed_entries=True)
    c.brokers["s1"].ledger.add_entry_now(("plain", None, "p2"))
    c.crash("s1")
    c.restart("s1")
    assert c.dispatch("s1") is None
    c.scheduler.run(c.scheduler.find("pas-recover", "s1", "sub"))
    assert c.scheduler.find("tb-recover", "s1") and c.dispatch("s1") == ("delivered" if variant == "merged" else None)


def test_an_unload_leaves_an_orphan_op_in_merged_and_fixed_survives_it_with_f10(tmp_path, monkeypatch):
    """Issue 43 item 4 (bound unloads): a send the closed buffer admitted puts
    its op after the new owner's recovery scan. merged leaves it, an orphan
    op the GC re-drives forever (unload-merged.toml); fixed deletes it (F1),
    and with F10 the new owner loads only after that, so fixed-unload.toml
    holds; without F10 the new buffer pins the read position for a txn no
    event will ever name (NoMissedDecision; GcSafety first)."""
    r = check_model(PIP / "unload-merged.toml", out_dir=tmp_path)
    assert [(v.property, v.length) for v in r.outcome.violations] == [("NoOrphanOp", 12)]
    actions = [s["action"] for s in read_trace(tmp_path / "unload-merged.itf.json").steps]
    assert actions.index("recoverComplete") < actions.index("publishPutOp")   # the op lands after the scan
    assert check_model(PIP / "fixed-unload.toml").verdict == "ok"
    monkeypatch.setitem(variants.VARIANTS, "fixed", variants.without("fixed", "F10"))
    text = (PIP / "fixed-unload.toml").read_text().split("[expect]")[0]
    path = tmp_path / "fixed.toml"
    path.write_text(text.replace(text[text.index("properties = "):text.index("\n", text.index("properties = "))],
                                 'properties = ["NoMissedDecision"]'))
    r = check_model(path, out_dir=tmp_path)
    assert [(v.property, v.length) for v in r.outcome.violations] == [("NoMissedDecision", 13)]


def test_the_closed_instance_applies_an_abort_between_the_new_owners_scans(tmp_path):
    """Issue 51 item 1: the closed buffer's queued apply puts the aborted
    record after the new owner's scan of the records and deletes the op
    before its scan of the ops (the code's order), so the entry stays
    exposed after recovery; with the two scans swapped (the ops first) the
    same bounds hold: the order is the defect."""
    r = check_model(PIP / "unload-abort-merged.toml", out_dir=tmp_path)
    (v,) = r.outcome.violations
    assert (v.property, v.length) == ("AbortHidden", 19)
    steps = [(s["action"], s["params"]) for s in read_trace(tmp_path / "unload-abort-merged.itf.json").steps]
    order = [a for a, p in steps if a in ("recoverAborted", "recoverComplete") or p.get("closed") is True
             and a in ("applyAbortedRecord", "applyDeleteOps")]
    assert order == ["recoverAborted", "applyAbortedRecord", "applyDeleteOps", "recoverComplete"]


def test_the_closed_pending_ack_store_loses_no_ack_once_the_replay_applies_the_records(monkeypatch, tmp_path):
    """Issue 51 item 1, the pending-ack store's close: merged loses the
    committed ack at unload-acks-fixed.toml's bounds, but merged with F3
    alone (the store applies the acks of the records it replays) holds
    there: the closed store's late delete is not what loses it."""
    path = tmp_path / "unload-acks-merged.toml"
    path.write_text((PIP / "unload-acks-fixed.toml").read_text().split("[expect]")[0]
                    .replace('variant = "fixed"', 'variant = "merged"'))
    merged = check_model(path)
    assert [v.property for v in merged.outcome.violations] == ["NoLostCommittedAck"]
    f3 = [c for c in variants.FIXES if c.name == "F3"]
    monkeypatch.setitem(variants.VARIANTS, "merged", variants.apply(variants.VARIANTS["merged"], f3))
    assert check_model(path).verdict == "ok"


def test_with_the_producer_gate_f7_is_not_needed(monkeypatch, tmp_path):
    """Issue 51 item 4, bound producers: if `handleProducer` adds a producer
    only once the buffer has recovered (`producers = "gated"`), no plain
    publish lands during recovery, and fixed without F7 holds at
    tb-recovery-publish-fixed.toml's bounds; ungated it fails there."""
    monkeypatch.setitem(variants.VARIANTS, "fixed", variants.without("fixed", "F7"))
    path = tmp_path / "gated.toml"
    path.write_text((PIP / "tb-recovery-publish-fixed.toml").read_text().split("[expect]")[0]
                    .replace("[constants]\n", '[constants]\nproducers = "gated"\n'))
    assert check_model(path).verdict == "ok"
    ungated = check_model(PIP / "tb-recovery-publish-fixed.toml")
    assert [(v.property, v.length) for v in ungated.outcome.violations] == [("WatermarkSafe", 10)]
