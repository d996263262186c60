"""Post-filters a rule may name (`filter = "..."`): trim or drop a hit using the gazetteers.

Each filter takes (text, start, end, settings) and returns the kept (start, end) or None.
Word classes: *frequent* words (function words, clinical terms) never belong to a name or
place; other *dictionary* words do only when they are known names (or places) written with
a capital; unknown words ("Zelnik") are name-like.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import regex

from deid_core.engine.rules.filter_words import base, first_word, hit_words, titled
from deid_core.engine.rules.name_filters import (
    context_name_filter,
    initial_known_surname_filter,
    kin_name_filter,
    known_first_name_filter,
    known_name_filter,
    listed_name_filter,
    name_before_filter,
    name_filter,
    name_role_filter,
    name_strong_filter,
)
from deid_core.engine.rules.place_words import place_words
from deid_core.gazetteers import is_common, is_frequent, is_function_word, is_name, words

Filter = Callable[[str, int, int, dict], "tuple[int, int] | None"]

# the filters' own patterns, compiled once (a module-level regex.search/findall looks its pattern up per call)
_DIGITS = regex.compile(r"[0-9]+")
_LETTER_GROUP = regex.compile(r"[A-Za-z]+")
_WORD_PART = regex.compile(r"[A-Za-z'’-]+")


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
    low = base(word)
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
    if titled(word) or (word.isupper() and loose):
        return True
    return loose and lower and not low.endswith(("ing", "ed", "ly"))


def _inner_place_word(word: str) -> bool:
    """A capitalized everyday word inside an institution name ("Chester River Heart Center")."""
    low = base(word)
    return (len(low) > 2 and (titled(word) or word.isupper()) and not is_function_word(low)
            and low not in words("medical_word"))


def place_tail_lower_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """place_tail_filter's town for a lower-case frame, kept only when it is a known town or none of its words but a
    place prefix is a dictionary word ('- quell, ann - [quellport] mn'; not '- ekg: sinus, wi', '- monitor, tn')."""
    span = place_tail_filter(text, start, end, settings)
    if span is None:
        return None
    prefixes = settings.get("place_prefixes", ())
    pieces = [base(w) for _, _, w in hit_words(text, span[0], span[1])]
    if " ".join(pieces) in words("city") or not any(is_common(w) for w in pieces if w not in prefixes):
        return span
    return None


def location_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Leading run of place-like words (no frequent or clinical word; no leading number).

    A lone US state or country name is left to the gazetteer rules (STATE / COUNTRY)."""
    pieces = hit_words(text, start, end)
    for n in range(min(3, len(pieces)), 1, -1):  # a known multi-word city ("new haven") in any case
        if " ".join(base(w) for _, _, w in pieces[:n]) in words("city"):
            return (pieces[0][0], pieces[n - 1][1] - (text[pieces[n - 1][1] - 1] == "."))
    keep = 0
    for i, (_, _, w) in enumerate(pieces):
        if not place_like(w) or (i == 0 and base(w).isdigit()):
            break
        keep += 1
    if keep == 0:
        return None
    if keep == 1 and (base(pieces[0][2]) in words("us_state") or base(pieces[0][2]) in words("country")):
        return None
    s, e = pieces[0][0], pieces[keep - 1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def place_keyword_filter(text: str, start: int, end: int, settings: dict, loose: bool = True) -> tuple[int, int] | None:
    """'<place words> <keyword>': keyword words at the end, then place words leftwards."""
    pieces = hit_words(text, start, end)
    kw = settings.get("_kw_words", frozenset())
    k = len(pieces)
    while k > 0 and base(pieces[k - 1][2]) in kw:
        k -= 1
    if k == len(pieces):
        return None
    i = k
    while i > 0 and (place_like(pieces[i - 1][2], loose=loose) or (loose and i < k and _inner_place_word(pieces[i - 1][2]))):
        i -= 1
    if i == k:
        return None
    if i > 0 and base(pieces[i - 1][2]) in ("st", "mt", "saint", "mount"):
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
    low = " ".join(base(w) for w in surface.split())
    if low in words("city") or all(titled(w) and not is_common(base(w)) for w in surface.split()):
        return kept
    return None


_STATE_NAMED = place_words("state_named_countries")  # a country named as a US state: the state reading stands


def country_reading(surface: str, low: str) -> bool:
    """Whether a place's words (`low`: lower-cased, single-spaced) name a country: a known country, not "Georgia" (a US
    state too), and in lower case only one that is no common word ('rwanda', not 'chad')."""
    return low in words("country") and low not in _STATE_NAMED and not (surface.islower() and is_common(low))


def country_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The longest leading run of up to five words that is a known country ('Trinidad and Tobago' of 'Trinidad
    and Tobago January 2015'); in lower case only a country that is no common word ('rwanda', not 'chad'); not 'Georgia', a US state too."""
    pieces = hit_words(text, start, end)[:5]
    for n in range(len(pieces), 0, -1):
        surface = text[pieces[0][0]:pieces[n - 1][1]]
        low = " ".join(base(w) for _, _, w in pieces[:n])
        if country_reading(surface, low):
            end = pieces[n - 1][1]
            return (pieces[0][0], end - (text[end - 1] == "."))
    return None


def country_alone_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """country_filter's country only when it is the whole place: the word after it (if the hit goes on) is in lower
    case, or a frequent word in capitals ('from Kenya was', 'FROM INDIA WITH'); not a place that opens with a country's
    name ('from [Israel Deaconess]', 'from Chad Quell's home')."""
    span = country_filter(text, start, end, settings)
    if span is None:
        return None
    rest = hit_words(text, span[1], end)
    if rest and not (rest[0][2].islower() or (rest[0][2].isupper() and is_frequent(base(rest[0][2])))):
        return None
    return span


@cache
def _profession_heads() -> frozenset[str]:
    """Every word a known profession phrase can open as profession_filter reads it (its first word; a one-word
    profession also with an "s")."""
    jobs = words("profession")
    return frozenset([j.split(" ")[0] for j in jobs] + [j + "s" for j in jobs if " " not in j])


def profession_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The longest leading run of words (up to 4) that is a known profession ('truck driver')."""
    first = first_word(text, start, end)  # most hits ("is stable") open with no profession's word: no more reading
    if first is None or base(first) not in _profession_heads():
        return None
    return profession_run(text, start, end)


def profession_run(text: str, start: int, end: int) -> tuple[int, int] | None:
    """profession_filter's reading of every word of the hit (the filter skips hits no profession can open)."""
    pieces = hit_words(text, start, end)
    jobs = words("profession")
    bases = [base(p[2]) for p in pieces[:4]]
    for n in range(min(4, len(pieces)), 0, -1):
        phrase = " ".join(bases[:n])
        if phrase in jobs or (phrase.endswith("s") and phrase[:-1] in jobs):
            e = pieces[n - 1][1]
            return (pieces[0][0], e - 1 if text[e - 1] == "." else e)
    return None


def age_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep an age of at least settings['min_age'] (HIPAA: only ages over 89 are PHI)."""
    if start >= end:
        return None
    digits = _DIGITS.search(text[start:end])
    if digits is None:
        return (start, end) if settings["min_age"] <= 90 else None
    return (start, end) if int(digits.group(0)) >= settings["min_age"] else None


def not_common_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Drop a single-word hit that is a common or clinical word."""
    return None if start >= end or is_common(base(text[start:end])) else (start, end)


def dotted_login_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Drop a dotted 'login' that is two words run together at a missing space ('MOUTH.TOLERATED', 'tol.po'):
    either part a frequent word or clinical abbreviation, or both dictionary words."""
    parts = [base(w) for w in _LETTER_GROUP.findall(text[start:end])]
    if not parts or any(is_frequent(w) for w in parts) or all(is_common(w) for w in parts):
        return None
    return (start, end)


def initials_line_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep a hit on a line of initials ('EW/DVR/tb') only when no letter group of that line is a frequent
    word or clinical abbreviation ('CTA/RRR/soft' is an exam)."""
    line = text[text.rfind("\n", 0, start) + 1:(text.find("\n", end) + 1 or len(text) + 1) - 1]
    return None if any(is_frequent(g) for g in _LETTER_GROUP.findall(line)) else (start, end)


def no_frequent_word_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Drop a hit with a frequent word or clinical abbreviation among its words but its joining 'and'
    ('sutton, leblanc and miranda' is a firm, 'home, nights and weekends' is not)."""
    parts = [w for w in _WORD_PART.findall(text[start:end]) if w.lower() != "and"]
    return None if any(is_frequent(base(w)) for w in parts) else (start, end)


def named_employer_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """An employer named before 'employee': no_frequent_word_filter's hit that is no single common or clinical word
    ('a [Quellix] employee', 'Retired [GE] employee'; not 'an ICU employee', 'RETIRED RAILROAD EMPLOYEE', 'a FULL TIME
    employee', 'a Medical Center employee'; review17)."""
    if not_common_filter(text, start, end, settings) is None:
        return None
    return no_frequent_word_filter(text, start, end, settings)


def place_tail_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Trailing run of place-like words (or `place_prefixes`: West, Lake, Port...) before a state or
    ZIP: 'lives WEST DONNA, NY' keeps 'WEST DONNA'; a lone state or country name is not a town."""
    pieces = hit_words(text, start, end)
    prefixes = settings.get("place_prefixes", ())
    keep = 0
    for _, _, w in reversed(pieces):
        if not (place_like(w, loose=True) or base(w) in prefixes) or base(w).isdigit():
            break
        keep += 1
    if keep == 0 or all(base(w) in prefixes for _, _, w in pieces[len(pieces) - keep:]):
        return None
    first = pieces[len(pieces) - keep]
    if keep == 1 and (base(first[2]) in words("us_state") or base(first[2]) in words("country")):
        return None
    return (first[0], pieces[-1][1])


_CARE_SETTINGS = place_words("care_settings")  # care settings and words a note names places by, not a name


def _named_place(text: str, span: tuple[int, int] | None) -> tuple[int, int] | None:
    """`span` unless its first word (after 'the') is a clinical or frequent word or a care setting ('CT trip', 'FALL AT
    SNF'), or it is one common word that is no known town ('Shower', 'GYM'; 'Reading' stays)."""
    if span is None:
        return None
    pieces = [p for p in hit_words(text, *span) if base(p[2]) != "the"]
    if not pieces:
        return None
    first = base(pieces[0][2])
    if first in words("medical_word") or is_frequent(first) or first in _CARE_SETTINGS:
        return None
    if len(pieces) == 1 and is_common(first) and first not in words("city"):
        return None
    return span


def landmark_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A named landmark ('after [Outer Quell] trip'), not a care setting or a common word ('after CT trip')."""
    return _named_place(text, (start, end))


def landmark_tail_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """place_tail_filter's place, kept only when landmark_filter keeps it ('FALL AT [LAKE QUELLMERE]', not 'AT SNF')."""
    return _named_place(text, place_tail_filter(text, start, end, settings))


def town_whole_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """place_tail_lower_filter's town, kept only when it is the whole hit, opens with no clinical word or care setting
    but a place prefix ('New', 'Lake') and, unless a known town, no first name ('call was from Jo'): a frame read
    before the town ('- [Quellfurt] MI', 'resident of [Quellside]') says nothing of a town cut out of a clinical
    phrase or made of dictionary words ('- Insulin Glargine SC', 'Hx: Metastatic Breast CA', 'moved to telemetry')."""
    span = place_tail_lower_filter(text, start, end, settings)
    if span is None or span[0] != start:
        return None
    pieces = [base(w) for _, _, w in hit_words(text, *span)]
    if pieces[0] not in settings.get("place_prefixes", ()) and (pieces[0] in words("medical_word") or pieces[0] in _CARE_SETTINGS):
        return None
    if pieces[0] in words("first_name") and " ".join(pieces) not in words("city"):
        return None  # a person: 'call was from [Jo] Quellan', not 'originally from [Quincy]'
    return span


def location_named_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """location_filter's place, kept only when landmark_filter keeps it ('lives w/ son in [Quarrow]', not 'in Shelter')."""
    return _named_place(text, location_filter(text, start, end, settings))


def location_whole_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """location_named_filter's place only when it keeps the whole hit: a frame that reads the words after the place
    ('woman from X admitted') says nothing of a place cut out of a longer phrase ('from [interventional] radiology')."""
    span = location_named_filter(text, start, end, settings)
    return span if span is not None and span[0] == start and text[span[1]:end].strip(".") == "" else None


def proper_head_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A '<proper words> <kind>' place ('Walden Pond', 'Golden Gate Bridge'): its first word (after
    'the') is no clinical word ('Nurses Station'), nor, alone before the kind, a frequent word ('Work
    Station')."""
    pieces = [p for p in hit_words(text, start, end) if base(p[2]) != "the"]
    if len(pieces) < 2:
        return None
    first = base(pieces[0][2])
    if first in words("medical_word") or first[:-1] in words("medical_word") or (len(pieces) == 2 and is_frequent(first)):
        return None
    return (start, end)


def firm_partners_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """proper_head_filter's firm whose partners are each a known name or no dictionary word ('Quellan, Burke and
    White'; not 'HOME AND SCHOOL', 'Mom and Dad', 'Night and Weekends')."""
    if proper_head_filter(text, start, end, settings) is None:
        return None
    partners = [w for w in (base(p[2]) for p in hit_words(text, start, end)) if w != "and"]
    return (start, end) if all(not is_common(w) or is_name(w) for w in partners) else None


def named_kind_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """proper_head_filter's '<words> <kind>' place; a kind in lower case needs a word before it that is no dictionary
    word, a known town or a name that is no frequent word ('quellton high school', 'newton high school', 'peter
    catholic school'; not 'boarding school', 'Catholic school', 'moving company', 'adult day care'); a Title or
    capital kind names the place itself ('Quell Community College')."""
    if proper_head_filter(text, start, end, settings) is None:
        return None
    pieces = [p[2] for p in hit_words(text, start, end)]
    if not (pieces[-1].islower() or text[start:end].isupper()):
        return (start, end)
    named = [w for w in map(base, pieces[:-1]) if w != "the"]
    return (start, end) if any(not is_common(w) or w in words("city") or (is_name(w) and not is_frequent(w))
                               for w in named) else None


FILTERS: dict[str, Filter] = {
    "name": name_filter,
    "kin_name": kin_name_filter,
    "name_strong": name_strong_filter,
    "name_before": name_before_filter,
    "name_role": name_role_filter,
    "known_first_name": known_first_name_filter,
    "initial_known_surname": initial_known_surname_filter,
    "known_name": known_name_filter,
    "listed_name": listed_name_filter,
    "location": location_filter,
    "place_keyword": place_keyword_filter,
    "place_keyword_strict": place_keyword_strict_filter,
    "city": city_filter,
    "country": country_filter,
    "country_alone": country_alone_filter,
    "age": age_filter,
    "profession": profession_filter,
    "not_common": not_common_filter,
    "dotted_login": dotted_login_filter,
    "initials_line": initials_line_filter,
    "no_frequent_word": no_frequent_word_filter,
    "named_employer": named_employer_filter,
    "place_tail": place_tail_filter,
    "place_tail_lower": place_tail_lower_filter,
    "landmark": landmark_filter,
    "landmark_tail": landmark_tail_filter,
    "town_whole": town_whole_filter,
    "location_named": location_named_filter,
    "location_whole": location_whole_filter,
    "proper_head": proper_head_filter,
    "named_kind": named_kind_filter,
    "firm_partners": firm_partners_filter,
    "context_name": context_name_filter,
    "place_acronym": place_acronym_filter,
}

# The filters whose kept span, relative to the hit, depends on the hit's own text only (and the tagger's settings):
# they read the words of text[start:end] and nothing around it, so the tagger remembers their results per hit text
# (RuleTagger._span). Not `name_strong` (reads the character before the hit) nor `initials_line` (reads its line).
# tests/test_rule_filter_memo.py checks every one of them in many contexts, and that it tells those two apart.
CONTEXT_FREE: frozenset[str] = frozenset({
    "name", "kin_name", "name_before", "name_role", "known_first_name", "initial_known_surname", "known_name",
    "listed_name", "location", "place_keyword", "place_keyword_strict", "city", "country", "age", "profession",
    "not_common", "dotted_login", "no_frequent_word", "named_employer", "place_tail", "landmark", "landmark_tail",
    "town_whole", "location_named",
    "location_whole", "proper_head", "named_kind", "firm_partners", "context_name", "place_acronym",
})
