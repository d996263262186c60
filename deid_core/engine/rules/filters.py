"""Post-filters a rule may name (`filter = "..."`): trim or drop a hit using the gazetteers.

Each filter takes (text, start, end, settings) and returns the kept (start, end) or None.
Word classes: *frequent* words (function words, clinical terms) never belong to a name or
place; other *dictionary* words do only when they are known names (or places) written with
a capital; unknown words ("Zelnik") are name-like.
"""

from __future__ import annotations

from collections.abc import Callable

import regex

from deid_core.engine.vetoes import misspelt
from deid_core.gazetteers import is_common, is_frequent, is_function_word, is_name, words

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


def first_name_ok(word: str, *, strong: bool = False, unknown_ok: int = 0, role: bool = False) -> bool:
    """Can this word start a person's name? `strong`: right after Dr./Mr./Mrs.; `role`: right after
    a clinician role ("NP LONG", "CASEWORKER BILL").

    Known names qualify unless they are frequent words in lower or upper case ("will"), or after
    a role in capitals (but function words); unknown words qualify in Title case, or in any case
    after a strong title; other dictionary words only after a strong title.
    """
    low = _base(word)
    if not low or not low[0].isalpha():
        return False
    if "-" in low:  # hyphenated: every part must be name-like ("Smith-Jones", not "called-update")
        parts = [p for p in low.split("-") if p]
        while len(parts) > 1 and parts[-1] in words("medical_word"):  # "Quellor-PT"
            parts.pop()
        return bool(parts) and all(not is_frequent(p) and (is_name(p) or not is_common(p)) for p in parts) and (
            strong or _titled(word) or any(is_name(p) for p in parts))
    if is_frequent(low):
        # a known name that is also a common word ("Price", "Green") after Dr./Mr.
        return is_name(low) and (_titled(word) or ((strong or (role and not word.islower() and len(low) > 2))
                                                   and not is_function_word(low)))
    if is_name(low):
        return True
    if not is_common(low):
        return strong or unknown_ok == 2 or (unknown_ok == 1 and not word.islower()) or _titled(word)
    # after Dr./Mr. a dictionary word may be a surname ("Dr. Pica"), but not a verb form
    return strong and not (word.islower() and low.endswith(("ing", "ed", "ly")))


def later_name_ok(word: str, first: str) -> bool:
    """Can this word continue a name that started with `first`?"""
    low = _base(word)
    if not low or not low[0].isalpha():
        return False
    if len(low) == 1:
        return word[:1].isupper()
    if is_frequent(low):
        return is_name(low) and (_titled(word) or _same_case_surname(word, low, first))
    if is_name(low) or not is_common(low):
        return True
    # a Title-case dictionary word after a known first name ("Ferdinand Halfpenny")
    return _titled(word) and _base(first) in words("first_name")


def _same_case_surname(word: str, low: str, first: str) -> bool:
    """A known name that is also a frequent word, written in the case of the name's first word:
    "GRACE YOUNG", "dr. bill case" (not a function word: "Jon will", "DR. SMITH FLOOR")."""
    return (len(low) > 2 and not is_function_word(low) and not _is_initial(first)
            and (word.isupper() == first.isupper()) and (word.islower() == first.islower()))


_AND = {"and", "&"}


