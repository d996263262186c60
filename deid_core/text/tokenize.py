"""Aggressive tokenizer with exact offsets (seed 000 §3.3.1) and a sentence splitter.

Tokens are maximal runs of letters (split where an upper-case letter follows a lower-case
one: "winterHx" -> "winter" "Hx"), maximal runs of digits (so letter<->digit boundaries
split: "22at" -> "22" "at"), or any single other non-space character. One compiled pattern
does the work; offsets come from cumulative lengths, with no per-character Python loop.
ASCII text (nearly all clinical notes) takes an equivalent stdlib `re` pattern, about twice
as fast (`python -m benchmarks tokenize`).
"""

from __future__ import annotations

import re
from itertools import accumulate, repeat
from operator import sub
from typing import NamedTuple

import regex

# Group 1: whitespace before the token; group 2: the token. Letter runs: non-lower-case
# letters then lower-case ones (marks stick to the letter before them). Linear time: the
# whitespace is taken possessively and trailing whitespace ends in an empty token at the end of
# the text (\Z) instead of failing there and being rescanned from every later position.
_TOKEN_RE = regex.compile(
    r"(\s*+)("
    r"(?:[\p{L}--\p{Ll}]\p{M}*)+(?:\p{Ll}\p{M}*)*"
    r"|(?:\p{Ll}\p{M}*)+"
    r"|\p{Nd}+"
    r"|\S"
    r"|\Z"
    r")",
    regex.V1,
)

# The same tokens on ASCII text: whitespace then one token per match (no groups, so findall
# returns plain strings). The whitespace set is `regex`'s \s on ASCII (not \x1c-\x1f).
_ASCII_WS = " \t\n\x0b\x0c\r"
_ASCII_CHUNK_RE = re.compile(r"[ \t\n\x0b\x0c\r]*+(?:[A-Z]+[a-z]*|[a-z]+|[0-9]+|[^ \t\n\x0b\x0c\r]|\Z)")

# A sentence ends after . ! ? (plus closing quotes/brackets) followed by whitespace, after a
# colon that ends a line, at a blank line, and at a line that starts with a bullet. Linear time:
# a run of end marks is entered at its first mark only (look-behind) and taken possessively, so a
# long run of dots is not rescanned from each of its positions.
# The four kinds are searched one by one (each alone keeps `regex`'s fast scan for its first
# character; their alternation tried every position: ~3x the time) and their ends merged: matches of
# different kinds never overlap (disjoint characters; the bullet kind is empty, after a newline, at a
# line no other kind can start in), so the merged ends are the alternation's. The bullet kind
# consumes its newline (`\K`): its ends are those of `(?<=\n)(?=...)`.
_SENT_END_RES = tuple(regex.compile(p, regex.V1) for p in (
    r"(?<![.!?])[.!?]++[\"')\]]*+(?=\s)",
    r":[ \t]*+(?=\r?\n)",
    r"\r?\n[ \t]*+(?=\r?\n)",
    r"\n\K(?=[ \t]*+(?:[-*•]|\d++[.)])[ \t])",
))
# The same ends on ASCII text, each kind with the faster engine there (20 -> 12 µs per dev note).
# Stdlib `re` for the end marks (the look-behind moved after the first mark, so `re` scans for the
# marks; `regex`'s \s is _ASCII_WS there), for the colon and for the bullet (the newline consumed:
# the same end). `regex` keeps the blank line (`re` has no first character to scan for: 2x slower).
_ASCII_SENT_END_RES = (
    re.compile(r"[.!?](?<![.!?][.!?])[.!?]*+[\"')\]]*+(?=[ \t\n\x0b\x0c\r])"),
    re.compile(r":[ \t]*+(?=\r?\n)"),
    _SENT_END_RES[2],
    re.compile(r"\n(?=[ \t]*+(?:[-*]|\d++[.)])[ \t])"),  # ('•' is not ASCII)
)


class Token(NamedTuple):
    """One token: its text and [start, end) offsets into the original string."""

    text: str
    start: int
    end: int


def token_offsets(text: str) -> tuple[list[str], list[int], list[int]]:
    """Parallel lists (token texts, starts, ends): the fast form for feature extraction."""
    if text.isascii():
        chunks = _ASCII_CHUNK_RE.findall(text)
        while chunks and not chunks[-1].lstrip(_ASCII_WS):  # trailing whitespace / empty match at \Z
            chunks.pop()
        toks = list(map(str.lstrip, chunks, repeat(_ASCII_WS)))
        ends = list(accumulate(map(len, chunks)))
        return toks, list(map(sub, ends, map(len, toks))), ends
    return _unicode_token_offsets(text)


def _unicode_token_offsets(text: str) -> tuple[list[str], list[int], list[int]]:
    """token_offsets for any text, through the Unicode-aware `regex` pattern."""
    pairs = _TOKEN_RE.findall(text)
    while pairs and not pairs[-1][1]:  # trailing whitespace / empty match at \Z
        pairs.pop()
    if not pairs:
        return [], [], []
    toks = [t for _, t in pairs]
    ends = list(accumulate(len(ws) + len(t) for ws, t in pairs))
    starts = [e - len(t) for e, t in zip(ends, toks, strict=True)]
    return toks, starts, ends


def tokenize(text: str) -> list[Token]:
    """Tokens of `text` with exact offsets; `text[t.start:t.end] == t.text` for every token."""
    toks, starts, ends = token_offsets(text)
    return [Token(t, s, e) for t, s, e in zip(toks, starts, ends, strict=True)]


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence, trimmed of surrounding whitespace, in order."""
    bounds: list[tuple[int, int]] = []
    pos = 0
    cuts = sorted(m.end() for pattern in (_ASCII_SENT_END_RES if text.isascii() else _SENT_END_RES)
                  for m in pattern.finditer(text))
    cuts.append(len(text))
    for cut in cuts:  # sorted: each piece is text[pos:cut], trimmed (str.strip drops exactly str.isspace)
        if cut > pos:
            piece = text[pos:cut]
            kept = piece.strip()
            if kept:
                start = pos + len(piece) - len(piece.lstrip())
                bounds.append((start, start + len(kept)))
            pos = cut
    return bounds
