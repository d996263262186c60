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
from functools import lru_cache

import regex

from deid_core import taxonomy
from deid_core.config import Merge as MergeOptions
from deid_core.engine.propagation import (
    SHORT_MAX,
    WORD,
    is_clinical_word,
    is_crf,
    known_place,
    not_name_context,
    phrase_alternation,
    source_kind,
)
from deid_core.gazetteers import is_name, words
from deid_core.spans import Span

# A list item beside the span: separator then a word ("XYLOFEN/ATROVENT", "Xylofen, Ceftaz"), or a word then separator.
_NEXT_ITEM = regex.compile(r"[ \t]*[,/&][ \t]*(\p{L}+)")
_PREV_ITEM = regex.compile(r"(?<![\p{L}\d])(\p{L}+)[ \t]*[,/&][ \t]*\Z")
_MEASURE = regex.compile(r"[ \t]*=[ \t]*\d")  # "VT= 500", "PF=150": a measured quantity's label ("JM = Jo Marsh" is a key)
# Name shapes a typo in a name keeps: an initial before ("K. WONDR"), a role in brackets after ("leavng (partner)").
_NAME_BEFORE = regex.compile(r"(?<![\p{L}])\p{L}\.[ \t]*\Z")
_NAME_AFTER = regex.compile(r"[ \t]*\(")
# round 17: a letter's addressee ("Dear Faize,", "Dear Dr. Faize:"): a name, however close to a word
_ADDRESSEE_BEFORE = regex.compile(r"(?:^|\n)[ \t]*(?i:dear)[ \t]+(?:\p{L}{1,4}\.?[ \t]+)?\Z")
PERSON = frozenset({"PATIENT", "DOCTOR"})
_NAMED = frozenset({"NAME", "LOCATION"})  # what a not-name context rules out: any person or place label
PLACE = frozenset({"LOCATION-OTHER", "HOSPITAL", "ORGANIZATION", "DEPARTMENT", "STREET"})  # no gazetteer places


def unsupported(spans: Sequence[Span], guess: Callable[[Span], bool] = is_crf) -> Callable[[Span], bool]:
    """A predicate: True for a span that no rule, metadata or name-net span overlaps (a CRF guess alone);
    `guess` says which spans are guesses (default: the CRF's). The support is sorted on the first call
    only: most notes have no span the guards ask about."""
    built: list = []  # [support, starts, longest] once asked

    def alone(s: Span) -> bool:
        if not built:
            support = sorted((t.start, t.end) for t in spans if not guess(t))
            built.extend((support, [a for a, _ in support], max((b - a for a, b in support), default=0)))
        support, starts, longest = built
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


_CODE_TOKEN = regex.compile(r"\p{Lu}{1,4}\d{1,2}(?![\p{L}\d])")  # "HCO3", "HSV2", "IL6", "PGY2"
_LOWER = regex.compile(r"\p{Ll}")
_BY_BEFORE = regex.compile(r"(?<![\p{L}\d])by:?[ \t]+\Z", regex.IGNORECASE)  # "compensated by HCO3"
_TITLE_WORD = regex.compile(r"[ \t]*(\p{Lu}\p{Ll}+(?:[ \t]+\p{Lu}\p{Ll}+)*)[ \t]*")


Found = Callable[[int, int], bool]


def rule_cover(spans: Sequence[Span], is_rule: Callable[[Span], bool], label: str | None = None) -> Found:
    """Does a span before the merge that `is_rule` accepts (a rule's or the metadata's; of `label` when given)
    overlap [start, end)? The union policy credits a group to its CRF member (its stage ranks first), so after the
    merge a CRF source does not mean that the CRF alone found the span (round 19 review: 'E-signed by GEB19', read
    by two rules and the CRF). Sorted starts and running maximal ends: O(log n) per question."""
    found = sorted((s.start, s.end) for s in spans if (label is None or s.label == label) and is_rule(s))
    starts = [a for a, _ in found]
    reach: list[int] = []
    for _, b in found:
        reach.append(max(b, reach[-1]) if reach else b)

    def overlaps(start: int, end: int) -> bool:
        j = bisect_left(starts, end)
        return j > 0 and reach[j - 1] > start

    return overlaps


def guard_crf_logins(spans: Sequence[Span], text: str, ruled: Found | None = None) -> list[Span]:
    """A USERNAME only the CRF proposes right after "by" that opens with a clinical code (1-4 capitals, 1-2 digits:
    "compensated by HCO3 of 30", "Caused by HSV2", "by PGY2 Ames") in a note written in mixed case is no login
    (a login elsewhere, "J. Quell, MD (NHJ70)", is not asked about; lead, round 14: the
    breadth12b model reads "<participle> by <code>" as a login; the rule username-by-login refuses the same shape):
    the code is cut off; Title-case words left are a clinician's name (DOCTOR), anything else is dropped.
    Notes in capitals keep them ("MESSAGE TAKEN BY XT41"). `ruled` (rule_cover of the spans before the merge): a
    span whose code word a rule or the metadata found too is never cut or dropped (round 19 review: the union credits
    the CRF; a rule's name beside the code, "PGY2 [Ames]", is no reading of the code)."""
    if not any(s.label == "USERNAME" for s in spans) or not _LOWER.search(text):
        return list(spans)
    out = []
    for s in spans:  # merged spans: a CRF source here may hide a rule that joined it (union): `ruled` tells
        if s.label == "USERNAME" and is_crf(s):
            m = _CODE_TOKEN.match(text, s.start)  # the whole word: the CRF may tag "HSV" of "HSV2"
            if m is not None and _BY_BEFORE.search(text, max(0, s.start - 8), s.start) and not (
                    ruled is not None and ruled(m.start(), m.end())):  # a rule read the code word itself: it stays
                rest = _TITLE_WORD.fullmatch(text, m.end(), s.end) if m.end() < s.end else None
                if rest is not None:
                    out.append(Span(rest.start(1), rest.end(1), "DOCTOR", s.source, s.confidence))
                continue
        out.append(s)
    return out


