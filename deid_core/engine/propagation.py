"""Propagation of names and places, within a note and across a patient's notes, whole and part by part.

Seed 000's document-level propagation (§3.3.4) extended: a name or place tagged once is tagged
wherever its string recurs, and the words of a person's name recur alone ("Dr. Zyxwvutsson
Qqplorvik saw pt." ... "Qqplorvik was seen again"), so each word of a tagged name spreads too.
A clinical vocabulary guard keeps clinical words, abbreviations and drug names from spreading:
a word spreads alone only when it is not a dictionary or clinical word (the english, common and
medical gazetteers) and does not have the shape of an abbreviation (3 letters, or 4 in capitals) unless it
is a known name; across notes, a single word (a name or a place) also needs the support of context
(a span found by a rule, the metadata or the name net, or a known name or place), since a CRF guess
on one note must not become a name or a place in all of them ("CVVH", "bronch" as places). Within a
note, places (hospital acronyms "BGH") keep spreading whole, shape aside.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex

from deid_core import taxonomy
from deid_core.config import Merge as MergeOptions
from deid_core.engine.initials import (
    doctor_initials,
    initials_of,
    not_clinician_initials,
    patient_initials,
)
from deid_core.engine.occurrences import Occurrences
from deid_core.gazetteers import is_common, is_function_word, is_name, words
from deid_core.spans import Span, sort_spans

WORD = regex.compile(r"\p{L}[\p{L}'’-]*\p{L}|\p{L}")  # a word of a name or place ("O'Neil", "Saint-Jean")
# spans of the organization lists (engine/org_decisions.py) are no seeds: the decision reads every mention itself with
# its list's case and frame, so a repeat it left clear ('red cross-hatching' after 'Red Cross') stays clear
ORGANIZATION_LIST_SOURCE = "organization-gazetteer"
ABBREVIATION_MAX = 4  # all-capital words up to this length have the shape of a clinical abbreviation
SHORT_MAX = 3  # words up to this length, in any case, too ("tol", "epi"), unless known names


@lru_cache(maxsize=8)
def _dosing(cues: tuple[str, ...]) -> regex.Pattern:
    alternatives = "|".join(regex.escape(c).replace(r"\#", r"\d+") for c in sorted(cues, key=len, reverse=True))
    return regex.compile(r"[ \t]*(?:\d+(?:\.\d+)?[ \t]*)?(?:" + alternatives + r")(?![\p{L}\d])", regex.IGNORECASE)


def dosing_context(opts: MergeOptions) -> regex.Pattern | None:
    """What follows a drug name: an optional amount and a dose unit, route or frequency
    ([merge] propagate_dosing_cues, '#' standing for digits: "q#h"); None when the list is empty."""
    return _dosing(tuple(opts.propagate_dosing_cues)) if opts.propagate_dosing_cues else None


def phrase_alternation(phrases: Sequence[str]) -> str:
    """Phrases as one regex alternation, longest first, their words apart by blanks or tabs."""
    return "|".join(r"[ \t]+".join(regex.escape(w) for w in p.split()) for p in sorted(phrases, key=len, reverse=True))


@lru_cache(maxsize=8)
def _cue_run(cues: tuple[str, ...], preceding: bool) -> regex.Pattern | None:
    if not cues:
        return None
    alternatives = phrase_alternation(cues)
    if preceding:  # searched in the text just before the span
        return regex.compile(r"(?<![\p{L}\d])(?:" + alternatives + r")[ \t]+\Z", regex.IGNORECASE)
    return regex.compile(r"(?:[ \t]+|[ \t]*-[ \t]*)(?:" + alternatives + r")(?![\p{L}\d])", regex.IGNORECASE)


def not_name_context(text: str, start: int, end: int, opts: MergeOptions, *, person: bool = True) -> bool:
    """Does the note say the word at [start, end) is no person or place here? After a not-name cue
    ([merge] not_name_preceding: "very SOB", "speaks Farsi"), before one (not_name_following: "TAGALOG
    INTERPRETER", "Taglish-speaking") or, for a person, glued to a digit ("fio2", "sao2")."""
    if person and ((end < len(text) and text[end].isdigit()) or (start > 0 and text[start - 1].isdigit())):
        return True
    following = _cue_run(tuple(opts.not_name_following), False)
    if following is not None and following.match(text, end):
        return True
    preceding = _cue_run(tuple(opts.not_name_preceding), True)
    return preceding is not None and preceding.search(text[max(0, start - _CUE_REACH):start]) is not None


_CUE_REACH = 40  # characters looked at before a span for a preceding cue


@lru_cache(maxsize=4096)
def source_kind(source: str) -> str:
    """The family of a span source ('crf:single' -> 'crf', 'rules:date' -> 'rules'); memoised: the merge asks
    it of every span several times, and the sources are few (rule ids, taggers)."""
    return source.split(":", 1)[0].split("/", 1)[0]


@lru_cache(maxsize=4096)
def _crf_source(source: str) -> bool:
    return source_kind(source).startswith("crf")


def is_crf(span: Span) -> bool:
    """Was the span proposed by a CRF tagger (source 'crf:...')?"""
    return _crf_source(span.source)


def is_clinical_word(word: str) -> bool:
    """A dictionary, common or clinical word (gazetteers english_word, frequent_word, medical_word)."""
    low = word.lower()
    return is_common(low) or low in words("medical_word")


def clinical(word: str) -> bool:
    """The clinical vocabulary guard: a dictionary, common or clinical word, or an abbreviation shape.

    Abbreviation shape: at most SHORT_MAX letters in any case ("tol"), or all capitals and at most
    ABBREVIATION_MAX letters ("EPI", "NSG"), unless the word is a known first or last name ("LEE").
    """
    return is_clinical_word(word) or (abbreviation_shape(word) and not is_name(word.lower()))


def abbreviation_shape(word: str) -> bool:
    """At most SHORT_MAX letters, or all capitals and at most ABBREVIATION_MAX ("tol", "NSG")."""
    return len(word) <= SHORT_MAX or (word.isupper() and len(word) <= ABBREVIATION_MAX)


def capital_part(word: str) -> bool:
    """Round 18: a name word of ABBREVIATION_MAX capitals, a vowel among them, in no dictionary, clinical or name list ("VEOV" of
    "SASAVAQE VEOV"): the guard keeps it from spreading freely (an abbreviation's shape), but beside a name word that
    passes the guard it is a surname, repeated in capitals in its note ("BY VEOV"); never "MICU", "HCTZ", "NSTE"."""
    return (len(word) == ABBREVIATION_MAX and word.isupper() and word.isalpha() and any(c in "AEIOUY" for c in word)
            and not is_clinical_word(word) and not is_name(word.lower()))


_WORD_AFTER_NAME = regex.compile(r"[ \t]*[,(]?[ \t]*(\p{L}+)(?![\p{L}\d])")  # "SASAVAQE VEOV, MD": the word after


def credential_after(text: str, end: int, opts: MergeOptions) -> bool:
    """Review 18: a credential or clinician role right after a name ("SASAVAQE VEOV, MD"; [merge] crf_name_lead_words
    and title_roles): the evidence that a 4-capital last word is a surname, not an acronym the CRF took into the name
    ("DR. QUILLBY ECMO TEAM", "READ BY: QUILLBY ASAP", "SIGNED: QUILLBY ONCO")."""
    m = _WORD_AFTER_NAME.match(text, end)
    return m is not None and m.group(1).lower() in _roles(opts.crf_name_lead_words, opts.title_roles)


@lru_cache(maxsize=8)
def _roles(lead: tuple[str, ...], titles: tuple[str, ...]) -> frozenset[str]:
    """The credential and role words of [merge] crf_name_lead_words and title_roles, lower case."""
    return frozenset(w.lower() for w in (*lead, *titles))


def supported(span: Span) -> bool:
    """True when context, not a CRF guess alone, found the span (a rule, the metadata, the name net)."""
    return not is_crf(span) and not span.source.endswith("propagate")


def phrase_shaped(found: Sequence[str]) -> bool:
    """A "name" holding a word that is a dictionary or clinical word, longer than an abbreviation and no
    known name ("Beta Blockers, Celebrex"): when only a CRF saw it, a phrase rather than a person."""
    return any(len(w) > SHORT_MAX and is_clinical_word(w) and not is_name(w) for w in found)


def known_name_run(found: Sequence[str]) -> bool:
    """Two or more words, each a known first or last name ("Grace Long")."""
    return len(found) > 1 and all(is_name(w) for w in found)


def name_parts(found: Sequence[str]) -> list[str]:
    """The words of a person's name, a hyphenated one also by its halves ("Oakes-Vantrell": "Oakes",
    "Vantrell", each written alone later)."""
    return [p for w in found for p in ([w, *(h for h in w.split("-") if h)] if "-" in w else [w])]


def inverted_name(surface: str, found: Sequence[str]) -> str:
    """The other order of a two-word name, lower case: "Rose Little" -> "little, rose", "Little, Rose" -> "rose
    little" (a list's or a header's form of the name written in prose elsewhere, and back)."""
    first, last = found[0].lower(), found[1].lower()
    return f"{last} {first}" if "," in surface else f"{last}, {first}"


def known_place(word: str) -> bool:
    """A word of the place gazetteers (city, US state, country)."""
    low = word.lower()
    return low in words("city") or low in words("us_state") or low in words("country")


def propagation_strings(spans: Sequence[Span], text: str, opts: MergeOptions, *,
                        across_notes: bool = False, cased: dict[str, str] | None = None) -> dict[str, str]:
    """Surface string (lower case) -> label of the spans propagation may repeat elsewhere.

    Whole strings of the propagated categories, then (`propagate_parts`) each word of a person's
    name that passes the clinical vocabulary guard. `across_notes`: strings made only of
    dictionary or clinical words ("Bay", "Holy Cross") stay inside the note where they were found
    (but a person's name of known names found by context: "GRACE LONG AWARE"),
    and single words need context support (`supported`, or a known name or place).
    A two-word person name's other order (`propagate_inverted`) goes to `cased` instead when both its words are
    dictionary words: it spreads only capitalised there ("LITTLE, ROSE", not "a little, rose from bed").
    """
    cats = set(opts.propagate_categories)
    min_len = opts.propagate_min_length
    strings: dict[str, str] = {}
    parts: dict[str, str] = {}
    for s in spans:
        surface = text[s.start:s.end]
        if len(surface) < min_len or not surface[0].isalpha() or taxonomy.category_of(s.label) not in cats \
                or s.source == ORGANIZATION_LIST_SOURCE:
            continue
        found = WORD.findall(surface)
        person = taxonomy.category_of(s.label) == "NAME"
        lone = len(found) == 1 and found[0] == surface
        if lone and (clinical(found[0]) if person else is_clinical_word(found[0])):
            continue  # a lone clinical word (or, as a name, an abbreviation shape) is never spread
        if across_notes and all(is_common(w) for w in found) and not (person and supported(s) and known_name_run(found)):
            continue  # but a person's full name of known names that context found ("GRACE LONG AWARE")
        if across_notes and len(found) == 1 and not (supported(s) or (is_name(found[0]) if person else known_place(found[0]))):
            continue
        # a CRF guess over a clinical phrase stays in its note, but for its known names
        phrase = across_notes and person and not supported(s) and phrase_shaped(found)
        if not phrase:
            strings.setdefault(surface.lower(), s.label)
            if (opts.propagate_inverted and person and len(found) == 2
                    and all(len(w) > 1 and not is_function_word(w.lower()) for w in found)):
                # round 16: the same name inverted ("Rose Little" ... "LITTLE, ROSE"); not an initial or a function
                # word, whose other order is prose ("A. Page": "page, a"; "Will Page": "page, will"); round 17: of
                # dictionary words, capitalised only ("ate a little, rose from bed")
                common = all(is_common(w) for w in found)
                if not common:
                    strings.setdefault(inverted_name(surface, found), s.label)
                elif cased is not None:
                    cased.setdefault(inverted_name(surface, found), s.label)
        pieces = name_parts(found) if person else []
        if opts.propagate_parts and len(pieces) > 1:
            for w in pieces:
                if len(w) >= opts.propagate_part_min_length and not clinical(w) and (not phrase or is_name(w)):
                    parts.setdefault(w.lower(), s.label)
                elif (cased is not None and not across_notes and capital_part(w) and not phrase
                      and any(p != w and len(p) > SHORT_MAX and not clinical(p) for p in pieces)
                      and credential_after(text, s.end, opts)):
                    cased.setdefault(w.lower(), s.label)  # round 18: "SASAVAQE VEOV" ... "BY VEOV", in the note
    for k, v in parts.items():
        strings.setdefault(k, v)
    return strings


def cued_strings(spans: Sequence[Span], text: str, opts: MergeOptions, skip: Mapping[str, str]) -> dict[str, str]:
    """Words of person names that do not spread freely (`skip` holds those that do): a name that is a
    dictionary word ("Ping", "Bill", "GANG"), or across notes a CRF guess of one word. Lower case ->
    label, for repeats right after a person cue only (`person_cue_before`); words shorter than
    propagate_part_min_length letters and function words ("Will", "May": "wife will call") are left out."""
    if not (opts.propagate_cue_words or opts.propagate_kin_words):
        return {}
    out: dict[str, str] = {}
    for s in spans:
        if taxonomy.category_of(s.label) != "NAME" or source_kind(s.source) == "patient":
            continue
        for w in name_parts(WORD.findall(text[s.start:s.end])):
            low = w.lower()
            if len(w) >= opts.propagate_part_min_length and low not in skip and not is_function_word(low):
                out.setdefault(low, s.label)
    return out


@lru_cache(maxsize=16)
def phrase_ends(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], int] | None:
    """(last words of the phrases in lower case, longest), for may_end_with; None when a last word is not ASCII
    or does not end with a letter or digit (the shortcut then does not apply)."""
    ends = tuple(sorted({p.split()[-1].lower() for p in phrases if p.split()}))
    if not ends or not all(w.isascii() and w[-1].isalnum() for w in ends):
        return None
    return ends, max(map(len, ends))


