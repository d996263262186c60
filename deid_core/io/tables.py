"""The project's Parquet tables (DESIGN.md §4): notes in/out, spans (gold or audit), quarantine."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from deid_core.notes import AuditSpan, Note, NoteResult
from deid_core.spans import Span, sort_spans

# Arrow types of the record fields below (their annotations, as written in deid_core/notes.py).
_ARROW_TYPES = {"int": pa.int32(), "float": pa.float64(), "str": pa.string(), "str | None": pa.string()}


def arrow_fields(record: type, nested: dict[str, pa.DataType] | None = None) -> list[pa.Field]:
    """Arrow fields of a record dataclass in declaration order: its annotations are the one declaration."""
    out = []
    for f in dataclasses.fields(record):
        t = (nested or {}).get(f.type) or _ARROW_TYPES.get(f.type)
        if t is None:
            raise TypeError(f"{record.__name__}.{f.name}: no Arrow type for {f.type!r}")
        out.append(pa.field(f.name, t))
    return out


# The audit row of one span (AuditSpan), and the note identity every output row carries.
SPAN_STRUCT = pa.struct(arrow_fields(AuditSpan))
NOTE_KEY = ("note_id", "patient_id")
RESULT_FIELDS = arrow_fields(NoteResult, {"list[AuditSpan]": pa.list_(SPAN_STRUCT)})
_KEY_FIELDS = [f for f in RESULT_FIELDS if f.name in NOTE_KEY]
# Audit table (spans/): note identity + AuditSpan; offsets into the original and output text, no PHI.
AUDIT_SCHEMA = pa.schema([*_KEY_FIELDS, *SPAN_STRUCT])
# quarantine/: output column -> NoteResult field it holds (never the text).
QUARANTINE_SOURCES = {"note_id": "note_id", "patient_id": "patient_id", "stage": "error_stage",
                      "error_class": "error_class"}
QUARANTINE_SCHEMA = pa.schema([pa.field(out, next(f.type for f in RESULT_FIELDS if f.name == src))
                               for out, src in QUARANTINE_SOURCES.items()])
# Gold / predicted spans for evaluation: the minimum is note_id, start, end, label.
SPAN_SCHEMA = pa.schema([
    ("note_id", pa.string()), ("start", pa.int32()), ("end", pa.int32()),
    ("label", pa.string()), ("source", pa.string()), ("confidence", pa.float64()),
])
REQUIRED_NOTE_COLUMNS = {"note_id": pa.string(), "text": pa.string()}


def _hidden(name: str) -> bool:
    """Names Spark and pyarrow skip when listing a folder (_SUCCESS, .crc files, _temporary...)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")


def _dataset(path: Path) -> ds.Dataset:
    """A Parquet file or folder as Spark reads it: hidden names skipped, key=value folders as columns."""
    return ds.dataset(str(path), format="parquet", partitioning="hive" if path.is_dir() else None)


def data_files(path: str | Path) -> list[Path]:
    """The files a Parquet reader takes from a file or folder (hidden names skipped, as Spark does)."""
    p = Path(path)
    if p.is_file():
        return [p]
    out = []
    for dirpath, dirnames, filenames in os.walk(p):
        dirnames[:] = sorted(d for d in dirnames if not _hidden(d))
        out.extend(Path(dirpath) / f for f in sorted(filenames) if not _hidden(f))
    return out


def check_parquet_input(path: str | Path, where: str | None = None) -> pa.Schema:
    """Refuse a missing input, a folder without data files, or a file that is not readable Parquet.

    Only the footers are read (cheap): a file truncated or not Parquet at all (a stray README)
    is named here, before any work, instead of failing a reader half-way through. Returns the
    input's schema (first file, plus hive partition columns, as Spark infers it): checked before
    Spark starts; the job checks again on the schema Spark reads.
    """
    p = Path(path)
    label = where or str(p)
    if not p.exists():
        raise FileNotFoundError(f"{label}: no such file or folder")
    files = data_files(p)
    if not files:
        raise ValueError(f"{label}: folder holds no Parquet files")
    for f in files:
        try:
            pq.read_metadata(f)
        except (OSError, ValueError) as exc:
            name = f.relative_to(p) if f != p else f.name
            reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
            raise ValueError(f"{label}: {name} is not a readable Parquet file ({reason}); "
                             "remove it or point the input at the Parquet files only") from None
    return _dataset(p).schema


