"""Shared checks of the rule test files: the shipped pipeline, and a rule's span standing in its output."""

from __future__ import annotations

from deid_core.app.options import effective_config
from deid_core.bundle import load_bundle
from deid_core.engine.pipeline import build_deidentifier
from deid_core.notes import Note
from deid_core.spans import Span


def shipped_deidentifier(name: str):
    """The default configuration and bundle, keyed for one test file."""
    return build_deidentifier(effective_config(), load_bundle(), f"{name}-test-key-0123456789abcdefghij".encode())


def span_stands(deid, note_id: str, text: str, phi: str, label: str) -> bool:
    """Whether the pipeline tags exactly `phi` (its first occurrence in `text`) as `label`."""
    res = deid.process(Note(note_id, text))
    start = text.index(phi)
    return res.ok and (start, start + len(phi), label) in {(s.start, s.end, s.label) for s in res.spans}


def crf_span(text: str, piece: str, label: str, nth: int = 0) -> Span:
    """A CRF span on the nth occurrence of `piece` in `text`, for the merge steps' unit tests."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(piece, start + 1)
    return Span(start, start + len(piece), label, "crf:single", 0.9)


ID_LABELS = frozenset({"MEDICALRECORD", "IDNUM", "ACCOUNT", "DEVICE", "BIOID", "HEALTHPLAN", "LICENSE", "VEHICLE", "SSN"})


def tags_no_id(deid, note_id: str, text: str) -> bool:
    """Whether the pipeline processes `text` and tags no id span in it (a look-alike's check)."""
    res = deid.process(Note(note_id, text))
    return res.ok and not [s for s in res.spans if s.label in ID_LABELS]
