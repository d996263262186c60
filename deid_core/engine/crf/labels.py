"""Label schemes (BIO, BIOES, IO): spans -> token tags and token tags -> spans.

IO tags every token of a span I-<label> (half the tags of BIO, a quarter of the O(n·L²)
Viterbi/forward-backward work); two adjacent spans of one label become one run. IOB1 is IO
plus B-<label> only on the first token of a span that directly follows a span of the same
label: lossless like BIO, with B- tags only for the labels where that happens.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence

from deid_core.spans import Span

SCHEMES = ("BIO", "BIOES", "IO", "IOB1")


def check_scheme(scheme: str) -> str:
    """The scheme name, upper-cased; ValueError for an unknown scheme."""
    s = scheme.upper()
    if s not in SCHEMES:
        raise ValueError(f"unknown label scheme {scheme!r}; accepted: {', '.join(SCHEMES)}")
    return s


def encode(
    spans: Sequence[Span], starts: Sequence[int], ends: Sequence[int], scheme: str = "BIO",
    label_map: dict[str, str] | None = None, keep: set[str] | None = None,
) -> list[str]:
    """One tag per token: tokens overlapping a span take its (mapped) label; others O."""
    scheme = check_scheme(scheme)
    tags = ["O"] * len(starts)
    label_map = label_map or {}
    owner = [-1] * len(starts) if scheme == "IOB1" else []
    for n, s in enumerate(spans):
        label = label_map.get(s.label, s.label)
        if keep is not None and label not in keep:
            continue
        i = bisect_right(ends, s.start)  # first token ending after span start
        j = bisect_left(starts, s.end)  # first token starting at/after span end
        if i >= j:
            continue
        for k in range(i, j):
            tags[k] = f"I-{label}"
        if scheme == "IOB1":
            owner[i:j] = [n] * (j - i)
        if scheme in ("IO", "IOB1"):
            continue
        tags[i] = f"B-{label}"
        if scheme == "BIOES":
            if j - i == 1:
                tags[i] = f"S-{label}"
            else:
                tags[j - 1] = f"E-{label}"
    for i in range(1, len(owner)):  # IOB1: B- only where a span directly follows another of its label
        if owner[i] != owner[i - 1] and tags[i] != "O" and tags[i - 1][2:] == tags[i][2:]:
            tags[i] = "B-" + tags[i][2:]
    return tags


def decode(tags: Sequence[str], starts: Sequence[int], ends: Sequence[int]) -> list[tuple[int, int, str]]:
    """(first token, last token + 1, label) runs; tolerant of I without B and of every scheme."""
    out: list[tuple[int, int, str]] = []
    cur_start, cur_label = -1, ""
    for i, tag in enumerate(tags):
        if tag == "O":
            if cur_label:
                out.append((cur_start, i, cur_label))
            cur_label = ""
            continue
        prefix, label = tag[0], tag[2:]
        if prefix in "BS" or label != cur_label:
            if cur_label:
                out.append((cur_start, i, cur_label))
            cur_start, cur_label = i, label
        if prefix in "ES":
            out.append((cur_start, i + 1, cur_label))
            cur_label = ""
    if cur_label:
        out.append((cur_start, len(tags), cur_label))
    return out


def tag_label(tag: str) -> str:
    """The PHI label of a tag ('' for O)."""
    return "" if tag == "O" else tag[2:]


def mention_counts(tags: Sequence[str]) -> dict[str, int]:
    """Mentions per label in a tag sequence (runs as `decode` reads them; any scheme)."""
    out: dict[str, int] = {}
    for _, _, label in decode(tags, range(len(tags)), range(len(tags))):
        out[label] = out.get(label, 0) + 1
    return out


def recall_knob(tags: list[str], positions: Sequence[int], best: Callable[[int], str], begin: str) -> None:
    """Recall knob: each Viterbi-O token at `positions` (in order) takes its most probable PHI tag's label,
    continuing the previous token's label (I-) or starting one (`begin`: B- or I-)."""
    for i in positions:
        label = tag_label(best(i))
        prev = tag_label(tags[i - 1]) if i else ""
        tags[i] = ("I-" if prev == label else begin) + label
