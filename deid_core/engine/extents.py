"""Extent conventions after the merge policy (round 17, issue 14: strict labelled F1), from the table of
conf/rules/words/extents.toml: i2b2 2014 marks a person's name without the roles and credentials written around it
('HOSPITALIST [Ann Lee]', '[Ann Lee], BSN, RN') and without a possessive ('Dr. [Lee]'s office'), a weekday as a
DATE of its own ('f/u Dr. [Lee] [Friday]', '[Tue] [3/4/2021]'), and a name or a place within one column of one
line ('Dr. [Ann Lee]   NPI: 123'). A span cut to nothing is dropped ('Ann Lee, RN, [CCM]' read as a name)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from pathlib import Path

import regex

from deid_core.config import conf_dir
from deid_core.engine.label_decisions import trimmed as _bounds
from deid_core.engine.rules.place_words import load_word_lists, place_words
from deid_core.gazetteers import is_common, is_function_word, is_name, words
from deid_core.spans import Span

EXTENTS_FILE = "rules/words/extents.toml"
_LISTS = ("person_labels", "column_labels", "place_labels", "person_lead", "person_trail", "person_trail_upper",
          "weekdays", "weekday_abbreviations", "person_lead_lower", "dash_labels", "months", "date_lead_words",
          "not_name_before", "role_heads", "service_words", "service_heads", "column_keys", "verb_objects", "tail_cut_labels")
_WORD = regex.compile(r"[^\s,;()\[\]]+")
_BREAK = regex.compile(r"\n|\t|[ ]{2,}|\r")  # a line break, a tab, two blanks: the next column or line
# a sentence end inside a person span: '.' after a word of two letters or more that is no title, then a capital
_SENTENCE = regex.compile(r"(?<=\p{L}{2})(?<!(?<![\p{L}'’-])(?i:dr|mr|mrs|ms|st|jr|sr|prof|mt|ft))\.[ \t]+(?=\p{Lu})")
_WORD_BEFORE = regex.compile(r"(\p{L}+)[ \t]+\Z")
_INITIAL_BEFORE = regex.compile(r"(?<![^\s:;,(\[/])\p{Lu}\.[ ]\Z")  # a capital's initial right before a name
_DASH = regex.compile(r"[ \t]+[-–—][ \t]+")  # a spaced dash between two places
_CAPITAL_NEXT = regex.compile(r"[ \t]+\p{Lu}")
_POSSESSIVE = regex.compile(r"['’]s\Z", regex.IGNORECASE)
_SEP = ".:,;-–/&'’"  # punctuation stripped off a word before it is looked up
# round 18: compiled once (regex.findall(str, ...) looks its pattern up in the module's cache at every call)
_LETTER_RUN = regex.compile(r"\p{L}+")
_NAME_RUN = regex.compile(r"[\p{L}'’-]+")
_TITLED_LEAD = regex.compile(r"[\p{Lu}][\p{L}'’.-]*(?:[ \t]+[\p{Lu}][\p{L}'’.-]*){0,3}")
_LETTERS2 = regex.compile(r"\p{L}{2,}")
_CAPS_GOES_ON = regex.compile(r"[ \t]+\p{Lu}[\p{Lu}\d-]*(?![\p{Ll}])")  # 'QUELLBY IS A 49-YEAR-OLD': a sentence in capitals


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
    person_lead_lower: frozenset[str]
    dash_labels: frozenset[str]
    months: frozenset[str]
    date_lead_words: frozenset[str]
    not_name_before: frozenset[str]
    role_heads: frozenset[str]
    service_words: frozenset[str]
    service_heads: frozenset[str]
    column_keys: frozenset[str]
    verb_objects: frozenset[str]
    tail_cut_labels: frozenset[str]


def load_extent_table(path: Path) -> ExtentTable:
    """The file's [extents] table; ConfigError names a missing or unknown list or a bad entry."""
    lists = load_word_lists(path, "extents", _LISTS)
    return ExtentTable(**{name: frozenset(e.upper() if name.endswith("_labels") else e.strip(_SEP) for e in entries)
                          for name, entries in lists.items()})


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
        pieces = _columns(s, text, _BREAK, person=s.label in t.person_labels) if s.label in t.column_labels else [s]
        if s.label in t.person_labels:
            pieces = [q for p in pieces for q in _columns(p, text, _SENTENCE)]
        elif s.label in t.dash_labels:
            pieces = [q for p in pieces for q in _columns(p, text, _DASH, person=False)]
        for p in pieces:
            if p.label in t.person_labels and (login := _login(p, text)):
                p, day = login, None
            elif p.label in t.person_labels:
                p, day = _person(p, text, t) if not _eponym(p, text, t) else (None, None)
            elif p.label in _SERVICE_LABELS and _service(p, text, t):
                continue
            elif p.label in t.place_labels:
                p, day = _place(p, text, t)
            elif p.label == "DATE":
                out.extend(q for d in _date_pieces(p, text, t) for q in _weekday_date(d, text, t))
                continue
            else:
                day = None
            if p is not None:
                out.append(p)
            if day is not None:
                dates.append(day)
    if dates:  # a weekday where no span stands: the spans starting before its end all end at or before its start
        taken = sorted((s.start, s.end) for s in out)
        starts, reach = [a for a, _ in taken], list(accumulate((b for _, b in taken), max))
        out.extend(d for d in dates if not ((k := bisect_left(starts, d.end)) and reach[k - 1] > d.start))
    return sorted(out, key=lambda s: (s.start, s.end))


