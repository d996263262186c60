"""Span guards: a span never crosses a line break into a line of another kind.

A tagger can run a mention across a line break into the end of the line before or the start of
the next ("07:30\\nVerity Smith" tagged PATIENT from the "30": the token CRF continues its I- tag
across the break). Replacing that span rewrites the clock time ("07:92"). For labels whose
mentions are words or numbers (conf/taxonomy.toml [kinds]), each line a span crosses must hold a
letter (word labels) or a digit (number labels); the other lines are cut off, and a span whose
kept lines are not adjacent becomes one span per run of kept lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from deid_core.config import conf_file
from deid_core.spans import Span, trimmed_bounds


@lru_cache(maxsize=1)
def _kinds() -> dict[str, str]:
    """label -> 'word' | 'number' (conf/taxonomy.toml [kinds])."""
    return {label: kind for kind, labels in conf_file("taxonomy.toml").get("kinds", {}).items() for label in labels}


def _of_kind(line: str, kind: str) -> bool:
    return any(c.isalpha() for c in line) if kind == "word" else any(c.isdigit() for c in line)


def _line_pieces(s: Span, text: str, kind: str) -> list[Span]:
    """The span cut into runs of adjacent lines of its kind (trimmed), in order."""
    out: list[Span] = []
    run_start = run_end = None
    pos = s.start
    while pos < s.end:
        brk = text.find("\n", pos, s.end)
        line_end = s.end if brk < 0 else brk
        if _of_kind(text[pos:line_end], kind):
            run_start = pos if run_start is None else run_start
            run_end = line_end
        elif run_start is not None:
            out.append(replace(s, start=run_start, end=run_end))
            run_start = None
        pos = line_end + 1
    if run_start is not None:
        out.append(replace(s, start=run_start, end=run_end))
    if len(out) == 1 and (out[0].start, out[0].end) == (s.start, s.end):
        return [s]  # every line is of the span's kind
    pieces = []
    for p in out:
        a, b = trimmed_bounds(text, p.start, p.end)
        if a < b:
            pieces.append(replace(p, start=a, end=b))
    return pieces


def guard_line_breaks(spans: Iterable[Span], text: str) -> list[Span]:
    """Spans with every line of another kind cut off (see the module docstring); order kept."""
    kinds = _kinds()
    out: list[Span] = []
    for s in spans:
        kind = kinds.get(s.label)
        if kind is None or text.find("\n", s.start, s.end) < 0:
            out.append(s)
        else:
            out.extend(_line_pieces(s, text, kind))
    return out