def _cut_hyphen_tail(pieces: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """End the words at the first hyphen that glues a frequent word on ("Rob-who", "KARGAS-PT")."""
    for k, (s, _, w) in enumerate(pieces):
        if "-" in w:
            head, *tail = w.split("-")
            if head and any(p and is_frequent(_base(p)) for p in tail) and not is_frequent(_base(head)):
                return [*pieces[:k], (s, s + len(head), head)]
    return pieces


def _name_run(text: str, start: int, end: int, strong: bool, from_left: bool,
              unknown_ok: int = 0, role: bool = False) -> tuple[int, int] | None:
    pieces = _pieces(text, start, end)
    if not from_left:
        pieces = _cut_hyphen_tail(pieces)
    unknown_ok = 2 if from_left else unknown_ok
    if from_left:  # drop leading words until one can start a name (signatures: "called covering MD")
        while pieces and not (first_name_ok(pieces[0][2], strong=strong, unknown_ok=2) or (
                _is_initial(pieces[0][2]) and len(pieces) > 1 and first_name_ok(pieces[1][2], unknown_ok=2, role=True)) or (
                len(pieces) > 2 and _is_initial(pieces[1][2]) and first_name_ok(pieces[0][2], role=True))):
            pieces = pieces[1:]
    if not pieces:
        return None
    i = 0
    if _is_initial(pieces[0][2]) and len(pieces) > 1:  # "E. Welsh", "s. roberto"; from the left "K. LONG RN"
        first_ok = first_name_ok(pieces[1][2], strong=strong, unknown_ok=max(unknown_ok, 1), role=role or from_left)
        if not first_ok:
            return None
        i = 2
    elif first_name_ok(pieces[0][2], strong=strong, unknown_ok=unknown_ok,
                       role=role or (from_left and len(pieces) > 2 and _is_initial(pieces[1][2]))):
        i = 1  # from the left, a middle initial vouches for a frequent first word ("BILL R. HALL, RRT")
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


def kin_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `name`, after a family word; a word in capitals in no dictionary or name list, or a known name
    that is also a frequent word, may start the name there ("SON QWYRT AT HOME", "NIECE PEG"),
    unless it is one edit from a dictionary word ("SON ARIVED") or a function word ("SON WILL")."""
    pieces = _pieces(text, start, end)
    if not pieces or not pieces[0][2].isupper() or "-" in pieces[0][2] or misspelt(_base(pieces[0][2])):
        return _name_run(text, start, end, strong=False, from_left=False)
    return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=1, role=True)


def name_strong_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `name`, but the first word may be any non-frequent word (after Dr./Mr.)."""
    return _name_run(text, start, end, strong=True, from_left=False)


def name_role_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """After a clinician role ("NP Drumic"): unknown words may start the name in any case."""
    pieces = _pieces(text, start, end)
    if pieces and not _is_initial(pieces[0][2]) and not first_name_ok(pieces[0][2], unknown_ok=1, role=True):
        return None
    return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=1, role=True)


def known_first_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A name run whose first word is a known given name (no unknown words: context is weak)."""
    pieces = _pieces(text, start, end)
    if not pieces or _base(pieces[0][2]) not in words("first_name"):
        return None
    if is_frequent(_base(pieces[0][2])) and not _titled(pieces[0][2]):
        return None
    return _name_run(text, pieces[0][0], end, strong=False, from_left=False)


def initial_known_surname_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """'d. renna': an initial and a known surname that is no frequent or clinical word, any case."""
    pieces = _pieces(text, start, end)
    if len(pieces) != 2 or not _is_initial(pieces[0][2]):
        return None
    low = _base(pieces[1][2])
    if low not in words("last_name") or is_frequent(low) or low in words("medical_word"):
        return None
    return (pieces[0][0], pieces[1][1])


def name_before_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The trailing run of name-like words before a credential ("... Jane Roe, RN")."""
    return _name_run(text, start, end, strong=False, from_left=True)


