"""The `txncheck` command line: a thin layer over `checker.api`.

Every subcommand lives in `checker/commands/<name>.py` with `register(sub)`
and `run(args) -> int`. Bad input of any kind ends here as one line on stderr
and exit code 2; nothing below prints a traceback for it.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__

COMMANDS = ["check", "list", "show", "replay", "graph", "sweep", "new"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


class UsageError(Exception):
    """Bad command-line use; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="txncheck", description="Model checker for transaction protocols.")
    p.add_argument("--version", action="version", version=f"txncheck {__version__}")
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
    errors = bad_input_errors()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return int(args.run(args))
    except errors as exc:
        print(f"txncheck: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("txncheck: interrupted", file=sys.stderr)
        return EXIT_INCOMPLETE


if __name__ == "__main__":
    sys.exit(main())
