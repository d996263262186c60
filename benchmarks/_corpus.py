"""Synthetic notes for the surrogate benchmarks: deid_core.synth when present, else a stand-in."""

from __future__ import annotations

from deid_core.notes import Note


def synthetic_notes(n: int, seed: int) -> tuple[str, list[tuple[Note, list]]]:
    """(generator name, [(Note with metadata names as known_phi, gold spans)])."""
    try:
        from deid_core.synth import generate

        source = "deid_core.synth"
    except ImportError:
        from benchmarks._simple_notes import generate

        source = "benchmarks._simple_notes (stand-in: deid_core.synth not importable)"
    out = []
    for s in generate(n, seed):
        known = tuple((v, "PATIENT") for v in (s.patient_first_name, s.patient_last_name) if v)
        known += tuple((v, "DOCTOR") for v in (s.attending_name,) if v)
        out.append((Note(s.note_id, s.text, s.patient_id, s.note_date, known), list(s.spans)))
    return source, out
