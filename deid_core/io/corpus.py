"""The Corpus type (notes + gold spans by note_id) and the note-metadata sidecar shared by readers."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, replace
from pathlib import Path

from deid_core.notes import Note
from deid_core.spans import Span

# Formats without a place for patient_id / note_date / known PHI (i2b2 XML, BRAT) keep them in
# this JSON Lines file beside the notes, one object per note, written only when there is any.
METADATA_FILE = "_notes.jsonl"


@dataclass(frozen=True)
class Corpus:
    """Notes and gold spans (by note_id) of an annotated corpus."""

    notes: list[Note]
    gold: dict[str, list[Span]]


def has_metadata(notes: list[Note]) -> bool:
    """True when some note carries patient_id, note_date or known PHI worth a sidecar."""
    return any(n.patient_id is not None or n.note_date is not None or n.known_phi for n in notes)


def write_metadata(notes: list[Note], folder: Path) -> None:
    """Write the sidecar (note_id, patient_id, note_date, known_phi) when any note has metadata."""
    if not has_metadata(notes):
        return
    with open(folder / METADATA_FILE, "w", encoding="utf-8") as fh:
        for n in notes:
            row = {"note_id": n.note_id, "patient_id": n.patient_id,
                   "note_date": n.note_date.isoformat() if n.note_date else None,
                   "known_phi": [list(p) for p in n.known_phi]}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def apply_metadata(notes: list[Note], folder: Path) -> list[Note]:
    """Notes with the sidecar's metadata filled in (unchanged when the folder has no sidecar)."""
    path = folder / METADATA_FILE
    if not path.is_file():
        return notes
    meta: dict[str, dict] = {}
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                meta[str(row["note_id"])] = row
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ValueError(f"{path}:{line_no}: expected a JSON object with note_id") from None
    out = []
    for n in notes:
        row = meta.get(n.note_id)
        if row is None:
            out.append(n)
            continue
        date = row.get("note_date")
        out.append(replace(
            n, patient_id=row.get("patient_id"),
            note_date=dt.date.fromisoformat(date) if date else None,
            known_phi=tuple((str(v), str(lab)) for v, lab in row.get("known_phi") or ())))
    return out
