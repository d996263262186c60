"""Synthetic notes (deid_core.training.synth) with gold spans for the surrogate benchmarks."""

from __future__ import annotations

from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.synth import generate


def synthetic_notes(n: int, seed: int) -> tuple[str, list[tuple[Note, list[Span]]]]:
    """(generator name, [(Note with its metadata names as known_phi, gold spans)])."""
    out = []
    for s in generate(n, seed):
        known = tuple((v, "PATIENT") for v in (s.patient_first_name, s.patient_last_name) if v)
        known += tuple((v, "DOCTOR") for v in (s.attending_name,) if v)
        out.append((Note(s.note_id, s.text, s.patient_id, s.note_date, known), list(s.spans)))
    return "deid_core.training.synth", out