def may_end_with(text: str, end: int, ends: tuple[tuple[str, ...], int] | None) -> bool:
    """False only when text[:end] surely does not end with one of the words of phrase_ends (ASCII case
    ignored), so a phrase pattern anchored at `end` cannot match there: a C-level test before the regex
    search of a window (round 12). True when unsure (no word list, or a non-ASCII tail)."""
    if ends is None:
        return True
    words_, longest = ends
    tail = text[max(0, end - longest):end]
    return not tail.isascii() or tail.lower().endswith(words_)


def back_over(text: str, pos: int, lo: int, marks: str) -> int:
    """`pos` moved back (not before `lo`) over blanks, then one of `marks` and the blanks before it if there."""
    while pos > lo and text[pos - 1] in " \t":
        pos -= 1
    if pos > lo and text[pos - 1] in marks:
        pos -= 1
        while pos > lo and text[pos - 1] in " \t":
            pos -= 1
    return pos


@lru_cache(maxsize=8)
def _person_cue(cues: tuple[str, ...]) -> regex.Pattern | None:
    if not cues:
        return None
    return regex.compile(r"(?<![\p{L}\d])(?P<cue>" + phrase_alternation(cues) + r")\.?[ \t]*(?:[(,:][ \t]*)?\Z",
                         regex.IGNORECASE)


