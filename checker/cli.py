"""The `txncheck` command line: a thin layer over `checker.api`.

Every subcommand lives in `checker/commands/<name>.py` with `register(sub)`
and `run(args) -> int`. Every failure ends here as one line on stderr with
the exit code of the contract (checker/failures.py): bad input and spec bugs
2, faults of the environment and internal errors 3, never 1. `--debug`,
anywhere on the command line, adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from .. import __version__
from .failures import (  # noqa: F401  (UsageError and bad_input_errors are imported from here too)
    EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, UsageError, bad_input_errors, on_sigterm, report,
)

COMMANDS = ["check", "list", "show", "replay", "graph", "sweep"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="txncheck", description="Model checker for transaction protocols.")
    p.add_argument("--version", action="version", version=f"txncheck {__version__}")
    p.add_argument("--debug", action="store_true", help="on a failure, show the traceback too (anywhere on the line)")
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


def main(argv: list[str] | None = None) -> int:
    """Every failure ends here as one line on stderr and the exit code of the
    contract (checker/failures.py); `--debug` adds the traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)
    if debug:
        argv.remove("--debug")
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return int(args.run(args))
    except BrokenPipeError:
        return EXIT_OK
    except (Exception, KeyboardInterrupt) as exc:
        return report(exc, debug)


if __name__ == "__main__":
    sys.exit(main())