def _columns(s: Span, text: str, breaks: regex.Pattern, person: bool = True) -> list[Span]:
    """The columns of `s`, each a span of its own; a person span's later columns only when they hold a name-like word
    (_name_word, lower-case after a lower-case first column) or a digit: 'Ann Lee   NPI' -> 'Ann Lee'; 'Charles\\nhaloperidol'
    -> 'Charles'; 'Lee\\nRose Quell', 'ann\\nquellberg', 'Ann Lee\\n555-1234' -> two spans;
    a place's columns all stay ('15   9E Oncology' -> two spans: no token of a place is left untagged)."""
    if not breaks.search(text, s.start, s.end):
        return [s]
    out, pos = [], s.start
    bounds = [(m.start(), m.end()) for m in breaks.finditer(text, s.start, s.end)]
    lower = text[s.start:bounds[0][0]].islower()  # 'dr. ann\nquellberg': a lower-case name's columns may be lower-case
    for i, (a, b) in enumerate([*bounds, (s.end, s.end)]):
        part = _bounds(text, pos, a)
        if part and (i == 0 or not person or _name_word(piece := text[part[0]:part[1]], not lower)
                     or any(c.isdigit() for c in piece)):  # an address or phone line the span ran into stays tagged
            out.append(Span(part[0], part[1], s.label, s.source, s.confidence))
        pos = b
    return out


def _name_word(piece: str, capitalised: bool = True) -> bool:
    """A word of two letters or more (capitalised unless not `capitalised`), no common or clinical word unless a known
    name ('Rose')."""
    return any(len(w) > 1 and (w[0].isupper() or not capitalised) and (is_name(w) or not is_common(w))
               for w in _LETTER_RUN.findall(piece))


def _words(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]