def guard_crf_context(spans: Sequence[Span], text: str, opts: MergeOptions) -> list[Span]:
    """Drop person names and places (any label) only the CRF proposes where the note says they are none:
    in a not-name context (propagation.not_name_context: "very SOB", "TAGALOG INTERPRETER", "Fio2"),
    or, for a name that holds no known name, beside a clinical-vocabulary word of 4+ letters in a
    list ("XYLOFEN/ATROVENT", "receiving Xylofen, Ceftaz"; "Pell, cardiology" keeps a known name), or,
    for any name, in a list opened by a label of [merge] not_name_list_labels ("PMH: CHF, QWERTAL").
    A span a rule, the metadata or the name net found too is never dropped."""
    alone = unsupported(spans)
    guessed_only = unsupported(spans, _guess)
    labels = list_labels(opts)
    out = []
    for s in spans:
        person = s.label in PERSON
        if is_crf(s) and taxonomy.category_of(s.label) in _NAMED and alone(s) and (
                not_name_context(text, s.start, s.end, opts, person=person)
                or (person and (_clinical_list_item(text, s) or _after_list_label(text, s, labels)))):
            continue
        if (person and _guess(s) and guessed_only(s) and not _NAME_BEFORE.search(text, max(0, s.start - 4), s.start)
                and not _NAME_AFTER.match(text, s.end) and misspelt(text[s.start:s.end])
                and not _ADDRESSEE_BEFORE.search(text, max(0, s.start - 12), s.start)):
            continue
        out.append(s)
    return out


def _guess(s: Span) -> bool:
    """A CRF or name-net span: a guess from the word's shape and neighbours, no rule's context."""
    return is_crf(s) or source_kind(s.source) == "names"


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MISSPELT_MIN = 5  # shorter words are one edit away from too many words ("tehn" stays)
MISSPELT_MAX = 30  # longer than any listed word + 1: no typo of one, and the edits stay linear in the note


def misspelt(word: str) -> bool:
    """A word of MISSPELT_MIN+ letters in no list (no known name, no dictionary or clinical word) one
    edit (a letter dropped, added, changed, or two swapped) from a dictionary or clinical word of
    MISSPELT_MIN+ letters: "visitted", "CURRNTLY", "stbale" are typos, not names ("Qqplorvik" is none)."""
    low = word.lower()
    if not MISSPELT_MIN <= len(low) <= MISSPELT_MAX or not low.isalpha() or is_name(low) or is_clinical_word(low):
        return False
    splits = [(low[:i], low[i:]) for i in range(len(low) + 1)]
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    edits |= {a + c + b for a, b in splits for c in _LETTERS}
    return any(len(e) >= MISSPELT_MIN and is_clinical_word(e) for e in edits)


def _after_list_label(text: str, s: Span, labels: regex.Pattern | None) -> bool:
    """In a list a label opens on the same line and no sentence has ended since ("PMH: CHF, QWERTAL",
    "Allergy: Zorbicil"): drugs and diagnoses, no persons."""
    if labels is None:
        return False
    lo = max(0, s.start - _LIST_REACH)  # bounded: the look back stays linear over a long one-line note
    line = text[text.rfind("\n", lo, s.start) + 1 or lo:s.start]
    last = None
    for m in _LABEL.finditer(line):
        last = m
    return (last is not None and labels.fullmatch(last.group(1).strip()) is not None
            and _SENTENCE_END.search(line, last.end()) is None)


_LABEL = regex.compile(r"(?<![\p{L}\d])(\p{L}[\p{L} \t]{0,30}?)[ \t]*:")  # "PMH:", "Past medical history:"
_LIST_REACH = 200  # characters looked back for a list label on the span's line
_SENTENCE_END = regex.compile(r"[.!?;][ \t]")


def list_labels(opts: MergeOptions) -> regex.Pattern | None:
    """The labels of [merge] not_name_list_labels as one case-insensitive pattern (None when empty)."""
    return _labels(tuple(opts.not_name_list_labels))


@lru_cache(maxsize=8)
def _labels(labels: tuple[str, ...]) -> regex.Pattern | None:
    if not labels:
        return None
    return regex.compile(phrase_alternation(labels), regex.IGNORECASE)


def _clinical_list_item(text: str, s: Span) -> bool:
    if any(is_name(w) for w in WORD.findall(text[s.start:s.end])):
        return False
    after = _NEXT_ITEM.match(text, s.end)
    before = _PREV_ITEM.search(text[max(0, s.start - 40):s.start])
    return any(m is not None and len(m.group(1)) > SHORT_MAX and m.group(1).lower() in words("medical_word")
               and not is_name(m.group(1)) for m in (after, before))
