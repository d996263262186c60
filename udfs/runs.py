"""Scheduled runs on Spark: the table-prefix store and committed-rows readers (files: udfs/files.py).

Reading committed runs from Spark (folders on any URI, or tables), what `read_committed` does:

    runs = committed_runs(spark, out="hdfs:///deid/notes-out")   # or table_prefix="deid.nightly_"
    ids = [m["run_id"] for m in runs]                              # manifests, oldest commit first
    notes = spark.read.schema(<notes schema> + "run_id string").option("basePath", f"{out}/notes") \\
        .parquet(*[f"{out}/notes/run_id={r}" for r in ids])        # folders: committed partitions only
    notes = spark.table("deid.nightly_notes").where(F.col("run_id").isin(ids))   # tables
    # SQL: SELECT n.* FROM deid.nightly_notes n LEFT SEMI JOIN deid.nightly_manifest m USING (run_id)

then keep, for each note_id, the rows of the last committed run that holds it (`latest=True`).
Run ids are read as strings (a user schema for folders: Spark would infer 2024-06-01 as a date).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from deid_core.app.policies import DUPLICATE
from deid_core.app.runs import (
    RUN_COLUMN,
    RUNS,
    STATE_DONE,
    STATE_NONE,
    STATE_RETRY,
    RunPlan,
    parse_committed,
)
from deid_core.app.store import TABLES, Files, FolderStore, join, table_path
from deid_core.config import ConfigError
from deid_spark.udfs.files import ServerFiles

log = logging.getLogger("deid.job")
MANIFEST_TABLE = "manifest"


def _quote(name: str) -> str:
    return ".".join(f"`{p}`" for p in name.split("."))


class TableStore:
    """The bookkeeping of a table-prefix output: PREFIXnotes, PREFIXspans, PREFIXquarantine, PREFIXmanifest."""

    def __init__(self, spark: SparkSession, prefix: str, input_table: str | None) -> None:
        self.spark, self.prefix, self.input_table = spark, prefix, input_table
        self.where = f"--output-table-prefix {prefix}"

    def name(self, table: str) -> str:
        """The catalog name of one output table."""
        return f"{self.prefix}{table}"

    def exists(self, table: str) -> bool:
        """Whether the output table is in the catalog."""
        return bool(self.spark.catalog.tableExists(self.name(table)))

    def run_ids(self, table: str) -> list[str]:
        """The run ids of a partitioned output table's partitions ([] if the table does not exist)."""
        if not self.exists(table):
            return []
        return [r[0].split("=", 1)[1] for r in self.spark.sql(f"SHOW PARTITIONS {_quote(self.name(table))}").collect()]

    def _partitioned(self, table: str) -> bool:
        return any(c.name == RUN_COLUMN and c.isPartition for c in self.spark.catalog.listColumns(self.name(table)))

    def _qualified(self, name: str) -> str:
        parts = name.lower().split(".")
        return ".".join(parts if len(parts) > 1 else [self.spark.catalog.currentDatabase().lower(), *parts])

    def check(self, plan: RunPlan) -> None:
        """Before any work: the database exists, no output is the input, existing tables have this layout."""
        if "." in self.prefix:
            db = self.prefix.rsplit(".", 1)[0]
            if not self.spark.catalog.databaseExists(db):
                raise ConfigError(f"{self.where}: database {db!r} does not exist in the catalog (create it first: "
                                  f"CREATE DATABASE {db}; pass --conf for a Hive or other catalog)")
        outputs = [*TABLES, MANIFEST_TABLE]
        if self.input_table and self._qualified(self.input_table) in {self._qualified(self.name(t)) for t in outputs}:
            raise ConfigError(f"{self.where} would overwrite the input table {self.input_table}; choose another prefix")
        for table in outputs:
            if self.exists(table) and self._partitioned(table) != plan.partitioned:
                raise ConfigError(
                    f"{self.where}: table {self.name(table)} holds "
                    + ("scheduled runs (partitioned by run_id): pass --run-id ID or --incremental, or another prefix"
                       if not plan.partitioned else
                       "a single-run output (no run_id): scheduled runs need tables of their own; use another prefix"))

    def committed(self) -> list[dict[str, Any]]:
        """Manifests of the committed runs (rows of PREFIXmanifest), oldest commit first."""
        if not self.exists(MANIFEST_TABLE) or not self._partitioned(MANIFEST_TABLE):
            return []
        rows = self.spark.table(self.name(MANIFEST_TABLE)).select(RUN_COLUMN, "manifest").collect()
        return parse_committed((f"{r[RUN_COLUMN]}.json", r["manifest"]) for r in rows)

    def uncommit(self, plan: RunPlan) -> None:
        """Drop the run's manifest partition before anything of it is rewritten (single layout: rows are appended)."""
        if plan.partitioned and self.exists(MANIFEST_TABLE):
            self.spark.sql(f"ALTER TABLE {_quote(self.name(MANIFEST_TABLE))} DROP IF EXISTS "
                           f"PARTITION ({RUN_COLUMN} = '{plan.run_id}')")

    def sweep(self, keep: set[str]) -> int:
        """Drop partitions of runs that are not committed (killed runs, this run's previous rows)."""
        removed = 0
        for table in TABLES:
            for rid in self.run_ids(table):
                if rid not in keep:
                    self.spark.sql(f"ALTER TABLE {_quote(self.name(table))} DROP IF EXISTS "
                                   f"PARTITION ({RUN_COLUMN} = '{rid}')")
                    removed += 1
        if removed:
            log.warning("dropped %d partition(s) of runs that never committed", removed)
        return removed

    def write(self, frame: DataFrame, table: str, run_id: str | None) -> None:
        """Write one output table: replaced whole (single layout), or only its run_id partition."""
        name = self.name(table)
        if run_id is None:
            frame.write.mode("overwrite").saveAsTable(name)
            return
        if not self.exists(table):
            (frame.limit(0).withColumn(RUN_COLUMN, F.lit(None).cast("string")).write.partitionBy(RUN_COLUMN)
             .format("parquet").saveAsTable(name))
        columns = [c for c in self.spark.table(name).columns if c != RUN_COLUMN]
        if sorted(columns) != sorted(frame.columns):
            raise ConfigError(f"{self.where}: table {name} has columns {', '.join(columns)}; this run writes "
                              f"{', '.join(frame.columns)}: use another prefix")
        view = f"_deid_{table}_{secrets.token_hex(4)}"
        frame.createOrReplaceTempView(view)
        try:
            self.spark.sql(f"INSERT OVERWRITE TABLE {_quote(name)} PARTITION ({RUN_COLUMN} = '{run_id}') "
                           f"SELECT {', '.join(f'`{c}`' for c in columns)} FROM {view}")
        finally:
            self.spark.catalog.dropTempView(view)

    def commit(self, plan: RunPlan, text: str) -> None:
        """The commit point: the run's manifest row, written last."""
        manifest = json.loads(text)
        if not plan.partitioned:  # one row appended per run, as before run ids
            self.spark.createDataFrame([(manifest["started_at"], text)], "started_at string, manifest string") \
                .write.mode("append").saveAsTable(self.name(MANIFEST_TABLE))
            return
        row = self.spark.createDataFrame([(manifest["committed_at"], text)], "committed_at string, manifest string")
        self.write(row, MANIFEST_TABLE, plan.run_id)

    def release(self) -> None:
        """Nothing held."""


