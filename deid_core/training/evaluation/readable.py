"""Names still readable after de-identification: gold person mentions whose original string
still stands, as a whole word and ignoring case, in that note's output text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from deid_core.config.tables import Label, Positive
from deid_core.spans import Span


@dataclass(frozen=True)
class Readable:
    """Which gold mentions count as names ([readable] of conf/evaluation/generalization.toml)."""

    labels: tuple[Label, ...]
    min_letters: Positive


def readable_names(text: str, gold: Sequence[Span], out_text: str, settings: Readable) -> tuple[int, int]:
    """(mentions counted, mentions readable) of one note: gold spans of the settings' labels with at
    least `min_letters` letters, and those whose original string is a whole word of `out_text`."""
    labels, min_letters = settings.labels, settings.min_letters
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
