"""Bugs in a spec's own code, told to its author in one line.

A spec that a model file loads from outside txncheck (a file, a module or an
entry point) is guarded: an exception in `setup`, `init_states`, `next` or
`observe`, a state value that is not immutable and canonical (a list, a dict,
a set), and an observation that disagrees with the schema each become a
`SpecCodeError` whose message names the spec file and line (or the symbol),
the action and the state. The original exception is chained (`__cause__`)
for `--debug`. The built-in specs are not guarded: `next` is the hot path.
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

from ..spec.api import SpecError
from ..spec.registry import Resolved, innermost_user_frame

# Observations checked against the schema: the first ones show a mismatch.
OBSERVATIONS_CHECKED = 1000
ATOMS = (int, str, bool, type(None))


class SpecCodeError(SpecError):
    """A bug in the spec's code; the message is one line."""


def _fmt_action(action: Any) -> str:
    try:
        name, params = action
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in params)})"
    except (TypeError, ValueError):
        return repr(action)


def _short(x: Any, n: int = 160) -> str:
    r = repr(x)
    return r if len(r) <= n else r[: n - 3] + "..."


def spec_code_error(cls: type, exc: BaseException, doing: str, state: Any = None) -> SpecCodeError:
    from .failures import foreign_interrupt

    src = getattr(sys.modules.get(cls.__module__), "__file__", None)
    where = innermost_user_frame(exc, (src,) if src else ()) or innermost_user_frame(exc)
    loc = f"{where[0]}:{where[1]}: in {where[2]}: " if where else f"{src or cls.__name__}: "
    code = f" [{where[3]}]" if where and where[3] else ""
    at = f" from state {_short(state)}" if state is not None else ""
    if isinstance(exc, SystemExit):  # spec code must not end the process
        what = f"called sys.exit({exc.code!r})"
    elif foreign_interrupt(exc):
        what = "raised KeyboardInterrupt itself (no signal was received)"
    else:
        what = f"raised {type(exc).__name__}: {exc}"
    return SpecCodeError(f"{loc}spec {cls.__name__} {what} while {doing}{at}{code}")


def own_failure(exc: BaseException) -> bool:
    """An exception of the spec's own making: an error, `sys.exit()`, or a
    KeyboardInterrupt that no signal caused (checker/failures.py); not a
    Ctrl-C nor a generator being closed."""
    from .failures import spec_exit

    return isinstance(exc, Exception) or spec_exit(exc)


def bad_value(v: Any, path: str = "") -> str | None:
    """Where `v` holds something other than nested tuples, frozensets and atoms."""
    if isinstance(v, ATOMS):
        return None
    if isinstance(v, tuple):
        fields = getattr(v, "_fields", None)
        for i, x in enumerate(v):
            bad = bad_value(x, f"{path}.{fields[i]}" if fields else f"{path}[{i}]")
            if bad:
                return bad
        return None
    if isinstance(v, frozenset):
        for x in v:
            bad = bad_value(x, f"{path}{{...}}")
            if bad:
                return bad
        return None
    return f"{path.lstrip('.') or 'the state'} holds a {type(v).__name__} ({_short(v, 60)})"


def guard(spec, found: Resolved):
    """`spec` with its code's failures turned into SpecCodeErrors."""
    cls = type(spec)
    src = found.source or cls.__name__
    orig_init, orig_next, orig_observe = spec.init_states, spec.next, spec.observe
    checked = itertools.count()

    def init_states():
        try:
            states = list(orig_init())
        except BaseException as exc:
            if not own_failure(exc):
                raise
            raise spec_code_error(cls, exc, "computing the initial states") from exc
        for s in states:
            bad = bad_value(s)
            if bad:
                raise SpecCodeError(f"{src}: spec {cls.__name__}: an initial state is not immutable: {bad} "
                                    "(use tuples and frozensets)")
        return states

    def next_(s):
        last = None
        it = orig_next(s)
        while True:
            try:
                item = next(it)
            except StopIteration:
                return
            except BaseException as exc:
                if not own_failure(exc):
                    raise
                doing = f"computing the successor after {_fmt_action(last)}" if last else "computing the first successor"
                raise spec_code_error(cls, exc, f"{doing} in next", s) from exc
            try:
                action, t = item
            except (TypeError, ValueError):
                raise SpecCodeError(f"{src}: spec {cls.__name__}: next yielded {_short(item, 80)}, "
                                    "not (action, state)") from None
            bad = bad_value(t)
            if bad:
                raise SpecCodeError(f"{src}: spec {cls.__name__}: action {_fmt_action(action)} made a state "
                                    f"that is not immutable: {bad} (use tuples and frozensets) from state {_short(s)}")
            last = action
            yield item

    def observe(s):
        try:
            obs = orig_observe(s)
        except BaseException as exc:
            if not own_failure(exc):
                raise
            raise spec_code_error(cls, exc, "observing", s) from exc
        if next(checked) < OBSERVATIONS_CHECKED:
            bad = spec.schema.mismatch(obs)
            if bad:
                raise SpecCodeError(f"{src}: spec {cls.__name__}: observe disagrees with the schema: {bad} "
                                    f"(state {_short(s)})")
        return obs

    spec.init_states, spec.next, spec.observe = init_states, next_, observe
    return spec
