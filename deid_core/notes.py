"""Input and output records of the engine: a Note in, a NoteResult (text + audit spans) out."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Note:
    """One input note. `known_phi` holds (value, label) pairs from metadata columns (never output)."""

    note_id: str
    text: str = field(repr=False)  # PHI: never in a repr, assertion message or traceback
    patient_id: str | None = None
    note_date: dt.date | None = None
    known_phi: tuple[tuple[str, str], ...] = field(default=(), repr=False)


@dataclass(frozen=True, slots=True)
class AuditSpan:
    """One row of the audit table (DESIGN.md §4 spans/), minus note_id/patient_id."""

    start: int
    end: int
    label: str
    category: str
    source: str
    confidence: float
    out_start: int
    out_end: int
    replacement: str
    original_digest: str


@dataclass(slots=True)
class NoteResult:
    """The outcome for one note: de-identified text and audit spans, or a quarantine reason."""

    note_id: str
    patient_id: str | None
    text: str | None = None
    spans: list[AuditSpan] = field(default_factory=list)
    error_stage: str | None = None
    error_class: str | None = None

    @property
    def ok(self) -> bool:
        """True when the note was processed and may be written to notes/."""
        return self.error_stage is None
