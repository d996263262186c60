"""Extent conventions after the merge policy (round 17, issue 14: strict labelled F1), from the table of
conf/rules/words/extents.toml: i2b2 2014 marks a person's name without the roles and credentials written around it
('HOSPITALIST [Ann Lee]', '[Ann Lee], BSN, RN') and without a possessive ('Dr. [Lee]'s office'), a weekday as a
DATE of its own ('f/u Dr. [Lee] [Friday]', '[Tue] [3/4/2021]'), and a name or a place within one column of one
line ('Dr. [Ann Lee]   NPI: 123'). A span cut to nothing is dropped ('Ann Lee, RN, [CCM]' read as a name)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import regex

from deid_core.config import ConfigError, conf_dir, load_toml
from deid_core.gazetteers import is_common, is_name
from deid_core.spans import Span

EXTENTS_FILE = "rules/words/extents.toml"
_LISTS = ("person_labels", "column_labels", "place_labels", "person_lead", "person_trail", "person_trail_upper",
          "weekdays", "weekday_abbreviations")
_WORD = regex.compile(r"[^\s,;()\[\]]+")
_BREAK = regex.compile(r"\n|\t|[ ]{2,}|\r")  # a line break, a tab, two blanks: the next column or line
_POSSESSIVE = regex.compile(r"['’]s\Z", regex.IGNORECASE)
_SEP = ".:,;-–/&'’"  # punctuation stripped off a word before it is looked up


@dataclass(frozen=True)
class ExtentTable:
    """The lists of conf/rules/words/extents.toml (labels upper-case, words lower-case)."""

    person_labels: frozenset[str]
    column_labels: frozenset[str]
    place_labels: frozenset[str]
    person_lead: frozenset[str]
    person_trail: frozenset[str]
    person_trail_upper: frozenset[str]
    weekdays: frozenset[str]
    weekday_abbreviations: frozenset[str]


def load_extent_table(path: Path) -> ExtentTable:
    """The file's [extents] table; ConfigError names a missing or unknown list or a bad entry."""
    table = load_toml(path).get("extents")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: no [extents] table")
    if unknown := sorted(set(table) - set(_LISTS)):
        raise ConfigError(f"{path}: unknown [extents] list(s) {', '.join(unknown)}; known: {', '.join(_LISTS)}")
    out: dict[str, frozenset[str]] = {}
    for name in _LISTS:
        entries = table.get(name)
        if not isinstance(entries, list) or not entries:
            raise ConfigError(f"{path}: [extents] {name} must be a non-empty list of strings")
        for e in entries:
            if not isinstance(e, str) or not e or e != " ".join(e.lower().split()):
                raise ConfigError(f"{path}: [extents] {name}: every entry must be a non-empty, lower-case, "
                                  "single-spaced string")
        out[name] = frozenset(e.upper() if name.endswith("_labels") else e.strip(_SEP) for e in entries)
    return ExtentTable(**out)


@cache
def extent_table() -> ExtentTable:
    """The shipped table (read and checked once)."""
    return load_extent_table(conf_dir() / EXTENTS_FILE)


def _key(word: str) -> str:
    return word.lower().strip(_SEP)


def strict_extents(spans: Sequence[Span], text: str, table: ExtentTable | None = None) -> list[Span]:
    """Spans cut to the i2b2 2014 extents of the table (module docstring); cut-off weekdays become DATE spans where
    no other span stands, a DATE span opening with a weekday and going on with a date becomes two."""
    t = table or extent_table()
    out: list[Span] = []
    dates: list[Span] = []
    for s in spans:
        pieces = _columns(s, text) if s.label in t.column_labels else [s]
        for p in pieces:
            if p.label in t.person_labels:
                p, day = _person(p, text, t)
            elif p.label in t.place_labels:
                p, day = _trail_weekday(p, text, t)
            elif p.label == "DATE":
                out.extend(_weekday_date(p, text, t))
                continue
            else:
                day = None
            if p is not None:
                out.append(p)
            if day is not None:
                dates.append(day)
    if dates:
        taken = sorted((s.start, s.end) for s in out)
        out.extend(d for d in dates if not any(a < d.end and d.start < b for a, b in taken))
    return sorted(out, key=lambda s: (s.start, s.end))


def _columns(s: Span, text: str) -> list[Span]:
    """The first column of `s` and any later column that holds a name-like word (_name_word: the tokens
    stay tagged): 'Ann Lee   NPI' -> 'Ann Lee'; 'Charles\\nhaloperidol' -> 'Charles'; 'Lee\\nRose Quell' -> two spans."""
    if not _BREAK.search(text, s.start, s.end):
        return [s]
    out, pos = [], s.start
    bounds = [(m.start(), m.end()) for m in _BREAK.finditer(text, s.start, s.end)]
    for i, (a, b) in enumerate([*bounds, (s.end, s.end)]):
        part = _bounds(text, pos, a)
        if part and (i == 0 or _name_word(text[part[0]:part[1]])):
            out.append(Span(part[0], part[1], s.label, s.source, s.confidence))
        pos = b
    return out


