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


def _is_initial(word: str) -> bool:
    return len(_base(word)) == 1 and word[:1].isalpha()


def first_name_ok(word: str, *, strong: bool = False, unknown_ok: bool = False) -> bool:
    """Can this word start a person's name? `strong`: right after Dr./Mr./Mrs.

    Known names qualify unless they are frequent words in lower or upper case ("will");
    unknown words qualify in Title case, or in any case after a strong title; other
    dictionary words only after a strong title.
    """
    low = _base(word)
    if not low or not low[0].isalpha():
        return False
    if "-" in low:  # hyphenated: every part must be name-like ("Smith-Jones", not "called-update")
        parts = [p for p in low.split("-") if p]
        return bool(parts) and all(not is_frequent(p) and (is_name(p) or not is_common(p)) for p in parts) and (
            strong or _titled(word) or any(is_name(p) for p in parts))
    if is_frequent(low):
        return is_name(low) and _titled(word)
    if is_name(low):
        return True
    if not is_common(low):
        return strong or unknown_ok or _titled(word)
    return strong


def later_name_ok(word: str, first: str) -> bool:
    """Can this word continue a name that started with `first`?"""
    low = _base(word)
    if not low or not low[0].isalpha():
        return False
    if len(low) == 1:
        return word[:1].isupper()
    if is_frequent(low):
        return is_name(low) and _titled(word)
    if is_name(low) or not is_common(low):
        return True
    # a Title-case dictionary word after a known first name ("Ferdinand Halfpenny")
    return _titled(word) and _base(first) in words("first_name")


def name_like(word: str, *, strong: bool = False) -> bool:
    """Backward-compatible alias: can this word start a name?"""
    return first_name_ok(word, strong=strong)


_AND = {"and", "&"}


def _name_run(text: str, start: int, end: int, strong: bool, from_left: bool) -> tuple[int, int] | None:
    pieces = _pieces(text, start, end)
    unknown_ok = from_left
    if from_left:  # drop leading words until one can start a name (signatures: "called covering MD")
        while pieces and not (first_name_ok(pieces[0][2], strong=strong, unknown_ok=True) or (
                _is_initial(pieces[0][2]) and len(pieces) > 1 and first_name_ok(pieces[1][2], unknown_ok=True))):
            pieces = pieces[1:]
        if not pieces:
            return None
    i = 0
    if _is_initial(pieces[0][2]) and len(pieces) > 1:  # "E. Welsh", "s. roberto"
        first_ok = first_name_ok(pieces[1][2], strong=True) or later_name_ok(pieces[1][2], pieces[1][2])
        if not first_ok:
            return None
        i = 2
    elif first_name_ok(pieces[0][2], strong=strong, unknown_ok=unknown_ok):
        i = 1
    else:
        return None
    first = pieces[i - 1][2]
    keep = i
    while keep < len(pieces):
        w = pieces[keep][2]
        if _base(w) in _AND or w == "&":
            if keep + 1 < len(pieces) and first_name_ok(pieces[keep + 1][2], strong=strong):
                keep += 2
                continue
            break
        if not later_name_ok(w, first):
            break
        keep += 1
    if from_left and keep < len(pieces):
        return None
    while keep > 1 and _is_initial(pieces[keep - 1][2]):  # trailing lone initial
        keep -= 1
    if keep == 1 and _is_initial(pieces[0][2]):
        return None
    s, e = pieces[0][0], pieces[keep - 1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep the leading run of name-like words after a weak trigger (kinship, roles)."""
    return _name_run(text, start, end, strong=False, from_left=False)


def name_strong_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `name`, but the first word may be any non-frequent word (after Dr./Mr.)."""
    return _name_run(text, start, end, strong=True, from_left=False)


def name_before_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The trailing run of name-like words before a credential ("... Jane Roe, RN")."""
    return _name_run(text, start, end, strong=False, from_left=True)


def place_like(word: str, *, loose: bool = False) -> bool:
    """Can this word be part of a place or institution name?

    Unknown words and known places/names qualify; other dictionary words only in Title
    case (or, `loose`, in any case when a hospital keyword follows).
    """
    low = _base(word)
    if low.isdigit():
        return True
    if len(low) < 2 or low in words("medical_word") or is_frequent(low):
        return False
    if "-" in low:
        return all(place_like(p, loose=loose) for p in word.split("-") if p)
    if not is_common(low) or is_name(low) or low in words("city") or low in words("us_state"):
        return True
    return loose or _titled(word)


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
    """'<place words> <keyword>': keyword words at the end, then place words leftwards."""
    pieces = _pieces(text, start, end)
    kw = settings.get("_kw_words", frozenset())
    k = len(pieces)
    while k > 0 and _base(pieces[k - 1][2]) in kw:
        k -= 1
    if k == len(pieces):
        return None
    i = k
    while i > 0 and place_like(pieces[i - 1][2], loose=True):
        i -= 1
    if i == k:
        return None
    s, e = pieces[i][0], pieces[-1][1]
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
