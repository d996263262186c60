"""Normalization for matching, not for output: the view of a note that taggers read, and the map back.

A name split by a zero-width space or a soft hyphen ("Zyx\\u200bwvutsson"), a date with an invisible
character in it, or a name typed in full-width forms ("Ｓｍｉｔｈ") must still be found. Taggers
(rules, metadata matching, CRF features) read a view of the text in which
- invisible format characters (Unicode category Cf: zero-width space / joiners, soft hyphen, word
  joiner, byte-order mark, bidirectional controls) are removed,
- full-width ASCII forms (U+FF01-U+FF5E) become their ASCII letters, digits and signs,
- other space separators (no-break space, ideographic space, ...) become a plain space;
and every span found on the view is mapped back to offsets into the ORIGINAL text that cover the
whole mention, removed characters inside it included. The output keeps every character of the
original outside the replaced spans: normalization never reaches the output.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import regex

# What the view changes: format characters (removed), space separators other than ' ', and the
# full-width forms of ASCII (both mapped one to one).
_CHANGED_RE = regex.compile(r"[\p{Cf}[\p{Zs}--\x20]\uFF01-\uFF5E]+", regex.V1)
_FULLWIDTH_OFFSET = 0xFF01 - 0x21


def _replacement(run: str) -> str:
    """The view's text for one run of changed characters (format characters dropped)."""
    out = []
    for ch in run:
        c = ord(ch)
        if 0xFF01 <= c <= 0xFF5E:
            out.append(chr(c - _FULLWIDTH_OFFSET))
        elif ch.isspace():
            out.append(" ")
    return "".join(out)


@dataclass(frozen=True)
class TextView:
    """A normalized text and, for every run of removed characters, where it was (view offsets)."""

    text: str
    original_length: int
    removed_at: list[int] = field(default_factory=list)  # view offset before which characters were removed
    removed_upto: list[int] = field(default_factory=list)  # characters removed at or before that offset

    @property
    def same_offsets(self) -> bool:
        """True when every offset of the view is the same offset in the original (no character removed)."""
        return not self.removed_at and len(self.text) == self.original_length

    def original_offset(self, i: int) -> int:
        """Original offset of the view's character i (0 <= i < len(text)); len(text) maps to the end."""
        if i >= len(self.text):
            return self.original_length
        k = bisect_right(self.removed_at, i)
        return i + (self.removed_upto[k - 1] if k else 0)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Original [start, end) of the view's [start, end): from its first to its last character,
        so characters removed inside the mention are covered and those around it are not."""
        return self.original_offset(start), self.original_offset(end - 1) + 1


def normalize_text(text: str) -> TextView:
    """The matching view of `text` (linear time; the identity view for ASCII text)."""
    if text.isascii() or _CHANGED_RE.search(text) is None:
        return TextView(text, len(text))
    parts: list[str] = []
    removed_at: list[int] = []
    removed_upto: list[int] = []
    removed = 0
    pos = 0
    size = 0  # length of the view built so far
    for m in _CHANGED_RE.finditer(text):
        parts.append(text[pos:m.start()])
        size += m.start() - pos
        rep = _replacement(m.group())
        if len(rep) == len(m.group()):
            parts.append(rep)
            size += len(rep)
        else:  # characters dropped: keep the kept ones in order, note where each gap falls
            for ch in m.group():
                kept = _replacement(ch)
                if kept:
                    parts.append(kept)
                    size += 1
                else:
                    removed += 1
                    if removed_at and removed_at[-1] == size:
                        removed_upto[-1] = removed
                    else:
                        removed_at.append(size)
                        removed_upto.append(removed)
        pos = m.end()
    parts.append(text[pos:])
    return TextView("".join(parts), len(text), removed_at, removed_upto)


def normalize_value(value: str) -> str:
    """A metadata value as the view would write it (known names are matched against the view)."""
    return normalize_text(value).text if isinstance(value, str) else value


def fold_case(text: str) -> str:
    """Lower case with the same length (a character whose lower case is longer is kept as is)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(lc := c.lower()) != 1 else lc for c in text)
