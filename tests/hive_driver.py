"""The job against a real embedded Hive metastore (Derby, in a temp warehouse), in its own process.

Driven by tests/test_runs_hive.py: `python -m tests.hive_driver BASE first|second`. Each step
starts Spark with the job's own --conf handling (jobs.deidentify.spark_confs + get_spark), runs
the job's command line (`main`) against Hive tables, and dumps what the readers see (committed
rows, udfs/runs.read_committed) as Parquet under BASE/dumps/<name>/ with facts.json beside.
Step "first" ends with a run paused after writing notes (the test kills this process there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS
from tests.helpers_runs import paused_config, write_days

OPTS = ["--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key", "--mode", "surrogate",
        "--partitions", "2", "--spark-log-level", "ERROR"]
KILLED = ["--input-table", "etl.day1", "--output-table-prefix", "etl.killed_", "--run-id", "k1"]


def confs(base: Path) -> list[str]:
    """The --conf items that give local Spark an embedded Hive metastore under `base`."""
    return ["spark.sql.catalogImplementation=hive", f"spark.sql.warehouse.dir={base / 'warehouse'}",
            "spark.sql.shuffle.partitions=4",  # as the suite's shared session: few rows, no 200-task shuffles
            f"spark.hadoop.javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={base / 'metastore_db'};create=true"]


def conf_args(base: Path) -> list[str]:
    return [a for c in confs(base) for a in ("--conf", c)]


def job(base: Path, *argv: str, config: Path | None = None) -> int:
    from deid_spark.jobs.deidentify import main

    opts = [str(config) if a == str(LITERAL_CONF) and config else a for a in OPTS]
    return main([*argv, *opts, *conf_args(base)])


def dump(spark, base: Path, name: str, prefix: str, facts: dict | None = None, views=("latest", "history")) -> None:
    """What a reader of the table prefix sees: committed rows (the `views` the tests compare) and run ids."""
    from deid_core.app.store import TABLES
    from deid_spark.udfs.runs import TableStore, committed_runs, read_committed

    folder = base / "dumps" / name
    folder.mkdir(parents=True, exist_ok=True)
    for table in TABLES:
        for view in views:
            pq.write_table(read_committed(spark, table, table_prefix=prefix, latest=view == "latest").toArrow(),
                           folder / f"{table}{'' if view == 'latest' else '-history'}.parquet")
    store = TableStore(spark, prefix, None)
    manifests = committed_runs(spark, table_prefix=prefix)
    out = dict(facts or {}, committed=[m["run_id"] for m in manifests], manifests=manifests,
               partitions={t: sorted(store.run_ids(t)) for t in TABLES})
    (folder / "facts.json").write_text(json.dumps(out, indent=1, default=str))


def first(base: Path) -> None:
    from deid_spark.udfs.session import get_spark, spark_confs

    spark, _ = get_spark("deid-hive-tests", confs=spark_confs(confs(base)))
    days = write_days(base / "in")
    spark.sql("CREATE DATABASE etl")
    for name in ("day1", "both"):
        spark.read.parquet(str(days[name])).write.saveAsTable(f"etl.{name}")
    spark.read.parquet(str(days["day2"])).limit(5).write.saveAsTable("etl.day2part")
    sc = spark.sparkContext
    sc.setJobGroup("missing-db", "no job may run")
    facts = {"missing_db_exit": job(base, "--input-table", "etl.day1", "--output-table-prefix", "nodb.nightly_",
                                    "--run-id", "d1", "--staging", "persist")}
    facts["missing_db_jobs"] = len(sc.statusTracker().getJobIdsForGroup("missing-db"))
    sc.setJobGroup("runs", "scheduled runs")
    nightly = ["--output-table-prefix", "etl.nightly_", "--staging-dir", str(base / "staging")]
    facts["day1_exit"] = job(base, "--input-table", "etl.day1", *nightly, "--run-id", "2024-06-01")
    facts["day2_exit"] = job(base, "--input-table", "etl.both", *nightly, "--run-id", "2024-06-02", "--incremental")
    dump(spark, base, "two_days", "etl.nightly_", facts)
    facts = {"retry_exit": job(base, "--input-table", "etl.day2part", *nightly, "--run-id", "2024-06-02",
                               "--incremental", "--staging", "persist")}
    dump(spark, base, "retried", "etl.nightly_", facts, views=("history",))
    job(base, *KILLED, "--staging", "persist", config=paused_config(base))
    raise SystemExit("the paused run was not killed")


def second(base: Path) -> None:
    from deid_spark.udfs.session import get_spark, spark_confs

    spark, _ = get_spark("deid-hive-tests", confs=spark_confs(confs(base)))
    dump(spark, base, "killed", "etl.killed_", views=("latest",))
    facts = {"rerun_exit": job(base, *KILLED, "--staging", "persist")}
    facts["summary"] = summary(base, "etl.killed_")
    dump(spark, base, "rerun", "etl.killed_", facts, views=("history",))


def summary(base: Path, prefix: str) -> str:
    """What `python jobs/summary.py --output-table-prefix PREFIX` prints."""
    import contextlib
    import io

    from deid_spark.jobs.summary import main

    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        code = main(["--output-table-prefix", prefix, *conf_args(base)])
    return f"exit {code}\n{text.getvalue()}"


if __name__ == "__main__":
    {"first": first, "second": second}[sys.argv[2]](Path(sys.argv[1]))
