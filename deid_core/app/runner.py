"""`deid tag`: the run's steps (deid_core/app/run.py) executed on Arrow tables in this process, no Spark.

The executor only does the mechanics; what the steps mean (schema rules, id policies, which
duplicate is kept, the projections and their order) is stated in schema.py and policies.py and
executed the same way by the Spark executor in udfs/plan.py.
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deid_core.app.batch import (
    PATIENT_BATCH_MAX,
    make_deidentifier,
    patient_batches,
    process_batch,
    valid_ids,
)
from deid_core.app.heap import settled_heap
from deid_core.app.manifest import enforce_quality
from deid_core.app.options import RunOptions
from deid_core.app.policies import DEDUP_NULLS_FIRST, IdPlan, InputCounts
from deid_core.app.reader import committed_state
from deid_core.app.run import RunRequest, Sink, Source, TagTask, local_path, run
from deid_core.app.runs import (
    ALL,
    SINCE,
    SKIP_DONE,
    SKIP_NULL,
    SKIP_OLD,
    STATE_DONE,
    STATE_RETRY,
    TAKEN_NEW,
    TAKEN_RETRY,
    Selection,
    decode_mark,
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
    BatchSpec,
    staged_schema,
)
from deid_core.app.store import table_path
from deid_core.bundle import Bundle
from deid_core.bundle_choice import resolve_bundle
from deid_core.config import ConfigError
from deid_core.engine.pipeline import Deidentifier
from deid_core.io.tables import AUDIT_SCHEMA, QUARANTINE_SCHEMA, read_table
from deid_core.keys import DEMO_KEY, load_key

_LOCAL_ONLY = "deid tag reads and writes local Parquet folders only; use jobs/deidentify.py for tables and URIs"


def load_key_and_bundle(options: RunOptions) -> tuple[bytes, Bundle]:
    """The secret key (refuses to start without one; --demo-key means the demo key) and the bundle
    (--bundle DIR, else the config's [model] bundle: deid_core.bundle_choice).

    The configured pipeline is built from them once here, so a stage that cannot run as its model
    was trained (e.g. a CRF trained with rule hits and no rules stage before it) or a bundle built
    for other versions stops the run before any work (the Spark job: before Spark starts).
    """
    key, bundle, _ = checked_inputs(options)
    return key, bundle


def checked_inputs(options: RunOptions) -> tuple[bytes, Bundle, Deidentifier]:
    """load_key_and_bundle, with the Deidentifier its check built (`deid tag` tags with it)."""
    if options.demo_key and options.key_file:
        raise ConfigError("--demo-key and --key-file exclude each other: give one")
    key = DEMO_KEY if options.demo_key else load_key(options.key_file)
    bundle = resolve_bundle(options.config, options.bundle)
    return key, bundle, make_deidentifier(options.config, bundle, key)


def _order(columns: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    return [(c, "ascending") for c in columns]


def duplicate_flags(table: pa.Table, keys: tuple[str, ...] | None) -> pa.Array:
    """True for every copy of a note_id but the first in (note_id, *keys) order (policies.dedup_keys)."""
    n = table.num_rows
    if keys is None or n == 0:
        return pa.array(np.zeros(n, dtype=bool))
    # each key preceded by its validity: False (null) sorts first when DEDUP_NULLS_FIRST
    cols: dict[str, Any] = {"note_id": table["note_id"]}
    for i, k in enumerate(keys):
        valid = pc.is_valid(table[k])
        cols[f"v{i}"] = valid if DEDUP_NULLS_FIRST else pc.invert(valid)
        cols[f"k{i}"] = table[k]
    order = pc.sort_indices(pa.table(cols), sort_keys=_order(list(cols)))
    ids = table["note_id"].take(order).combine_chunks()
    same = np.zeros(n, dtype=bool)
    if n > 1:
        same[1:] = pc.equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    flags = np.zeros(n, dtype=bool)
    flags[order.to_numpy()] = same
    return pa.array(flags)


def project(staged: pa.Table, spec: BatchSpec) -> tuple[pa.Table, pa.Table, pa.Table]:
    """notes/, spans/ and quarantine/ from the staged results (schema.py's columns and order)."""
    ok = pc.is_null(staged[ERROR_STAGE])
    done = staged.filter(ok)
    notes = done.select(spec.notes_columns).sort_by(_order(NOTES_ORDER))
    flat = pc.list_flatten(done[SPANS])
    parent = pc.list_parent_indices(done[SPANS])
    cols: dict[str, Any] = {c: pc.take(done[c], parent) for c in SPAN_PARENT}
    for c in SPAN_COLUMNS:
        cols[c] = pc.struct_field(flat, c) if len(flat) else pa.array([], AUDIT_SCHEMA.field(c).type)
    spans = pa.table(cols, schema=AUDIT_SCHEMA).sort_by(_order(SPANS_ORDER))
    bad = staged.filter(pc.invert(ok))
    quarantine = pa.table({out: bad[src] for out, src in QUARANTINE_FROM.items()},
                          schema=QUARANTINE_SCHEMA).sort_by(_order(QUARANTINE_ORDER))
    return notes, spans, quarantine


class ArrowBackend:
    """The Arrow executor: the whole input as one table in memory (small inputs, tests, tuning).

    `deidentifier`: one already built from the run's config, bundle and key (the check of
    checked_inputs), used instead of building it again."""

    runner = "local"
    stages_to_files = False
    local_files = True

    def __init__(self, deidentifier: Deidentifier | None = None) -> None:
        self.deidentifier = deidentifier

    def check_sink(self, sink: Sink) -> None:
        """Nothing beyond run.check_request: local folders only (checked when writing)."""

    def read(self, source: Source) -> pa.Table:
        """The input table: the given one, or read from a path (checked by run.check_request)."""
        if source.frame is not None:
            return source.frame
        if source.path is None:
            raise ConfigError(_LOCAL_ONLY)
        return read_table(local_path(source.path))

    def schema(self, frame: pa.Table) -> pa.Schema:
        """The input's Arrow schema."""
        return frame.schema

    def count_ids(self, frame: pa.Table) -> InputCounts:
        """Rows, unusable (null or non-UTF-8) ids, repeated ids and their extra rows."""
        valid = valid_ids(frame["note_id"])
        counts = pc.value_counts(frame["note_id"].filter(valid))
        repeated = pc.filter(counts, pc.greater(counts.field("counts"), 1))
        extra = int(pc.sum(repeated.field("counts")).as_py() or 0) - len(repeated)
        return InputCounts(frame.num_rows, frame.num_rows - int(pc.sum(valid).as_py() or 0), len(repeated), extra)

    def apply_ids(self, frame: pa.Table, plan: IdPlan) -> pa.Table:
        """Drop unusable ids (policy drop) and add the duplicate flag."""
        if plan.drop_null_ids:
            frame = frame.filter(valid_ids(frame["note_id"]))
        return frame.append_column(DUP_COLUMN, duplicate_flags(frame, plan.dedup_keys))

    def stage(self, frame: pa.Table, task: TagTask, staging_path: str | None) -> pa.Table:
        """Tag every note once, a patient's notes in a row (cross-note propagation); in memory."""
        deid = self.deidentifier or make_deidentifier(task.config, task.bundle, task.key)
        out_schema = staged_schema(frame.schema, task.spec)
        if "patient_id" in frame.column_names:
            frame = frame.sort_by([("patient_id", "ascending")])
        batches = patient_batches(frame.to_batches(task.batch_size), max(task.batch_size, PATIENT_BATCH_MAX))
        with settled_heap(task.config.job.gc):  # as the job's workers tag (heap.py); the caller's settings back after
            return pa.Table.from_batches([process_batch(b, deid, task.spec, out_schema) for b in batches],
                                         schema=out_schema)

    def select(self, frame: pa.Table, selection: Selection, sink: Sink) -> tuple[pa.Table, dict[str, int] | None, Any]:
        """The rows this run takes (runs.py's rules), why each was taken or left, and the new high-water mark."""
        if selection.mode == ALL:
            return frame, None, None
        n = frame.num_rows
        state = np.zeros(n, dtype=np.int8)
        if selection.reads_committed:
            known = committed_state(local_path(str(sink.path)), selection.run_ids, selection.retry_stages)
            idx = pc.index_in(frame["note_id"], value_set=known["note_id"].cast(frame["note_id"].type))
            state = pc.fill_null(pc.take(known["state"], idx), 0).to_numpy(zero_copy_only=False)
        reason = np.full(n, TAKEN_NEW, dtype=object)
        if selection.mode == SINCE:
            col = frame[selection.since_column]
            if selection.after is not None:
                mark = decode_mark(selection.after, col.type)
                past = pc.fill_null(pc.greater(col, mark), False).to_numpy(zero_copy_only=False)
                reason[~past] = SKIP_OLD
                reason[pc.is_null(col).to_numpy(zero_copy_only=False)] = SKIP_NULL
        else:
            reason[state == STATE_DONE] = SKIP_DONE
        reason[state == STATE_RETRY] = TAKEN_RETRY
        keep = pa.array((reason == TAKEN_NEW) | (reason == TAKEN_RETRY))
        taken = frame.filter(keep)
        mark = pc.max(taken[selection.since_column]).as_py() if selection.mode == SINCE and taken.num_rows else None
        kinds, counts = np.unique(reason.astype(str), return_counts=True)
        return taken, {str(k): int(c) for k, c in zip(kinds, counts, strict=True)}, mark

    def project(self, staged: pa.Table, spec: BatchSpec) -> tuple[pa.Table, pa.Table, pa.Table]:
        """notes/, spans/ and quarantine/ from the staged results."""
        return project(staged, spec)

    def write_table(self, frame: pa.Table, name: str, sink: Sink, run_id: str | None) -> None:
        """One Parquet file per table (or per table partition of a run), replacing what was there."""
        if sink.path is None:
            raise ConfigError(_LOCAL_ONLY)
        folder = local_path(table_path(sink.path, name, run_id))
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        pq.write_table(frame, folder / "part-00000.parquet")

    def result_tables(self, tables: tuple[pa.Table, pa.Table, pa.Table], sink: Sink,
                      run_id: str | None) -> tuple[pa.Table, pa.Table, pa.Table]:
        """notes, spans and quarantine: the projected tables, already in memory (the ones written, if any)."""
        return tables

    def staged_counts(self, staged: pa.Table) -> tuple[list[tuple[str | None, str | None, int]], dict[str, int]]:
        """(error_stage, error_class, n) rows and spans per label, read from the staged table."""
        groups = staged.group_by([ERROR_STAGE, ERROR_CLASS], use_threads=False).aggregate([([], "count_all")])
        status = [(r[ERROR_STAGE], r[ERROR_CLASS], r["count_all"]) for r in groups.to_pylist()]
        flat = pc.list_flatten(staged[SPANS])
        labels = pc.value_counts(pc.struct_field(flat, "label")).to_pylist() if len(flat) else []
        return status, {r["values"]: r["counts"] for r in labels}

    def release(self, staged: pa.Table | None) -> None:
        """Nothing to free: the staged table lives in memory."""

    def describe(self) -> dict[str, Any]:
        """No executor details for the manifest."""
        return {}

    def table_store(self, sink: Sink, source: Source) -> Any:
        """Tables are not written by `deid tag`."""
        raise ConfigError(_LOCAL_ONLY)

    def write_remote_text(self, path: str, text: str) -> None:
        """URIs are not written by `deid tag`."""
        raise ConfigError(_LOCAL_ONLY)

    def read_remote_text(self, path: str) -> str | None:
        """URIs are not read by `deid tag`."""
        raise ConfigError(_LOCAL_ONLY)

    def read_remote_texts(self, folder: str, suffix: str) -> list[tuple[str, str]]:
        """URIs are not read by `deid tag`."""
        raise ConfigError(_LOCAL_ONLY)

    def remove_remote(self, path: str) -> None:
        """URIs are not written by `deid tag`."""
        raise ConfigError(_LOCAL_ONLY)

    def list_remote(self, folder: str) -> list[str]:
        """URIs are not written by `deid tag`."""
        raise ConfigError(_LOCAL_ONLY)

    def remote_files_available(self) -> bool:
        """No file operations beyond local paths."""
        return False


def run_local(input_path: str | Any, output: str | Any, options: RunOptions) -> dict[str, Any]:
    """`deid tag`: one run on the Arrow executor; the manifest (raises QuarantineRateError above the ceiling)."""
    key, bundle, deid = checked_inputs(options)
    result = run(RunRequest(Source(path=str(input_path)), Sink(path=str(output)), options, key, bundle),
                 ArrowBackend(deid))
    enforce_quality(result.manifest)
    return result.manifest
