"""spark-submit entry point: de-identify a notes Parquet folder or table into notes/, spans/,
quarantine/ and _manifest.json (DESIGN.md §4). Also runs as `python jobs/deidentify.py ...`
in local mode (master local[*] unless $DEID_SPARK_MASTER says otherwise).
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import sys
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the checkout importable here and in workers
    _ROOT = str(Path(__file__).resolve().parent.parent)
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)

from deid_core.app.manifest import (  # noqa: E402
    MANIFEST_NAME,
    QuarantineRateError,
    build_manifest,
    enforce_quality,
    manifest_json,
    status_counts,
    summary_lines,
)
from deid_core.app.options import STAGING_MODES, RunOptions, add_run_arguments, run_options  # noqa: E402
from deid_core.app.runner import load_key_and_bundle  # noqa: E402
from deid_core.bundle import BundleError, bundle_bytes  # noqa: E402
from deid_core.config import ConfigError, digest  # noqa: E402
from deid_core.keys import KeyError_  # noqa: E402

log = logging.getLogger("deid.job")


def build_parser() -> argparse.ArgumentParser:
    """The job's command line (DESIGN.md §4 plus Spark-only options)."""
    p = argparse.ArgumentParser(prog="jobs/deidentify.py", description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", metavar="IN", help="notes Parquet file or folder (any Hadoop URI)")
    src.add_argument("--input-table", metavar="TABLE", help="notes catalog table")
    dst = p.add_mutually_exclusive_group(required=True)
    dst.add_argument("--output", metavar="OUT", help="output folder (notes/, spans/, quarantine/, _manifest.json)")
    dst.add_argument("--output-table-prefix", metavar="PREFIX",
                     help="write tables PREFIXnotes, PREFIXspans, PREFIXquarantine and PREFIXmanifest")
    add_run_arguments(p)
    p.add_argument("--partitions", type=int, metavar="N", help="tasks after grouping by patient (0: default)")
    p.add_argument("--staging", choices=STAGING_MODES, help="keep the one tagging result as Parquet or cached")
    p.add_argument("--staging-dir", metavar="DIR",
                   help="staging Parquet location (default OUT/staging-<random>, removed at the end; needed with --output-table-prefix "
                        "and --staging parquet)")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                   help="level of the job's own log (ids and counts only)")
    p.add_argument("--spark-log-level", choices=("TRACE", "DEBUG", "INFO", "WARN", "ERROR"),
                   help="set Spark's (log4j) level for this run (default: as configured)")
    return p


def get_spark(app_name: str = "deid-deidentify"):
    """(session, created): the active SparkSession, else a new one; with plain python a local one."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    builder = SparkSession.builder.appName(app_name)
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        root = str(Path(__file__).resolve().parent.parent)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        builder = (builder.master(os.environ.get("DEID_SPARK_MASTER", "local[*]"))
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC"))
    return builder.getOrCreate(), True


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file:")


def _local(path: str) -> Path:
    return Path(path[len("file:"):] if path.startswith("file:") else path)


def write_text(spark, path: str, text: str) -> None:
    """Write a small text file next to the outputs (local path or any Hadoop filesystem)."""
    if _is_local(path):
        _local(path).parent.mkdir(parents=True, exist_ok=True)
        _local(path).write_text(text)
        return
    jvm = spark.sparkContext._jvm  # classic Spark only: remote manifests need the Hadoop FS API
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    fs = hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    out = fs.create(hpath, True)
    out.write(bytearray(text.encode("utf-8")))
    out.close()


def delete_path(spark, path: str) -> None:
    """Remove a staging folder (local or Hadoop filesystem); missing is fine."""
    if _is_local(path):
        import shutil

        shutil.rmtree(_local(path), ignore_errors=True)
        return
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(hpath, True)


def _counter(spark):
    """An accumulator counting tagged notes (classic Spark); None under Spark Connect."""
    try:
        return spark.sparkContext.accumulator(0)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return None


def default_parallelism(spark) -> int:
    """Spark's default parallelism (classic); the shuffle partitions setting under Spark Connect."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return int(spark.conf.get("spark.sql.shuffle.partitions", "200"))


