"""Names still readable after de-identification: gold person mentions whose original string
still stands, as a whole word and ignoring case, in that note's output text."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import regex

from deid_core.spans import Span

READABLE_LABELS = ("PATIENT", "DOCTOR")
MIN_LETTERS = 4


def readable_names(text: str, gold: Sequence[Span], out_text: str, *,
                   labels: Collection[str] = READABLE_LABELS, min_letters: int = MIN_LETTERS) -> tuple[int, int]:
    """(mentions counted, mentions readable) of one note: gold spans of `labels` with at least
    `min_letters` letters, and those whose original string is a whole word of `out_text`."""
    out_cf = out_text.casefold()
    mentions = readable = 0
    for s in gold:
        original = text[s.start:s.end].strip()
        if s.label not in labels or sum(c.isalpha() for c in original) < min_letters:
            continue
        mentions += 1
        pattern = r"(?<!\w)" + regex.escape(original.casefold()) + r"(?!\w)"
        readable += regex.search(pattern, out_cf) is not None
    return mentions, readable
