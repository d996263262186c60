"""pyspark.ml stages: `DeidTransformer` (de-identify in a Pipeline) and `DeidBundleEstimator` (fit a bundle).

The transformer is `deidentify(df, ...)` (deid_spark/udfs/api.py) with its options as Params, so a
saved PipelineModel holds only plain values: a key *reference* (a key file's path, or the name of
an environment variable), never the key. `transform` returns the notes/ table (or spans/ or
quarantine/, by `outputTable`); the whole result of the last call is `lastResult`.
The estimator trains the CRF taggers (deid_core.training.train) on the driver from a DataFrame of
notes with a gold-span column, writes the bundle to `bundlePath`, and returns a transformer that
uses it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pyspark import keyword_only
from pyspark.ml import Estimator, Transformer
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable
from pyspark.sql import DataFrame

from deid_core.app.api import MIN_KEY_BYTES, name_column_items, resolve_key
from deid_core.app.options import parse_name_columns
from deid_core.config import ConfigError
from deid_core.keys import KEY_ENV_VAR, KeyError_
from deid_core.notes import Note
from deid_core.spans import Span
from deid_spark.udfs.api import Result, deidentify

OUTPUT_TABLES = ("notes", "spans", "quarantine")


def _param(name: str, doc: str, conv: Any = TypeConverters.toString) -> Param:
    return Param(Params._dummy(), name, doc, typeConverter=conv)


class _DeidParams(Params):
    """The options of a run, as ML Params (plain values only: they are saved with the pipeline)."""

    keyFile = _param("keyFile", "path of the secret key file (the key itself is never a Param)")
    keyEnv = _param("keyEnv", f"environment variable holding the secret key (default {KEY_ENV_VAR})")
    nameColumns = _param("nameColumns", "known-PHI metadata columns, each 'col' or 'col:LABEL'",
                         TypeConverters.toListString)
    mode = _param("mode", "replacement mode: surrogate, mask, redact, hash")
    bundle = _param("bundle", "model bundle folder (default: the config's [model] bundle, models/default)")
    config = _param("config", "TOML file merged over conf/deidentify.toml")
    stages = _param("stages", "pipeline stages, e.g. ['rules', 'crf']", TypeConverters.toListString)
    partitions = _param("partitions", "tasks after grouping by patient (0: default)", TypeConverters.toInt)
    batchSize = _param("batchSize", "notes per Arrow batch", TypeConverters.toInt)

    def _opt(self, param: Param) -> Any:
        return self.getOrDefault(param) if self.isDefined(param) else None

    def run_kwargs(self) -> dict[str, Any]:
        """deidentify()'s keyword arguments from the Params (the key read now, on the driver)."""
        return {"key": self.read_key(), "name_columns": self._opt(self.nameColumns), "mode": self._opt(self.mode),
                "bundle": self._opt(self.bundle), "config": self._opt(self.config), "stages": self._opt(self.stages),
                "partitions": self._opt(self.partitions), "batch_size": self._opt(self.batchSize)}

    def read_key(self) -> bytes:
        """The key from keyFile, else from the environment variable keyEnv (default $DEID_KEY)."""
        path = self._opt(self.keyFile)
        if path:
            return resolve_key(Path(path))
        env = self._opt(self.keyEnv) or KEY_ENV_VAR
        value = os.environ.get(env)
        if not value:
            raise KeyError_(f"keyEnv {env}: the environment variable is not set (or set keyFile)")
        if len(value.encode("utf-8")) < MIN_KEY_BYTES:
            raise KeyError_(f"keyEnv {env}: the key must be at least {MIN_KEY_BYTES} bytes")
        return value.encode("utf-8")


