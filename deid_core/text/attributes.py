"""Attribute-value pairs (seed 000 §3.3.1): 'Referral source: Dr. X' -> attribute 'referral source'.

An attribute is a short label (1-4 words) at the start of a line or after a sentence end,
followed by ':' (or ' - ' / '='); its value runs to the end of the line or to the next
attribute on the same line. `attribute_of(doc)` gives, per token of `doc.tokens`, the
normalized name of the attribute whose value contains the token ('' elsewhere): a CRF
feature ("a token in the value of 'proxy'").
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

import regex

from deid_core.doc import Doc

# The name starts at a letter preceded (past any spaces and tabs) by the start of the text, a line
# break, a sentence end or two whitespace characters. Linear time: a match is tried only at a
# letter (so a long run of spaces or tabs is not rescanned from each of its positions) and the
# whitespace before the separator and the value is taken possessively. `(?<!\S)` is implied by the
# look-behind (what precedes the name ends in whitespace, or is the text's start); it is checked first
# because it costs one character, so the look-behind runs only at word starts (not every letter).
_ATTR_RE = regex.compile(
    r"(?<!\S)(?=[A-Za-z])(?<=(?:^|\n|[.;]\s|\s{2})[ \t]*)(?P<name>[A-Za-z][A-Za-z/&'()-]*(?:[ \t][A-Za-z/&'()-]+){0,3})"
    r"[ \t]*+(?::|=|[ \t]-[ \t]|-(?=[ \t]))[ \t]*+(?P<value>[^\n]*)",
)

# The same matches on ASCII text (nearly all notes), for the stdlib `re` engine (~40 % less time):
# `regex`'s \s there is exactly _WS, and the variable-length look-behind is unrolled. It holds at
# the name's first letter p iff its prefix alternative holds at p, or at p - 1 when text[p - 1] is
# a space or tab (past two of them, the `\s{2}` alternative holds at p itself). `\A` and `^` never
# match at a line's start past the first (finditer's pos): `\n` covers those.
_WS = " \t\n\x0b\x0c\r"
_AT = rf"(?:\A|(?<=\n)|(?<=[.;][{_WS}])|(?<=[{_WS}][{_WS}]))"
_AT_SPACE = rf"(?:(?<=\A[ \t])|(?<=\n[ \t])|(?<=[.;][{_WS}][ \t])|(?<=[{_WS}][{_WS}][ \t]))"
_ASCII_ATTR_RE = re.compile(
    rf"(?<![^{_WS}])(?=[A-Za-z])(?:{_AT}|{_AT_SPACE})(?P<name>[A-Za-z][A-Za-z/&'()-]*(?:[ \t][A-Za-z/&'()-]+){{0,3}})"
    r"[ \t]*+(?::|=|[ \t]-[ \t]|-(?=[ \t]))[ \t]*+(?P<value>[^\n]*)",
)

_SEPARATOR = regex.compile(r"[:=-]")  # a character every attribute's separator holds


class Attribute(NamedTuple):
    """One attribute-value pair: normalized name, and [value_start, value_end) offsets."""

    name: str
    value_start: int
    value_end: int


def normalize_name(name: str) -> str:
    """Lower case, single spaces, no surrounding punctuation."""
    return " ".join(name.lower().replace("(", " ").replace(")", " ").split()).strip("/&-'")


def attributes(doc: Doc) -> list[Attribute]:
    """Attribute-value pairs of the note, in text order (cached on the Doc)."""
    return doc.memo("attributes", lambda: _find_attributes(doc.text))


def _find_attributes(text: str) -> list[Attribute]:
    out: list[Attribute] = []
    for m in _line_matches(text):
        vs, ve = m.span("value")
        while ve > vs and text[ve - 1].isspace():
            ve -= 1
        if vs < ve:
            out.append(Attribute(normalize_name(m.group("name")), vs, ve))
    return out


def _line_matches(text: str, pattern: regex.Pattern | re.Pattern | None = None) -> list[regex.Match | re.Match]:
    """_ATTR_RE.finditer(text), line by line, skipping lines without a separator character (over half
    of them): a match never crosses a line break, and its look-behind still reads the lines before.
    `pattern` defaults to the ASCII form on ASCII text."""
    out: list[regex.Match | re.Match] = []
    if pattern is None:
        pattern = _ASCII_ATTR_RE if text.isascii() else _ATTR_RE
    n = len(text)
    start = 0
    while start <= n:
        end = text.find("\n", start)
        if end < 0:
            end = n
        if _SEPARATOR.search(text, start, end):
            out.extend(pattern.finditer(text, start, end))
        start = end + 1
    return out


def attribute_of(doc: Doc) -> list[str]:
    """Per token of doc.tokens: the attribute name whose value holds the token, or ''."""
    _, starts, _ = doc.tokens
    out = [""] * len(starts)
    for a in attributes(doc):
        i = bisect_left(starts, a.value_start)
        while i < len(starts) and starts[i] < a.value_end:
            out[i] = a.name
            i += 1
    return out