def _person(s: Span, text: str, t: ExtentTable) -> tuple[Span | None, Span | None]:
    """(the name, a weekday written after it as a DATE span): lead roles and trail credentials or keys cut,
    a possessive cut, a span starting inside a word ('EMT-[P Wood]') cut to its next word."""
    words = _words(text, s.start, s.end)
    if not words:
        return s, None
    if len(words) == 1 and (w := text[s.start:s.end]).islower() and _key(w) in t.person_lead_lower:
        return None, None  # 'with fiancee.' read as a name (propagation would spread it)
    i, j = 0, len(words)
    if s.start > 0 and text[s.start - 1] in "-/" and s.start > 1 and text[s.start - 2].isalnum() and j > 1 \
            and words[0][1] - words[0][0] == 1:
        i = 1  # 'OTR/[L Kuper]', 'EMT-[P Wood]': a credential's last letter is no initial
    while i < j - 1 and (_key(w := text[words[i][0]:words[i][1]]) in t.person_lead or (
            w.islower() and _key(w) in t.person_lead_lower)):
        i += 1
    day = None
    while j > i:
        w = text[words[j - 1][0]:words[j - 1][1]]
        k = _key(w)
        if k in t.person_trail or k in t.column_keys or (k in t.person_trail_upper and w.strip(_SEP).isupper() and j - 1 > i
                                                          and _set_off(text, words[i][0], words[j - 2][1], words[j - 1][0])):
            j -= 1
        elif k in t.weekdays and j - 1 > i:
            day = Span(words[j - 1][0], words[j - 1][0] + len(w.rstrip(_SEP)), "DATE", s.source, s.confidence)
            j -= 1
        elif j - 1 > i and _not_name(w, text[words[i][0]:words[i][1]]) and not (
                k in t.person_trail_upper and not _set_off(text, words[i][0], words[j - 2][1], words[j - 1][0])) and (
                not w.isupper() or _CAPS_GOES_ON.match(text, words[j - 1][1])):  # 'JOHN AN', 'ANN SO': a surname
            j -= 1
        else:
            break
    if i >= j:
        return (None, day) if len(words) > 1 or _credential_alone(s, text, t) else (s, None)
    start, end = words[i][0], words[j - 1][1]
    if i == 0 and (m := _INITIAL_BEFORE.search(text, max(0, start - 3), start)) and _opens_name(text, m.start()):
        start = m.start()  # 'ASSISTANTS: [T.] GIXKRZ': the initial the span left out
    m = _POSSESSIVE.search(text, start, end)
    if m and m.start() > start and not _CAPITAL_NEXT.match(text, end):  # "[Quell]'s office", not "Quell's Drug Store"
        end = m.start()
    part = _bounds(text, start, end)
    if part is None:
        return None, day
    if part == (s.start, s.end):
        return s, day
    return Span(part[0], part[1], s.label, s.source, s.confidence), day


def _set_off(text: str, start: int, end: int, at: int) -> bool:
    """Is a capitals-only credential at `at` set off from the name text[start:end] before it: by a comma or slash, or by
    the name's case ('Kittie Quell MA'; in 'NGUYEN VAN DO', 'LI MA' it is the name's own word)?"""
    return any(c in ",/" for c in text[end:at]) or not text[start:end].isupper()


_NEXT_WORD = regex.compile(r"(?:['’]s)?(?:-\p{L}+)?[ \t]+(\p{L}+)")
_TITLED = regex.compile(r"(?<![\p{L}\d])(?i:dr|doctor|mr|mrs|ms|miss|prof)\.?[ \t]*\Z")
_KNOWN = ("metadata",)  # the note's own names (exact metadata matches) are never an eponym


# a login's tail: '.' and up to two letters or digits ('.c', '.ho', '.49'), or '_' and letters or digits; not a
# word glued on after a dot ('Quellby.PADS', 'quell.stv')
_LOGIN_TAIL = regex.compile(r"(?:\.(?:\p{L}{1,2}|\d+)|_[\p{L}\d]+)+(?![\p{L}\d@._/:-])")


def _login(s: Span, text: str) -> Span | None:
    """A one-word person span cut out of a dotted login ('[jennifer].c', '[LAWRENCE].B', '[charlette].49'): the whole
    word as USERNAME (never an e-mail address: '@' after it; never after a word character: 'Dr.[Quell]')."""
    if not (s.end - s.start >= 2 and text[s.start:s.end].isalpha()) or (s.start and (
            text[s.start - 1].isalnum() or text[s.start - 1] in "._@-")):
        return None
    m = _LOGIN_TAIL.match(text, s.end, min(len(text), s.end + 24))
    return Span(s.start, m.end(), "USERNAME", s.source, s.confidence) if m else None


def _eponym(s: Span, text: str, t: ExtentTable) -> bool:
    """A person span of one or two words followed by an eponym's or role's head word ('[Babinski] downgoing',
    '[Jackson]-Pratt drain', "[Addison]'s disease", 'RN, [Case] Manager'); not after a title ('Dr. [Quell] sign-out'
    has no head: 'sign' must be a word of its own) nor a span of the note's metadata. A role head follows a
    dictionary word that is no first name only ('Ann Quell Manager', 'Rose Coordinator' are names); a head followed
    by an object is a verb ('have Ann Quell sign the consent')."""
    if s.source.startswith(_KNOWN) or len(_words(text, s.start, s.end)) > 2:
        return False
    m = _NEXT_WORD.match(text, s.end, min(len(text), s.end + 40))
    head = m.group(1).lower() if m else ""
    if not head or (m.end() < len(text) and text[m.end()] == "-"):
        return False
    if (after := _NEXT_WORD.match(text, m.end(), min(len(text), m.end() + 40))) and after.group(1).lower() in t.verb_objects:
        return False  # 'have [Ann Quell] sign the consent', 'had [Quell] test his sugar': a verb, no eponym
    name_words = _LETTER_RUN.findall(text[s.start:s.end])
    if head not in t.not_name_before and not (head in t.role_heads and all(
            is_common(w) and w.lower() not in words("first_name") for w in name_words)):
        return False  # 'Spoke with [Rose] Coordinator': a first name before a role head is a person
    return not _TITLED.search(text, max(0, s.start - 10), s.start)


