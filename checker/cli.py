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
import sys

from .. import __version__

COMMANDS = ["check", "list", "show", "replay", "report", "graph", "sweep", "new"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


class UsageError(Exception):
    """Bad command-line use; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
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
    from . import failures

    argv_given = argv is not None
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("TXNCHECK_DEBUG") == "1"
    argv = [a for a in argv if a != "--debug"]
    old_handlers = failures.install_signal_handlers()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        code = int(args.run(args))
        if failures.interrupted:  # a library swallowed the KeyboardInterrupt: never report success
            raise KeyboardInterrupt
        return code
    except BrokenPipeError:
        return EXIT_OK
    except BaseException as exc:  # noqa: BLE001 - the one place that maps every failure to an exit code
        if isinstance(exc, SystemExit) and isinstance(exc.code, int) and exc.code in (0, 2):
            return exc.code  # argparse's --help / --version
        return failures.report(exc, bad_input_errors(), debug)
    finally:
        if argv_given:   # an in-process caller (tests) gets its handlers back
            failures.restore_signal_handlers(old_handlers)
        else:            # the command: a signal after its work (threads and files closing) is still exit 3
            if failures.interrupted and not debug:
                failures.quiet_teardown()
            failures.exit_on_late_signal()


def console() -> None:
    """The `txncheck` command: `main`, where a signal that lands as main
    returns (past its own handling) still ends the process with exit 3."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = EXIT_INCOMPLETE
    sys.exit(code)


if __name__ == "__main__":
    console()
