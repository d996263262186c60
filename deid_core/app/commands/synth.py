"""`deid synth`: generate a synthetic annotated corpus locally (Parquet, i2b2 XML or BRAT)."""

from __future__ import annotations

import argparse
import logging
import time

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `deid synth`."""
    parser.add_argument("--notes", type=int, required=True, help="number of notes to generate")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same corpus)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--format", choices=("parquet", "i2b2", "brat"), default="parquet",
                        help="parquet: notes/ + gold/ tables (default); i2b2 XML; BRAT standoff")
    parser.add_argument("--patients", type=int, default=0,
                        help="number of patients (default: about one per 8 notes)")


def run(args: argparse.Namespace) -> int:
    """Generate and write the corpus; logs counts and speed only (never text)."""
    from deid_core.app.cli import UsageError
    from deid_core.training.synth.generate import Plan
    from deid_core.training.synth.output import write_corpus

    if args.notes < 0 or args.patients < 0:
        raise UsageError("--notes and --patients must be >= 0")
    plan = Plan(args.notes, args.seed, args.patients)
    t0 = time.perf_counter()
    try:
        n_notes, n_spans = write_corpus(plan, args.out, args.format)
    except ImportError as exc:
        raise UsageError(f"--format {args.format} needs a writer this build lacks ({exc.name})") from None
    dt = time.perf_counter() - t0
    log.info("wrote %d notes, %d gold spans, %d patients to %s (%s) in %.1f s (%.0f notes/s)",
             n_notes, n_spans, plan.n_patients, args.out, args.format, dt, n_notes / dt if dt else 0.0)
    return 0
