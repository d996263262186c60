"""The cross-note step, run one way for the Deidentifier (process_many, tag_many) and cross-validation:
each patient's tagged notes (two or more) go through the merge's CrossNoteStep together."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from deid_core.engine.contract import CrossNoteStep
from deid_core.notes import Note
from deid_core.spans import Span, validate_spans

OnError = Callable[[list[int], Exception], None]


def patient_groups(patient_ids: Sequence[str | None]) -> list[list[int]]:
    """Indices of each patient's notes, for patients with two or more (None: no patient, left out)."""
    groups: dict[str, list[int]] = {}
    for i, pid in enumerate(patient_ids):
        if pid:
            groups.setdefault(pid, []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def spread_across_notes(step: CrossNoteStep | None, notes: Sequence[Note],
                        spans: Sequence[list[Span] | None], on_error: OnError | None = None) -> list[list[Span] | None]:
    """`spans` (one list per note; None: a note that failed, left out) after the cross-note step.

    Each patient's group is spread at once and its spans validated; an exception in a group goes
    to `on_error(indices, exc)` (fail closed: the caller quarantines those notes) or, without one,
    propagates.
    """
    out = list(spans)
    if step is None:
        return out
    ids = [n.patient_id if s is not None else None for n, s in zip(notes, spans, strict=True)]
    for idx in patient_groups(ids):
        try:
            spread = step.spread([(notes[i].text, out[i]) for i in idx])
            for i, new in zip(idx, spread, strict=True):
                validate_spans(new, len(notes[i].text))
                out[i] = new
        except Exception as exc:  # noqa: BLE001 - handed to the caller, who fails closed
            if on_error is None:
                raise
            on_error(idx, exc)
    return out
