"""Spark job: generate a synthetic annotated corpus in parallel, writing OUT/notes/ and OUT/gold/ Parquet.

    spark-submit jobs/synthesize.py --notes N --seed S --out DIR [--patients P] [--partitions K]
        [--types a,b] [--exclude-types c,d]
    python jobs/synthesize.py ...   (local mode)

Partitions are ranges of patient blocks and patient i is generated from (seed, i) alone, so the
output content does not depend on K.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator

log = logging.getLogger("deid.synthesize")

NOTES_DDL = ("note_id string, patient_id string, note_date date, text string, "
             "patient_first_name string, patient_last_name string, attending_name string, note_type string, "
             "family string")
NESTED_DDL = NOTES_DDL + ", gold array<struct<start:int,end:int,label:string>>"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options of the job."""
    p = argparse.ArgumentParser(prog="synthesize", description=__doc__.splitlines()[0])
    p.add_argument("--notes", type=int, required=True, help="number of notes")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--out", required=True, help="output folder (notes/, gold/, _manifest.json)")
    p.add_argument("--patients", type=int, default=0, help="number of patients (default notes/8)")
    p.add_argument("--partitions", type=int, default=0, help="Spark partitions (default: parallelism x 4)")
    p.add_argument("--master", default=None, help="Spark master when run with python (default local[*])")
    p.add_argument("--types", default="", help="note types or families to draw from, comma-separated (default all)")
    p.add_argument("--exclude-types", default="", help="note types or families to leave out, comma-separated")
    args = p.parse_args(argv)
    from deid_core.training.synth.catalog import SelectionError, resolve

    args.include, args.exclude = split_names(args.types), split_names(args.exclude_types)
    if args.notes < 0 or args.patients < 0:
        p.error("--notes and --patients must be >= 0")
    try:
        resolve(args.include, args.exclude)
    except SelectionError as exc:
        p.error(f"--types/--exclude-types: {exc}")
    return args


def split_names(value: str) -> tuple[str, ...]:
    """A comma-separated option as a tuple of non-empty names."""
    return tuple(x.strip() for x in value.split(",") if x.strip())


def generate_blocks(n_notes: int, seed: int, n_patients: int, include: tuple[str, ...] = (),
                    exclude: tuple[str, ...] = ()) -> Callable[[Iterator], Iterator]:
    """The mapInArrow function: block ids in, nested note rows (with gold arrays) out."""

    def fn(batches: Iterator) -> Iterator:
        from deid_core.training.synth.generate import Plan, block_notes
        from deid_core.training.synth.output import nested_batch

        plan = Plan(n_notes, seed, n_patients, include=include, exclude=exclude)
        for batch in batches:
            for b in batch.column(0).to_pylist():
                notes = list(block_notes(plan, int(b)))
                if notes:
                    yield nested_batch(notes)

    return fn


def build(spark, n_notes: int, seed: int, n_patients: int = 0, partitions: int = 0,
          include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()):
    """The DataFrame of generated notes with a nested `gold` column (one row per note)."""
    from deid_core.training.synth.generate import Plan

    plan = Plan(n_notes, seed, n_patients, include=include, exclude=exclude)
    k = partitions or max(1, spark.sparkContext.defaultParallelism * 4)
    k = min(k, plan.n_blocks)
    blocks = spark.range(0, plan.n_blocks, 1, numPartitions=k).toDF("block")
    return blocks.mapInArrow(generate_blocks(n_notes, seed, plan.n_patients, plan.include, plan.exclude),
                             NESTED_DDL), plan


def write(df, out: str) -> None:
    """Write notes/ (without gold) and gold/ (one row per span) from one persisted generation."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    df = df.persist(StorageLevel.DISK_ONLY)
    try:
        df.drop("gold").write.mode("overwrite").parquet(f"{out}/notes")
        spans = df.select("note_id", F.explode("gold").alias("g")).select(
            "note_id", F.col("g.start").alias("start"), F.col("g.end").alias("end"),
            F.col("g.label").alias("label"), F.lit("synth").alias("source"),
            F.lit(1.0).alias("confidence"))
        spans.write.mode("overwrite").parquet(f"{out}/gold")
    finally:
        df.unpersist()


def main(argv: list[str] | None = None) -> int:
    """Run the job and write a small manifest (counts and timings only)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("deid-synthesize")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    t0 = time.perf_counter()
    df, plan = build(spark, args.notes, args.seed, args.patients, args.partitions, args.include, args.exclude)
    write(df, args.out)
    dt = time.perf_counter() - t0
    n_spans = spark.read.parquet(f"{args.out}/gold").count()
    manifest = {"notes": args.notes, "patients": plan.n_patients, "seed": args.seed,
                "families": list(plan.families),
                "gold_spans": n_spans, "seconds": round(dt, 1),
                "notes_per_second": round(args.notes / dt, 1) if dt else None}
    from pathlib import Path

    if not args.out.startswith(("hdfs:", "s3", "gs:", "abfs")):
        Path(args.out, "_manifest.json").write_text(json.dumps(manifest, indent=2))
    log.info("synthesized %s", json.dumps(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
