"""`bfs --workers N` (checker/engines/parallel/) explores exactly what the
in-process bfs explores: TLC's counts, shortest counterexamples that replay,
each state kept by one worker, and one-line errors."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.engines import EngineError
from txncheck.checker.engines import parallel
from txncheck.checker.engines.parallel import worker
from txncheck.checker.engines.parallel.table import FingerprintTable
from txncheck.checker.errors import EnvironmentFault
from txncheck.checker.model import load_model
from txncheck.checker.options import MAX_WORKERS, Options
from txncheck.spec.classic.diehard import DieHard
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TwoPhase

from .helpers import explore
from .helpers import MODELS
from .test_hostile_inputs import planted_line, planted_spec


@pytest.fixture
def fork_early(monkeypatch):
    """Fork the workers after the first level that holds 2 states per
    worker, so small models run in the worker processes too."""
    monkeypatch.setattr(parallel.coordinator, "SPLIT_AT", 2)


def _replays(spec, path) -> bool:
    """Every step of `path` is a step of `spec` from an initial state."""
    if path[0][1] not in set(spec.init_states()):
        return False
    return all((a, t) in set(spec.next(s)) for (_, s), (a, t) in zip(path, path[1:]))


@pytest.mark.parametrize("workers", [2, 3])
def test_twophase_six_rms_has_tlc_counts_in_workers(fork_early, workers):
    o = explore(TwoPhase(rm=6), deadlock=True, keep_graph=False, options={"workers": workers})
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 50816, 402306, 20)
    assert o.extra["workers"]["processes"] == workers and o.extra["workers"]["forked"] == workers
    assert o.extra["visited_set"] == "fingerprints"
    assert o.extra["collision_probability"] == pytest.approx(50816 * (402306 - 50816) / 2**64)
    # generated per action as the in-process run counts it; which action found
    # a state first depends on the order of exploration
    seq = explore(TwoPhase(rm=6), deadlock=True, keep_graph=False).coverage
    assert {a: c["generated"] for a, c in o.coverage.items()} == {a: c["generated"] for a, c in seq.items()}
    assert sum(c["distinct"] for c in o.coverage.values()) == 50816 - 1


def test_small_models_never_fork():
    o = explore(TCommit(rm=3), options={"workers": 2})
    assert (o.distinct_states, o.states_generated, o.depth) == (34, 94, 7)
    assert o.extra["workers"]["forked"] == 0


def test_shortest_counterexample_replays(fork_early):
    """Each run reports bfs's property at bfs's length, and the trace is a
    run of the spec. Which of several shortest ones it is may differ:
    which worker keeps a state depends on measured CPU times."""
    model = MODELS / "pip473" / "late-write.toml"
    spec = load_model(model).instantiate()
    (want,) = check_model(model).outcome.violations
    runs = [check_model(model, options={"workers": 2}).outcome for _ in range(2)]
    for o in runs:
        assert o.verdict == "violation" and o.extra["workers"]["forked"] == 2
        (v,) = o.violations
        assert (v.kind, v.property, len(v.path)) == ("invariant", want.property, len(want.path))
        assert _replays(spec, v.path)


def test_in_process_counterexample_when_levels_stay_small(fork_early):
    o = explore(DieHard(goal=4), options={"workers": 2})  # at most 3 states per level: never forks
    assert o.verdict == "violation" and o.extra["workers"]["forked"] == 0
    (v,) = o.violations
    assert (v.property, len(v.path)) == ("NotSolved", 7) and v.path[-1][1].big == 4
    assert _replays(DieHard(goal=4), v.path)


def test_deadlock_is_found_at_its_depth(fork_early):
    o = explore(TCommit(rm=3), deadlock=True, options={"workers": 2})
    seq = explore(TCommit(rm=3), deadlock=True)
    (v,) = o.violations
    assert o.extra["workers"]["forked"] == 2
    assert v.kind == "deadlock" and len(v.path) == len(seq.violations[0].path)
    assert _replays(TCommit(rm=3), v.path)
    final = v.path[-1][1]
    assert not list(TCommit(rm=3).next(final)) and set(final.rmState) <= {"committed", "aborted"}


def test_symmetry_and_witnesses_in_workers(fork_early):
    """twin-clients-fixed under --symmetry: the orbit count of every
    in-process visited-set mode (test_pip473_symmetry), and every witness."""
    r = check_model(MODELS / "pip473" / "twin-clients-fixed.toml", keep_graph=False,
                    options={"symmetry": True, "workers": 2})
    o = r.outcome
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 81131, 356724, 28)
    assert all(o.witnesses_found.values()) and o.extra["workers"]["forked"] == 2


def _keep_in_turn(orders, quota, chunk):
    """`share` applied as the coordinator and workers apply it: worker by
    worker, `chunk` proposals at a time, each told the later workers'
    proposals and what the earlier ones kept of its own."""
    tables = []
    for order in orders:
        t = FingerprintTable()
        t.add(np.array(order, dtype=np.uint64))
        tables.append(t.slots)
    kept, taken = [], []
    for w, order in enumerate(orders):
        fps = np.array(order, dtype=np.uint64)
        mine, claimed, left = [], [], quota[w]
        for lo in range(0, len(order), chunk):
            keep, also, left = worker.share(fps[lo:lo + chunk], tables[w + 1:], taken, left)
            mine += fps[lo:lo + chunk][keep].tolist()
            claimed += also.tolist()
        if w + 1 < len(orders):
            t = FingerprintTable()
            t.add(np.array(claimed, dtype=np.uint64))
            taken = taken + [t.slots]
        kept.append(mine)
    return kept


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 4), st.integers(1, 5), st.data())
def test_every_proposed_state_is_kept_once_by_a_worker_that_proposed_it(n, chunk, data):
    orders = [data.draw(st.lists(st.integers(1, 30), unique=True, max_size=20)) for _ in range(n)]
    quota = data.draw(st.lists(st.integers(0, 20), min_size=n - 1, max_size=n - 1)) + [None]
    kept = _keep_in_turn(orders, quota, chunk)
    every = [f for mine in kept for f in mine]
    assert sorted(every) == sorted(set().union(*orders))  # each once
    for w, mine in enumerate(kept):
        assert mine == [f for f in orders[w] if f in mine]  # its own, in its order
        later = set().union(*orders[w + 1:])
        before = set().union(*kept[:w])
        # of what a later worker proposed too, it keeps the first `quota`;
        # what no later worker proposed, it keeps unless an earlier one did
        also = [f for f in orders[w] if f in later and f not in before]
        want = also if quota[w] is None else also[:quota[w]]
        assert [f for f in mine if f in later] == want
        assert [f for f in mine if f not in later] == [f for f in orders[w] if f not in later and f not in before]


def test_quotas_split_the_shared_states_by_cost():
    held = [np.arange(1, 101, dtype=np.uint64), np.arange(51, 201, dtype=np.uint64)]  # 50 shared
    tables = []
    for vals in held:
        t = FingerprintTable()
        t.add(vals)
        tables.append((vals, t.slots))
    # equal costs: 200 states, 100 each; worker 0 alone proposed 50, so it keeps all 50 shared
    assert worker.quotas(tables, [1.0, 1.0]) == [50, None]
    # worker 0 twice as costly per state: it should hold 200/3 = 66.7, i.e. 17 of the 50 shared
    assert worker.quotas(tables, [2.0, 1.0]) == [17, None]
    # worker 0 ten times as costly: it would hold 18, but keeps what it alone proposed
    assert worker.quotas(tables, [10.0, 1.0]) == [0, None]
    assert worker.quotas(tables, [0, 1.0]) == [50, None]  # a cost not known: even parts


def test_pip473_violation_trace_is_written_and_shortest(fork_early, tmp_path, capsys):
    model = MODELS / "pip473" / "late-write.toml"
    seq = check_model(model).outcome
    want = seq.violations[0]
    rc = main(["check", str(model), "--workers", "2", "--json", "--quiet", "--out", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert rc == 1 and report["verdict"] == "violation" and report["depth"] == seq.depth
    assert report["workers"]["forked"] == 2
    # the level is finished before the violation is reported
    assert report["distinct_states"] >= seq.distinct_states
    (v,) = report["violations"]
    assert (v["property"], v["length"]) == (want.property, len(want.path))
    assert main(["replay", v["trace"]]) == 1  # reproduced on the reference implementation
    assert f"reproduced at step {len(want.path) - 1}: {want.property} fails" in capsys.readouterr().out


def test_budgets_stop_with_an_incomplete_verdict(fork_early):
    o = explore(TwoPhase(rm=6), keep_graph=False, max_states=5000, options={"workers": 2})
    assert o.verdict == "incomplete" and o.incomplete_reason == "max-states 5000 reached"
    assert o.extra["workers"]["forked"] == 2
    assert 5000 <= o.distinct_states < 50816


@pytest.mark.parametrize("flag, message", [
    ("--exact", "--workers keeps 64-bit fingerprints, so it excludes --exact"),
    ("--por", "--por's cycle proviso needs the whole visited set in one process; drop --workers"),
    ("--compact", "--workers keeps fingerprints, not states, so --compact has nothing to share"),
])
def test_refused_combinations_are_one_line(flag, message, capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--workers", "2", flag, "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.endswith(message) and "\n" not in err


def test_workers_have_an_upper_bound(capsys):
    """Any N was accepted: a large model forked them all once a level held 2 N states."""
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--workers", "65", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("txncheck: error: --workers 65: at most 64 (one per core is the most that "
                                      "helps; this machine has ") and err.count("\n") == 1
    Options(workers=MAX_WORKERS).validate(None, "bfs")
    for n in (0, 2.5, True):
        with pytest.raises(EngineError, match=r"^--workers .*: give a whole number from 1 to 64$"):
            Options(workers=n).validate(None, "bfs")


def test_temporal_properties_refuse_workers(capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3-liveness.toml"), "--workers", "2", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.endswith("temporal properties cannot be checked with --workers") and "\n" not in err


def test_the_gate_runs_liveness_models_in_one_process(tmp_path, capsys):
    """`check --all --workers 2` passes a liveness model (in one process, and
    says so) next to a safety model that the workers check."""
    for name in ("twophase-rm3-liveness.toml", "twophase-rm6.toml"):
        (tmp_path / name).write_text((MODELS / "classic" / name).read_text())
    rc = main(["check", "--all", str(tmp_path), "--workers", "2", "--quiet", "--json", "--out", str(tmp_path / "o")])
    models = {m["model"].rsplit("/", 1)[-1]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert rc == 0
    live, safe = models["twophase-rm3-liveness.toml"], models["twophase-rm6.toml"]
    assert live["exit_code"] == 0 and "workers" not in live["report"]
    assert live["note"] == "in one process: --workers cannot keep the state graph that temporal properties need"
    assert "note" not in safe and safe["report"]["workers"]["forked"] == 2


def test_other_engines_refuse_workers(capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--engine", "simulate", "--workers", "2"])
    assert rc == 2 and "engine 'simulate' does not support --workers" in capsys.readouterr().err


def test_one_worker_is_the_in_process_bfs(capsys):
    rc = main(["check", str(MODELS / "classic" / "twophase-rm3.toml"), "--workers", "1", "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and "workers" not in report and "visited_set" not in report
    assert (report["distinct_states"], report["states_generated"]) == (288, 1146)


def test_a_failing_worker_is_reported_in_one_line(fork_early):
    """A failure outside a spec's own code (here: a test's) is what it would be in one process:
    an internal error, exit 3 (checker/failures.py classifies it in the worker)."""
    spec = TwoPhase(rm=4)
    main_pid, inner = os.getpid(), spec.next

    def next_or_fail(s):
        if os.getpid() != main_pid:
            raise ValueError("boom")
        return inner(s)

    spec.next = next_or_fail
    with pytest.raises(EnvironmentFault, match=r"^--workers: worker \d: internal error, the run is incomplete: "
                                               r"ValueError: boom \(--debug shows the traceback\)$"):
        explore(spec, options={"workers": 2})


def test_a_dying_worker_is_reported_in_one_line(fork_early):
    spec = TwoPhase(rm=4)
    main_pid, inner = os.getpid(), spec.next

    def next_or_exit(s):
        if os.getpid() != main_pid:
            os._exit(7)
        return inner(s)

    spec.next = next_or_exit
    with pytest.raises(EnvironmentFault, match=r"^--workers: worker \d exited with status 7: code it ran ended it "
                                               r"\(os\._exit in a spec\?\) before the search ended; "
                                               r"the run is incomplete$"):
        explore(spec, options={"workers": 2})


def _spec_in_workers(tmp_path, line: str):
    """A model of `txncheck new`'s lock spec (fixed, five processes: its second level forks
    the workers) whose `next` runs `line` in a worker only; returns the model and the line's number."""
    folder = planted_spec(tmp_path, "_MAIN = __import__('os').getpid()", "import")
    spec = folder / "lk.py"
    planted = f"if __import__('os').getpid() != _MAIN: {line}"
    anchor = "    def next(self, s: State):\n"
    spec.write_text(spec.read_text().replace(anchor, anchor + "        " + planted + "\n", 1))
    model = folder / "five.toml"
    model.write_text('spec = "lk.py:Lk"\nvariant = "fixed"\n[constants]\nprocs = 5\n')
    return model, planted_line(folder, planted)


