"""Long notes in bounded memory: tag overlapping windows cut at line breaks, keep each window's core.

A 10 MB note tagged whole holds every token's CRF feature list at once (several GB). Above
`window_chars` the pipeline tags it window by window instead: the note is cut into cores of about
`window_chars` characters at a blank line (else a line break, else a space), and each core is
tagged with `overlap_chars` of context on either side (margins also start and end at line breaks),
so rules, their look-behinds and the CRF's neighbour features see the same text they would see
in the whole note. A window keeps the spans that start in its core; a span that crosses the cut
is kept whole from the window where it starts, and anything the next window found overlapping
it is resolved longest-first. Section names come from the whole note (a section header can lie
far before a window). The note-level merge steps (type agreement, propagation of names and
places) then run once over the whole note (pipeline.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from deid_core.doc import Doc
from deid_core.spans import Span, resolve_overlaps
from deid_core.text.sections import Section


@dataclass(frozen=True)
class Window:
    """[start, end) of the text a window tags; spans starting in [core_start, core_end) are kept."""

    start: int
    end: int
    core_start: int
    core_end: int


def _cut_near(text: str, target: int, lo: int) -> int:
    """A cut position in (lo, target]: after a blank line, else after a line break, else after a space."""
    for sep in ("\n\n", "\n", " ", "\t"):
        i = text.rfind(sep, lo, target)
        if i >= 0:
            return i + len(sep)
    return target


def _line_start_before(text: str, pos: int, lo: int) -> int:
    """The start of the line holding pos (not before lo); lo when the line starts earlier."""
    i = text.rfind("\n", lo, pos)
    return i + 1 if i >= 0 else lo


def _line_end_after(text: str, pos: int, hi: int) -> int:
    """The end (after the line break) of the line holding pos (not after hi); hi when it ends later."""
    i = text.find("\n", pos, hi)
    return i + 1 if i >= 0 else hi


def window_bounds(text: str, window_chars: int, overlap_chars: int) -> list[Window]:
    """The windows of a text: one (the whole text) when it is not longer than window_chars."""
    n = len(text)
    if n <= window_chars:
        return [Window(0, n, 0, n)]
    cores: list[int] = [0]
    while n - cores[-1] > window_chars:
        start = cores[-1]
        cores.append(_cut_near(text, start + window_chars, start + window_chars // 2))
    cores.append(n)
    out = []
    for a, b in zip(cores, cores[1:], strict=False):
        ws = _line_start_before(text, max(0, a - overlap_chars), max(0, a - 2 * overlap_chars))
        we = _line_end_after(text, min(n, b + overlap_chars), min(n, b + 2 * overlap_chars))
        out.append(Window(ws, we, a, b))
    return out


def _window_sections(sections: list[Section], w: Window) -> list[Section]:
    """The whole note's sections that reach into the window, in window offsets (may start before it)."""
    return [Section(s.name, s.header_start - w.start, s.header_end - w.start, min(s.end, w.end) - w.start)
            for s in sections if s.header_start < w.end and s.end > w.start]


def window_doc(doc: Doc, w: Window) -> Doc:
    """A Doc of one window's text, with the whole note's sections."""
    sub = Doc(replace(doc.note, text=doc.text[w.start:w.end]))
    sub.__dict__["sections"] = _window_sections(doc.sections, w)  # fills the cached_property
    return sub


def tag_in_windows(doc: Doc, tag_window: Callable[[Doc], list[Span]], window_chars: int,
                   overlap_chars: int) -> list[Span]:
    """Non-overlapping spans of a long note, tagged window by window (offsets into the whole note)."""
    kept: list[Span] = []
    for w in window_bounds(doc.text, window_chars, overlap_chars):
        for s in tag_window(window_doc(doc, w)):
            start = s.start + w.start
            if w.core_start <= start < w.core_end:
                kept.append(replace(s, start=start, end=s.end + w.start))
    return resolve_overlaps(kept)
