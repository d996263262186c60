"""Arrow batches in, staged results out: the one tagging path shared by the Spark job and `deid tag`.

A staged row holds, per input note, either the de-identified text and its audit spans or a
quarantine reason (never text), plus the pass-through columns. notes/, spans/ and quarantine/
are projections of the staged table, so each note is tagged exactly once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa

from deid_core.bundle import Bundle
from deid_core.config import ConfigError
from deid_core.engine.pipeline import Deidentifier, build_deidentifier
from deid_core.notes import AuditSpan, Note, NoteResult

DUP_COLUMN = "_deid_duplicate"  # set by the de-duplication step: True for copies to quarantine
RESERVED_PREFIX = "_deid_"
CORE_COLUMNS = ("note_id", "text", "patient_id", "note_date")
SPAN_FIELDS = [
    pa.field("start", pa.int32()), pa.field("end", pa.int32()),
    pa.field("label", pa.string()), pa.field("category", pa.string()), pa.field("source", pa.string()),
    pa.field("confidence", pa.float64()),
    pa.field("out_start", pa.int32()), pa.field("out_end", pa.int32()),
    pa.field("replacement", pa.string()), pa.field("original_digest", pa.string()),
]
SPAN_STRUCT = pa.struct(SPAN_FIELDS)
STAGED_CORE = [
    pa.field("note_id", pa.string()), pa.field("patient_id", pa.string()), pa.field("text", pa.string()),
    pa.field("spans", pa.list_(SPAN_STRUCT)),
    pa.field("error_stage", pa.string()), pa.field("error_class", pa.string()),
]

STAGED_NOTE_DATE = pa.field("note_date", pa.date32())  # only when BatchSpec.note_date_out


class InputSchemaError(ConfigError):
    """The input lacks a required column or has one of the wrong type (message names it)."""


@dataclass(frozen=True)
class BatchSpec:
    """Which input columns feed the metadata matcher and which pass through to notes/."""

    name_columns: Mapping[str, str]
    passthrough: tuple[str, ...]
    note_date_out: bool = False  # notes/ carries note_date moved by the patient's date shift


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def shifts_note_date(config: dict) -> bool:
    """True when DATE spans get surrogates (shifted dates): then notes/ gets the shifted note_date.

    In every other mode the note_date column is PHI with nothing to agree with: it is not output.
    """
    try:
        from deid_core.engine.surrogates.settings import surrogate_settings
    except ImportError:
        return False
    settings = surrogate_settings(config)
    mode = settings.get("label_modes", {}).get("DATE", config.get("pipeline", {}).get("mode"))
    return mode == "surrogate" and settings.get("profile", "default") == "default"


def validate_input_schema(schema: pa.Schema, name_columns: Mapping[str, str], where: str,
                          shift_dates: bool = False) -> BatchSpec:
    """Check the input's columns and types (DESIGN.md §4); the spec of what passes through."""
    names = schema.names
    for col in ("note_id", "text"):
        if col not in names:
            raise InputSchemaError(f"{where}: missing required column {col!r} (string); found {', '.join(names)}")
    for col in ("note_id", "text", "patient_id"):
        if col in names and not _is_string(schema.field(col).type):
            raise InputSchemaError(f"{where}: column {col!r} must be a string, found {schema.field(col).type}")
    if "note_date" in names:
        t = schema.field("note_date").type
        if not (pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_null(t)):
            raise InputSchemaError(f"{where}: column 'note_date' must be a date, found {t}")
    for col in name_columns:
        if col not in names:
            raise InputSchemaError(f"{where}: --name-columns names {col!r}, not a column of the input; "
                                   f"found {', '.join(names)}")
        t = schema.field(col).type
        ok = _is_string(t) or pa.types.is_null(t) or (
            (pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_string(t.value_type))
        if not ok:
            raise InputSchemaError(f"{where}: name column {col!r} must be string or array<string>, found {t}")
        if col in CORE_COLUMNS:
            raise InputSchemaError(f"{where}: --name-columns cannot name the core column {col!r}")
    reserved = [c for c in names if c.startswith(RESERVED_PREFIX)]
    if reserved:
        raise InputSchemaError(f"{where}: column names starting with {RESERVED_PREFIX!r} are reserved: {reserved}")
    passthrough = tuple(c for c in names if c not in CORE_COLUMNS and c not in name_columns)
    return BatchSpec(dict(name_columns), passthrough, shift_dates and "note_date" in names)


def staged_schema(input_schema: pa.Schema, spec: BatchSpec) -> pa.Schema:
    """Schema of the staged results: core fields, then pass-through columns as they came."""
    dates = [STAGED_NOTE_DATE] if spec.note_date_out else []
    return pa.schema(STAGED_CORE + dates + [input_schema.field(c) for c in spec.passthrough])


def make_deidentifier(config: dict, bundle: Bundle, key: bytes) -> Deidentifier:
    """build_deidentifier plus the test-only fault hook of [testing] fault_note_marker."""
    deid = build_deidentifier(config, bundle, key)
    marker = config.get("testing", {}).get("fault_note_marker")
    if marker:
        def fault(note: Note) -> None:
            if marker in note.note_id:
                raise RuntimeError("injected test fault")
        deid.fault_hook = fault
    return deid


def _as_date(v: object) -> dt.date | None:
    if isinstance(v, dt.datetime):
        return v.date()
    return v if isinstance(v, dt.date) else None


def _known_phi(batch: pa.RecordBatch, spec: BatchSpec) -> list[tuple[tuple[str, str], ...]]:
    rows: list[list[tuple[str, str]]] = [[] for _ in range(batch.num_rows)]
    for col, label in spec.name_columns.items():
        for i, v in enumerate(batch.column(col).to_pylist()):
            for x in (v if isinstance(v, list) else [v]):
                if x is not None and x.strip():
                    rows[i].append((x, label))
    return [tuple(r) for r in rows]


def _span_dict(s: AuditSpan) -> dict:
    return {"start": s.start, "end": s.end, "label": s.label, "category": s.category, "source": s.source,
            "confidence": s.confidence, "out_start": s.out_start, "out_end": s.out_end,
            "replacement": s.replacement, "original_digest": s.original_digest}


def process_batch(batch: pa.RecordBatch, deid: Deidentifier, spec: BatchSpec,
                  out_schema: pa.Schema) -> pa.RecordBatch:
    """Tag and replace every note of one Arrow batch; one staged row per input row, same order."""
    names = batch.schema.names
    n = batch.num_rows
    ids = batch.column("note_id").to_pylist()
    texts = batch.column("text").to_pylist()
    pids = batch.column("patient_id").to_pylist() if "patient_id" in names else [None] * n
    dates = batch.column("note_date").to_pylist() if "note_date" in names else [None] * n
    dups = batch.column(DUP_COLUMN).to_pylist() if DUP_COLUMN in names else [False] * n
    known = _known_phi(batch, spec)
    results: list[NoteResult | None] = [None] * n
    shifted: list[dt.date | None] = [None] * n
    shift = getattr(deid.replacer, "shift_note_date", None) if spec.note_date_out else None
    todo: list[int] = []
    for i in range(n):
        if dups[i]:
            results[i] = NoteResult(ids[i], pids[i], error_stage="validate", error_class="DuplicateNoteId")
        elif texts[i] is None:
            results[i] = NoteResult(ids[i], pids[i], error_stage="validate", error_class="NullText")
        else:
            todo.append(i)
    notes = [Note(ids[i], texts[i], pids[i], _as_date(dates[i]), known[i]) for i in todo]
    for i, note, result in zip(todo, notes, deid.process_many(notes), strict=True):
        if result.ok and shift is not None:
            try:
                shifted[i] = shift(note)
            except Exception as exc:  # noqa: BLE001 - fail closed, like Deidentifier.process
                result = NoteResult(ids[i], pids[i], error_stage="replace", error_class=type(exc).__name__)
        results[i] = result
    core = {
        "note_id": pa.array(ids, pa.string()),
        "patient_id": pa.array(pids, pa.string()),
        "text": pa.array([r.text if r.ok else None for r in results], pa.string()),
        "spans": pa.array([[_span_dict(s) for s in r.spans] if r.ok else [] for r in results],
                          pa.list_(SPAN_STRUCT)),
        "error_stage": pa.array([r.error_stage for r in results], pa.string()),
        "error_class": pa.array([r.error_class for r in results], pa.string()),
        "note_date": pa.array([d if r.ok else None for d, r in zip(shifted, results, strict=True)], pa.date32()),
    }
    arrays = [core[f.name] if f.name in core else batch.column(f.name) for f in out_schema]
    return pa.RecordBatch.from_arrays(arrays, schema=out_schema)


def patient_batches(batches: Iterable[pa.RecordBatch], max_rows: int) -> Iterator[pa.RecordBatch]:
    """Re-cut a stream of batches sorted by patient so no patient's notes straddle two batches.

    The cross-note step of Deidentifier.process_many sees one batch at a time; the job sorts
    each partition by patient and feeds it through here. A patient with more than `max_rows`
    notes is still split (memory stays bounded); unsorted input only loses cross-note matches.
    """
    carry: pa.RecordBatch | None = None
    for b in batches:
        if "patient_id" not in b.schema.names:
            yield b
            continue
        if carry is not None:
            b = pa.Table.from_batches([carry, b]).combine_chunks().to_batches()[0]
            carry = None
        if b.num_rows == 0:
            continue
        pids = b.column("patient_id").to_pylist()
        cut = len(pids)
        if pids[-1] is not None:
            while cut > 0 and pids[cut - 1] == pids[-1]:
                cut -= 1
            if cut == 0 and b.num_rows < max_rows:
                carry = b  # one patient so far: wait for the rest of their notes
                continue
            cut = cut or len(pids)
        yield b.slice(0, cut)
        if cut < len(pids):
            carry = b.slice(cut)
    if carry is not None:
        yield carry


def tagged_count(batch: pa.RecordBatch) -> int:
    """How many rows of an input batch reach the tagger (not duplicates, not null text)."""
    dup = batch.column(DUP_COLUMN).to_pylist() if DUP_COLUMN in batch.schema.names else [False] * batch.num_rows
    return sum(1 for d, t in zip(dup, batch.column("text").to_pylist(), strict=True) if not d and t is not None)


def dedup_sort_keys(spec: BatchSpec, schema: pa.Schema) -> list[str]:
    """The stable order that decides which copy of a duplicate note_id is kept (the first)."""
    keys = [c for c in ("patient_id", "note_date", "text") if c in schema.names]
    sortable = (pa.types.is_integer, pa.types.is_floating, pa.types.is_string, pa.types.is_date,
                pa.types.is_timestamp, pa.types.is_boolean, pa.types.is_large_string)
    keys += [c for c in sorted(spec.passthrough) if any(f(schema.field(c).type) for f in sortable)]
    return keys

