"""The `deid` command: one subcommand per module in deid_core/app/commands/ (tag, eval, synth, train, summary, bundle)."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from deid_core import __version__, compiled

# subcommand -> (module, one-line help). Each module defines add_arguments(parser) and run(args) -> int.
SUBCOMMANDS = {
    "tag": ("deid_core.app.commands.tag", "de-identify a small notes Parquet locally, without Spark"),
    "eval": ("deid_core.app.commands.eval", "score predicted spans against gold spans"),
    "synth": ("deid_core.app.commands.synth", "generate a synthetic annotated corpus"),
    "train": ("deid_core.app.commands.train", "train the CRF taggers and write a model bundle"),
    "summary": ("deid_core.app.commands.summary", "summarize an output folder (counts only, no text)"),
    "bundle": ("deid_core.app.commands.bundle", "verify a model bundle's files, or add digests to an older bundle"),
}


class UsageError(Exception):
    """A mistake in the command line or its inputs: printed as one line, exit code 2."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every available subcommand; with `only`, just that one's module is
    imported (the others are listed without their arguments: `deid tag` need not import training)."""
    parser = argparse.ArgumentParser(prog="deid", description="Clinical de-identification engine.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    parser.add_argument("--version", action="version", version=f"deid-spark {__version__} ({compiled.status()})")
    parser.set_defaults(_run=None)  # no subcommand given
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text, description=help_text)
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _subcommand(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first word that is not an option), if it is one."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in SUBCOMMANDS else None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `deid` console script."""
    parser = build_parser(_subcommand(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args._run is None:
        parser.print_help()
        return 2
    from deid_core.app.manifest import QuarantineRateError

    try:
        return int(args._run(args) or 0)
    except (UsageError, FileNotFoundError, ValueError) as exc:
        print(f"deid {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except QuarantineRateError as exc:
        print(f"deid {args.command}: failed: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
