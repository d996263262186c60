"""Process a notes table into the four outputs without Spark (`deid tag`), on the job's code path.

Shared with the Spark job: option handling (options.py), schema checks and per-batch tagging
(batch.py), the duplicate rule (dedup_sort_keys) and the manifest (manifest.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deid_core.app.batch import (
    DUP_COLUMN,
    BatchSpec,
    make_deidentifier,
    patient_batches,
    process_batch,
    shifts_note_date,
    staged_schema,
    tagged_count,
    validate_input_schema,
)
from deid_core.app.batch import dedup_sort_keys as _dedup_keys
from deid_core.app.manifest import (
    MANIFEST_NAME,
    build_manifest,
    enforce_quality,
    manifest_json,
    status_counts,
)
from deid_core.app.options import RunOptions
from deid_core.bundle import Bundle, load_bundle
from deid_core.config import ConfigError
from deid_core.io.tables import AUDIT_SCHEMA, QUARANTINE_SCHEMA, read_table
from deid_core.keys import DEMO_KEY, load_key

log = logging.getLogger("deid.run")
OUTPUT_PARTS = ("notes", "spans", "quarantine", MANIFEST_NAME)


class DuplicateNoteIdError(ConfigError):
    """on_duplicate = "fail" and the input repeats note ids (message gives the counts)."""


class NullNoteIdError(ConfigError):
    """on_null_note_id = "fail" and some rows have no note_id (message gives the count)."""


def load_key_and_bundle(options: RunOptions) -> tuple[bytes, Bundle]:
    """The secret key (refuses to start without one; --demo-key means the demo key) and the bundle."""
    if options.demo_key and options.key_file:
        raise ConfigError("--demo-key and --key-file exclude each other: give one")
    key = DEMO_KEY if options.demo_key else load_key(options.key_file)
    return key, load_bundle(options.bundle)


def duplicate_error(extra_rows: int, ids: int) -> DuplicateNoteIdError:
    """The error for on_duplicate = "fail" (counts only, no ids)."""
    return DuplicateNoteIdError(
        f"{extra_rows} duplicate note_id row(s) over {ids} note_id value(s); fix the input or set "
        "[job] on_duplicate = \"quarantine\" (or --on-duplicate quarantine)")


def null_id_error(n: int) -> NullNoteIdError:
    """The error for on_null_note_id = "fail"."""
    return NullNoteIdError(f"{n} input row(s) have a null note_id; fix the input or set "
                           "[job] on_null_note_id = \"drop\" to drop and count them")


def drop_null_ids(table: pa.Table, policy: str) -> tuple[pa.Table, int]:
    """Rows with a note_id, and how many were dropped (raises under policy "fail")."""
    nulls = table["note_id"].null_count
    if nulls and policy == "fail":
        raise null_id_error(nulls)
    return (table.filter(pc.is_valid(table["note_id"])) if nulls else table), nulls


def mark_duplicates(table: pa.Table, spec: BatchSpec, policy: str) -> tuple[pa.Table, int]:
    """Add the duplicate flag: every copy of a note_id but the first in the stable order."""
    counts = pc.value_counts(table["note_id"])
    repeated = pc.filter(counts, pc.greater(counts.field("counts"), 1))
    extra = int(pc.sum(repeated.field("counts")).as_py() or 0) - len(repeated)
    flags = [False] * table.num_rows
    if extra:
        if policy == "fail":
            raise duplicate_error(extra, len(repeated))
        repeated_ids = set(repeated.field("values").to_pylist())
        ids = table["note_id"].to_pylist()
        rows = [i for i, v in enumerate(ids) if v in repeated_ids]
        cols = [table[k].take(rows).to_pylist() for k in _dedup_keys(spec, table.schema)]
        # nulls first, then ascending: the order Spark's asc_nulls_first uses on the same keys
        order = sorted(range(len(rows)), key=lambda j: (ids[rows[j]], *((c[j] is not None, c[j]) for c in cols)))
        prev = None
        for j in order:
            flags[rows[j]] = ids[rows[j]] == prev
            prev = ids[rows[j]]
    return table.append_column(DUP_COLUMN, pa.array(flags, pa.bool_())), extra


def derive_outputs(staged: pa.Table, spec: BatchSpec) -> tuple[pa.Table, pa.Table, pa.Table]:
    """notes/, spans/ and quarantine/ projected from the staged results, sorted by note_id."""
    ok = pc.is_null(staged["error_stage"])
    done = staged.filter(ok)
    notes = done.select(["note_id", "patient_id", "text", *(["note_date"] if spec.note_date_out else []),
                         *spec.passthrough]).sort_by("note_id")
    flat = pc.list_flatten(done["spans"])
    parent = pc.list_parent_indices(done["spans"])
    cols = {"note_id": pc.take(done["note_id"], parent), "patient_id": pc.take(done["patient_id"], parent)}
    for f in AUDIT_SCHEMA:
        if f.name not in cols:
            cols[f.name] = pc.struct_field(flat, f.name) if len(flat) else pa.array([], f.type)
    spans = pa.table(cols, schema=AUDIT_SCHEMA).sort_by([("note_id", "ascending"), ("start", "ascending")])
    bad = staged.filter(pc.invert(ok))
    quarantine = pa.table({"note_id": bad["note_id"], "patient_id": bad["patient_id"],
                           "stage": bad["error_stage"], "error_class": bad["error_class"]},
                          schema=QUARANTINE_SCHEMA).sort_by("note_id")
    return notes, spans, quarantine


def clear_outputs(out: Path) -> None:
    """Remove a previous run's outputs under `out` (only the four known names)."""
    for part in OUTPUT_PARTS:
        p = out / part
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def run_local(input_path: str | Path, output: str | Path, options: RunOptions) -> dict[str, Any]:
    """Read notes, tag each once, write notes/, spans/, quarantine/ and _manifest.json; the manifest."""
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    key, bundle = load_key_and_bundle(options)
    table = read_table(input_path)
    spec = validate_input_schema(table.schema, options.name_columns, f"--input {input_path}",
                                 shifts_note_date(options.config))
    input_rows = table.num_rows
    table, dropped = drop_null_ids(table, options.job.get("on_null_note_id", "fail"))
    table, extra = mark_duplicates(table, spec, options.job.get("on_duplicate", "quarantine"))
    deid = make_deidentifier(options.config, bundle, key)
    out_schema = staged_schema(table.schema, spec)
    t1 = time.perf_counter()
    log.info("tagging %d notes in batches of %d", table.num_rows, options.job["batch_size"])
    if "patient_id" in table.column_names:  # a patient's notes in a row: cross-note propagation
        table = table.sort_by([("patient_id", "ascending")])
    inputs = list(patient_batches(table.to_batches(options.job["batch_size"]), max(options.job["batch_size"], 20_000)))
    batches = [process_batch(b, deid, spec, out_schema) for b in inputs]
    tagged = sum(tagged_count(b) for b in inputs)
    staged = pa.Table.from_batches(batches, schema=out_schema)
    t2 = time.perf_counter()
    notes, spans, quarantine = derive_outputs(staged, spec)
    out = Path(output)
    clear_outputs(out)
    for name, t in (("notes", notes), ("spans", spans), ("quarantine", quarantine)):
        (out / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(t, out / name / "part-00000.parquet")
    t3 = time.perf_counter()
    status = status_counts(
        (r["error_stage"], r["error_class"], r["n"]) for r in
        staged.group_by(["error_stage", "error_class"], use_threads=False)
        .aggregate([([], "count_all")]).rename_columns(["error_stage", "error_class", "n"]).to_pylist())
    by_label = {r["label"]: r["n"] for r in spans.group_by("label").aggregate([("label", "count")])
                .rename_columns(["label", "n"]).to_pylist()}
    manifest = build_manifest(
        runner="local", counts={"input_rows": input_rows, "null_note_id_dropped": dropped,
                                "duplicate_rows": extra, "tagged": tagged, **status},
        spans_by_label=by_label, config=options.config, bundle=bundle, key=key,
        timings={"read_validate_s": t1 - t0, "tag_s": t2 - t1, "write_s": t3 - t2,
                 "total_s": time.perf_counter() - t0},
        started=started)
    (out / MANIFEST_NAME).write_text(manifest_json(manifest))
    log.info("done: %d notes, %d quarantined, %d spans", status["notes"], status["quarantined"], spans.num_rows)
    enforce_quality(manifest)
    return manifest