_CRED_BEFORE = regex.compile(r"([\p{L}.]+)[ \t]*[,(/][ \t]*\Z")
_CRED_AFTER = regex.compile(r"[ \t]*(?::|[,)/-][ \t]*([\p{L}.]+))")


def _credential_alone(s: Span, text: str, t: ExtentTable) -> bool:
    """Is a one-word span that is a credential or key word no name's initials: a word of four letters or more
    ('Hospitalist', 'SCRIBE'), a column key ('NPI:'), or one of a list of credentials ('RN, CCM', 'MD, PHD', 'PGY-2';
    a lone 'CNM' may be a clinician's initials)?"""
    if s.end - s.start >= 4 or _key(text[s.start:s.end]) in t.column_keys:
        return True
    after = _CRED_AFTER.match(text, s.end, min(len(text), s.end + 16))
    if after and (after.group(1) is None or _credential(after.group(1), t) or after.group(1).isdigit()):
        return True
    before = _CRED_BEFORE.search(text, max(0, s.start - 16), s.start)
    return before is not None and _credential(before.group(1), t)


def _credential(word: str, t: ExtentTable) -> bool:
    k = _key(word)
    return k in t.person_trail or k in t.person_trail_upper or k == "pgy"


def _opens_name(text: str, at: int) -> bool:
    """May an initial at `at` open a name: after a line start or punctuation, or after a function word or a word of
    two letters at most ('with T. Quell', 'w W. QUELL', 'Dr A. Quell'; not 'vitamin D. Quell', 'Hepatitis B. Lee')."""
    m = _WORD_BEFORE.search(text, max(0, at - 24), at)
    return m is None or len(m.group(1)) <= 2 or is_function_word(m.group(1))


def _not_name(word: str, first: str) -> bool:
    """A last word that no name ends with: a function word or note verb ('KHANNA IS', 'Ann Quell says'), or a
    lower-case dictionary word after a capitalised name ('PHILLIP tearful'); never a known name ('Ann Rose') nor a
    capitalised dictionary word (surnames: 'Linda Nurse', 'Ann Baker', 'Sam Do')."""
    w = word.strip(_SEP)
    if not w.isalpha() or len(w) < 2 or is_name(w):  # 'Ann Quell I': a middle initial
        return False
    return (is_function_word(w) and not w.istitle()) or (w.islower() and not first.islower() and is_common(w))


_SERVICE_LABELS = frozenset({"HOSPITAL", "ORGANIZATION"})


def _service(s: Span, text: str, t: ExtentTable) -> bool:
    """Only service words before a facility head ('Neurology clinic', 'Transfer center', 'Funeral home')?"""
    words = [w.lower() for w in _NAME_RUN.findall(text[s.start:s.end])]
    return len(words) >= 2 and words[-1] in t.service_heads and all(w in t.service_words for w in words[:-1])


