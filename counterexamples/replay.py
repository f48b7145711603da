"""Replay: drive a counterexample trace into the reference implementation.

The trace (ITF, untrusted) names a spec, a variant, bounds and the property
that failed. Replay walks the spec and the implementation side by side:

1. the spec is re-executed from its initial state, taking at each step the
   successor whose action matches the trace (on the trace's own variant the
   state's fingerprint must match too, so a forged or stale trace is refused);
2. a *bridge* (one per spec, e.g. `replay_pip473`) maps the same action onto
   implementation calls and scheduler steps, then computes the
   implementation's observation with its abstraction function;
3. the spec's compiled invariants (`compile_checker`) run on the
   implementation's observation, and the observation is compared with the
   spec's own `observe` of its state.

Verdicts: `reproduced` at step k (a property fails on the implementation),
`not_reproduced`, or `diverged` at step k (the observations differ, or the
implementation cannot take the step). Replaying on another variant (`fixed`)
may meet an action the spec no longer enables: the verdict is then
`not_reproduced` with a note naming the step and the action.

A lasso trace (`loop`) is driven through its stem and one turn of its cycle;
it is reproduced when the implementation comes back to the observation it
had at the loop state.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checker.encoding import fingerprint
from ..checker.invariants import compile_checker
from ..checker.itf import Trace, TraceError, read_trace
from ..spec.api import Spec, SpecError
from ..spec.registry import load_spec_class
from ..spec.schema import Schema

EXIT = {"not_reproduced": 0, "reproduced": 1, "diverged": 4}

# spec name -> "module:Class" of its bridge under txncheck.counterexamples
BRIDGES = {"pip473": "replay_pip473:Pip473Bridge"}


class StepRefused(Exception):
    """The implementation cannot take a step the spec took (a divergence)."""


@dataclass
class Result:
    verdict: str
    step: int | None = None
    property: str | None = None
    diff: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    variant: str = ""
    trace: str = ""
    steps_run: int = 0
    seconds: float = 0.0
    spec_observation: dict | None = None
    impl_observation: dict | None = None
    action: str = ""
    actions: list[str] = field(default_factory=list)  # the steps replayed, in order
    kind: str = "invariant"  # or "lasso": a temporal property, reproduced by closing its cycle
    state_diff: dict[str, Any] = field(default_factory=dict)  # spec state fields vs the refinement mapping
    also_fails: dict[str, int] = field(default_factory=dict)  # other invariants that failed, at which step

    def exit_code(self) -> int:
        return EXIT[self.verdict]

    def to_json(self) -> dict[str, Any]:
        out = {"verdict": self.verdict, "step": self.step, "property": self.property,
               "diff": self.diff, "variant": self.variant, "note": self.note}
        if self.state_diff:
            out["state_diff"] = self.state_diff
        if self.also_fails:
            out["also_fails"] = self.also_fails
        return out


def load_bridge(spec_name: str, trace_path: Any) -> type:
    target = BRIDGES.get(spec_name)
    if target is None:
        raise TraceError(f"{trace_path}: no reference implementation for spec {spec_name!r} "
                         f"(replay supports: {', '.join(sorted(BRIDGES))})")
    module, cls = target.split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)


def format_action(name: str, params: Mapping[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


def _spec_for(trace: Trace, variant: str | None) -> Spec:
    meta = trace.meta
    try:
        cls = load_spec_class(meta["spec"])
        return cls(variant or meta["variant"], **dict(meta.get("bounds", {})))
    except SpecError as exc:
        raise TraceError(f"{trace.path}: {exc}") from None


def replay(path: str | Path, *, variant: str | None = None, bridge_options: Mapping[str, Any] | None = None,
           trace: Trace | None = None) -> Result:
    """Replay one trace file; raises TraceError (one line) on bad input."""
    t0 = time.perf_counter()
    trace = trace if trace is not None else read_trace(path)
    where = trace.path or path
    bridge_cls = load_bridge(trace.meta["spec"], where)
    spec = _spec_for(trace, variant)
    own_variant = spec.variant == trace.meta["variant"]
    bridge = bridge_cls(spec, **dict(bridge_options or {}))
    # validate every step's action and parameters before running anything
    for k, step in enumerate(trace.steps):
        if k == 0:
            continue
        problem = bridge.validate(step["action"], step["params"])
        if problem:
            raise TraceError(f"{where}: state {k}: {problem}")
    # The trace's own property decides the verdict (the model that found it may
    # have checked only that one); the other invariants are reported on the side.
    prop = trace.meta.get("property")
    primary = [prop] if prop in spec.invariants else list(spec.invariants)
    check = compile_checker(spec.schema, {n: spec.invariants[n] for n in primary})
    others = {n: f for n, f in spec.invariants.items() if n not in primary}
    check_others = compile_checker(spec.schema, others) if others else (lambda o: None)
    also: dict[str, int] = {}
    res = Result("not_reproduced", variant=spec.variant, trace=str(where))

    actions: list[str] = []

    def finish(r: Result) -> Result:
        r.seconds = time.perf_counter() - t0
        r.actions = actions
        r.also_fails = dict(also)
        return r

    # the initial state
    lasso = trace.loop is not None and prop not in spec.invariants
    s = _initial(spec, trace, own_variant, where)
    bridge.start()
    observations = []
    for k in range(len(trace.steps)):
        step = trace.steps[k]
        if k > 0:
            name, params = step["action"], step["params"]
            nxt = _successor(spec, s, name, params, (trace.steps[k]["fingerprint"] or "") if own_variant else None,
                             trace.states[k])
            if nxt is None:
                if own_variant:
                    raise TraceError(f"{where}: state {k}: {format_action(name, params)} is not a step of "
                                     f"{spec.describe()} from state {k - 1} (the trace does not follow the spec)")
                res.note = (f"step {k}: {format_action(name, params)} is not enabled under variant "
                            f"{spec.variant}; the {spec.variant} behaviour cannot follow the trace past step {k - 1}")
                res.steps_run = k - 1
                return finish(res)
            before, s = s, nxt
            res.action = format_action(name, params)
            actions.append(res.action)
            try:
                bridge.apply(name, params, before, s)
            except StepRefused as exc:
                return finish(Result("diverged", k, None, {"step": {"spec": res.action, "impl": f"refused: {exc}"}},
                                     note=f"the implementation cannot take the spec's step: {exc}",
                                     variant=spec.variant, trace=str(where), steps_run=k, action=res.action))
            except ConnectionError as exc:  # the store itself went away (ZooKeeper): the caller reports it
                exc.add_note(f"step {k} {res.action}")
                raise
        spec_obs = spec.observe(s)
        try:
            impl_obs = bridge.observe()
        except ConnectionError as exc:  # as above, while reading the implementation's state
            exc.add_note(f"step {k} {res.action}" if k else "state 0")
            raise
        observations.append(impl_obs)
        res.steps_run = k
        diff = observation_diff(spec.schema, spec_obs, impl_obs)
        if diff:
            state = bridge.state_diff(s) if hasattr(bridge, "state_diff") else {}
            return finish(Result("diverged", k, None, diff, note="the implementation's observation differs "
                                 "from the spec's state", variant=spec.variant, trace=str(where), steps_run=k,
                                 spec_observation=spec_obs, impl_observation=impl_obs, action=res.action,
                                 state_diff={f: {"spec": plain(v["spec"]), "impl": plain(v["impl"])}
                                             for f, v in state.items()}))
        if not lasso:
            other = check_others(impl_obs)
            if other is not None and other not in also:
                also[other] = k
        bad = None if lasso else check(impl_obs)
        if bad is not None:
            return finish(Result("reproduced", k, bad, {},
                                 variant=spec.variant, trace=str(where), steps_run=k, impl_observation=impl_obs,
                                 action=res.action))
    if trace.loop is not None:
        return finish(_close_lasso(spec, trace, s, bridge, observations, res, where, actions))
    return finish(res)


def _initial(spec: Spec, trace: Trace, own_variant: bool, where) -> Any:
    inits = list(spec.init_states())
    if own_variant:
        for s in inits:
            # the values decide: a recorded fingerprint is recomputable, so an edited trace keeps it
            if dict(spec.state_vars(s)) == dict(trace.states[0]):
                return s
        raise TraceError(f"{where}: state 0 is not an initial state of {spec.describe()}")
    if len(inits) != 1:
        raise TraceError(f"{where}: {spec.describe()} has {len(inits)} initial states; cannot choose one")
    return inits[0]


def _successor(spec: Spec, s: Any, name: str, params: Mapping[str, Any], fp: str | None,
               values: Mapping[str, Any] | None = None) -> Any:
    """The successor of `s` by this action. With `fp` (the trace's own
    variant) it must be the trace's state: its fingerprint matches, or, when
    the recorded fingerprint was computed over an equal but differently typed
    value (an engine storing 1 for True), its variables equal the trace's."""
    want = tuple(sorted(params.items()))
    candidates = [t for (aname, aparams), t in spec.next(s)
                  if aname == name and tuple(sorted(aparams)) == want]
    if fp is None:
        return candidates[0] if candidates else None
    if values is None:
        return next((t for t in candidates if f"{fingerprint(t):016x}" == fp), None)
    # The trace's values must match, not only its fingerprint: a trace edited
    # with its fingerprints kept is not the state the spec reaches.
    for t in candidates:
        if dict(spec.state_vars(t)) == dict(values):
            return t
    return None


