"""Run the full pipeline over an annotated corpus once, and reduce the result to aggregate figures:
every metric per label and per category (recall first) plus the names still readable in the
surrogate output. Shared by the generalization benchmark's parts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import regex

from deid_core import taxonomy
from deid_core.engine.pipeline import Deidentifier
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.cv import score
from deid_core.training.evaluation.readable import Readable, readable_names

# (note text, predicted spans) -> the spans as a corpus's annotation conventions see them.
View = Callable[[str, list[Span]], list[Span]]
_NUMBER = regex.compile(r"\d+")


def run_pipeline(deid: Deidentifier, notes: Sequence[Note]) -> tuple[dict[str, list[Span]], dict[str, str | None]]:
    """(predicted spans, output text) per note_id from one process_many pass (cross-note step included).

    A quarantined note predicts nothing and has no output (it would never be released)."""
    pred: dict[str, list[Span]] = {}
    out: dict[str, str | None] = {}
    for r in deid.process_many(list(notes)):
        pred[r.note_id] = [Span(a.start, a.end, a.label, a.source) for a in r.spans]
        out[r.note_id] = r.text if r.ok else None
    return pred, out


def aggregate(notes: Sequence[Note], gold: Mapping[str, list[Span]], pred: Mapping[str, list[Span]],
              outputs: Mapping[str, str | None], readable: Readable, *, view: View | None = None) -> dict:
    """Corpus totals only: sizes, the evaluation summary (per label and category), readable names."""
    texts = {n.note_id: n.text for n in notes}
    seen = {k: (view(texts[k], list(v)) if view else list(v)) for k, v in pred.items() if k in texts}
    mentions = found = 0
    for n in notes:
        text = outputs.get(n.note_id)
        if text is not None:
            m, r = readable_names(n.text, gold.get(n.note_id, []), text, readable)
            mentions, found = mentions + m, found + r
    return {
        "notes": len(notes), "patients": len({n.patient_id or n.note_id for n in notes}),
        "gold_spans": sum(len(gold.get(n.note_id, [])) for n in notes),
        "quarantined": sum(outputs.get(n.note_id) is None for n in notes),
        "report": score(notes, dict(gold), seen),
        "readable": {"mentions": mentions, "readable": found, "share": found / mentions if mentions else 0.0},
    }


def coarse_locations(text: str, spans: list[Span]) -> list[Span]:
    """Every LOCATION subtype as LOCATION-OTHER: the granularity of a corpus without subtypes."""
    return [s.with_label("LOCATION-OTHER") if taxonomy.category_of(s.label) == "LOCATION" else s for s in spans]


def convention_view(drop_labels: Sequence[str], min_age: int) -> View:
    """Coarse locations, minus the labels a corpus does not annotate and ages below `min_age`."""
    drop = frozenset(drop_labels)

    def view(text: str, spans: list[Span]) -> list[Span]:
        out = []
        for s in coarse_locations(text, [s for s in spans if s.label not in drop]):
            m = _NUMBER.search(text, s.start, s.end) if s.label == "AGE" else None
            if m is None or int(m.group(0)) >= min_age:
                out.append(s)
        return out

    return view


def _unmatched(notes: Sequence[Note], spans: Mapping[str, list[Span]], others: Mapping[str, list[Span]],
               limit: int, context: int, with_source: bool) -> list[str]:
    """Up to `limit` spans of `spans` that overlap none of `others`, each with its context."""
    lines: list[str] = []
    for n in notes:
        against = others.get(n.note_id, [])
        for s in spans.get(n.note_id, []):
            if len(lines) >= limit:
                return lines
            if not any(s.overlaps(o) for o in against):
                left, right = n.text[max(0, s.start - context):s.start], n.text[s.end:s.end + context]
                what = f"{s.label} ({s.source})" if with_source else s.label
                lines.append(f"{n.note_id} {what}: {left!r} [[{n.text[s.start:s.end]}]] {right!r}")
    return lines


def misses(notes: Sequence[Note], gold: Mapping[str, list[Span]], pred: Mapping[str, list[Span]],
           limit: int, context: int = 30) -> list[str]:
    """Up to `limit` missed gold spans (no overlapping prediction) with context, for development
    corpora only (the tune part): never called on blind notes."""
    return _unmatched(notes, gold, pred, limit, context, with_source=False)


def false_positives(notes: Sequence[Note], gold: Mapping[str, list[Span]], pred: Mapping[str, list[Span]],
                    limit: int, context: int = 30) -> list[str]:
    """Up to `limit` predictions overlapping no gold span, with context and source (the spans that cost
    overlap PPV), for development corpora only (the tune part): never called on blind notes."""
    return _unmatched(notes, pred, gold, limit, context, with_source=True)