def test_a_spec_error_in_a_worker_is_exit_2_with_its_line(fork_early, tmp_path, capsys):
    model, line = _spec_in_workers(tmp_path, "raise ValueError('boom')")
    rc = main(["check", str(model), "--workers", "2", "--quiet", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and err.startswith("txncheck: error: --workers: worker ")
    assert f"lk.py:{line}: in next: spec Lk raised ValueError: boom" in err


def test_os_exit_in_a_worker_is_incomplete_not_bad_input(fork_early, tmp_path, capsys):
    """It was exit 2, "worker 1 died (exit code 0)": bad input for a process that ended
    before its verdict, which the README calls exit 3."""
    model, _ = _spec_in_workers(tmp_path, "__import__('os')._exit(0)")
    rc = main(["check", str(model), "--workers", "2", "--quiet", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 3 and re.fullmatch(r"txncheck: error: --workers: worker \d exited with status 0: code it ran "
                                    r"ended it \(os\._exit in a spec\?\) before the search ended; "
                                    r"the run is incomplete", err), err


@pytest.fixture
def move_always(monkeypatch):
    """Even out the workers' parts by moving states at every level."""
    monkeypatch.setattr(parallel.moves, "MOVE_AT", 0.0)
    monkeypatch.setattr(parallel.moves, "MOVE_MIN", 1)


@pytest.mark.parametrize("workers", [2, 3])
def test_states_moved_between_workers_keep_tlcs_counts(fork_early, move_always, workers):
    o = explore(TwoPhase(rm=6), deadlock=True, keep_graph=False, options={"workers": workers})
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == ("ok", 50816, 402306, 20)
    moved = [lv["moved"] for lv in o.extra["workers"]["levels"] if "moved" in lv]
    assert len(moved) >= 5 and all(n > 0 for _, _, n in moved)


def test_moves_keep_the_shortest_counterexample(fork_early, move_always):
    model = MODELS / "pip473" / "recovery-watermark.toml"
    spec = load_model(model).instantiate()
    (want,) = check_model(model).outcome.violations
    o = check_model(model, options={"workers": 2}).outcome
    assert any("moved" in lv for lv in o.extra["workers"]["levels"])
    (v,) = o.violations
    assert (v.property, len(v.path)) == (want.property, len(want.path)) and _replays(spec, v.path)


def test_moved_states_come_back_as_they_left_and_damage_is_one_line(tmp_path):
    from txncheck.checker.engines.parallel import moves
    from txncheck.checker.engines.parallel.records import Fields

    spec = load_model(MODELS / "pip473" / "late-write.toml").instantiate()
    states = [t for s in spec.init_states() for _, t in spec.next(s)][:20]
    giver, receiver = Fields(), Fields()
    rows = [giver.row(s) for s in states]
    fps = [giver.fingerprint(r) for r in rows]
    path = tmp_path / "moved.bin"
    moves.write(str(path), giver, rows, fps)
    got, got_fps = moves.read(str(path), receiver)
    assert [receiver.state(r) for r in got] == states and got_fps.tolist() == fps
    data = path.read_bytes()
    head = len(moves.MAGIC) + 4 + int.from_bytes(data[len(moves.MAGIC):len(moves.MAGIC) + 4], "little")
    fps_at = head + 4 * json.loads(data[len(moves.MAGIC) + 4:head])["cells"]
    for at in (3, head + 1, fps_at + 2, len(data) - 2):  # the magic, a row, a fingerprint, a value
        bad = bytearray(data)
        bad[at] ^= 0x55
        path.write_bytes(bytes(bad))
        with pytest.raises(moves.MoveError, match="damaged"):
            moves.read(str(path), Fields())


def test_a_moved_file_names_only_namedtuples_this_process_has_loaded(tmp_path):
    from txncheck.checker.engines.parallel import moves
    from txncheck.checker.engines.parallel.records import Fields

    giver = Fields()
    rows = [giver.row(s) for s in TwoPhase(rm=2).init_states()]
    path = tmp_path / "moved.bin"
    moves.write(str(path), giver, rows, [giver.fingerprint(r) for r in rows])
    data = path.read_bytes()
    name = re.search(rb"txncheck\.spec\.classic\.twophase:\w+", data).group()
    for other in (b"os:stat_result", b"no.such.module:Thing"):
        fixed = bytearray(data.replace(name, other))  # and the header's length with it
        at = len(moves.MAGIC)
        head = len(fixed) - len(data) + int.from_bytes(data[at:at + 4], "little")
        fixed[at:at + 4] = head.to_bytes(4, "little")
        path.write_bytes(bytes(fixed))
        with pytest.raises(moves.MoveError, match="not a NamedTuple loaded here"):
            moves.read(str(path), Fields())


def test_the_plan_evens_out_the_costs_counting_what_the_taker_pays():
    from txncheck.checker.engines.parallel import moves

    # 1,000 states at 2 s against 500 at 1 s: moving 375 leaves 625 * 2 = 1,250 = 875 * 1 + 375 * 1
    assert moves.plan([1000, 500], [2.0, 1.0], 1.0) == (0, 1, 375)
    assert moves.plan([5000, 10000, 8000], [1.0, 1.0, 1.0], 0.0) == (1, 0, 2500)  # the heaviest to the lightest
    assert moves.plan([1000, 990], [1.0, 1.0], 0.0) is None  # 1% apart
    assert moves.plan([1000, 500], [1.0, 1.0], 1000.0) is None  # too few would move
    assert moves.plan([10 ** 8, 0], [1.0, 1.0], 0.0) == (0, 1, moves.MOVE_MAX)


def _conforms(msg: dict, kinds: tuple) -> bool:
    """Is `msg` one of the TypedDicts `kinds` (its keys, and the type of each value)?"""
    import typing

    for kind in kinds:
        hints = typing.get_type_hints(kind)
        required = kind.__required_keys__
        if not required <= msg.keys() <= hints.keys():
            continue
        if all(_of_type(msg[k], hints[k]) for k in msg):
            return True
    return False


def _of_type(v, hint) -> bool:
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return v in args
    if origin in (typing.Union, __import__("types").UnionType):
        return any(_of_type(v, a) for a in args)
    if hint is type(None):
        return v is None
    if typing.is_typeddict(hint):
        return isinstance(v, dict) and _conforms(v, (hint,))
    base = origin or hint
    if base is float:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if base is int:
        return isinstance(v, int) and not isinstance(v, bool)
    return isinstance(v, base)


def test_every_message_of_a_run_is_one_the_protocol_declares(fork_early, move_always, monkeypatch):
    """wire.py declares every command and reply (PROTOCOL); a run with two
    workers and moves sends none that it does not declare, either way (a
    reply is one its command declares: the worker's last command but
    "stop", which the batch of an "expand" answers), and the worker's loop
    answers every declared command."""
    import inspect
    import json as _json

    from txncheck.checker.engines.parallel import wire

    real_send, real_recv = wire.send, worker.recv
    sent: list[dict] = []
    asked: dict[int, str] = {}      # in a worker: connection -> the command its replies answer

    def checked(conn, head, arrays=()):
        msg = _json.loads(_json.dumps(head))   # as the other end reads it
        if "cmd" in msg:
            kinds = (wire.PROTOCOL[msg["cmd"]][0],)
        else:
            cmd = asked.get(id(conn))
            kinds = (*(wire.PROTOCOL[cmd][1] if cmd else ()), wire.Failure)
        assert _conforms(msg, kinds), f"undeclared message {msg} (in answer to {asked.get(id(conn))!r})"
        sent.append(msg)
        real_send(conn, head, arrays)

    def noted(conn):
        head, arrays = real_recv(conn)
        if head.get("cmd", "stop") != "stop":
            asked[id(conn)] = head["cmd"]
        return head, arrays

    monkeypatch.setattr(wire, "send", checked)
    monkeypatch.setattr(worker, "send", checked)   # the workers are forked after this: theirs too
    monkeypatch.setattr(worker, "recv", noted)
    o = explore(TwoPhase(rm=6), deadlock=True, keep_graph=False, options={"workers": 2})
    assert o.distinct_states == 50816 and any("moved" in lv for lv in o.extra["workers"]["levels"])
    cmds = {m["cmd"] for m in sent if "cmd" in m}
    assert cmds >= {"expand", "accept", "give", "take", "drop", "quit"}, cmds
    served = set(re.findall(r'cmd == "(\w+)"', inspect.getsource(worker._serve)))
    assert served | {"stop"} == set(wire.PROTOCOL)
