"""The run's steps (deid_core/app/run.py) as DataFrame operations: the Spark executor.

What each step means (schema rules, id policies, which duplicate is kept, the projections and
their order) is stated once in deid_core/app (schema.py, policies.py) and executed the same way
on Arrow by deid_core/app/runner.py. Only file operations on non-local paths (HDFS, S3...) use
the JVM, and only under classic Spark (udfs/files.py); under Spark Connect every step runs through
the DataFrame API, the key ships as a Connect artifact and the manifest is uploaded.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from deid_core.app.policies import DEDUP_NULLS_FIRST, IdPlan, InputCounts
from deid_core.app.run import Sink, Source, TagTask
from deid_core.app.runs import (
    ALL,
    RUN_COLUMN,
    SINCE,
    SKIP_DONE,
    SKIP_NULL,
    SKIP_OLD,
    STATE_DONE,
    STATE_RETRY,
    TAKEN_NEW,
    TAKEN_RETRY,
    Selection,
    encode_mark,
    mark_order,
)
from deid_core.app.schema import (
    DUP_COLUMN,
    ERROR_CLASS,
    ERROR_STAGE,
    NOTES_ORDER,
    QUARANTINE_FROM,
    QUARANTINE_ORDER,
    SPAN_COLUMNS,
    SPAN_PARENT,
    SPANS,
    SPANS_ORDER,
    STAGED_CORE,
    STAGED_NOTE_DATE,
    BatchSpec,
)
from deid_core.app.store import TABLES, table_path
from deid_core.bundle import bundle_bytes
from deid_spark.udfs.files import ServerFiles
from deid_spark.udfs.progress import TagProgress
from deid_spark.udfs.runs import TableStore, committed_state

log = logging.getLogger("deid.job")


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow view of a Spark schema; columns Arrow cannot express become null-typed (pass-through)."""
    from pyspark.sql.pandas.types import to_arrow_type

    fields = []
    for f in schema.fields:
        try:
            t = to_arrow_type(f.dataType, timezone="UTC")
        except Exception:  # noqa: BLE001 - only core/name columns need a faithful type
            t = pa.null()
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


def spark_reason(exc: BaseException) -> str:
    """One line from a Spark error: its [ERROR_CLASS] line if it has one (py4j wraps it after a call line)."""
    text = str(exc)
    found = re.search(r"\[[A-Z][A-Z0-9_.]+\][^\n]*", text)
    line = found.group(0) if found else (text.strip().splitlines() or [type(exc).__name__])[0]
    return line[:300]


