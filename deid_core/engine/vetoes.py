"""Context vetoes on spans only a CRF proposes: clinical words and phrases tagged as names or places.

Real-note false positives of the CRF (tune CV, round 4): abbreviations and measurement labels
tagged DOCTOR ("VT= 500", "gross mvt"), and procedures and clinical phrases tagged as places
("drink nutritional supplements", "spoke at length"). Initials standing for a person have the
same shape as abbreviations ("JT is a 45 yo", "read by Dr M"), so shape alone is no evidence: a
veto needs a sign that the word is clinical *in this note*. A span a rule, the metadata or the
name net found too (context) is never vetoed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

import regex

from deid_core import taxonomy
from deid_core.engine.propagation import SHORT_MAX, WORD, is_clinical_word, is_crf, known_place
from deid_core.gazetteers import is_name, words
from deid_core.spans import Span

_MEASURE = regex.compile(r"[ \t]*=[ \t]*\d")  # "VT= 500", "PF=150": a measured quantity's label ("JM = Jo Marsh" is a key)
PERSON = frozenset({"PATIENT", "DOCTOR"})
PLACE = frozenset({"LOCATION-OTHER", "HOSPITAL", "ORGANIZATION", "DEPARTMENT", "STREET"})  # no gazetteer places


def unsupported(spans: Sequence[Span]) -> Callable[[Span], bool]:
    """A predicate: True for a span that no rule, metadata or name-net span overlaps (a CRF guess alone)."""
    support = sorted((s.start, s.end) for s in spans if not is_crf(s))
    starts = [a for a, _ in support]
    longest = max((b - a for a, b in support), default=0)

    def alone(s: Span) -> bool:
        lo, hi = bisect_left(starts, s.start - longest), bisect_left(starts, s.end)
        return not any(support[k][1] > s.start for k in range(lo, hi))

    return alone


def guard_crf_names(spans: Sequence[Span], text: str) -> list[Span]:
    """Drop one-word person names only the CRF proposes, shaped like a clinical word or abbreviation
    (a dictionary or clinical word, or at most SHORT_MAX letters, and no known name), when the note
    says the word is clinical: it is in the clinical vocabulary and longer than SHORT_MAX ("Ceftaz"), it
    labels a measurement ("VT= 500"), or, in lower or mixed case and 3+ letters, it stands elsewhere in
    the note outside every name (the CRF itself called it no name there: "no mvt ... gross mvt").
    Capitals are initials as often ("AD is a 81 yo", "LKB" signing lines, "BP" in a key): they stay.
    """
    alone = unsupported(spans)
    named = [(s.start, s.end) for s in spans if taxonomy.category_of(s.label) == "NAME"]
    out = []
    for s in spans:
        if is_crf(s) and s.label in PERSON and alone(s):
            surface = text[s.start:s.end]
            if (surface.isalpha() and (is_clinical_word(surface) or len(surface) <= SHORT_MAX)
                    and not is_name(surface) and _clinical_here(surface, s, text, named)):
                continue
        out.append(s)
    return out


def _clinical_here(word: str, s: Span, text: str, named: Sequence[tuple[int, int]]) -> bool:
    if _MEASURE.match(text, s.end) or (len(word) > SHORT_MAX and word.lower() in words("medical_word")):
        return True  # short clinical abbreviations ("BP", "ER") are initials as often: no evidence
    if len(word) <= 2 or word.isupper():  # initials stand in keys, headers and sign-offs untagged ("AD", "LKB")
        return False
    pattern = r"(?<![\p{L}\d])" + regex.escape(word) + r"(?![\p{L}\d])"
    for m in regex.finditer(pattern, text):  # the same string, same case: "ad lib" says nothing of "AD"
        if m.start() != s.start and not any(a < m.end() and m.start() < b for a, b in named):
            return True
    return False


def guard_crf_places(spans: Sequence[Span], text: str, heads: frozenset[str]) -> list[Span]:
    """Drop places only the CRF proposes that read as clinical prose: every word a dictionary or
    clinical word, at least one of them of more than SHORT_MAX letters, and no word a known place,
    a place head (`heads`: hospital, center, rehab...) or a known name
    ("review of systems", "PACER BATTERY" go; "Holy Family Hospital", "Boston", "Rose Hill" stay)."""
    alone = unsupported(spans)
    out = []
    for s in spans:
        if is_crf(s) and s.label in PLACE and alone(s) and _prose(text[s.start:s.end], heads):
            continue
        out.append(s)
    return out


def _prose(surface: str, heads: frozenset[str]) -> bool:
    """Clinical prose, not a proper noun: no digit, no Title-case word in mixed case ("Habitat for
    Humanity"), not two words ("UNITED STATES": too short to tell), a lone word of 6+ letters."""
    found = WORD.findall(surface)
    if (not found or any(c.isdigit() for c in surface) or len(found) == 2
            or (len(found) == 1 and len(found[0]) < 6)):
        return False
    clinical = False
    for w in found:
        low = w.lower()
        if low in heads or known_place(w) or (len(w) > SHORT_MAX and is_name(w)) or _title(w):
            return False
        if len(w) > 2 and not is_clinical_word(w):  # "of", "w" (with) pass: prose glue
            return False
        clinical = clinical or len(w) > SHORT_MAX
    return clinical


def _title(word: str) -> bool:
    """Proper-noun shape: a capital then lower case ("Mercy"), not all capitals."""
    return len(word) > 1 and word[0].isupper() and word[1:].islower()
