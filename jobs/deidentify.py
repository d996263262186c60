"""spark-submit entry point: de-identify a notes Parquet folder or table into notes/, spans/,
quarantine/ and _manifest.json (DESIGN.md §4). Also runs as `python jobs/deidentify.py ...`
in local mode (master local[*] unless $DEID_SPARK_MASTER says otherwise), or against a Spark
Connect server (--remote sc://HOST:PORT or $SPARK_REMOTE). Needs the project installed
(./build.sh setup, or the wheel): the Spark glue is imported as deid_spark.udfs.
"""

from __future__ import annotations

import argparse
import logging
import sys

from deid_core import __version__, compiled
from deid_core.app.manifest import QuarantineRateError, enforce_quality
from deid_core.app.options import STAGING_MODES, RunOptions, add_run_arguments, run_options
from deid_core.app.run import RunRequest, Sink, Source, check_request
from deid_core.app.runner import load_key_and_bundle
from deid_core.bundle import Bundle

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
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for the session this script starts (repeatable), e.g. "
                        "spark.sql.catalogImplementation=hive for --input-table/--output-table-prefix in local mode")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                   help="level of the job's own log (ids and counts only)")
    p.add_argument("--spark-log-level", choices=("TRACE", "DEBUG", "INFO", "WARN", "ERROR"),
                   help="set Spark's (log4j) level for this run (default: as configured; not under Spark Connect)")
    p.add_argument("--remote", metavar="sc://HOST:PORT",
                   help="run through a Spark Connect server (default: $SPARK_REMOTE if set); paths are the server's")
    p.add_argument("--version", action="version", version=f"deid-spark {__version__} ({compiled.status()})")
    return p


def run_request(args: argparse.Namespace, options: RunOptions, key: bytes, bundle: Bundle) -> RunRequest:
    """The run the command line asks for."""
    return RunRequest(Source(args.input, args.input_table), Sink(args.output, args.output_table_prefix),
                      options, key, bundle, args.staging_dir)


def run_job(spark, args: argparse.Namespace, options: RunOptions, key: bytes, bundle: Bundle) -> dict:
    """One run on the Spark executor; returns the manifest (written last). Raises QuarantineRateError."""
    from deid_spark.udfs.api import run_spark

    manifest = run_spark(spark, run_request(args, options, key, bundle)).manifest
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
    if args.log_level != "DEBUG":  # py4j's INFO lines (a connection per thread closing) say nothing to users
        logging.getLogger("py4j").setLevel(logging.WARNING)
    from deid_spark.udfs.plan import staging_mode
    from deid_spark.udfs.session import get_spark, remote_url, set_spark_log_level, spark_confs

    remote = remote_url(args.remote)
    try:
        confs = spark_confs(args.conf)
        options = run_options(args)
        key, bundle = load_key_and_bundle(options)
        staging = staging_mode(options.job.staging, connect=remote is not None)
        check_request(run_request(args, options, key, bundle), staging == "parquet", local_files=remote is None)
    except (ValueError, OSError) as exc:  # ConfigError, KeyError_, BundleError, missing or unreadable input
        print(f"deidentify: error: {exc}", file=sys.stderr)
        return 2
    log.info("engine: %s", compiled.status())  # the driver's view; local-mode workers share its checkout
    spark, created = get_spark("deid-deidentify", args.remote, confs)
    if args.spark_log_level:
        set_spark_log_level(spark, args.spark_log_level)
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
        from deid_spark.udfs.plan import spark_reason

        print(f"deidentify: failed: {spark_reason(exc)} (--log-level DEBUG for the trace)", file=sys.stderr)
        return 1
    finally:
        if created:
            spark.stop()
    if args.output:
        print(f"output: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
