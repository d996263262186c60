"""Apply replacements to a text in one pass, recording each span's offsets in the output."""

from __future__ import annotations

from collections.abc import Sequence

from deid_core.spans import Span


def apply_replacements(
    text: str, spans: Sequence[Span], replacements: Sequence[str]
) -> tuple[str, list[tuple[int, int]]]:
    """Output text and (out_start, out_end) per span; spans must be sorted and non-overlapping."""
    parts: list[str] = []
    offsets: list[tuple[int, int]] = []
    pos = 0
    out_len = 0
    for span, rep in zip(spans, replacements, strict=True):
        if span.start < pos:
            raise ValueError(f"spans overlap or are unsorted at offset {span.start}")
        gap = text[pos : span.start]
        parts.append(gap)
        out_len += len(gap)
        parts.append(rep)
        offsets.append((out_len, out_len + len(rep)))
        out_len += len(rep)
        pos = span.end
    parts.append(text[pos:])
    return "".join(parts), offsets


def mask_token(label: str) -> str:
    """The `mask` mode replacement: [**LABEL**]."""
    return f"[**{label}**]"
