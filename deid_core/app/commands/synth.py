"""`deid synth`: generate a synthetic annotated corpus locally (Parquet, i2b2 XML or BRAT)."""

from __future__ import annotations

import argparse
import logging
import time

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `deid synth`."""
    parser.add_argument("--notes", type=int, help="number of notes to generate (required unless --list-types)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same corpus)")
    parser.add_argument("--out", help="output folder (required unless --list-types)")
    parser.add_argument("--format", choices=("parquet", "i2b2", "brat"), default="parquet",
                        help="parquet: notes/ + gold/ tables (default); i2b2 XML; BRAT standoff")
    parser.add_argument("--patients", type=int, default=0,
                        help="number of patients (default: about one per 8 notes)")
    parser.add_argument("--types", default="",
                        help="note types or families to draw from, comma-separated (default all; see --list-types)")
    parser.add_argument("--exclude-types", default="",
                        help="note types or families to leave out, comma-separated (leave-type-out corpora)")
    parser.add_argument("--list-types", action="store_true",
                        help="print the note types and template families (of the selection) and exit")


def run(args: argparse.Namespace) -> int:
    """Generate and write the corpus; logs counts and speed only (never text)."""
    from deid_core.app.cli import UsageError
    from deid_core.training.synth.catalog import SelectionError, catalog_text, resolve
    from deid_core.training.synth.generate import Plan
    from deid_core.training.synth.output import write_corpus

    include = tuple(x.strip() for x in args.types.split(",") if x.strip())
    exclude = tuple(x.strip() for x in args.exclude_types.split(",") if x.strip())
    try:
        selected = resolve(include, exclude)
    except SelectionError as exc:
        raise UsageError(f"--types/--exclude-types: {exc}") from None
    if args.list_types:
        print(catalog_text(selected))
        return 0
    if args.notes is None or args.out is None:
        raise UsageError("--notes and --out are required (or give --list-types)")
    if args.notes < 0 or args.patients < 0:
        raise UsageError("--notes and --patients must be >= 0")
    plan = Plan(args.notes, args.seed, args.patients, include=include, exclude=exclude)
    t0 = time.perf_counter()
    try:
        n_notes, n_spans = write_corpus(plan, args.out, args.format)
    except ImportError as exc:
        raise UsageError(f"--format {args.format} needs a writer this build lacks ({exc.name})") from None
    dt = time.perf_counter() - t0
    log.info("wrote %d notes, %d gold spans, %d patients to %s (%s) in %.1f s (%.0f notes/s)",
             n_notes, n_spans, plan.n_patients, args.out, args.format, dt, n_notes / dt if dt else 0.0)
    return 0
