"""The tables of a run, stated once for both executors (`deid tag` on Arrow, the job on Spark).

Input rules (required columns and types; names matched case-insensitively, as Spark does), the
staged result (one row per input note: the fields of a NoteResult, the shifted note_date,
the pass-through columns) and the three projections of it that are written, with their order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from deid_core.config import ConfigError
from deid_core.io.tables import AUDIT_SCHEMA, NOTE_KEY, QUARANTINE_SOURCES, RESULT_FIELDS

DUP_COLUMN = "_deid_duplicate"  # set by the de-duplication step: True for copies to quarantine
RESERVED_PREFIX = "_deid_"
CORE_COLUMNS = ("note_id", "text", "patient_id", "note_date")
# The staged result: a NoteResult per input row (note_id, patient_id, text, spans, error_stage,
# error_class), then note_date when it is shifted, then the pass-through columns as they came.
STAGED_CORE = RESULT_FIELDS
STAGED_NOTE_DATE = pa.field("note_date", pa.date32())  # only when BatchSpec.note_date_out
SPANS = "spans"  # the staged list of audit structs, exploded into spans/
ERROR_STAGE = "error_stage"  # null: the note went through; else the stage that quarantined it
ERROR_CLASS = "error_class"
# Staged names an input column may not take (it would collide with them); compared case-insensitively.
RESERVED_NAMES = tuple(f.name for f in STAGED_CORE if f.name not in CORE_COLUMNS)
# Output tables: sort order of the rows (per file under Spark; whole table under `deid tag`).
NOTES_ORDER = ("note_id",)
SPANS_ORDER = ("note_id", "start")
QUARANTINE_ORDER = ("note_id",)
SPAN_PARENT = NOTE_KEY  # the staged columns each exploded span row carries
SPAN_COLUMNS = tuple(f.name for f in AUDIT_SCHEMA if f.name not in SPAN_PARENT)
QUARANTINE_FROM = QUARANTINE_SOURCES  # quarantine/ column -> the staged column it holds


class InputSchemaError(ConfigError):
    """The input lacks a required column or has one of the wrong type or name (message names it)."""


@dataclass(frozen=True)
class BatchSpec:
    """Which input columns feed the metadata matcher and which pass through to notes/."""

    name_columns: Mapping[str, str]
    passthrough: tuple[str, ...]
    note_date_out: bool = False  # notes/ carries note_date moved by the patient's date shift

    @property
    def notes_columns(self) -> list[str]:
        """The columns of notes/, in order: note identity, de-identified text, note_date, pass-through."""
        return ["note_id", "patient_id", "text", *(["note_date"] if self.note_date_out else []),
                *self.passthrough]


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _check_names(names: list[str], where: str) -> None:
    """Refuse names Spark cannot tell apart, case variants of core columns, and reserved names."""
    seen: dict[str, str] = {}
    for name in names:
        low = name.lower()
        if low in seen:
            raise InputSchemaError(f"{where}: columns {seen[low]!r} and {name!r} differ only by case; column "
                                   "names are matched case-insensitively (as Spark does): rename one")
        seen[low] = name
        core = next((c for c in CORE_COLUMNS if c == low), None)
        if core is not None and core != name:
            raise InputSchemaError(f"{where}: column {name!r} is a case variant of the core column {core!r}; "
                                   f"rename it to {core!r} (or to another name if it is not the note's {core})")
        if low in RESERVED_NAMES or low.startswith(RESERVED_PREFIX):
            raise InputSchemaError(f"{where}: column {name!r} uses a name the run reserves for its results "
                                   f"({', '.join(RESERVED_NAMES)} and names starting with {RESERVED_PREFIX!r}); "
                                   "rename it")


def _resolve_name_columns(names: list[str], name_columns: Mapping[str, str], where: str) -> dict[str, str]:
    """--name-columns matched to the input's columns case-insensitively: {actual column: label}."""
    by_lower = {n.lower(): n for n in names}
    out: dict[str, str] = {}
    for col, label in name_columns.items():
        actual = by_lower.get(col.lower())
        if actual is None:
            raise InputSchemaError(f"{where}: --name-columns names {col!r}, not a column of the input; "
                                   f"found {', '.join(names)}")
        if actual in CORE_COLUMNS:
            raise InputSchemaError(f"{where}: --name-columns cannot name the core column {actual!r}")
        out[actual] = label
    return out


def validate_input_schema(schema: pa.Schema, name_columns: Mapping[str, str], where: str,
                          shift_dates: bool = False) -> BatchSpec:
    """Check the input's columns and types (DESIGN.md §4); the spec of what passes through."""
    names = list(schema.names)
    _check_names(names, where)
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
    resolved = _resolve_name_columns(names, name_columns, where)
    for col in resolved:
        t = schema.field(col).type
        ok = _is_string(t) or pa.types.is_null(t) or (
            (pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_string(t.value_type))
        if not ok:
            raise InputSchemaError(f"{where}: name column {col!r} must be string or array<string>, found {t}")
    passthrough = tuple(c for c in names if c not in CORE_COLUMNS and c not in resolved)
    return BatchSpec(resolved, passthrough, shift_dates and "note_date" in names)


def staged_schema(input_schema: pa.Schema, spec: BatchSpec) -> pa.Schema:
    """Schema of the staged results: core fields, then pass-through columns as they came."""
    dates = [STAGED_NOTE_DATE] if spec.note_date_out else []
    return pa.schema([*STAGED_CORE, *dates, *(input_schema.field(c) for c in spec.passthrough)])

