"""`python -m deid_core.app.commands.summary OUT`: a short summary of an output folder (counts, no text).

A folder of scheduled runs lists its committed runs (oldest commit first) and says how many
partitions belong to runs that never committed; readers ignore those. Table prefixes and URIs:
`python jobs/summary.py` (Spark).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from deid_core.app.manifest import MANIFEST_NAME, summary_lines
from deid_core.app.reader import committed_runs, summary_runs
from deid_core.app.runs import RUN_COLUMN, RUNS, RUNS_DIR
from deid_core.app.store import TABLES, FolderStore, local_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """OUT: the folder a run wrote."""
    parser.add_argument("output", metavar="OUT", help="output folder of jobs/deidentify.py or deid tag")


def runs_lines(runs: list[dict], uncommitted: int) -> list[str]:
    """The summary of a folder or table prefix of scheduled runs: one line per committed run, then the last run's."""
    lines = [f"committed runs: {len(runs)}" + (f"   partitions of uncommitted runs (ignored by readers, removed by "
                                               f"the next run): {uncommitted}" if uncommitted else "")]
    lines += ["  " + line for line in summary_runs(runs)]
    if runs:
        lines.append(f"last committed run {runs[-1][RUN_COLUMN]}:")
        lines += ["  " + line for line in summary_lines(runs[-1])]
    return lines


def _uncommitted(out: Path, runs: list[dict]) -> int:
    done = {f"{RUN_COLUMN}={m[RUN_COLUMN]}" for m in runs}
    return sum(1 for t in TABLES if (out / t).is_dir()
               for p in (out / t).iterdir() if p.name.startswith(f"{RUN_COLUMN}=") and p.name not in done)


def run(args: argparse.Namespace) -> int:
    """Print where the outputs are and the manifest's counts (every committed run's, for scheduled runs)."""
    out = Path(args.output)
    if FolderStore(str(out), local_files(), str(out)).layout() == RUNS:
        runs = committed_runs(out)
        print(f"scheduled runs in {out} (rows under notes/, spans/, quarantine/ by run_id; manifests in "
              f"{out / RUNS_DIR}/)")
        for line in runs_lines(runs, _uncommitted(out, runs)):
            print("  " + line)
        return 0
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
