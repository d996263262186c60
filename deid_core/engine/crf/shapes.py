"""Token shapes for the CRF features: orthographic shape, compressed shape, coarse regex class."""

from __future__ import annotations

import regex

from deid_core.engine.crf.words import feature_words

_SHAPE_TABLE = {}
for _c in range(0x10000):
    _ch = chr(_c)
    if _ch.isdigit():
        _SHAPE_TABLE[_c] = "#"
    elif _ch.isupper():
        _SHAPE_TABLE[_c] = "A"
    elif _ch.islower():
        _SHAPE_TABLE[_c] = "a"
del _c, _ch

_COMPRESS_RE = regex.compile(r"(.)\1+")


def shape(token: str) -> str:
    """Orthographic shape: digits '#', upper 'A', lower 'a', other characters kept (capped at 10)."""
    s = token[:10].translate(_SHAPE_TABLE)
    return s + "~" if len(token) > 10 else s


def short_shape(token: str) -> str:
    """Compressed shape: runs of one shape character collapsed ('Smith' -> 'Aa')."""
    return _COMPRESS_RE.sub(r"\1", shape(token).rstrip("~"))


_WORDS = feature_words()  # conf/crf_features.toml, conf/calendar.toml


def regex_shape(token: str) -> str:
    """A coarse token class (year, month, 2-digit, init-cap, all-caps, title, punctuation...)."""
    low = token.lower()
    if token.isdigit():
        n = len(token)
        if n == 4 and token[:2] in ("19", "20"):
            return "YEAR"
        if n <= 2:
            return "D12" if int(token) <= 12 else ("D31" if int(token) <= 31 else "D2")
        return f"D{min(n, 6)}"
    if low in _WORDS.months:
        return "MONTH"
    if low in _WORDS.weekdays:
        return "WEEKDAY"
    if low in _WORDS.seasons:
        return "SEASON"
    if low in _WORDS.titles:
        return "TITLE"
    if token.isalpha():
        if len(token) == 1:
            return "INITIAL" if token.isupper() else "LETTER"
        if token.isupper():
            return "ALLCAPS"
        if token[0].isupper():
            return "INITCAP"
        return "LOWER"
    return "PUNCT" if len(token) == 1 else "OTHER"