def read_input(spark: SparkSession, source: Source) -> DataFrame:
    """The input notes from a Parquet folder or a catalog table (errors name the input, in one line)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException, PySparkException

    try:
        return spark.read.parquet(source.path) if source.path is not None else spark.table(source.table)
    except AnalysisException as exc:
        raise FileNotFoundError(f"{source.where}: cannot read it ({spark_reason(exc)})") from None
    except (Py4JJavaError, PySparkException) as exc:  # e.g. a CSV file: no Parquet footer to infer a schema from
        raise ValueError(f"{source.where}: cannot read it as Parquet ({spark_reason(exc)}); point it at Parquet "
                         "files only") from None


def _usable_id() -> Any:
    """A note_id the run can carry: present and valid UTF-8 (policies: the others count as null)."""
    return F.col("note_id").isNotNull() & F.is_valid_utf8(F.col("note_id"))


def group_by_patient(df: DataFrame, partitions: int) -> DataFrame:
    """Repartition so each patient's notes meet in one task, in a row (notes without patient spread by id).

    Sorted by patient within the partition, so the tagger's batches can keep a patient's notes
    together (deid_core.app.batch.patient_batches) for cross-note propagation.
    """
    key = F.coalesce(F.col("patient_id"), F.col("note_id")) if "patient_id" in df.columns else F.col("note_id")
    return df.repartition(partitions, key).sortWithinPartitions(key)


def staged_spark_schema(df: DataFrame, spec: BatchSpec) -> StructType:
    """The mapInArrow output schema: staged core fields, then pass-through fields as in the input."""
    from pyspark.sql.pandas.types import from_arrow_type

    dates = [STAGED_NOTE_DATE] if spec.note_date_out else []
    core = [StructField(f.name, from_arrow_type(f.type), True) for f in [*STAGED_CORE, *dates]]
    return StructType(core + [df.schema[c] for c in spec.passthrough])


def project(staged: DataFrame, spec: BatchSpec) -> tuple[DataFrame, DataFrame, DataFrame]:
    """notes/, spans/ and quarantine/ from the staged results (schema.py's columns and order)."""
    ok = F.col(ERROR_STAGE).isNull()
    notes = staged.filter(ok).select(*spec.notes_columns).sortWithinPartitions(*NOTES_ORDER)
    spans = (staged.filter(ok).select(*SPAN_PARENT, F.explode(SPANS).alias("s"))
             .select(*SPAN_PARENT, *[F.col(f"s.{c}").alias(c) for c in SPAN_COLUMNS])
             .sortWithinPartitions(*SPANS_ORDER))
    quarantine = (staged.filter(~ok).select(*[F.col(src).alias(out) for out, src in QUARANTINE_FROM.items()])
                  .sortWithinPartitions(*QUARANTINE_ORDER))
    return notes, spans, quarantine


def staging_mode(requested: str, *, connect: bool, in_memory: bool = False, staging_dir: str | None = None) -> str:
    """How the staged result is kept: "parquet" needs a folder the run can remove again, which Spark
    Connect cannot do, and returned frames live on after the run (only in a --staging-dir)."""
    if requested == "parquet" and (connect or (in_memory and staging_dir is None)):
        return "persist"
    return requested


def default_parallelism(spark: SparkSession) -> int:
    """Spark's default parallelism (classic); the shuffle partitions setting under Spark Connect."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return int(spark.conf.get("spark.sql.shuffle.partitions", "200"))


class SparkBackend:
    """The Spark executor: a DataFrame plan, tagged by mapInArrow, the result kept once (Parquet or cache)."""

    runner = "spark"

    def __init__(self, spark: SparkSession, *, partitions: int = 0, staging: str = "parquet",
                 progress_interval: float = 0) -> None:
        self.spark = spark
        self.files = ServerFiles(spark)
        self.local_files = not self.files.connect  # under Connect, paths are the server's
        self.staging = staging
        self.stages_to_files = staging == "parquet"
        self.partitions = partitions or default_parallelism(spark)
        self.progress_interval = progress_interval
        self._shipped: Any = None
        self._persisted: DataFrame | None = None

    def check_sink(self, sink: Sink) -> None:
        """Refuse, before any work, an output the manifest could not be written to (Spark Connect)."""
        if sink.path is not None:
            self.files.check_output(sink.path, sink.where)

    def read(self, source: Source) -> DataFrame:
        """The input DataFrame (lazy): the given one, or read from a path or table."""
        if source.frame is not None:
            return source.frame
        return read_input(self.spark, source)

    def schema(self, frame: DataFrame) -> pa.Schema:
        """The input's schema as Arrow sees it."""
        return arrow_schema(frame.schema)

    def count_ids(self, frame: DataFrame) -> InputCounts:
        """One aggregation over note_id: rows, unusable ids, repeated ids and their extra rows."""
        per_id = frame.groupBy("note_id").count()
        repeated = _usable_id() & (F.col("count") > 1)
        row = per_id.agg(
            F.coalesce(F.sum("count"), F.lit(0)).alias("rows"),
            F.coalesce(F.sum(F.when(~_usable_id(), F.col("count"))), F.lit(0)).alias("null_ids"),
            F.count(F.when(repeated, True)).alias("dup_ids"),
            F.coalesce(F.sum(F.when(repeated, F.col("count") - 1)), F.lit(0)).alias("dup_rows"),
        ).first()
        return InputCounts(int(row["rows"]), int(row["null_ids"]), int(row["dup_ids"]), int(row["dup_rows"]))

    def apply_ids(self, frame: DataFrame, plan: IdPlan) -> DataFrame:
        """Drop unusable ids (policy drop) and add the duplicate flag (first copy in dedup order kept)."""
        if plan.drop_null_ids:
            frame = frame.filter(_usable_id())
        if plan.dedup_keys is None:
            return frame.withColumn(DUP_COLUMN, F.lit(False))
        order = [F.col(k).asc_nulls_first() if DEDUP_NULLS_FIRST else F.col(k).asc_nulls_last()
                 for k in plan.dedup_keys]
        repeated = (frame.groupBy("note_id").count().filter("count > 1")
                    .select("note_id", F.lit(True).alias("_deid_rep")))
        marked = frame.join(F.broadcast(repeated), "note_id", "left")
        window = Window.partitionBy("note_id").orderBy(*order)
        dups = marked.filter(F.col("_deid_rep").isNotNull()).withColumn(DUP_COLUMN, F.row_number().over(window) > 1)
        single = marked.filter(F.col("_deid_rep").isNull()).withColumn(DUP_COLUMN, F.lit(False))
        return single.unionByName(dups).drop("_deid_rep").select(*frame.columns, DUP_COLUMN)

    def stage(self, frame: DataFrame, task: TagTask, staging_path: str | None) -> DataFrame:
        """Group by patient, tag with mapInArrow, keep the result once (staging Parquet or persisted)."""
        from pyspark import StorageLevel

        from deid_spark.udfs.deidentify import WorkerPayload, tag_batches
        from deid_spark.udfs.shipping import ShippedKey

        frame = group_by_patient(frame, self.partitions)
        self._shipped = ShippedKey(self.spark, task.key)  # a distributed file, never in the closure
        payload = WorkerPayload(task.bundle.id, bundle_bytes(task.bundle), task.config, self._shipped.ref, task.spec)
        log.debug("schema ok: %d pass-through column(s), %d name column(s); config digest %s",
                  len(task.spec.passthrough), len(task.spec.name_columns), task.config.digest[:12])
        log.debug("bundle %s (%d bytes zipped) ships inside the tagging function", task.bundle.id[:12],
                  len(payload.bundle_zip))
        log.info("tagging in %d partition(s), batches of %d notes, staging: %s", self.partitions,
                 task.batch_size, self.staging)
        staged = frame.mapInArrow(tag_batches(payload), staged_spark_schema(frame, task.spec))
        batch_conf = "spark.sql.execution.arrow.maxRecordsPerBatch"
        before = self.spark.conf.get(batch_conf, None)
        self.spark.conf.set(batch_conf, str(task.batch_size))
        try:
            with TagProgress(self.spark, task.notes, self.partitions, self.progress_interval):
                if staging_path is not None:
                    staged.write.parquet(staging_path)
                else:
                    self._persisted = staged.persist(StorageLevel.MEMORY_AND_DISK)
                    self._persisted.write.format("noop").mode("overwrite").save()  # fill the cache, one stage
        finally:
            if before is None:
                self.spark.conf.unset(batch_conf)
            else:
                self.spark.conf.set(batch_conf, before)
        return self.spark.read.parquet(staging_path) if staging_path is not None else self._persisted

    def select(self, frame: DataFrame, selection: Selection, sink: Sink) -> tuple[DataFrame, dict[str, int] | None, Any]:
        """The rows this run takes (deid_core.app.runs' rules), counts by reason, and the new high-water mark."""
        if selection.mode == ALL:
            return frame, None, None
        state = F.lit(0)
        marked = frame
        if selection.reads_committed:
            known = committed_state(self.spark, selection.run_ids, selection.retry_stages, out=sink.path,
                                    table_prefix=sink.table_prefix)
            if sink.table_prefix is not None:  # Spark refuses to overwrite a table the written rows were read from
                known = known.localCheckpoint()
            marked = frame.join(known, "note_id", "left")
            state = F.coalesce(F.col("_deid_state"), F.lit(0))
        reason = F.lit(TAKEN_NEW)
        if selection.mode == SINCE:
            col = F.col(selection.since_column)
            if selection.after is not None:
                mark = F.lit(str(selection.after)).cast(frame.schema[selection.since_column].dataType)
                reason = F.when(col.isNull(), F.lit(SKIP_NULL)).when(col > mark, F.lit(TAKEN_NEW)).otherwise(
                    F.lit(SKIP_OLD))
        else:
            reason = F.when(state == STATE_DONE, F.lit(SKIP_DONE)).otherwise(F.lit(TAKEN_NEW))
        marked = marked.withColumn("_deid_reason", F.when(state == STATE_RETRY, F.lit(TAKEN_RETRY)).otherwise(reason))
        taken = F.col("_deid_reason").isin(TAKEN_NEW, TAKEN_RETRY)
        aggs = [F.count(F.lit(1)).alias("n")]
        if selection.mode == SINCE:
            top = F.max(F.when(taken, F.col(selection.since_column)))
            aggs.append(_mark_text(top, frame.schema[selection.since_column].dataType).alias("mark"))
        rows = marked.groupBy("_deid_reason").agg(*aggs).collect()
        marks = [r["mark"] for r in rows if selection.mode == SINCE and r["mark"] is not None]
        high = encode_mark(max(marks, key=mark_order)) if marks else None
        return (marked.filter(taken).select(*frame.columns), {r["_deid_reason"]: int(r["n"]) for r in rows}, high)

    def project(self, staged: DataFrame, spec: BatchSpec) -> tuple[DataFrame, DataFrame, DataFrame]:
        """notes/, spans/ and quarantine/ from the staged results."""
        return project(staged, spec)

    def write_table(self, frame: DataFrame, name: str, sink: Sink, run_id: str | None) -> None:
        """One output table: a Parquet folder (or a run's partition folder), or a catalog table."""
        if sink.path is not None:
            frame.write.mode("overwrite").parquet(table_path(sink.path, name, run_id))
        else:
            self.table_store(sink, Source()).write(frame, name, run_id)

    def table_store(self, sink: Sink, source: Source) -> TableStore:
        """The bookkeeping of a table-prefix output (udfs/runs.py)."""
        return TableStore(self.spark, str(sink.table_prefix), source.table)

    def result_tables(self, tables: tuple[DataFrame, DataFrame, DataFrame], sink: Sink,
                      run_id: str | None) -> tuple[DataFrame, DataFrame, DataFrame]:
        """notes, spans and quarantine as DataFrames: read back from what was written (this run's rows), or
        the projections of the staged result for an in-memory sink (cached until the caller releases it)."""
        if sink.in_memory:
            return tables
        if sink.path is not None:
            return tuple(self.spark.read.parquet(table_path(sink.path, n, run_id)) for n in TABLES)
        frames = (self.spark.table(f"{sink.table_prefix}{n}") for n in TABLES)
        return tuple(f if run_id is None else f.where(F.col(RUN_COLUMN) == run_id).drop(RUN_COLUMN) for f in frames)

    def staged_counts(self, staged: DataFrame) -> tuple[list[tuple[str | None, str | None, int]], dict[str, int]]:
        """(error_stage, error_class, n) rows and spans per label, from the staged results."""
        status = [(r[ERROR_STAGE], r[ERROR_CLASS], int(r["count"]))
                  for r in staged.groupBy(ERROR_STAGE, ERROR_CLASS).count().collect()]
        labels = {r["label"]: int(r["count"]) for r in
                  staged.select(F.explode(f"{SPANS}.label").alias("label")).groupBy("label").count().collect()}
        return status, labels

    def release(self, staged: DataFrame | None) -> None:
        """Remove the driver's key file and drop the cached result (the staging folder is run()'s)."""
        if self._shipped is not None:
            self._shipped.close()
            self._shipped = None
        if self._persisted is not None:
            self._persisted.unpersist()
            self._persisted = None

    def describe(self) -> dict[str, Any]:
        """Executor details for the manifest."""
        return {"spark_version": self.spark.version, "spark_connect": self.files.connect,
                "partitions": self.partitions, "staging": self.staging}

    def write_remote_text(self, path: str, text: str) -> None:
        """Write a small text file where Spark writes (udfs/files.py: Hadoop FS, or uploaded under Spark Connect)."""
        self.files.write_remote_text(path, text)

    def read_remote_text(self, path: str) -> str | None:
        """A small text file on a Hadoop file system (None if missing)."""
        return self.files.read_remote_text(path)

    def read_remote_texts(self, folder: str, suffix: str) -> list[tuple[str, str]]:
        """(name, text) of the files *suffix of a folder on a Hadoop file system."""
        return self.files.read_remote_texts(folder, suffix)

    def remove_remote(self, path: str) -> None:
        """Delete a file or folder where Spark writes (missing is fine; left in place under Spark Connect)."""
        self.files.remove_remote(path)

    def list_remote(self, folder: str) -> list[str]:
        """The children of a folder on a Hadoop file system ([] if it does not exist, or under Connect)."""
        return self.files.list_remote(folder)

    def remote_files_available(self) -> bool:
        """Whether files can be listed and removed (classic Spark, not Spark Connect)."""
        return self.files.remote_files_available()


def _mark_text(value: Any, t: Any) -> Any:
    """A mark as text Spark and Python read back exactly: ISO timestamps with their offset, ISO dates."""
    from pyspark.sql.types import DateType, TimestampNTZType, TimestampType

    if isinstance(t, TimestampType):
        return F.date_format(value, "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX")
    if isinstance(t, TimestampNTZType):
        return F.date_format(value, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS")
    if isinstance(t, DateType):
        return value.cast("string")
    return value