def person_cue_word(text: str, start: int, opts: MergeOptions) -> tuple[str, str] | None:
    """(kind, cue word in lower case) of the person cue right before the word at `start`, on its line
    ("girlfriend (Ping)", "HUSBAND GANG", "Dr. Gram"): kind "kin" after a [merge] propagate_kin_words word (a
    relative: PATIENT in i2b2 2014), "cue" after a propagate_cue_words title or role; None without one."""
    lo = max(0, start - _CUE_REACH)
    end = back_over(text, start, lo, "(,:")  # where the cue word ends: before blanks, '(' ',' ':', blanks, '.'
    end = end - 1 if end > lo and text[end - 1] == "." else end
    for kind, cues in (("kin", opts.propagate_kin_words), ("cue", opts.propagate_cue_words)):
        cue = _person_cue(tuple(cues))
        m = cue.search(text, lo, start) if cue is not None and may_end_with(text, end, phrase_ends(tuple(cues))) else None
        if m is not None:
            return kind, " ".join(m.group("cue").lower().split())
    return None


@lru_cache(maxsize=8)
def _subject_verbs(verbs: tuple[str, ...]) -> regex.Pattern | None:
    if not verbs:
        return None
    return regex.compile(r"[ \t]+(?:" + "|".join(regex.escape(v) for v in sorted(verbs, key=len, reverse=True))
                         + r")(?![\p{L}\d'’-])", regex.IGNORECASE)


