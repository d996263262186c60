"""spark-submit entry point: de-identify a notes Parquet folder or table into notes/, spans/,
quarantine/ and _manifest.json (DESIGN.md §4). Also runs as `python jobs/deidentify.py ...`
in local mode (master local[*] unless $DEID_SPARK_MASTER says otherwise).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the checkout importable here and in workers
    _ROOT = str(Path(__file__).resolve().parent.parent)
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)

from deid_core.app.manifest import QuarantineRateError, enforce_quality, summary_lines  # noqa: E402
from deid_core.app.options import STAGING_MODES, RunOptions, add_run_arguments, run_options  # noqa: E402
from deid_core.app.run import RunRequest, Sink, Source, check_request, run  # noqa: E402
from deid_core.app.runner import load_key_and_bundle  # noqa: E402
from deid_core.bundle import Bundle  # noqa: E402
from deid_core.config import conf_dir  # noqa: E402

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
    """(session, created): the active SparkSession, else a new one; with plain python a quiet local one."""
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
        log4j = conf_dir() / "spark" / "log4j2-local.properties"
        builder = (builder.master(os.environ.get("DEID_SPARK_MASTER", "local[*]"))
                   .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j.as_uri()}")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC"))
    return builder.getOrCreate(), True


def run_request(args: argparse.Namespace, options: RunOptions, key: bytes, bundle: Bundle) -> RunRequest:
    """The run the command line asks for."""
    return RunRequest(Source(args.input, args.input_table), Sink(args.output, args.output_table_prefix),
                      options, key, bundle, args.staging_dir)


def run_job(spark, args: argparse.Namespace, options: RunOptions, key: bytes, bundle: Bundle) -> dict:
    """One run on the Spark executor; returns the manifest (written last). Raises QuarantineRateError."""
    from deid_spark.udfs.plan import SparkBackend

    backend = SparkBackend(spark, partitions=options.job.partitions, staging=options.job.staging)
    manifest = run(run_request(args, options, key, bundle), backend).manifest
    for line in summary_lines(manifest):
        log.info(line)
    enforce_quality(manifest)
    return manifest


def _spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return PySparkException, Py4JError


def main(argv: list[str] | None = None) -> int:
    """Parse, check options, key and paths before Spark starts, run; one line and exit 2 on bad input."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        options = run_options(args)
        key, bundle = load_key_and_bundle(options)
        check_request(run_request(args, options, key, bundle), options.job.staging == "parquet")
    except (ValueError, OSError) as exc:  # ConfigError, KeyError_, BundleError, missing or unreadable input
        print(f"deidentify: error: {exc}", file=sys.stderr)
        return 2
    spark, created = get_spark()
    if args.spark_log_level:
        spark.sparkContext.setLogLevel(args.spark_log_level)
    try:
        run_job(spark, args, options, key, bundle)
    except (ValueError, FileNotFoundError) as exc:  # schema, ids, options found once Spark could read
        print(f"deidentify: error: {exc}", file=sys.stderr)
        return 2
    except QuarantineRateError as exc:
        print(f"deidentify: failed: {exc}", file=sys.stderr)
        return 3
    except _spark_errors() as exc:
        log.debug("Spark error", exc_info=True)
        print(f"deidentify: failed: {str(exc).strip().splitlines()[0][:400]} (--log-level DEBUG for the trace)",
              file=sys.stderr)
        return 1
    finally:
        if created:
            spark.stop()
    if args.output:
        print(f"output: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