def _name_word(piece: str) -> bool:
    """A capitalised word of two letters or more, no common or clinical word unless a known name ('Rose')."""
    return any(len(w) > 1 and w[0].isupper() and (is_name(w) or not is_common(w))
               for w in regex.findall(r"\p{L}+", piece))


def _bounds(text: str, a: int, b: int) -> tuple[int, int] | None:
    """text[a:b] without blanks and punctuation around it (a closing '.' of an initial stays out too)."""
    while a < b and not text[a].isalnum():
        a += 1
    while b > a and not text[b - 1].isalnum():
        b -= 1
    return (a, b) if b > a else None


def _words(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]


def _person(s: Span, text: str, t: ExtentTable) -> tuple[Span | None, Span | None]:
    """(the name, a weekday written after it as a DATE span): lead roles and trail credentials or keys cut,
    a possessive cut, a span starting inside a word ('EMT-[P Wood]') cut to its next word."""
    words = _words(text, s.start, s.end)
    if not words:
        return s, None
    i, j = 0, len(words)
    if s.start > 0 and text[s.start - 1] in "-/" and s.start > 1 and text[s.start - 2].isalnum() and j > 1 \
            and words[0][1] - words[0][0] == 1:
        i = 1  # 'OTR/[L Kuper]', 'EMT-[P Wood]': a credential's last letter is no initial
    while i < j and _key(text[words[i][0]:words[i][1]]) in t.person_lead:
        i += 1
    day = None
    while j > i:
        w = text[words[j - 1][0]:words[j - 1][1]]
        k = _key(w)
        if k in t.person_trail or (k in t.person_trail_upper and w.strip(_SEP).isupper() and j - 1 > i):
            j -= 1
        elif k in t.weekdays and j - 1 > i:
            day = Span(words[j - 1][0], words[j - 1][0] + len(w.rstrip(_SEP)), "DATE", s.source, s.confidence)
            j -= 1
        else:
            break
    if i >= j:
        return None, day
    start, end = words[i][0], words[j - 1][1]
    m = _POSSESSIVE.search(text, start, end)
    if m and m.start() > start:
        end = m.start()
    part = _bounds(text, start, end)
    if part is None:
        return None, day
    if part == (s.start, s.end):
        return s, day
    return Span(part[0], part[1], s.label, s.source, s.confidence), day


def _trail_weekday(s: Span, text: str, t: ExtentTable) -> tuple[Span | None, Span | None]:
    """A place span without the weekday written after its name ('[Quell Health] [Monday]')."""
    words = _words(text, s.start, s.end)
    if len(words) < 2:
        return s, None
    a, b = words[-1]
    w = text[a:b].rstrip(_SEP)
    if _key(w) not in t.weekdays:
        return s, None
    part = _bounds(text, s.start, words[-2][1])
    if part is None:
        return s, None
    return Span(part[0], part[1], s.label, s.source, s.confidence), Span(a, a + len(w), "DATE", s.source, s.confidence)


_DATE_REST = regex.compile(r"[\d]|\p{L}{3,}")
_PLACE_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:at|in|from|to|into)[ \t]+\Z")  # 'seen at [Good Sam] Thursday'


def _weekday_date(s: Span, text: str, t: ExtentTable) -> list[Span]:
    """A DATE span opening with a weekday and going on with a date, cut in two ('[Tue] [3/4/2021]', '[Friday],
    [March 4]'); one ending with a weekday after a name cut to the weekday ('Dr. Lee [Friday]': the name is left to
    the name decisions: DOCTOR, as a clinician is met on a weekday, 'f/u [Lee] [Friday]'; the relatives' and
    titles' decisions after it make a relative's name PATIENT)."""
    words = _words(text, s.start, s.end)
    if len(words) < 2:
        return [s]
    a, b = words[0]
    k = _key(text[a:b])
    if k in t.weekdays or k in t.weekday_abbreviations:
        rest = _bounds(text, b, s.end)
        if rest and _DATE_REST.search(text, rest[0], rest[1]):
            day_end = a + len(text[a:b].rstrip(_SEP + "."))
            if k in t.weekday_abbreviations and b > day_end and text[day_end] == ".":
                day_end += 1  # 'Tue.' keeps its abbreviation's dot
            return [Span(a, day_end, "DATE", s.source, s.confidence),
                    Span(rest[0], rest[1], "DATE", s.source, s.confidence)]
    a, b = words[-1]
    w = text[a:b].rstrip(_SEP)
    if _key(w) in t.weekdays:
        lead = text[s.start:words[-2][1]]
        if not _PLACE_BEFORE.search(text, max(0, s.start - 8), s.start) and regex.fullmatch(r"[\p{Lu}][\p{L}'’.-]*(?:[ \t]+[\p{Lu}][\p{L}'’.-]*){0,3}", lead) and not any(
                is_common(x) and not is_name(x) for x in regex.findall(r"\p{L}{2,}", lead)):
            name = _bounds(text, s.start, words[-2][1])
            out = [Span(a, a + len(w), "DATE", s.source, s.confidence)]
            if name:
                out.insert(0, Span(name[0], name[1], "DOCTOR", s.source, s.confidence))
            return out
    return [s]
