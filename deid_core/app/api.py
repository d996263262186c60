"""The library API's Spark-free half: keyword options, the key, and `deidentify_table` for Arrow and pandas.

`deidentify_table` is one run (deid_core/app/run.py) on the Arrow executor, like `deid tag`; the
Spark `deidentify(df)` (deid_spark/udfs/api.py) builds its request with the same helpers, so a
keyword argument means the same as the matching command-line option everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from deid_core.app.manifest import enforce_quality
from deid_core.app.options import RunOptions, effective_config, parse_name_columns
from deid_core.app.run import RunRequest, Sink, Source, run
from deid_core.app.runner import ArrowBackend
from deid_core.bundle import Bundle
from deid_core.bundle_choice import resolve_bundle
from deid_core.config import ConfigError
from deid_core.keys import KEY_ENV_VAR, KeyError_, load_key

KeyArg = bytes | bytearray | str | os.PathLike | None
NameColumns = str | Sequence[str] | Mapping[str, str] | None
ConfigArg = str | os.PathLike | Mapping[str, Any] | None
MIN_KEY_BYTES = 16


def resolve_key(key: KeyArg) -> bytes:
    """The secret key: bytes are the key, a str or path names a key file, None reads $DEID_KEY.

    Messages never repeat the argument: a str given by mistake may be the key itself.
    """
    if isinstance(key, bytes | bytearray):
        if len(key) < MIN_KEY_BYTES:
            raise KeyError_(f"key: the key must be at least {MIN_KEY_BYTES} bytes")
        return bytes(key)
    if key is None:
        return load_key(None)
    if not isinstance(key, str | os.PathLike):
        raise KeyError_(f"key: expected bytes (the key) or a key-file path, got {type(key).__name__}")
    if not Path(key).is_file():
        raise KeyError_(f"key: no such key file (a str or path names a key file; pass the key itself as bytes, "
                        f"or None to read ${KEY_ENV_VAR})")
    return load_key(os.fspath(key))


def name_column_items(name_columns: NameColumns) -> list[str]:
    """'a,b:DOCTOR', ['a', 'b:DOCTOR'] or {'a': 'PATIENT', 'b': 'DOCTOR'} as the config's list form."""
    if name_columns is None:
        return []
    if isinstance(name_columns, Mapping):
        items = [f"{col}:{label}" for col, label in name_columns.items()]
    elif isinstance(name_columns, str):
        items = name_columns.split(",")
    else:
        items = list(name_columns)
    items = [i.strip() for i in items if isinstance(i, str) and i.strip()]
    parse_name_columns(items)  # checks the labels now, naming the column
    return items


def api_options(*, name_columns: NameColumns = None, mode: str | None = None, config: ConfigArg = None,
                stages: Sequence[str] | None = None, **job: Any) -> RunOptions:
    """RunOptions from keyword arguments, layered as on the command line: defaults < config < arguments.

    `config` is a TOML file of conf/deidentify.toml's shape, or a mapping of the same shape;
    `job` holds [job] keys (batch_size, partitions, on_duplicate, staging...); None means unset.
    """
    pipeline: dict[str, Any] = {}
    if mode is not None:
        pipeline["mode"] = mode
    if stages is not None:
        pipeline["stages"] = [stages] if isinstance(stages, str) else list(stages)
    job_values = {k: v for k, v in job.items() if v is not None}
    if name_columns is not None:
        job_values["name_columns"] = name_column_items(name_columns)
    given = config if isinstance(config, Mapping) or config is None else os.fspath(config)
    cfg = effective_config(given, {k: v for k, v in (("pipeline", pipeline), ("job", job_values)) if v})
    return RunOptions(config=cfg, name_columns=parse_name_columns(list(cfg.job.name_columns)))


@dataclass(frozen=True)
class TableResult:
    """What `deidentify_table` returns: the three output tables (Arrow) and the run's manifest."""

    notes: pa.Table = field(repr=False)
    spans: pa.Table = field(repr=False)
    quarantine: pa.Table = field(repr=False)
    manifest: dict[str, Any]

    @property
    def counts(self) -> dict[str, Any]:
        """The manifest's counts (notes, quarantined, spans, spans_by_label...)."""
        return self.manifest["counts"]


def deidentify_table(
    notes: Any,
    *,
    key: KeyArg = None,
    name_columns: NameColumns = None,
    mode: str | None = None,
    config: ConfigArg = None,
    bundle: str | os.PathLike | Bundle | None = None,
    stages: Sequence[str] | None = None,
    output: str | os.PathLike | None = None,
    batch_size: int | None = None,
    on_duplicate: str | None = None,
    check_quality: bool = True,
) -> TableResult:
    """De-identify notes held in memory (a pyarrow Table or a pandas DataFrame) without Spark.

    Same run as `deid tag`: the same checks, policies and outputs; with `output` the four outputs
    are also written there. Raises ConfigError (bad options or columns, a ValueError) before any
    work, and QuarantineRateError when check_quality and too many notes failed a stage.
    """
    table = notes if isinstance(notes, pa.Table) else _arrow_table(notes)
    options = api_options(name_columns=name_columns, mode=mode, config=config, stages=stages,
                          batch_size=batch_size, on_duplicate=on_duplicate)
    request = RunRequest(Source(frame=table), Sink(path=None if output is None else os.fspath(output)), options,
                         resolve_key(key), resolve_bundle(options.config, bundle))
    result = run(request, ArrowBackend())
    if check_quality:
        enforce_quality(result.manifest)
    assert result.tables is not None
    return TableResult(*result.tables, manifest=result.manifest)


def _arrow_table(frame: Any) -> pa.Table:
    """A pandas DataFrame (or any object exporting an Arrow stream) as an Arrow table."""
    import pandas as pd

    if isinstance(frame, pd.DataFrame):
        return pa.Table.from_pandas(frame, preserve_index=False)
    try:  # pyarrow takes record batches and any object exporting an Arrow stream (polars, duckdb...)
        return pa.table(frame)
    except (TypeError, ValueError, pa.ArrowException):
        raise ConfigError(f"notes: expected a pyarrow Table or a pandas DataFrame, got {type(frame).__name__}") from None
