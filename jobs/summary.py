"""Summarize committed runs of a table prefix or an output folder on any URI (Spark; counts only, no text).

    python jobs/summary.py --output-table-prefix deid.nightly_ [--conf KEY=VALUE ...]
    python jobs/summary.py --output hdfs:///deid/out

Local folders: `deid summary OUT` (no Spark).
"""

from __future__ import annotations

import argparse
import json
import sys

from deid_core.app.commands.summary import runs_lines
from deid_core.app.manifest import summary_lines
from deid_core.config import ConfigError
from deid_spark.udfs.session import get_spark, spark_confs


def main(argv: list[str] | None = None) -> int:
    """Print the committed runs (or the single run) of a table prefix or folder; exit 2 if there is none."""
    p = argparse.ArgumentParser(prog="jobs/summary.py", description=__doc__.splitlines()[0])
    dst = p.add_mutually_exclusive_group(required=True)
    dst.add_argument("--output", metavar="OUT", help="output folder (any Hadoop URI)")
    dst.add_argument("--output-table-prefix", metavar="PREFIX", help="table prefix the job wrote")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting (repeatable)")
    args = p.parse_args(argv)
    try:
        confs = spark_confs(args.conf)
    except ConfigError as exc:
        print(f"summary: error: {exc}", file=sys.stderr)
        return 2
    spark, created = get_spark("deid-summary", confs=confs)
    try:
        return _print(spark, args)
    finally:
        if created:
            spark.stop()


def _print(spark, args: argparse.Namespace) -> int:
    from deid_spark.udfs.runs import TableStore, committed_runs, uncommitted_partitions

    where = args.output or args.output_table_prefix
    runs = committed_runs(spark, out=args.output, table_prefix=args.output_table_prefix)
    if runs:
        print(f"scheduled runs in {where}")
        for line in runs_lines(runs, uncommitted_partitions(spark, runs, out=args.output,
                                                            table_prefix=args.output_table_prefix)):
            print("  " + line)
        return 0
    if args.output_table_prefix and spark.catalog.tableExists(TableStore(spark, where, None).name("manifest")):
        rows = spark.table(f"{where}manifest").orderBy("started_at").collect()
        if rows:  # single-run tables: one manifest row appended per run
            print(f"single-run tables {where}notes, {where}spans, {where}quarantine; last of {len(rows)} run(s):")
            for line in summary_lines(json.loads(rows[-1]["manifest"])):
                print("  " + line)
            return 0
    print(f"summary: error: no committed run in {where}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
