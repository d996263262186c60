"""`python -m deid_core.app.commands.summary OUT`: a short summary of an output folder (counts, no text)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from deid_core.app.manifest import MANIFEST_NAME, summary_lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """OUT: the folder a run wrote."""
    parser.add_argument("output", metavar="OUT", help="output folder of jobs/deidentify.py or deid tag")


def run(args: argparse.Namespace) -> int:
    """Print where the outputs are and the manifest's counts."""
    out = Path(args.output)
    mf = out / MANIFEST_NAME
    if not mf.is_file():
        print(f"summary: error: {mf} not found (is {out} a run's output folder?)", file=sys.stderr)
        return 2
    manifest = json.loads(mf.read_text())
    print(f"de-identified notes: {out / 'notes'}/")
    print(f"audit spans:         {out / 'spans'}/")
    print(f"quarantine:          {out / 'quarantine'}/")
    print(f"manifest:            {mf}")
    for line in summary_lines(manifest):
        print("  " + line)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point for `python -m deid_core.app.commands.summary`."""
    parser = argparse.ArgumentParser(prog="deid summary", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
