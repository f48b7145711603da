"""Bugs in a spec's own code, told to its author in one line.

A spec that a model file loads from outside txncheck (a file, a module or an
entry point) is guarded: an exception in `setup`, `init_states`, `next` or
`observe`, a state value that is not immutable and canonical (a list, a dict,
a set), and an observation that disagrees with the schema each become a
`SpecCodeError` whose message names the spec file and line (or the symbol),
the action and the state. The original exception is chained (`__cause__`)
for `--debug`. The built-in specs are not guarded.

The guard stays off the hot path, so a spec loaded by path runs as fast as
a built-in one: it never looks at a generated successor. A successor that
holds a list, a dict or a set cannot be hashed, so the engine fails on it;
the engine's caller then asks the guard (`errors.explained`), which runs
`next` again on the state last expanded with every check on, and names the
action and the value. A value that hashes but is not canonical (a float, an object) is
found when its state is expanded, once per distinct state, by a walk that
remembers the parts it has already found canonical (`CanonicalParts`).
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
    from .failures import as_interrupt, spec_exit

    exc = as_interrupt(exc)   # Ctrl-C inside a ctypes call the spec made is still Ctrl-C
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


_EXACT_ATOMS = frozenset(map(type, (0, "", True, None)))  # the atoms' own types: a fast first test


class CanonicalParts:
    """`admit(s)`: whether `s` holds only nested tuples, frozensets and atoms.
    A state shares most of its parts with the states around it, so the
    tuples and frozensets found canonical are remembered by value (a
    frozenset's hash is cached; the engine has computed it already), and of
    a new frozenset only the members not remembered are walked. The memory
    is dropped when it holds `limit` parts. Remembering by value admits a
    part equal to one admitted before, so a float equal to an int (1.0)
    inside it is not seen."""

    def __init__(self, limit: int = 1 << 16) -> None:
        self.known: set = set()
        self.limit = limit

    def admit(self, s: Any) -> bool:
        """Raises TypeError when a part is not hashable."""
        if not isinstance(s, (tuple, frozenset)):
            return isinstance(s, ATOMS)
        known = self.known
        for x in s:
            if type(x) in _EXACT_ATOMS or x in known:
                continue
            if not self._walk(x):
                return False
        return True

    def _walk(self, x: Any) -> bool:
        if not isinstance(x, (tuple, frozenset)):
            return isinstance(x, ATOMS)
        known = self.known
        for y in x.difference(known) if type(x) is frozenset else x:
            if type(y) in _EXACT_ATOMS or y in known:
                continue
            if not self._walk(y):
                return False
        if len(known) >= self.limit:
            known.clear()
        known.add(x)
        return True


def guard(spec, found: Resolved):
    """`spec` with its code's failures turned into SpecCodeErrors, and
    `spec.explain_failure(exc)` for the engines' callers (errors.explained):
    the SpecCodeError behind an engine's failure on a successor, or `exc`."""
    cls = type(spec)
    src = found.source or cls.__name__
    orig_init, orig_next, orig_observe = spec.init_states, spec.next, spec.observe
    checked = itertools.count()
    parts = CanonicalParts()
    expanding: list = [None]  # the state whose successors the engine is taking

    def not_immutable(action: Any, bad: str, s: Any) -> SpecCodeError:
        return SpecCodeError(f"{src}: spec {cls.__name__}: action {_fmt_action(action)} made a state "
                             f"that is not immutable: {bad} (use tuples and frozensets) from state {_short(s)}")

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

    def checked_next(s):
        """`next(s)` with every check: each item a pair, each successor
        canonical. Run only to explain a failure."""
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
                raise not_immutable(action, bad, s)
            last = action
            yield item

    def next_(s):
        try:
            ok = parts.admit(s)
        except TypeError:
            ok = False
        if not ok:  # hashable but not canonical: found as the state is expanded, so its maker is unknown
            raise SpecCodeError(f"{src}: spec {cls.__name__}: next made a state that is not immutable: "
                                f"{bad_value(s)} (use tuples and frozensets): {_short(s)}")
        expanding[0] = s
        try:
            return list(orig_next(s))
        except BaseException as exc:
            if not own_failure(exc):
                raise
            for _ in checked_next(s):  # raises the SpecCodeError naming the action before the failure
                pass
            raise spec_code_error(cls, exc, "computing a successor in next", s) from exc  # next is not a function of s

    def explain_failure(exc: BaseException) -> BaseException:
        s = expanding[0]
        if isinstance(exc, SpecCodeError) or s is None:
            return exc
        try:
            for _ in checked_next(s):
                pass
        except SpecCodeError as found:
            found.__cause__ = exc
            return found
        return exc

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
    spec.explain_failure = explain_failure
    return spec