def _place(s: Span, text: str, t: ExtentTable) -> tuple[Span | None, Span | None]:
    """A place span without the weekday written after its name ('[Quell Health] [Monday]'), without a lower-case
    dictionary word after a capitalised name of two words or more ('the [Quell Hospital] clinic'; 'Quell hospital' stays
    whole) and without a dash or comma it ends with
    ('[Quell Medical Center] -')."""
    end = s.end
    while end > s.start and text[end - 1] in " \t-–—,:;":
        end -= 1
    if end == s.start:  # a span of separators only ('-' a model read as a street) stays as it was: no empty span
        return s, None
    words = _words(text, s.start, end)
    day = None
    if len(words) >= 2:
        a, b = words[-1]
        w = text[a:b]
        if _key(w) in t.weekdays:
            day = Span(a, a + len(w.rstrip(_SEP)), "DATE", s.source, s.confidence)
            end = words[-2][1]
        elif len(words) > 2 and w.isalpha() and w.islower() and is_common(w) and w not in place_words("street_suffixes") and (
                _LIST_MARK.search(text, words[-2][1], a) or s.label in t.tail_cut_labels and not is_name(w)) and any(
                text[x].isupper() for x, _ in words[:-1]) and _name_word(text[s.start:words[-2][1]], False):
            end = words[-2][1]  # not when only generic words are left ('Neurology clinic' stands as it is)
    if end == s.end:
        return s, day
    part = _bounds(text, s.start, end) if day else (s.start, end)
    return (Span(part[0], part[1], s.label, s.source, s.confidence) if part else s), day


_LIST_MARK = regex.compile(r"[,;]")  # '306 Quell Knolls; friend': a street's name ends before ',' or ';'
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
        if not _PLACE_BEFORE.search(text, max(0, s.start - 8), s.start) and _TITLED_LEAD.fullmatch(lead) and not any(
                is_common(x) and not is_name(x) for x in _LETTERS2.findall(lead)):
            name = _bounds(text, s.start, words[-2][1])
            out = [Span(a, a + len(w), "DATE", s.source, s.confidence)]
            if name:
                out.insert(0, Span(name[0], name[1], "DOCTOR", s.source, s.confidence))
            return out
    return [s]


# a time after a date ('8/24/2012 1930', '6/26 2130'); after a date without its year, never four digits that may be
# the year ('6/26 2012', '6/26 2000': 19xx or 20xx)
_TIME_AFTER = regex.compile(
    r"(\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}/\d{1,2}(?![ \t]+(?:19|20)\d\d))[ \t]+(?:[01]\d|2[0-3])[0-5]\d\Z")
_FULL_DATE = regex.compile(r"\d{1,4}[-/.](?:\d{1,2}|\p{L}{3,9})[-/.]\d{2,4}")
_LIST = regex.compile(r"[ \t]*(?:[-–—]|,|;|and|to)[ \t]+")
_NUMBER_DAY = regex.compile(r"\d{1,3}[ \t]+(?=\p{L}+\Z)")


def _date_pieces(s: Span, text: str, t: ExtentTable) -> list[Span]:
    """A DATE span cut to its dates: two full dates ('11-DEC-13, 03-DEC-11', '3/4/2021 - 3/9/2021') are two spans, a
    time written after a date left out ('6/26 2000', '8/24/2012 1930'), the lower-case words it opens with that
    are no date words nor known names left out ('thoracentesis [June 2014]'), and a count before a weekday ('Ca 89 [Wednesday]')."""
    span = text[s.start:s.end]
    if not any(c.isspace() for c in span):
        return [s]
    pieces = [(s.start, s.end)]
    dates = list(_FULL_DATE.finditer(text, s.start, s.end))
    if len(dates) > 1:
        pieces, pos = [], s.start
        for d0, d1 in zip(dates, dates[1:], strict=False):
            if _LIST.fullmatch(text, d0.end(), d1.start()):
                pieces.append((pos, d0.end()))
                pos = d1.start()
        pieces.append((pos, s.end))
    out: list[Span] = []
    for a, b in pieces:
        if m := _TIME_AFTER.search(text, a, b):
            b = m.end(1)
        words = _words(text, a, b)
        k = 0
        while k < len(words) - 1:
            w = text[words[k][0]:words[k][1]]
            if not (w.isalpha() and w.islower() and _key(w) not in t.months and _key(w) not in t.weekdays
                    and _key(w) not in t.weekday_abbreviations and _key(w) not in t.date_lead_words
                    and not is_name(w)):
                break
            k += 1
        if k:
            a = words[k][0]
        if (m := _NUMBER_DAY.match(text, a, b)) and _key(text[m.end():b]) in t.weekdays:
            a = m.end()
        part = _bounds(text, a, b) if (a, b) != (s.start, s.end) else (a, b)
        if part:
            out.append(s if part == (s.start, s.end) else Span(part[0], part[1], s.label, s.source, s.confidence))
    return out
