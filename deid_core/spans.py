"""The one Span type used everywhere, with helpers to sort, validate and resolve overlaps."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from fnmatch import translate
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Span:
    """A PHI mention: [start, end) Python str offsets into the original text."""

    start: int
    end: int
    label: str
    source: str = ""
    confidence: float = 1.0

    def __len__(self) -> int:
        return self.end - self.start

    def overlaps(self, other: Span) -> bool:
        """True when the two spans share at least one character."""
        return self.start < other.end and other.start < self.end

    def with_label(self, label: str) -> Span:
        """A copy with another label."""
        return replace(self, label=label)


def sort_spans(spans: Iterable[Span]) -> list[Span]:
    """Spans in text order: by start, then longer first, then label."""
    return sorted(spans, key=lambda s: (s.start, -s.end, s.label, s.source))


def validate_spans(spans: Iterable[Span], text_length: int, *, allow_overlap: bool = False) -> None:
    """Raise ValueError (no text in the message) if a span is empty, out of bounds or overlapping."""
    prev: Span | None = None
    for s in sort_spans(spans):
        if not (0 <= s.start < s.end <= text_length):
            raise ValueError(f"span [{s.start}, {s.end}) {s.label} outside text of length {text_length}")
        if not allow_overlap and prev is not None and s.start < prev.end:
            raise ValueError(f"spans [{prev.start}, {prev.end}) and [{s.start}, {s.end}) overlap")
        prev = s


def default_rank(s: Span) -> tuple:
    """Overlap priority: longer wins, then higher confidence, then earlier start."""
    return (s.end - s.start, s.confidence, -s.start)


def resolve_overlaps(spans: Iterable[Span], rank: Callable[[Span], tuple] = default_rank) -> list[Span]:
    """A non-overlapping subset in text order: greedily keep the highest-ranked, drop what overlaps it.

    O(n log n): kept intervals stay sorted, so one bisection finds the only one that can overlap.
    """
    starts: list[int] = []
    ends: list[int] = []
    kept: list[Span] = []
    for s in sorted(spans, key=rank, reverse=True):
        if s.start >= s.end:
            continue
        i = bisect_right(ends, s.start)  # first kept interval ending after s.start
        if i < len(starts) and starts[i] < s.end:
            continue
        starts.insert(i, s.start)
        ends.insert(i, s.end)
        kept.append(s)
    return sort_spans(kept)


def naive_resolve_overlaps(spans: Iterable[Span], rank: Callable[[Span], tuple] = default_rank) -> list[Span]:
    """The quadratic reference of resolve_overlaps, kept for property tests."""
    kept: list[Span] = []
    for s in sorted(spans, key=rank, reverse=True):
        if s.start < s.end and not any(s.overlaps(k) for k in kept):
            kept.append(s)
    return sort_spans(kept)


LEAD_TRIM = frozenset(",;:()[]{}\"'")
TRAIL_TRIM = frozenset(",;:()[]{}\"'.")


def trimmed_bounds(text: str, start: int = 0, end: int | None = None) -> tuple[int, int]:
    """[start, end) narrowed past edge whitespace and punctuation: the one trimming rule of spans."""
    end = len(text) if end is None else end
    while start < end and (text[start].isspace() or text[start] in LEAD_TRIM) and not _closed_inside(text, start, end):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in TRAIL_TRIM):
        end -= 1
    return start, end


def _closed_inside(text: str, start: int, end: int) -> bool:
    """An opening parenthesis closed inside the span with more after it: part of it ('(617) 555-0100',
    not '(Smith)')."""
    if text[start] != "(":
        return False
    close = text.find(")", start + 1, end)
    return close > 0 and any(c.isalnum() for c in text[close + 1:end])


def trim_span(s: Span, text: str) -> Span | None:
    """The span without leading/trailing whitespace and edge punctuation; None if nothing is left."""
    start, end = trimmed_bounds(text, s.start, s.end)
    if start >= end:
        return None
    return s if (start, end) == (s.start, s.end) else replace(s, start=start, end=end)


def source_in(source: str, globs: Sequence[str]) -> bool:
    """Does a span source (rule id) match any of the globs? As fnmatchcase, one compiled pattern per glob list."""
    return _globs(tuple(globs)).match(source) is not None


@lru_cache(maxsize=64)
def _globs(globs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(translate(g) for g in globs) or "(?!)")