def run_job(spark, args: argparse.Namespace, options: RunOptions, key: bytes, bundle) -> dict:
    """Build and run the plan; returns the manifest (already written)."""
    from pyspark import StorageLevel

    from udfs import plan
    from udfs.deidentify import WorkerPayload, tag_batches
    from udfs.shipping import ShippedKey

    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    job = options.job
    staging = job["staging"]  # --staging / --partitions are already merged into [job]
    where = f"--input {args.input}" if args.input else f"--input-table {args.input_table}"
    log.info("reading %s", where)
    df = plan.read_input(spark, args.input, args.input_table)
    spec = plan.check_input(df, options.name_columns, where, options.config)
    log.debug("schema ok: %d pass-through column(s), %d name column(s); config digest %s",
              len(spec.passthrough), len(spec.name_columns), digest(options.config)[:12])
    if staging == "parquet" and not (args.staging_dir or args.output):
        raise ConfigError("--staging parquet with --output-table-prefix needs --staging-dir DIR "
                          "(or use --staging persist)")
    counts = plan.count_ids(df)
    log.info("input: %d rows, %d null note_id, %d duplicate note_id row(s)",
             counts.rows, counts.null_ids, counts.duplicate_rows)
    df = plan.handle_bad_ids(df, counts, spec, job)
    parts = job["partitions"] or default_parallelism(spark)
    df = plan.group_by_patient(df, parts)
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(job["batch_size"]))
    shipped = ShippedKey(spark, key)  # the key travels as a distributed file, never in the closure
    payload = WorkerPayload(bundle.id, bundle_bytes(bundle), options.config, shipped.ref, spec)
    counter = _counter(spark)
    log.debug("bundle %s (%d bytes zipped) ships inside the tagging function", bundle.id[:12],
              len(payload.bundle_zip))
    staged = df.mapInArrow(tag_batches(payload, counter), plan.staged_spark_schema(df, spec))
    t1 = time.perf_counter()
    log.info("tagging in %d partition(s), batches of %d notes, staging: %s", parts, job["batch_size"], staging)
    staging_dir = None
    try:
        if staging == "parquet":
            # a fresh subfolder: a user's --staging-dir itself is never overwritten or deleted
            staging_dir = f"{(args.staging_dir or args.output).rstrip('/')}/staging-{uuid.uuid4().hex[:8]}"
            staged.write.parquet(staging_dir)
            staged = spark.read.parquet(staging_dir)
        else:
            staged = staged.persist(StorageLevel.MEMORY_AND_DISK)
            staged.count()
        t2 = time.perf_counter()
        log.info("tagged; writing outputs")
        notes, spans, quarantine = plan.project_outputs(staged, spec)
        for name, frame in (("notes", notes), ("spans", spans), ("quarantine", quarantine)):
            writer = frame.write.mode("overwrite")
            if args.output:
                writer.parquet(f"{args.output.rstrip('/')}/{name}")
            else:
                writer.saveAsTable(f"{args.output_table_prefix}{name}")
        status_rows, by_label = plan.staged_counts(staged)
    finally:
        shipped.close()
        if staging_dir:
            delete_path(spark, staging_dir)
        else:
            staged.unpersist()
    t3 = time.perf_counter()
    status = status_counts(status_rows)
    tagged = counter.value if counter is not None else None
    manifest = build_manifest(
        runner="spark",
        counts={"input_rows": counts.rows, "null_note_id_dropped": counts.null_ids,
                "duplicate_rows": counts.duplicate_rows, "tagged": tagged, **status},
        spans_by_label=by_label, config=options.config, bundle=bundle, key=key,
        timings={"plan_s": t1 - t0, "tag_s": t2 - t1, "write_s": t3 - t2, "total_s": time.perf_counter() - t0},
        started=started,
        extra={"spark_version": spark.version, "partitions": parts, "staging": staging},
    )
    text = manifest_json(manifest)
    if args.output:
        write_text(spark, f"{args.output.rstrip('/')}/{MANIFEST_NAME}", text)
    else:
        spark.createDataFrame([(started.isoformat(), text)], "started_at string, manifest string") \
            .write.mode("append").saveAsTable(f"{args.output_table_prefix}manifest")
    for line in summary_lines(manifest):
        log.info(line)
    enforce_quality(manifest)
    return manifest


def main(argv: list[str] | None = None) -> int:
    """Parse, check options and key before Spark starts, run; exit 2 with one line on bad input."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        options = run_options(args)
        key, bundle = load_key_and_bundle(options)
    except (ConfigError, KeyError_, BundleError, FileNotFoundError) as exc:
        print(f"deidentify: error: {exc}", file=sys.stderr)
        return 2
    spark, created = get_spark()
    if args.spark_log_level:
        spark.sparkContext.setLogLevel(args.spark_log_level)
    try:
        run_job(spark, args, options, key, bundle)
    except (ConfigError, FileNotFoundError) as exc:
        print(f"deidentify: error: {exc}", file=sys.stderr)
        return 2
    except QuarantineRateError as exc:
        print(f"deidentify: failed: {exc}", file=sys.stderr)
        return 3
    finally:
        if created:
            spark.stop()
    if args.output:
        print(f"output: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