def _lasso_goal(spec, trace, where):
    """The compiled goal of the lasso's temporal property (`F leads_to G`:
    G), read from the model file the trace names; None when the file is not
    at hand. A cycle is a counterexample only where G never holds on it."""
    from ..checker.invariants import compile_predicate
    from ..checker.liveness.check import resolve
    from ..checker.model import ModelError, load_model

    name = trace.meta.get("model")
    if not isinstance(name, str) or not name:
        return None
    candidates = [Path(name)] + [d / name for d in Path(str(where)).resolve().parents]
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        return None
    try:
        m = load_model(path)
        props = resolve(m, spec)
    except (ModelError, OSError, ValueError):
        return None
    prop = props.get(trace.meta.get("property"))
    return None if prop is None else compile_predicate(spec.schema, prop[1])


def _close_lasso(spec, trace, s, bridge, observations, res: Result, where, actions: list[str]) -> Result:
    """After the stem and the cycle's states, take the closing step (the
    file's `#meta.loop_action`, or "stutter" when the last state is the loop
    state) and check the implementation is back where it was at the loop."""
    loop = trace.loop
    closing = trace.meta.get("loop_action", "stutter")
    target_fp = trace.steps[loop]["fingerprint"]
    if closing != "stutter":
        if not (isinstance(closing, dict) and isinstance(closing.get("action"), str)
                and isinstance(closing.get("params", {}), dict)):
            raise TraceError(f"{where}: '#meta.loop_action' must be \"stutter\" or {{action, params}}")
        name, params = closing["action"], closing.get("params", {})
        problem = bridge.validate(name, params)
        if problem:
            raise TraceError(f"{where}: loop_action: {problem}")
        nxt = _successor(spec, s, name, params, target_fp if spec.variant == trace.meta["variant"] else None,
                         trace.states[loop])
        if nxt is None:
            return Result("not_reproduced", None, None, {}, variant=spec.variant, trace=str(where),
                          steps_run=len(trace.steps) - 1,
                          note=f"the closing step {format_action(name, params)} does not lead back to state "
                               f"{loop} under variant {spec.variant}")
        actions.append(f"{format_action(name, params)}  (closes the cycle)")
        try:
            bridge.apply(name, params, s, nxt)
        except StepRefused as exc:
            return Result("diverged", len(trace.steps), None,
                          {"step": {"spec": format_action(name, params), "impl": f"refused: {exc}"}},
                          note=f"the implementation cannot take the closing step: {exc}", variant=spec.variant,
                          trace=str(where), steps_run=len(trace.steps))
    elif target_fp is not None and trace.steps[-1]["fingerprint"] != target_fp:
        raise TraceError(f"{where}: 'loop' = {loop} with a stutter, but the last state is not state {loop}")
    impl_obs = bridge.observe()
    diff = observation_diff(spec.schema, observations[loop], impl_obs)
    if diff:
        return Result("diverged", len(trace.steps), None, diff, note="after one turn of the cycle the "
                      f"implementation is not back at its observation of state {loop}", variant=spec.variant,
                      trace=str(where), steps_run=len(trace.steps))
    prop = trace.meta.get("property")
    goal = _lasso_goal(spec, trace, where)
    if goal is not None:
        for k, obs in enumerate(observations[loop:] + [impl_obs], start=loop):
            if goal(obs):
                return Result("not_reproduced", None, None, {}, variant=spec.variant, trace=str(where),
                              steps_run=len(trace.steps),
                              note=f"the implementation follows the cycle, but {prop}'s goal holds on it "
                                   f"(state {k}), so the cycle does not violate {prop} under {spec.variant}")
    return Result("reproduced", loop, prop, {}, note=f"the implementation ran the stem and one turn of the "
                  f"cycle back to state {loop}; it can repeat the cycle forever", variant=spec.variant,
                  trace=str(where), steps_run=len(trace.steps), kind="lasso")