def _clinical_hyphen_tail(pieces: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The last word without a clinical word glued on by a hyphen ("T. MORROW-PT": "MORROW")."""
    if pieces and "-" in pieces[-1][2]:
        s, _, w = pieces[-1]
        head, _, tail = w.rpartition("-")
        if head and (is_frequent(_base(tail)) or _base(tail) in words("medical_word")):
            return [*pieces[:-1], (s, s + len(head), head)]
    return pieces


def context_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Words where only a name fits (a note's closing signature line, 'NP X aware'): known names that
    are also clinical words ("k. bell rrt") and unknown words pass; function words, verb forms and
    other dictionary or clinical words ("team", "catheter") do not."""
    pieces = _clinical_hyphen_tail(_pieces(text, start, end))
    rest = pieces[1:] if pieces and _is_initial(pieces[0][2]) else pieces
    if not rest:
        return None
    for _, _, w in rest:
        low = _base(w)
        if len(low) < 2 or not low.isalpha() or is_function_word(low):
            return None
        if not is_name(low) and (is_common(low) or low in words("medical_word")
                                 or (w.islower() and low.endswith(("ing", "ed", "ly")))):
            return None
    s, e = pieces[0][0], pieces[-1][1]
    return (s, e - 1 if text[e - 1] == "." else e)


def place_acronym_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A 2-4 capital facility acronym: no clinical or frequent abbreviation (OR, CT, MICU, OSH), no state,
    and from 3 letters no dictionary word either (an upper-case note's "BILE DUCT")."""
    low = text[start:end].lower()
    if is_frequent(low) or low in words("medical_word") or low in words("us_state_abbr") or (
            len(low) > 2 and is_common(low)):
        return None
    return (start, end)


def place_like(word: str, *, loose: bool = False) -> bool:
    """Can this word be part of a place or institution name?

    Unknown words qualify, except in lower case where they must be known places; known
    names and places qualify unless in lower case; other dictionary words qualify in Title
    case or, `loose` (a hospital keyword follows), in lower case too unless they look like
    verb forms (-ing, -ed, -ly).
    """
    low = _base(word)
    if low.isdigit():
        return True
    if len(low) < 2 or low in words("medical_word") or is_frequent(low):
        return False
    if "-" in low:
        return all(place_like(p, loose=loose) for p in word.split("-") if p)
    lower = word.islower()
    if low in words("city"):
        return loose or not (lower and is_common(low))
    if not is_common(low) or is_name(low):
        return not lower or loose or not is_common(low)
    if _titled(word) or (word.isupper() and loose):
        return True
    return loose and lower and not low.endswith(("ing", "ed", "ly"))


def _inner_place_word(word: str) -> bool:
    """A capitalized everyday word inside an institution name ("Chester River Heart Center")."""
    low = _base(word)
    return (len(low) > 2 and (_titled(word) or word.isupper()) and not is_function_word(low)
            and low not in words("medical_word"))


def location_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Leading run of place-like words (no frequent or clinical word; no leading number).

    A lone US state or country name is left to the gazetteer rules (STATE / COUNTRY)."""
    pieces = _pieces(text, start, end)
    for n in range(min(3, len(pieces)), 1, -1):  # a known multi-word city ("new haven") in any case
        if " ".join(_base(w) for _, _, w in pieces[:n]) in words("city"):
            return (pieces[0][0], pieces[n - 1][1] - (text[pieces[n - 1][1] - 1] == "."))
    keep = 0
    for i, (_, _, w) in enumerate(pieces):
        if not place_like(w) or (i == 0 and _base(w).isdigit()):
            break
        keep += 1
    if keep == 0:
        return None
    if keep == 1 and (_base(pieces[0][2]) in words("us_state") or _base(pieces[0][2]) in words("country")):
        return None
    s, e = pieces[0][0], pieces[keep - 1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def place_keyword_filter(text: str, start: int, end: int, settings: dict, loose: bool = True) -> tuple[int, int] | None:
    """'<place words> <keyword>': keyword words at the end, then place words leftwards."""
    pieces = _pieces(text, start, end)
    kw = settings.get("_kw_words", frozenset())
    k = len(pieces)
    while k > 0 and _base(pieces[k - 1][2]) in kw:
        k -= 1
    if k == len(pieces):
        return None
    i = k
    while i > 0 and (place_like(pieces[i - 1][2], loose=loose) or (loose and i < k and _inner_place_word(pieces[i - 1][2]))):
        i -= 1
    if i == k:
        return None
    if i > 0 and _base(pieces[i - 1][2]) in ("st", "mt", "saint", "mount"):
        i -= 1
    s, e = pieces[i][0], pieces[-1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def place_keyword_strict_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As place_keyword for ambiguous keywords (house, general, rehab): no lower-case dictionary words."""
    return place_keyword_filter(text, start, end, settings, loose=False)


def city_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A place name that is a known city, or Title-case and not a dictionary word."""
    kept = location_filter(text, start, end, settings)
    if kept is None:
        return None
    surface = text[kept[0]:kept[1]]
    low = " ".join(_base(w) for w in surface.split())
    if low in words("city") or all(_titled(w) and not is_common(_base(w)) for w in surface.split()):
        return kept
    return None


def profession_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The longest leading run of words (up to 4) that is a known profession ('truck driver')."""
    pieces = _pieces(text, start, end)
    jobs = words("profession")
    for n in range(min(4, len(pieces)), 0, -1):
        phrase = " ".join(_base(p[2]) for p in pieces[:n])
        if phrase in jobs or (phrase.endswith("s") and phrase[:-1] in jobs):
            e = pieces[n - 1][1]
            return (pieces[0][0], e - 1 if text[e - 1] == "." else e)
    return None


def age_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep an age of at least settings['min_age'] (HIPAA: only ages over 89 are PHI)."""
    if start >= end:
        return None
    digits = regex.search(r"[0-9]+", text[start:end])
    if digits is None:
        return (start, end) if settings["min_age"] <= 90 else None
    return (start, end) if int(digits.group(0)) >= settings["min_age"] else None


def not_common_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Drop a single-word hit that is a common or clinical word."""
    return None if start >= end or is_common(_base(text[start:end])) else (start, end)


def initials_line_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep a hit on a line of initials ('EW/DVR/tb') only when no letter group of that line is a frequent
    word or clinical abbreviation ('CTA/RRR/soft' is an exam)."""
    line = text[text.rfind("\n", 0, start) + 1:(text.find("\n", end) + 1 or len(text) + 1) - 1]
    return None if any(is_frequent(g) for g in regex.findall(r"[A-Za-z]+", line)) else (start, end)


def no_frequent_word_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Drop a hit with a frequent word or clinical abbreviation among its words but its joining 'and'
    ('sutton, leblanc and miranda' is a firm, 'home, nights and weekends' is not)."""
    parts = [w for w in regex.findall(r"[A-Za-z'’-]+", text[start:end]) if w.lower() != "and"]
    return None if any(is_frequent(_base(w)) for w in parts) else (start, end)


def place_tail_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Trailing run of place-like words (or `place_prefixes`: West, Lake, Port...) before a state or
    ZIP: 'lives WEST DONNA, NY' keeps 'WEST DONNA'; a lone state or country name is not a town."""
    pieces = _pieces(text, start, end)
    prefixes = settings.get("place_prefixes", ())
    keep = 0
    for _, _, w in reversed(pieces):
        if not (place_like(w, loose=True) or _base(w) in prefixes) or _base(w).isdigit():
            break
        keep += 1
    if keep == 0 or all(_base(w) in prefixes for _, _, w in pieces[len(pieces) - keep:]):
        return None
    first = pieces[len(pieces) - keep]
    if keep == 1 and (_base(first[2]) in words("us_state") or _base(first[2]) in words("country")):
        return None
    return (first[0], pieces[-1][1])


def proper_head_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A '<proper words> <kind>' place ('Walden Pond', 'Golden Gate Bridge'): its first word (after
    'the') is no clinical word ('Nurses Station'), nor, alone before the kind, a frequent word ('Work
    Station')."""
    pieces = [p for p in _pieces(text, start, end) if _base(p[2]) != "the"]
    if len(pieces) < 2:
        return None
    first = _base(pieces[0][2])
    if first in words("medical_word") or first[:-1] in words("medical_word") or (len(pieces) == 2 and is_frequent(first)):
        return None
    return (start, end)


FILTERS: dict[str, Filter] = {
    "name": name_filter,
    "kin_name": kin_name_filter,
    "name_strong": name_strong_filter,
    "name_before": name_before_filter,
    "name_role": name_role_filter,
    "known_first_name": known_first_name_filter,
    "initial_known_surname": initial_known_surname_filter,
    "location": location_filter,
    "place_keyword": place_keyword_filter,
    "place_keyword_strict": place_keyword_strict_filter,
    "city": city_filter,
    "age": age_filter,
    "profession": profession_filter,
    "not_common": not_common_filter,
    "initials_line": initials_line_filter,
    "no_frequent_word": no_frequent_word_filter,
    "place_tail": place_tail_filter,
    "proper_head": proper_head_filter,
    "context_name": context_name_filter,
    "place_acronym": place_acronym_filter,
}