_SUBJECT_OPEN = regex.compile(r"(?:^|:|[.!?;][ \t])[ \t]*\Z", regex.MULTILINE)  # a line, a field or a sentence opens


def subject_of_verb(text: str, start: int, end: int, opts: MergeOptions) -> bool:
    """The word at start..end is a clause's subject before one of [merge] propagate_subject_verbs, opening a line,
    following a field key's ':' or a sentence's end ("IMPRESSION: Glass has PTSD", "... pain. Hope reports")."""
    verbs = _subject_verbs(tuple(opts.propagate_subject_verbs))
    m = verbs.match(text, end) if verbs is not None else None
    return (m is not None and _PERFECT.match(text, m.end()) is None
            and _SUBJECT_OPEN.search(text, max(0, start - 20), start) is not None)


# review 17: a verb before "been" or a past participle is a perfect tense a thing takes as well ("Stone has passed",
# "Page has been sent", "Rash has resolved"): no subject's evidence
_PERFECT = regex.compile(r"[ \t]+(?:(?i:been)|\p{L}+(?i:ed))(?![\p{L}\d'’-])")


def person_cue_before(text: str, start: int, opts: MergeOptions) -> str | None:
    """The kind of person cue right before the word at `start` (person_cue_word), None without one."""
    found = person_cue_word(text, start, opts)
    return found[0] if found else None


