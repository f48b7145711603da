"""`txncheck replay TRACE`: drive a counterexample into the reference
implementation (exit 1 reproduced, 0 not reproduced, 4 diverged, 2 bad input)."""

from __future__ import annotations

import json
import sys

from ...counterexamples.replay import EXIT, Result, plain, replay
from .argtypes import seconds


def register(sub) -> None:
    p = sub.add_parser(
        "replay", help="replay an ITF trace against the reference implementation "
                       "(exit 1 reproduced, 0 not reproduced, 4 diverged, 2 bad input)")
    p.add_argument("trace", help="ITF JSON trace file")
    p.add_argument("--variant", help="replay on this variant's behaviour instead of the trace's own")
    p.add_argument("--json", action="store_true", help="print one JSON object: verdict, step, property, diff")
    p.add_argument("--store", choices=("memory", "zookeeper"), default="memory",
                   help="the implementation's metadata store: in memory (default) or a live ZooKeeper server "
                        "(exit 3 when it is missing, unreachable or stops mid-replay)")
    p.add_argument("--zk", metavar="HOST:PORT", help="with --store zookeeper: use this server "
                                                      "(default: a private one started on loopback)")
    p.add_argument("--zk-timeout", type=seconds, default=5.0, metavar="SECONDS",
                   help="with --store zookeeper: the bound on each request (default 5)")
    p.add_argument("--zk-watches", choices=("oneshot", "persistent"), default=None,
                   help="with --store zookeeper: how the store hears of its own commits: one-shot watches "
                        "re-registered after each event (default) or one persistent recursive watch "
                        "(ZooKeeper 3.6+ AddWatch). Independent of --watches")
    p.add_argument("--watches", choices=("point", "oneshot"), default="point",
                   help="how participants hear of header changes: point watches (the spec's model, default) or "
                        "ZooKeeper-style one-shot watches, re-registered only when the event is processed")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.store == "zookeeper":
        return _run_on_zookeeper(args)
    for given, flag in ((args.zk, "--zk"), (args.zk_watches, "--zk-watches")):
        if given is not None:
            from ..errors import UsageError

            raise UsageError(f"{flag} needs --store zookeeper")
    return _print(args, replay(args.trace, variant=args.variant, bridge_options={"watch_style": args.watches}))


def _print(args, res: Result) -> int:
    if args.json:
        print(json.dumps(res.to_json(), sort_keys=True))
    else:
        print(render(res), end="")
    return EXIT[res.verdict]


def _run_on_zookeeper(args) -> int:
    from ...reference.store.zk_factory import check_hosts, zookeeper_stores
    from ...reference.store.zookeeper import ZooKeeperUnsupported
    from ...reference.zkserver import ZooKeeperMissing, ZooKeeperStartError
    from ..cli import EXIT_INCOMPLETE
    from ..errors import UsageError

    try:
        hosts = check_hosts(args.zk) if args.zk is not None else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not 0 < args.zk_timeout <= 600:
        raise UsageError(f"--zk-timeout {args.zk_timeout:g}: expected 0 < seconds <= 600")
    try:
        watches = args.zk_watches or "oneshot"
        with zookeeper_stores(hosts, timeout=args.zk_timeout, watches=watches) as factory:
            res = replay(args.trace, variant=args.variant,
                         bridge_options={"store": factory, "watch_style": args.watches})
            rc = _print(args, res)
            if not args.json:
                # the factory carries both, which the annotation of reference/'s zookeeper_stores does not say
                description, requests = getattr(factory, "description"), getattr(factory, "requests")
                print(f"(store: {description}, {watches} watches, {requests} requests)")
            return rc
    except (ConnectionError, ZooKeeperMissing, ZooKeeperStartError, ZooKeeperUnsupported) as exc:
        where = "; ".join(getattr(exc, "__notes__", ()))
        print(f"txncheck: error: {args.trace}: replay incomplete{f' at {where}' if where else ''}: {exc}",
              file=sys.stderr)
        return EXIT_INCOMPLETE


def render(res: Result) -> str:
    lines = [f"replay {res.trace} on the reference implementation [{res.variant}]"]
    for k, action in enumerate(res.actions, 1):
        lines.append(f"  {k:>3}  {action}")
    if res.verdict == "reproduced" and res.kind == "lasso":
        lines.append(f"reproduced: {res.property} fails on the implementation, which loops back to step {res.step}")
    elif res.verdict == "reproduced":
        lines.append(f"reproduced at step {res.step}: {res.property} fails on the implementation")
    elif res.verdict == "not_reproduced":
        lines.append(f"not reproduced: {res.steps_run} steps replayed, every property holds on the implementation")
    else:
        lines.append(f"diverged at step {res.step}" + (f" ({res.action})" if res.action else "") + f": {res.note}")
        if res.diff:
            width = max(len(k) for k in res.diff)
            lines.append(f"  {'symbol':<{width}}  spec | implementation")
            for key, d in res.diff.items():
                if isinstance(d, dict) and "spec" in d:
                    lines.append(f"  {key:<{width}}  {json.dumps(d['spec'])} | {json.dumps(d['impl'])}")
                else:
                    lines.append(f"  {key:<{width}}  {json.dumps(plain(d))}")
        if res.state_diff:
            lines.append("  state fields that differ (spec | implementation, by the refinement mapping):")
            for key, d in res.state_diff.items():
                lines.append(f"    {key}: {json.dumps(d['spec'], default=str)} | {json.dumps(d['impl'], default=str)}")
        lines.append(f"the spec's whole state at step {res.step}: txncheck show {res.trace}")
    for name, step in res.also_fails.items():
        lines.append(f"also: {name} fails on the implementation from step {step} (not this trace's property)")
    if res.note and res.verdict != "diverged":
        lines.append(f"note: {res.note}")
    lines.append(f"({res.steps_run} steps, {res.seconds:.2f}s)")
    return "\n".join(lines) + "\n"