# -- comparing observations ------------------------------------------------------------


def plain(v: Any) -> Any:
    """An observation value as JSON: sets sorted, tuple keys joined."""
    if isinstance(v, (set, frozenset)):
        return sorted((plain(x) for x in v), key=repr)
    if isinstance(v, Mapping):
        return {(",".join(map(str, k)) if isinstance(k, tuple) else str(k)): plain(x)
                for k, x in sorted(v.items(), key=lambda kv: repr(kv[0]))}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def observation_diff(schema: Schema, spec_obs: Mapping[str, Any], impl_obs: Mapping[str, Any]) -> dict[str, Any]:
    """{symbol: {"spec": ..., "impl": ...}} for every symbol that differs. A
    function's key left out means its default (spec/schema.py): one side may
    write it where the other leaves it out."""
    out = {}
    for key in sorted(set(spec_obs) | set(impl_obs)):
        a, b = _explicit(schema, key, spec_obs.get(key)), _explicit(schema, key, impl_obs.get(key))
        if a != b and plain(a) != plain(b):     # equal values have equal JSON; plain() only when they differ
            out[key] = {"spec": plain(a), "impl": plain(b)}
    return out


def _explicit(schema: Schema, name: str, v):
    """A function symbol's dict without the keys that hold its default."""
    sym = schema.symbols.get(name)
    if sym is None or not sym.domain or sym.default is None or not isinstance(v, dict):
        return v
    return {k: x for k, x in v.items() if x != sym.default}
