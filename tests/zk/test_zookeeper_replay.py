"""`txncheck replay --store zookeeper`: every PIP-473 counterexample replays
on the reference implementation over a live ZooKeeper server to the same
verdict, step and property as over the in-memory store; and the faults of a
real server (unreachable, killed mid-replay, restarted) end in one honest
line, never a hang or a made-up verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.counterexamples.replay import replay
from txncheck.reference.store import zk_factory
from txncheck.reference.store.zookeeper import ZooKeeperMetadataStore
from txncheck.reference.zkserver import ZooKeeperServer, free_port

from ..helpers import MODELS, ROOT
from .helpers import needs_zookeeper, pid_alive

pytestmark = needs_zookeeper

CORPUS = sorted((ROOT / "counterexamples" / "pip473").glob("*.itf.json"))
MODELS_WITH_VIOLATIONS = [MODELS / "pip473" / "pip-text.toml", MODELS / "pip473" / "merged.toml"]


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """The corpus; without one, a fresh counterexample of each violating model."""
    if CORPUS:
        return CORPUS
    out = tmp_path_factory.mktemp("found")
    found = []
    for m in MODELS_WITH_VIOLATIONS:
        if m.exists():
            rep = check_model(m, out_dir=out, keep_graph=False)
            assert rep.verdict == "violation", m
            found.append(Path(rep.outcome.violations[0].trace_file))
    if not found:
        pytest.skip("no PIP-473 traces (no corpus, no model files)")
    return found


def outcome(res):
    return (res.verdict, res.step, res.property, res.steps_run, res.note, res.diff)


def test_every_trace_replays_the_same_on_zookeeper(traces, zk_factory):
    """Point watches (the spec's notification model): the trace's own variant
    reproduces at the trace's property, `fixed` does not, on both stores."""
    for trace in traces:
        meta = json.loads(trace.read_text())["#meta"]
        for variant in (None, "fixed"):
            mem = replay(trace, variant=variant)
            zk = replay(trace, variant=variant, bridge_options={"store": zk_factory})
            assert outcome(zk) == outcome(mem), (trace.name, variant)
            if variant is None:
                assert (zk.verdict, zk.property) == ("reproduced", meta["property"]), trace.name


def test_one_shot_watches_replay_the_same_on_zookeeper(traces, zk_factory):
    """ZooKeeper-style one-shot participant watches: same outcome on both
    stores. The spec models point watches, so a trace whose participant
    would hear a second change of a header it already had an event for
    (`unknown-is-aborted`: the GC's delete after the decision) diverges, and
    the divergence names the missing pending notification."""
    for trace in traces:
        mem = replay(trace, bridge_options={"watch_style": "oneshot"})
        zk = replay(trace, bridge_options={"store": zk_factory, "watch_style": "oneshot"})
        assert outcome(zk) == outcome(mem), trace.name
        if zk.verdict == "diverged":
            assert set(zk.diff) == {"pending"} and zk.diff["pending"]["impl"] == [], (trace.name, zk.diff)


def cli(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_line(err):
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("txncheck: error: ") and "Traceback" not in err, err
    return lines[0]


def test_cli_replays_on_a_given_server(traces, zk_server, capsys):
    trace = traces[-1]
    rc_mem, out_mem, _ = cli(["replay", trace], capsys)
    rc, out, err = cli(["replay", trace, "--store", "zookeeper", "--zk", zk_server.hosts], capsys)
    assert rc == rc_mem == 1 and err == ""
    verdict = [x for x in out_mem.splitlines() if x.startswith("reproduced at step")]
    assert verdict and verdict[0] in out.splitlines()
    assert f"(store: ZooKeeper at {zk_server.hosts}, " in out


def test_cli_json_on_zookeeper(traces, zk_server, capsys):
    rc, out, _ = cli(["replay", traces[0], "--json", "--store", "zookeeper", "--zk", zk_server.hosts], capsys)
    res = json.loads(out)
    assert rc == 1 and res["verdict"] == "reproduced"


def test_cli_one_shot_watches_name_the_missed_notification(zk_server, capsys):
    """`unknown-is-aborted`: commit, finalize, GC, then the participant hears
    the decision. Its one-shot watch fired at the decision and was not
    re-registered, so the GC's delete was never queued; the spec (point
    watches) still holds it as pending. Replay says exactly that."""
    trace = ROOT / "counterexamples" / "pip473" / "unknown-is-aborted.itf.json"
    if not trace.exists():
        pytest.skip("the corpus has no unknown-is-aborted trace")
    rc, out, _ = cli(["replay", trace, "--store", "zookeeper", "--zk", zk_server.hosts, "--watches", "oneshot"],
                     capsys)
    assert rc == 4 and "diverged at step 7 (deliverEvent(seg='s1'))" in out
    assert any(line.split() == ["pending", '["s1"]', "|", "[]"] for line in out.splitlines()), out


def test_cli_private_server_is_started_and_stopped(traces, capsys, monkeypatch):
    started = []
    real = ZooKeeperServer.start

    def spy(self, *a, **kw):
        started.append(self)
        return real(self, *a, **kw)

    monkeypatch.setattr(ZooKeeperServer, "start", spy)
    rc, out, _ = cli(["replay", traces[0], "--store", "zookeeper"], capsys)
    assert rc == 1 and "(store: private ZooKeeper at 127.0.0.1:" in out
    assert len(started) == 1 and started[0].proc is None and not started[0].data_dir.exists()


def test_cli_unreachable_server_exit_3_one_line(traces, capsys):
    port = free_port()
    rc, out, err = cli(["replay", traces[0], "--store", "zookeeper", "--zk", f"127.0.0.1:{port}",
                        "--zk-timeout", "1"], capsys)
    assert rc == 3 and out == ""
    assert f"127.0.0.1:{port} is not reachable" in one_line(err)


@pytest.mark.parametrize("argv, needle", [
    (["--zk", "nowhere"], "expected HOST:PORT"),
    (["--zk", "127.0.0.1:99999"], "expected HOST:PORT"),
    (["--zk-timeout", "0"], "--zk-timeout"),
])
def test_cli_bad_zookeeper_options_exit_2(traces, capsys, argv, needle):
    rc, _, err = cli(["replay", traces[0], "--store", "zookeeper", *argv], capsys)
    assert rc == 2 and needle in one_line(err)


def test_cli_zk_without_the_zookeeper_store_exit_2(traces, capsys):
    rc, _, err = cli(["replay", traces[0], "--zk", "127.0.0.1:2181"], capsys)
    assert rc == 2 and "--zk needs --store zookeeper" in one_line(err)


class Crashing(ZooKeeperMetadataStore):
    """Kills (and optionally restarts) the server right after commit number
    `at`, counting from the first store made: a fault between two steps.
    Records the store's content just before the kill and after the restart."""

    server: ZooKeeperServer
    at = 0
    restart = False
    commits = 0
    content: dict = {}

    def _notify(self, path, kind, version):
        super()._notify(path, kind, version)
        cls = type(self)
        cls.commits += 1
        if cls.commits == cls.at:
            cls.content["before"] = self.dump()
            cls.content["root"] = self.root
            cls.server.kill()
            if cls.restart:
                cls.server.start()
                cls.content["after"] = self.dump()

    def dump(self):
        return [(r.path, r.version, r.value) for r in map(self.get, self.children("/"))]


def crashing(server, at, restart):
    return type("C", (Crashing,), {"server": server, "at": at, "restart": restart, "commits": 0, "content": {}})


def commits_of(trace, hosts):
    counter = crashing(None, -1, False)
    stores = []

    def make():
        stores.append(counter(hosts))
        return stores[-1]

    res = replay(trace, bridge_options={"store": make})
    for s in stores:
        s.close()
    return res, counter.commits


@pytest.fixture
def own_server(tmp_path):
    """A server of the test's own, on its own data dir: these tests kill it."""
    server = ZooKeeperServer(tmp_path / "zk").start()
    pids = [server.pid]
    yield server, pids
    pids.append(server.pid)
    server.close()
    for pid in pids:
        assert pid is None or not pid_alive(pid)


@pytest.mark.parametrize("watches", ["oneshot", "persistent"])
def test_kill_mid_replay_then_restart_on_the_same_data_dir(traces, own_server, watches):
    """The server is killed (SIGKILL) after the next-to-last commit of the
    replay and restarted on the same data directory and port. The client's
    session survives the restart, so the replay either completes with the
    in-memory verdict, or -- if a request was lost in the crash -- reports the
    interruption with its step; it never makes a verdict up."""
    server, pids = own_server
    trace = traces[-1]
    mem = replay(trace)
    clean, n = commits_of(trace, server.hosts)
    assert outcome(clean) == outcome(mem) and n >= 2
    cls = crashing(server, n - 1, restart=True)
    stores = []

    def make():
        # a session timeout under the request bound: kazoo waits that long on a server still starting
        stores.append(cls(server.hosts, timeout=8, session_timeout=4, watches=watches))
        return stores[-1]

    try:
        res = replay(trace, bridge_options={"store": make})
        assert outcome(res) == outcome(mem)
        print(f"completed after the restart: {res.verdict} at step {res.step}")
    except ConnectionError as exc:
        assert getattr(exc, "__notes__", None) and "step" in exc.__notes__[0], exc
        print(f"interrupted: {exc} ({exc.__notes__[0]})")
        if "after" not in cls.content:  # the interruption came before the store could read again
            fresh = ZooKeeperMetadataStore(server.hosts, root=cls.content["root"], timeout=20)
            cls.content["after"] = Crashing.dump(fresh)
            fresh.close(drop=False)
    finally:
        for st in stores:
            st.close()
    pids.append(server.pid)
    assert server.pid != pids[0]  # it really was a new process
    # the data dir survived the crash: what was committed before it is there after it
    assert cls.content["before"] and cls.content["after"] == cls.content["before"]
    assert cls.commits >= n - 1


def test_kill_mid_replay_without_restart_exit_3_naming_the_step(traces, own_server, capsys, monkeypatch):
    server, pids = own_server
    trace = traces[-1]
    _, n = commits_of(trace, server.hosts)
    monkeypatch.setattr(zk_factory, "ZooKeeperMetadataStore", crashing(server, n - 1, restart=False))
    rc, out, err = cli(["replay", trace, "--store", "zookeeper", "--zk", server.hosts, "--zk-timeout", "1"], capsys)
    line = one_line(err)
    assert rc == 3 and out == ""
    assert "replay incomplete at step " in line and server.hosts in line, line
    assert not pid_alive(pids[0])
