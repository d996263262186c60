"""The library API on Spark: `deidentify(df, key=...)` returns notes, spans and quarantine as DataFrames.

One run (deid_core/app/run.py) on the Spark executor, the same as the job's: `run_spark` is what
jobs/deidentify.py calls too. Works on classic Spark and Spark Connect alike. Re-exported lazily
as `deid_core.deidentify`, so `import deid_core` never imports pyspark.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame

from deid_core.app.api import ConfigArg, KeyArg, NameColumns, api_options, resolve_key
from deid_core.app.manifest import QuarantineRateError, enforce_quality, summary_lines
from deid_core.app.run import RunRequest, RunResult, Sink, Source, run
from deid_core.bundle import Bundle
from deid_core.bundle_choice import resolve_bundle
from deid_core.config import ConfigError
from deid_spark.udfs.plan import SparkBackend, staging_mode
from deid_spark.udfs.session import is_connect

log = logging.getLogger("deid.job")


def run_spark(spark: Any, request: RunRequest) -> RunResult:
    """One run on the Spark executor (the job and `deidentify` alike); logs the summary at the end."""
    job = request.options.job
    staging = staging_mode(job.staging, connect=is_connect(spark), in_memory=request.sink.in_memory,
                           staging_dir=request.staging_dir)
    if staging != job.staging:
        log.info("staging: %s (a staging folder could not be removed %s)", staging,
                 "under Spark Connect" if is_connect(spark) else "while the returned frames live")
    backend = SparkBackend(spark, partitions=job.partitions, staging=staging,
                           progress_interval=job.progress_interval_s)
    result = run(request, backend)
    for line in summary_lines(result.manifest):
        log.info(line)
    return result


@dataclass
class Result:
    """What `deidentify` returns: notes, spans (the audit table) and quarantine, and the run's manifest.

    Without `output` or `output_table_prefix` the frames are projections of the one tagging result,
    kept cached on the executors: call `close()` (or use `with`) to free it; each note was tagged once.
    """

    notes: DataFrame = field(repr=False)
    spans: DataFrame = field(repr=False)
    quarantine: DataFrame = field(repr=False)
    manifest: dict[str, Any]
    _release: Any = field(default=None, repr=False)

    @property
    def counts(self) -> dict[str, Any]:
        """The manifest's counts (input_rows, notes, quarantined, spans, spans_by_label...)."""
        return self.manifest["counts"]

    def close(self) -> None:
        """Free the cached tagging result and the driver's key file (the frames are unusable after)."""
        if self._release is not None:
            self._release()
            self._release = None

    def __enter__(self) -> Result:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def deidentify(
    df: DataFrame,
    *,
    key: KeyArg = None,
    name_columns: NameColumns = None,
    mode: str | None = None,
    config: ConfigArg = None,
    bundle: str | os.PathLike | Bundle | None = None,
    stages: Sequence[str] | None = None,
    output: str | None = None,
    output_table_prefix: str | None = None,
    partitions: int | None = None,
    batch_size: int | None = None,
    on_duplicate: str | None = None,
    staging_dir: str | None = None,
    check_quality: bool = True,
) -> Result:
    """De-identify a DataFrame of notes (note_id, text, optional patient_id, note_date, name columns).

    key: the secret key as bytes, or a key file's path (str or PathLike), or None for $DEID_KEY;
    it is shipped to the workers as a file, never inside anything Spark serializes.
    name_columns: known-PHI metadata columns, 'a,b:DOCTOR', a list of such items or {column: label};
    never copied to an output. mode, stages, config (a TOML file or a mapping of
    conf/deidentify.toml's shape), bundle (a model bundle folder; default: the config's [model] bundle, models/default),
    partitions, batch_size and on_duplicate mean what the job's options of those names mean.
    output / output_table_prefix: also write the job's four outputs there; the returned frames are
    then read back from them. Raises ConfigError (a ValueError) on bad options or columns before any
    work, QuarantineRateError when check_quality and a stage quarantined too many notes.
    """
    if output is not None and output_table_prefix is not None:
        raise ConfigError("output and output_table_prefix exclude each other: give one")
    options = api_options(name_columns=name_columns, mode=mode, config=config, stages=stages, partitions=partitions,
                          batch_size=batch_size, on_duplicate=on_duplicate)
    request = RunRequest(Source(frame=df), Sink(output, output_table_prefix), options, resolve_key(key),
                         resolve_bundle(options.config, bundle), staging_dir)
    result = run_spark(df.sparkSession, request)
    assert result.tables is not None
    out = Result(*result.tables, manifest=result.manifest, _release=result.release)
    if check_quality:
        try:
            enforce_quality(result.manifest)
        except QuarantineRateError:
            out.close()
            raise
    return out
