"""DataFrame plan of the de-identification job: read, check, de-duplicate, group, tag once, project.

Spark-free decisions (schema rules, duplicate order, per-batch tagging) live in deid_core;
this module only expresses them as DataFrame operations.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from deid_core.app.batch import (
    DUP_COLUMN,
    STAGED_CORE,
    STAGED_NOTE_DATE,
    BatchSpec,
    dedup_sort_keys,
    shifts_note_date,
    validate_input_schema,
)
from deid_core.app.runner import duplicate_error, null_id_error
from deid_core.io.tables import AUDIT_SCHEMA

log = logging.getLogger("deid.job")


@dataclass(frozen=True)
class InputCounts:
    """What the pre-pass over note ids found."""

    rows: int
    null_ids: int
    duplicate_ids: int
    duplicate_rows: int


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


def read_input(spark: SparkSession, path: str | None, table: str | None) -> DataFrame:
    """The input notes from a Parquet folder or a catalog table (errors name the input)."""
    from pyspark.errors import AnalysisException

    where = f"--input {path}" if path else f"--input-table {table}"
    try:
        return spark.read.parquet(path) if path else spark.table(table)
    except AnalysisException as exc:
        first = str(exc).splitlines()[0][:300]
        raise FileNotFoundError(f"{where}: cannot read it ({first})") from None


def check_input(df: DataFrame, name_columns: dict[str, str], where: str, config: dict) -> BatchSpec:
    """validate_input_schema on the DataFrame's schema (before any work starts)."""
    return validate_input_schema(arrow_schema(df.schema), name_columns, where, shifts_note_date(config))


def count_ids(df: DataFrame) -> InputCounts:
    """One aggregation over note_id: rows, null ids, repeated ids and their extra rows."""
    per_id = df.groupBy("note_id").count()
    row = per_id.agg(
        F.coalesce(F.sum("count"), F.lit(0)).alias("rows"),
        F.coalesce(F.sum(F.when(F.col("note_id").isNull(), F.col("count"))), F.lit(0)).alias("null_ids"),
        F.count(F.when(F.col("note_id").isNotNull() & (F.col("count") > 1), True)).alias("dup_ids"),
        F.coalesce(F.sum(F.when(F.col("note_id").isNotNull() & (F.col("count") > 1), F.col("count") - 1)),
                   F.lit(0)).alias("dup_rows"),
    ).first()
    return InputCounts(int(row["rows"]), int(row["null_ids"]), int(row["dup_ids"]), int(row["dup_rows"]))


def handle_bad_ids(df: DataFrame, counts: InputCounts, spec: BatchSpec, job: dict) -> DataFrame:
    """Apply on_null_note_id and on_duplicate; add the duplicate flag column."""
    if counts.null_ids:
        if job["on_null_note_id"] == "fail":
            raise null_id_error(counts.null_ids)
        log.warning("dropping %d row(s) with a null note_id (on_null_note_id = drop)", counts.null_ids)
        df = df.filter(F.col("note_id").isNotNull())
    if not counts.duplicate_rows:
        return df.withColumn(DUP_COLUMN, F.lit(False))
    if job["on_duplicate"] == "fail":
        raise duplicate_error(counts.duplicate_rows, counts.duplicate_ids)
    log.warning("quarantining %d duplicate note_id row(s)", counts.duplicate_rows)
    keys = dedup_sort_keys(spec, arrow_schema(df.schema))
    repeated = df.groupBy("note_id").count().filter("count > 1").select("note_id", F.lit(True).alias("_deid_rep"))
    marked = df.join(F.broadcast(repeated), "note_id", "left")
    window = Window.partitionBy("note_id").orderBy(*[F.col(k).asc_nulls_first() for k in keys])
    dups = (marked.filter(F.col("_deid_rep").isNotNull())
            .withColumn(DUP_COLUMN, F.row_number().over(window) > 1))
    single = marked.filter(F.col("_deid_rep").isNull()).withColumn(DUP_COLUMN, F.lit(False))
    return single.unionByName(dups).drop("_deid_rep").select(*df.columns, DUP_COLUMN)


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
    core = [StructField(f.name, from_arrow_type(f.type), True) for f in STAGED_CORE + dates]
    return StructType(core + [df.schema[c] for c in spec.passthrough])


def project_outputs(staged: DataFrame, spec: BatchSpec) -> tuple[DataFrame, DataFrame, DataFrame]:
    """notes/, spans/ (audit rows, AUDIT_SCHEMA order) and quarantine/ from the staged results."""
    ok = F.col("error_stage").isNull()
    dates = ["note_date"] if spec.note_date_out else []
    notes = (staged.filter(ok).select("note_id", "patient_id", "text", *dates, *spec.passthrough)
             .sortWithinPartitions("note_id"))
    span_cols = [F.col(f"s.{f.name}").alias(f.name) for f in AUDIT_SCHEMA if f.name not in ("note_id", "patient_id")]
    spans = (staged.filter(ok).select("note_id", "patient_id", F.explode("spans").alias("s"))
             .select("note_id", "patient_id", *span_cols).sortWithinPartitions("note_id", "start"))
    quarantine = (staged.filter(~ok)
                  .select("note_id", "patient_id", F.col("error_stage").alias("stage"), "error_class")
                  .sortWithinPartitions("note_id"))
    return notes, spans, quarantine


def staged_counts(staged: DataFrame) -> tuple[list[tuple[str | None, str | None, int]], dict[str, int]]:
    """(error_stage, error_class, n) rows and spans per label, from the staged results."""
    status = [(r["error_stage"], r["error_class"], int(r["count"]))
              for r in staged.groupBy("error_stage", "error_class").count().collect()]
    labels = {r["label"]: int(r["count"]) for r in
              staged.select(F.explode("spans.label").alias("label")).groupBy("label").count().collect()}
    return status, labels