def kin_of_names(spans: Sequence[Span], text: str, opts: MergeOptions) -> dict[str, set[str]]:
    """Word of a person's name (lower case) -> the kin words standing right before its tagged mentions
    ("father Royal": {"royal": {"father"}}), so a lower-case repeat after the same kin word is the same
    relative ("father royal helps")."""
    out: dict[str, set[str]] = {}
    if not opts.propagate_kin_words:
        return out
    for s in spans:
        if taxonomy.category_of(s.label) != "NAME":
            continue
        found = person_cue_word(text, s.start, opts)
        if found is None or found[0] != "kin":
            continue
        for w in name_parts(WORD.findall(text[s.start:s.end])):
            out.setdefault(w.lower(), set()).add(found[1])
    return out


# A lower-case word that "to" or "that" follows is the word itself, not a relative's name: "daughter hope to
# arrange rehab", "son trust that" ("father royal helps", "father royal bone checks in" stay names).
_WORD_NOT_NAME = regex.compile(r"[ \t]+(?i:to|that)(?![\p{L}\d'’-])")


def add_occurrences(spans: list[Span], text: str, strings: dict[str, str], source: str,
                    found: Occurrences | None = None, dosing: regex.Pattern | None = None,
                    opts: MergeOptions | None = None, cued: bool = False,
                    kin: Mapping[str, set[str]] | None = None, capitalised: bool = False) -> list[Span]:
    """`spans` plus every untagged whole-word occurrence of `strings` in `text` (label from the map),
    but those a dose, route or frequency follows (`dosing`: "flovent bid", "Celebrex 400 mg": a drug)
    and, with `opts`, those in a not-name context (`not_name_context`: "very SOB", "Fio2"); `cued`
    (with `opts`): only capitalised ones right after a person cue (`person_cue_word`; "son pebble" is
    as likely the word itself) or as a clause's subject before a [merge] propagate_subject_verbs verb
    (subject_of_verb), PATIENT after a kin word; a lower-case one only after the very kin word
    that stands before a tagged mention of the name (`kin`, kin_of_names: "father Royal" ... "father royal")
    and not before "to" or "that" (_WORD_NOT_NAME: "daughter hope to arrange"); `capitalised`: only occurrences
    whose every word opens with a capital ("LITTLE, ROSE", "Little, Rose").

    Linear in the text: one Aho-Corasick pass (engine/occurrences.py), not a regex alternation."""
    if not strings:
        return spans
    found = found or Occurrences(strings)
    ordered = sort_spans(spans)  # non-overlapping: one bisection finds the only candidate
    starts, ends = [s.start for s in ordered], [s.end for s in ordered]
    added: list[Span] = []
    for a, b, label in found.find(text):
        i = bisect_right(ends, a)
        if (i < len(starts) and starts[i] < b) or (dosing is not None and dosing.match(text, b)):
            continue
        if opts is not None and not_name_context(text, a, b, opts, person=taxonomy.category_of(label) == "NAME"):
            continue
        if capitalised and not all(w[0].isupper() for w in WORD.findall(text, a, b)):
            continue
        if cued:
            cue = person_cue_word(text, a, opts) if opts is not None else None
            if cue is None and opts is not None and text[a].isupper() and subject_of_verb(text, a, b, opts):
                cue = ("cue", "")  # round 17: "IMPRESSION: Glass has PTSD"; the label stays
            if cue is None or not (text[a].isupper() or (cue[1] in (kin or {}).get(text[a:b].lower(), ())
                                                         and not _WORD_NOT_NAME.match(text, b))):
                continue
            kind = cue[0]
            label = "PATIENT" if kind == "kin" and label == "DOCTOR" else label
        added.append(Span(a, b, label, source, 0.5))
    return sort_spans(spans + added) if added else spans


