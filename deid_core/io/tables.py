"""The project's Parquet tables (DESIGN.md §4): notes in/out, spans (gold or audit), quarantine."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from deid_core.notes import Note
from deid_core.spans import Span, sort_spans

# Audit table (spans/) schema: offsets into the original and the output text, no PHI.
AUDIT_SCHEMA = pa.schema([
    ("note_id", pa.string()), ("patient_id", pa.string()),
    ("start", pa.int32()), ("end", pa.int32()),
    ("label", pa.string()), ("category", pa.string()), ("source", pa.string()),
    ("confidence", pa.float64()),
    ("out_start", pa.int32()), ("out_end", pa.int32()),
    ("replacement", pa.string()), ("original_digest", pa.string()),
])
# Gold / predicted spans for evaluation: the minimum is note_id, start, end, label.
SPAN_SCHEMA = pa.schema([
    ("note_id", pa.string()), ("start", pa.int32()), ("end", pa.int32()),
    ("label", pa.string()), ("source", pa.string()), ("confidence", pa.float64()),
])
QUARANTINE_SCHEMA = pa.schema([
    ("note_id", pa.string()), ("patient_id", pa.string()),
    ("stage", pa.string()), ("error_class", pa.string()),
])
REQUIRED_NOTE_COLUMNS = {"note_id": pa.string(), "text": pa.string()}


def read_table(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """A Parquet file or folder as one Arrow table; errors name the path."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.is_dir() and not any(p.rglob("*.parquet")):
        raise ValueError(f"{p}: folder holds no .parquet files")
    return ds.dataset(str(p), format="parquet").to_table(columns=columns)


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
