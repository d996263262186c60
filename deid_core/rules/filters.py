"""Post-filters a rule may name (`filter = "..."`): trim or drop a hit using the gazetteers.

Each filter takes (text, start, end, settings) and returns the kept (start, end) or None.
Word classes: *frequent* words (function words, clinical terms) never belong to a name or
place; other *dictionary* words do only when they are known names (or places) written with
a capital; unknown words ("Rakusin") are name-like.
"""

from __future__ import annotations

from collections.abc import Callable

import regex

from deid_core.gazetteers import is_common, is_frequent, is_name, words

_WORD_RE = regex.compile(r"[^\W\d_](?:[\w'’-]*[^\W\d_])?\.?|\d+")
_POSSESSIVE_RE = regex.compile(r"['’]s$", regex.I)

Filter = Callable[[str, int, int, dict], "tuple[int, int] | None"]


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    return [(start + m.start(), start + m.end(), m.group(0)) for m in _WORD_RE.finditer(text[start:end])]


def _base(word: str) -> str:
    return _POSSESSIVE_RE.sub("", word).rstrip(".").lower()


def _titled(word: str) -> bool:
    return word[:1].isupper() and not word.isupper()


def name_like(word: str, *, strong: bool = False) -> bool:
    """Can this word be (part of) a person's name? `strong`: right after Dr./Mr./Mrs."""
    low = _base(word)
    if not low or low.isdigit() or "'" in low.strip("'’"):
        return bool(low) and not low.isdigit() and not is_frequent(low.split("'")[0])
    if len(low) == 1:
        return True
    freq = is_frequent(low)
    if is_name(low):
        return not freq or _titled(word)
    if freq:
        return False
    if not is_common(low):
        return True
    return strong


def _name_run(text: str, start: int, end: int, strong: bool, from_left: bool) -> tuple[int, int] | None:
    pieces = _pieces(text, start, end)
    if from_left:  # drop leading non-name words (signatures: "called covering MD")
        while pieces and not (name_like(pieces[0][2]) and len(_base(pieces[0][2])) > 1 or
                              len(_base(pieces[0][2])) == 1 and len(pieces) > 1 and pieces[0][2].endswith(".")):
            pieces = pieces[1:]
        while pieces and not name_like(pieces[-1][2]):
            pieces = pieces[:-1]
        if not pieces or not all(name_like(p[2]) for p in pieces):
            return None
        keep = len(pieces)
    else:
        if not pieces or not name_like(pieces[0][2], strong=strong):
            return None
        keep = 1
        for _, _, w in pieces[1:]:
            if not name_like(w):
                break
            keep += 1
    while keep > 1 and len(_base(pieces[keep - 1][2])) == 1:  # trailing lone initial
        keep -= 1
    if keep == 1 and len(_base(pieces[0][2])) == 1:
        return None
    s, e = pieces[0][0], pieces[keep - 1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep the leading run of name-like words after a weak trigger (kinship, roles)."""
    return _name_run(text, start, end, strong=False, from_left=False)


def name_strong_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `name`, but the first word may be any non-frequent dictionary word (after Dr./Mr.)."""
    return _name_run(text, start, end, strong=True, from_left=False)


def name_before_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The trailing run of name-like words before a credential ("... Jane Roe, RN")."""
    return _name_run(text, start, end, strong=False, from_left=True)


def place_like(word: str) -> bool:
    """Can this word be part of a place or institution name?"""
    low = _base(word)
    if low.isdigit():
        return True
    if len(low) < 2 or low in words("medical_word") or is_frequent(low):
        return False
    if not is_common(low) or is_name(low) or low in words("city") or low in words("us_state"):
        return True
    return word[:1].isupper()


def location_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Leading run of place-like words (no frequent or clinical word; no leading number)."""
    pieces = _pieces(text, start, end)
    keep = 0
    for i, (_, _, w) in enumerate(pieces):
        if not place_like(w) or (i == 0 and _base(w).isdigit()):
            break
        keep += 1
    if keep == 0:
        return None
    s, e = pieces[0][0], pieces[keep - 1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def place_keyword_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """'<place words> <keyword>': drop leading non-place words; keep only if a place word is left."""
    pieces = _pieces(text, start, end)
    kw = settings.get("_kw_words", frozenset())
    i = 0
    while i < len(pieces) and not place_like(pieces[i][2]):
        i += 1
    rest = pieces[i:]
    if not rest or all(_base(p[2]) in kw for p in rest) or not any(
            place_like(p[2]) and _base(p[2]) not in kw for p in rest):
        return None
    if not all(place_like(p[2]) or _base(p[2]) in kw for p in rest):
        return None
    s, e = rest[0][0], rest[-1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def age_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep an age of at least settings['min_age'] (HIPAA: only ages over 89 are PHI)."""
    digits = regex.search(r"\d+", text[start:end])
    if digits is None:
        return (start, end) if settings.get("min_age", 0) <= 90 else None
    return (start, end) if int(digits.group(0)) >= settings.get("min_age", 0) else None


def not_common_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Drop a single-word hit that is a common or clinical word."""
    return None if is_common(_base(text[start:end])) else (start, end)


FILTERS: dict[str, Filter] = {
    "name": name_filter,
    "name_strong": name_strong_filter,
    "name_before": name_before_filter,
    "location": location_filter,
    "place_keyword": place_keyword_filter,
    "age": age_filter,
    "not_common": not_common_filter,
}