def _files(spark: SparkSession) -> Files:
    """File operations where this session's paths live (all the server's under Spark Connect)."""
    remote = ServerFiles(spark)
    return Files(remote, local=not remote.connect)


def committed_runs(spark: SparkSession, *, out: str | None = None,
                   table_prefix: str | None = None) -> list[dict[str, Any]]:
    """Manifests of the committed runs of a folder (any URI) or a table prefix, oldest commit first."""
    if table_prefix is not None:
        return TableStore(spark, table_prefix, None).committed()
    store = FolderStore(str(out), _files(spark), str(out))
    return store.committed() if store.layout() == RUNS else []


def read_runs(spark: SparkSession, table: str, run_ids: Sequence[str], *, out: str | None = None,
              table_prefix: str | None = None, columns: Sequence[str] | None = None) -> DataFrame:
    """Rows of the given runs of one table, with run_id (a string); no commit check."""
    if table_prefix is not None:
        if not run_ids and not TableStore(spark, table_prefix, None).exists(table):
            return _no_rows(spark, columns)  # e.g. a first run killed before it created this table
        df = spark.table(f"{table_prefix}{table}").where(F.col(RUN_COLUMN).isin(list(run_ids)))
        return df.select(*columns, RUN_COLUMN) if columns else df
    paths = [table_path(str(out), table, r) for r in run_ids]
    if not paths:
        return _no_rows(spark, columns)
    fields = [f for f in spark.read.parquet(paths[-1]).schema.fields if not columns or f.name in columns]
    schema = StructType([*fields, StructField(RUN_COLUMN, StringType())])  # run ids stay strings
    return spark.read.schema(schema).option("basePath", table_path(str(out), table)).parquet(*paths)


