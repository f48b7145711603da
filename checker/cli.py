"""The `txncheck` command line: a thin layer over `checker.api`.

Every subcommand lives in `checker/commands/<name>.py` with `register(sub)`
and `run(args) -> int`. Every failure ends here and is mapped to the exit-code
contract by checker/failures.py: one line on stderr, the traceback only with
`--debug`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from .. import __version__
from .errors import UsageError, did_you_mean

COMMANDS = ["check", "list", "show", "replay", "report", "graph", "sweep", "new", "profile", "prove"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    argv: list[str] = []   # the command line being parsed (main sets it), for `suggestion`

    def error(self, message: str):  # one line, exit 2
        raise UsageError(message + suggestion(self, message))


def suggestion(parser: _Parser, message: str) -> str:
    """`; did you mean ...?` for a misspelt command or option: the nearest
    command, or per unknown option the nearest of its command's options."""
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m:
        return did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
    m = re.match(r"unrecognized arguments: (.*)$", message)
    if not m:
        return ""
    known = set(parser._option_string_actions)
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    chosen = next((commands[w] for w in parser.argv if w in commands), None)
    if chosen is not None:
        known |= set(chosen._option_string_actions)
    near = [(w, did_you_mean(w.split("=", 1)[0], known)) for w in m.group(1).split() if w.startswith("-")]
    hints = [f"{h.removeprefix('; did you mean ').removesuffix('?')} for {w!r}" for w, h in near if h]
    if len(hints) == 1 and len(near) == 1:
        return near[0][1]
    return f"; did you mean {', '.join(hints)}?" if hints else ""


def build_parser() -> _Parser:
    p = _Parser(prog="txncheck", description="Model checker for transaction protocols.")
    p.add_argument("--version", action="version", version=f"txncheck {__version__}")
    p.add_argument("--debug", action="store_true", help="on any error, print the traceback too (any position)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"{__package__}.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__package__}.commands.{name}":
                continue  # not part of this installation yet
            raise
        mod.register(sub)
    return p


def bad_input_errors() -> tuple[type[BaseException], ...]:
    from ..spec.api import SpecError
    from .encoding import EncodingError
    from .engines import EngineError
    from .invariants import PropertyError
    from .itf import TraceError
    from .model import ModelError

    return (UsageError, ModelError, SpecError, PropertyError, TraceError, EngineError, EncodingError)


def main(argv: list[str] | None = None) -> int:
    from . import failures, supervisor
    from .streams import guarded

    argv_given = argv is not None
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("TXNCHECK_DEBUG") == "1"
    argv = [a for a in argv if a != "--debug"]
    old_handlers = failures.install_signal_handlers(debug)
    # a reader that goes away (`| head`, a closed stdout) loses the output, never the exit code
    old_streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = guarded(sys.stdout), guarded(sys.stderr)
    try:
        failures.unblock_signals()
        parser = build_parser()
        parser.argv = argv
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # argparse's --help and --version: the only exit that is not a verdict
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        code = int(args.run(args))
        if failures.interrupted:  # a library swallowed the KeyboardInterrupt: never report success
            raise KeyboardInterrupt
        return _lost_output(code)
    except BaseException as exc:  # noqa: BLE001 - the one place that maps every failure to an exit code
        # never an exception's own code: a spec's sys.exit(0) is a spec error, not a success
        return failures.report(exc, bad_input_errors(), debug)
    finally:
        if argv_given:   # an in-process caller (tests) gets its handlers and streams back
            failures.restore_signal_handlers(old_handlers)
            sys.stdout, sys.stderr = old_streams
        else:            # the command: a signal after its work (threads and files closing) is still exit 3
            if failures.interrupted and not debug:
                failures.quiet_teardown()
            failures.exit_on_late_signal(supervisor.report)


def _lost_output(code: int) -> int:
    """A report that stdout's disk refused (full, an I/O error) is no run's
    success: one line on stderr, exit 3 (a violation keeps its 1)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass
    why = getattr(sys.stdout, "failed", None)
    if why is None:
        return code
    from .failures import one_line

    print(f"txncheck: error: standard output: {one_line(why)}: the report was not written; the run is "
          "incomplete", file=sys.stderr, flush=True)
    return code if code == 1 else EXIT_INCOMPLETE


def _command() -> int:
    try:
        return main()
    except KeyboardInterrupt:  # a signal that lands as main returns, past its own handling
        return EXIT_INCOMPLETE


def console() -> None:
    """The `txncheck` command: `main`, in a child process that the parent
    supervises (checker/supervisor.py), so that no code the run executes can
    end it with an exit code the run did not choose."""
    from . import supervisor

    sys.exit(supervisor.run(_command))


if __name__ == "__main__":
    console()
