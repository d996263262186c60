"""Leak accounting: which gold originals survive in a de-identified text, and how."""

from __future__ import annotations

import regex

from deid_core.notes import Note
from deid_core.spans import Span

_YEAR = regex.compile(r"(?:1[89]|20)\d\d")


def leaks_of(note: Note, spans: list[Span], out_text: str, out_offsets: list[tuple[int, int]]) -> list[tuple[str, str]]:
    """(label, kind) of gold originals (3+ chars) found in `out_text` as a whole word, ignoring
    case, unless they also occur in the note outside PHI spans. kind is "collision" when the string only shows up inside the surrogates of *other* spans (e.g. one
    shifted date landing on another real date of the patient), "year kept" for a bare year
    surviving in place, else "in place" (in its own replacement or in the text around)."""
    text = note.text
    outside = list(text)
    for s in spans:
        outside[s.start:s.end] = "\0" * (s.end - s.start)
    outside_text = "".join(outside).casefold()
    out_cf = out_text.casefold()
    found = []
    for s in spans:
        orig = text[s.start:s.end].strip()
        if len(orig) < 3:
            continue
        pat = regex.compile(r"(?<!\w)" + regex.escape(orig.casefold()) + r"(?!\w)")
        if not pat.search(out_cf) or pat.search(outside_text):
            continue
        others = [(a, b) for t, (a, b) in zip(spans, out_offsets, strict=True) if t is not s]
        own = any(not any(a <= m.start() and m.end() <= b for a, b in others) for m in pat.finditer(out_cf))
        kind = "in place" if own else "collision"
        if own and s.label == "DATE" and _YEAR.fullmatch(orig):
            kind = "year kept"  # a bare year: Safe Harbor allows it (safe_harbor_year = "keep")
        found.append((s.label, kind))
    return found