class DeidTransformer(Transformer, _DeidParams, DefaultParamsReadable, DefaultParamsWritable):
    """De-identify the notes of a DataFrame; returns the notes/ table (or `outputTable`), like the job."""

    outputTable = _param("outputTable", "which table transform returns: notes, spans or quarantine")

    @keyword_only
    def __init__(self, *, keyFile: str | None = None, keyEnv: str | None = None,
                 nameColumns: list[str] | None = None, mode: str | None = None, bundle: str | None = None,
                 config: str | None = None, stages: list[str] | None = None, partitions: int | None = None,
                 batchSize: int | None = None, outputTable: str = "notes") -> None:
        super().__init__()
        self._setDefault(outputTable="notes")
        self.lastResult: Result | None = None
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, **kwargs: Any) -> DeidTransformer:
        """Set any of the constructor's Params."""
        return self._set(**self._input_kwargs)

    def _transform(self, dataset: DataFrame) -> DataFrame:
        table = self.getOrDefault(self.outputTable)
        if table not in OUTPUT_TABLES:
            raise ConfigError(f"outputTable {table!r}: expected one of {', '.join(OUTPUT_TABLES)}")
        self.lastResult = deidentify(dataset, **self.run_kwargs())
        return getattr(self.lastResult, table)


class DeidBundleEstimator(Estimator, _DeidParams, DefaultParamsReadable, DefaultParamsWritable):
    """Train the CRF taggers on annotated notes (a gold-span column) into a bundle; fit -> DeidTransformer."""

    bundlePath = _param("bundlePath", "folder the trained bundle is written to (on the driver)")
    goldCol = _param("goldCol", "column of gold spans: array<struct<start:int, end:int, label:string>>")
    crfConfig = _param("crfConfig", "CRF configuration TOML (default conf/crf.toml)")

    @keyword_only
    def __init__(self, *, bundlePath: str | None = None, goldCol: str = "gold", crfConfig: str | None = None,
                 keyFile: str | None = None, keyEnv: str | None = None, nameColumns: list[str] | None = None,
                 mode: str | None = None, config: str | None = None, stages: list[str] | None = None,
                 partitions: int | None = None, batchSize: int | None = None) -> None:
        super().__init__()
        self._setDefault(goldCol="gold")
        self._set(**self._input_kwargs)

    def _fit(self, dataset: DataFrame) -> DeidTransformer:
        from deid_core.engine.pipeline import build_stage
        from deid_core.training.corpora import pipeline_config
        from deid_core.training.train import crf_config, make_docs, train_bundle

        if not self.isDefined(self.bundlePath):
            raise ConfigError("bundlePath: set the folder the trained bundle is written to")
        notes, gold = annotated_notes(dataset, self.getOrDefault(self.goldCol), self._opt(self.nameColumns))
        dconf = pipeline_config(self._opt(self.config))
        path = Path(self.getOrDefault(self.bundlePath))
        train_bundle(make_docs(notes, gold), crf_config(self._opt(self.crfConfig)), path,
                     rules=build_stage(dconf, "rules", None).feature_spans, extra={"trained_by": "DeidBundleEstimator"})
        names = [p.name for p in _DeidParams().params if p.name != "bundle"]
        shared = {n: self.getOrDefault(n) for n in names if self.isDefined(self.getParam(n))}
        return DeidTransformer(bundle=str(path), **shared)


def annotated_notes(df: DataFrame, gold_col: str, name_columns: list[str] | None
                    ) -> tuple[list[Note], dict[str, list[Span]]]:
    """Notes (with their known names) and gold spans by note_id, collected on the driver."""
    names = parse_name_columns(name_column_items(name_columns))
    missing = [c for c in ("note_id", "text", gold_col, *names) if c not in df.columns]
    if missing:
        raise ConfigError(f"training DataFrame: missing column(s) {', '.join(missing)}; found {', '.join(df.columns)}")
    cols = [c for c in ("note_id", "text", "patient_id", gold_col, *names) if c in df.columns]
    notes, gold = [], {}
    for row in df.select(*cols).toArrow().to_pylist():
        known = tuple((str(v), label) for col, label in names.items()
                      for v in (row[col] if isinstance(row[col], list) else [row[col]]) if v and str(v).strip())
        notes.append(Note(row["note_id"], row["text"] or "", row.get("patient_id"), None, known))
        gold[row["note_id"]] = [Span(int(g["start"]), int(g["end"]), g["label"], "gold")
                                for g in (row[gold_col] or [])]
    return notes, gold
