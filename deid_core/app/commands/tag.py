"""`deid tag`: de-identify a small notes Parquet locally, without Spark, on the job's code path."""

from __future__ import annotations

import argparse

from deid_core.app.manifest import summary_lines
from deid_core.app.options import add_run_arguments, run_options
from deid_core.app.runner import run_local


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--input NOTES --output OUT and the job's common options."""
    parser.add_argument("--input", required=True, metavar="NOTES", help="notes Parquet file or folder")
    parser.add_argument("--output", required=True, metavar="OUT", help="output folder")
    add_run_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run and print the summary (counts only)."""
    manifest = run_local(args.input, args.output, run_options(args))
    print(f"output: {args.output}")
    for line in summary_lines(manifest):
        print("  " + line)
    return 0