def propagate_note(spans: list[Span], text: str, opts: MergeOptions) -> list[Span]:
    """Within one note: untagged repeats of its names and places (and of the words of its names), and
    of its name words that are dictionary words where a person cue stands before them."""
    cased: dict[str, str] = {}
    strings = propagation_strings(spans, text, opts, cased=cased)
    dosing = dosing_context(opts)
    spans = add_occurrences(spans, text, strings, "crf:propagate", dosing=dosing, opts=opts)
    if cased:  # the other order of a name of dictionary words, capitalised only
        spans = add_occurrences(spans, text, cased, "crf:propagate", dosing=dosing, opts=opts, capitalised=True)
    cued = cued_strings(spans, text, opts, strings)
    if not cued:
        return spans  # no name word waits for a cue: the kin words before the names are not read
    return add_occurrences(spans, text, cued, "crf:propagate", dosing=dosing, opts=opts, cued=True,
                           kin=kin_of_names(spans, text, opts))


def propagate_patient(notes: Sequence[tuple[str, list[Span]]], opts: MergeOptions) -> list[list[Span]]:
    """Across one patient's notes: a name or place tagged in one note is tagged in the others too.

    The people and places of a stay recur from note to note, and a surrogate must replace every
    mention, so the strings (and name words) of every note are looked for in all of them; a name
    word that is a dictionary word only where a person cue stands before it ("girlfriend (Ping)"); and
    the initials of the patient's names where a note makes them its subject (engine/initials.py).
    """
    strings: dict[str, str] = {}
    cased: dict[str, str] = {}
    for text, spans in notes:
        for k, v in propagation_strings(spans, text, opts, across_notes=True, cased=cased).items():
            strings.setdefault(k, v)
    cued: dict[str, str] = {}
    kin: dict[str, set[str]] = {}
    for text, spans in notes:
        for k, v in cued_strings(spans, text, opts, strings).items():
            cued.setdefault(k, v)
    for text, spans in notes if cued else ():  # the kin words are read only for cued repeats
        for k, words_ in kin_of_names(spans, text, opts).items():
            kin.setdefault(k, set()).update(words_)
    found = Occurrences(strings) if strings else None  # built once for the patient's notes
    found_cued = Occurrences(cued) if cued else None
    found_cased = Occurrences(cased) if cased else None
    dosing = dosing_context(opts)
    initials: set[str] = set()
    clinicians: set[str] = set()
    for text, spans in notes:
        initials |= initials_of(spans, text) if opts.patient_initials else set()
        clinicians |= initials_of(spans, text, "DOCTOR") if opts.doctor_initials else set()
    not_clinical = not_clinician_initials(opts) if clinicians else ()  # once for the patient's notes
    out = []
    for text, spans in notes:
        spans = add_occurrences(list(spans), text, strings, "patient:propagate", found, dosing, opts)
        if cased:
            spans = add_occurrences(spans, text, cased, "patient:propagate", found_cased, dosing, opts, capitalised=True)
        spans = add_occurrences(spans, text, cued, "patient:propagate", found_cued, dosing, opts, cued=True, kin=kin)
        if initials:
            spans = patient_initials(spans, text, opts.patient_initials_verbs, opts.not_initials, initials)
        out.append(doctor_initials(spans, text, opts.not_initials, clinicians, not_clinical) if clinicians else spans)
    return out


@dataclass(frozen=True)
class PatientPropagation:
    """The merge's cross-note step (a CrossNoteStep): propagate_patient over one patient's notes."""

    options: MergeOptions

    def spread(self, notes: Sequence[tuple[str, list[Span]]]) -> list[list[Span]]:
        """New spans per note: each note's own plus the other notes' names and places found in it."""
        return propagate_patient(notes, self.options)