def _no_rows(spark: SparkSession, columns: Sequence[str] | None) -> DataFrame:
    return spark.createDataFrame([], f"{', '.join(f'`{c}` string' for c in columns or ['note_id'])}, "
                                     f"{RUN_COLUMN} string")


def read_committed(spark: SparkSession, table: str, *, out: str | None = None, table_prefix: str | None = None,
                   latest: bool = True) -> DataFrame:
    """Rows of the committed runs of one table; `latest`: each note_id from the last committed run holding it."""
    runs = committed_runs(spark, out=out, table_prefix=table_prefix)
    ids = [str(m[RUN_COLUMN]) for m in runs]
    rows = read_runs(spark, table, ids, out=out, table_prefix=table_prefix)
    if not latest:
        return rows
    rank = spark.createDataFrame([(r, i) for i, r in enumerate(ids)], f"{RUN_COLUMN} string, _rank int")
    heard = read_runs(spark, "notes", ids, out=out, table_prefix=table_prefix, columns=["note_id"]).unionByName(
        read_runs(spark, "quarantine", ids, out=out, table_prefix=table_prefix, columns=["note_id"]))
    winner = heard.join(rank, RUN_COLUMN).groupBy("note_id").agg(F.max("_rank").alias("_rank"))
    return (rows.join(F.broadcast(rank), RUN_COLUMN).join(winner, ["note_id", "_rank"], "left_semi")
            .drop("_rank"))


def committed_state(spark: SparkSession, run_ids: Sequence[str], retry_stages: Sequence[str], *,
                    out: str | None = None, table_prefix: str | None = None) -> DataFrame:
    """(note_id, _deid_state) over committed runs: deid_core.app.runs' STATE_* codes, max per note."""
    where = {"out": out, "table_prefix": table_prefix}
    notes = read_runs(spark, "notes", run_ids, columns=["note_id"], **where).select(
        "note_id", F.lit(STATE_DONE).alias("_deid_state"))
    q = read_runs(spark, "quarantine", run_ids, columns=["note_id", "stage", "error_class"], **where)
    code = (F.when(F.col("error_class") == DUPLICATE, F.lit(STATE_NONE))
            .when(F.col("stage").isin(list(retry_stages)), F.lit(STATE_RETRY)).otherwise(F.lit(STATE_DONE)))
    return (notes.unionByName(q.select("note_id", code.alias("_deid_state")))
            .groupBy("note_id").agg(F.max("_deid_state").alias("_deid_state")))


def uncommitted_partitions(spark: SparkSession, runs: Sequence[dict[str, Any]], *, out: str | None = None,
                           table_prefix: str | None = None) -> int:
    """How many table partitions belong to runs that are not committed (readers ignore them)."""
    done = {str(m[RUN_COLUMN]) for m in runs}
    if table_prefix is not None:
        store = TableStore(spark, table_prefix, None)
        ids = [r for t in TABLES for r in store.run_ids(t)]
    else:
        files = _files(spark)
        ids = [n.split("=", 1)[1] for t in TABLES for n in files.names(join(str(out), t))
               if n.startswith(f"{RUN_COLUMN}=")]
    return sum(1 for r in ids if r not in done)