def read_table(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """A Parquet file or folder as one Arrow table; errors name the path and the file."""
    check_parquet_input(path)
    try:
        return _dataset(Path(path)).to_table(columns=columns)
    except (OSError, ValueError) as exc:  # corrupt pages behind a good footer
        raise ValueError(f"{path}: cannot read it as Parquet ({str(exc).splitlines()[0][:200]})") from None


def read_notes(path: str | Path, name_columns: dict[str, str] | None = None) -> list[Note]:
    """Notes from a Parquet notes table; `name_columns` maps metadata column -> label."""
    table = read_table(path)
    missing = [c for c in REQUIRED_NOTE_COLUMNS if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: missing required column(s) {', '.join(missing)}; "
                         f"found {', '.join(table.column_names)}")
    name_columns = name_columns or {}
    absent = [c for c in name_columns if c not in table.column_names]
    if absent:
        raise ValueError(f"{path}: --name-columns names column(s) not in the input: {', '.join(absent)}")
    rows = table.to_pylist()
    notes = []
    for r in rows:
        known: list[tuple[str, str]] = []
        for col, label in name_columns.items():
            v = r.get(col)
            values = v if isinstance(v, list) else [v]
            known.extend((str(x), label) for x in values if x is not None and str(x).strip())
        pid = r.get("patient_id")
        notes.append(Note(str(r["note_id"]), r["text"], None if pid is None else str(pid),
                          r.get("note_date"), tuple(known)))
    return notes


def notes_table(notes: Iterable[Note], extra: dict[str, list] | None = None) -> pa.Table:
    """An Arrow notes table (note_id, patient_id, text, note_date) plus optional extra columns."""
    notes = list(notes)
    cols = {
        "note_id": pa.array([n.note_id for n in notes], pa.string()),
        "patient_id": pa.array([n.patient_id for n in notes], pa.string()),
        "text": pa.array([n.text for n in notes], pa.string()),
        "note_date": pa.array([n.note_date for n in notes], pa.date32()),
    }
    for name, values in (extra or {}).items():
        cols[name] = pa.array(values)
    return pa.table(cols)


def spans_table(spans_by_note: dict[str, list[Span]]) -> pa.Table:
    """Gold or predicted spans as an Arrow table (SPAN_SCHEMA), notes and spans in order."""
    rows = [
        {"note_id": nid, "start": s.start, "end": s.end, "label": s.label,
         "source": s.source, "confidence": float(s.confidence)}
        for nid in sorted(spans_by_note) for s in sort_spans(spans_by_note[nid])
    ]
    return pa.Table.from_pylist(rows, schema=SPAN_SCHEMA)


def read_spans(path: str | Path) -> dict[str, list[Span]]:
    """Spans by note_id from a Parquet spans table (gold, predicted, or the audit table)."""
    table = read_table(path)
    missing = [c for c in ("note_id", "start", "end", "label") if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: a spans table needs note_id, start, end, label; missing {', '.join(missing)}")
    out: dict[str, list[Span]] = {}
    has_src = "source" in table.column_names
    has_conf = "confidence" in table.column_names
    for r in table.to_pylist():
        s = Span(int(r["start"]), int(r["end"]), r["label"],
                 (r["source"] or "") if has_src else "",
                 float(r["confidence"]) if has_conf and r["confidence"] is not None else 1.0)
        out.setdefault(str(r["note_id"]), []).append(s)
    return {k: sort_spans(v) for k, v in out.items()}


def write_table(table: pa.Table, path: str | Path) -> None:
    """Write one Parquet file, creating parent folders."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, p)
