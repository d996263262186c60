"""One person's name cut into pieces by the taggers, made one span again (issue 14, round 12).

The CRF often tags a name in two pieces with two labels ('Emma' PATIENT + 'van den Oever' DOCTOR,
'DISABATO' DOCTOR + ', SHAUNDA' ORGANIZATION, 'Rachel Vander' + 'Mer') or leaves out a glued or
particle piece ("O'" of "O'Brien", 'pikus-' of 'pikus-vertiz', 'VAN' of 'VAN DYKE', 'RUE' of
'RODNEY LA RUE'). At the merge, after the policy: a person span (PATIENT or DOCTOR) joins a
neighbouring piece on its line: another person span, or a CRF span of another label made only of
name-shaped words (no frequent or clinical word, no digit), across one blank, a hyphen, or a comma
in the inverted 'Last, First' order (never in a list: 'Dean, Reck and Vincze'). A person span grows
over an untagged particle ('van', 'de', 'la', "O'") or a hyphen-glued name word at its edges. Label of
a joined span: the person label (a context rule's over a CRF guess, else the first piece's); the
field-key and kin steps after the merge may still change it. Configured by [merge] join_name_pieces
and name_particles. Linear: each span looks at its neighbour and a few characters around it."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import regex

from deid_core.engine.propagation import is_clinical_word, is_crf
from deid_core.gazetteers import is_common, is_frequent, is_function_word, is_name, words
from deid_core.spans import Span

_PERSON = frozenset({"PATIENT", "DOCTOR"})
# Labels a CRF may give a piece of a name ('SETH' HOSPITAL, 'Dyke' ORGANIZATION, 'cunningham' USERNAME);
# never a date ('F/u Dr. Kotch Thursday'), an age or a number.
_NAME_PIECE_LABELS = frozenset({"HOSPITAL", "ORGANIZATION", "USERNAME", "CITY", "STATE", "COUNTRY", "STREET",
                                "DEPARTMENT", "LOCATION-OTHER", "IDNUM"})
_WORDS = regex.compile(r"[\p{L}]+")
_GLUED_LEFT = regex.compile(r"(?<![\p{L}\d'’-])(\p{L}{2,})-\Z")  # 'pikus-' before 'vertiz'
_GLUED_RIGHT = regex.compile(r"-(\p{L}{2,})(?![\p{L}\d'’-])")  # '-HOLZBOOG' after 'ARIETTA'
_APOSTROPHE_LEFT = regex.compile(r"(?<![\p{L}\d])([OoDdLl])['’]\Z")  # "O'" before 'Brien'
_APOSTROPHE_RIGHT = regex.compile(r"['’](\p{L}{2,})(?![\p{L}\d'’-])")  # "'Neil" after a span ending in 'O'
_PARTICLE_LEFT = regex.compile(r"(?<![\p{L}\d'’.-])(\p{L}{2,4})[ ]\Z")  # 'VAN ' before 'DYKE'
_EDGE_MARKS = frozenset(" '’-")  # what stands right before or after a piece a span may grow over
_LETTER_END = regex.compile(r"(?<![\p{L}\d])[OoDdLl]\Z")  # a span ending in the 'O' of "O'Neil"
_BLANK_WORD_RIGHT = regex.compile(r"[ ](\p{L}{2,})(?![\p{L}\d'’-])")
_LIST_AFTER = regex.compile(r"[ \t]*(?:,[ \t]*(?:and\b|or\b|&)|,[ \t]*\p{L}{2,}[ \t]*(?:,|and\b|&)|(?:and|&)[ \t])", regex.IGNORECASE)
_REACH = 40  # characters read after a span for a list
_WORD_NEXT = regex.compile(r"[ \t]*\p{L}")  # a word follows on the line


def _case(s: str) -> str:
    """'upper' for capitals only, 'other' for Title or lower case (pieces of one name share it)."""
    letters = [c for c in s if c.isalpha()]
    return "upper" if letters and all(c.isupper() for c in letters) and len(letters) > 1 else "other"


def _same_case(a: str, b: str) -> bool:
    """Both pieces in capitals, or neither (one-letter pieces: an initial, any case)."""
    if sum(c.isalpha() for c in a) < 2 or sum(c.isalpha() for c in b) < 2:
        return True
    return _case(a) == _case(b)


def _name_word(w: str, particles: frozenset[str]) -> bool:
    """A word that may be part of a name: an initial, a particle, a known name that is no frequent
    word, or a word in no dictionary and not credential-shaped ('BSN', 'CCRP': capitals, 4 letters or fewer)."""
    low = w.lower()
    if len(w) == 1 or low in particles:
        return True
    if is_name(low):
        return not is_frequent(low)
    return not is_clinical_word(low) and not (w.isupper() and len(w) <= 4)


def _name_shaped(piece: str, particles: frozenset[str]) -> bool:
    """A piece made only of name words: letters (with "'" or '-'), 1-3 words, each _name_word
    ('van den Oever', 'SETH', 'Chernich'; not 'Sun', 'LEROY  HOSP', 'Nephrology', 'BSN', 'BID 5')."""
    if any(c.isdigit() for c in piece) or "\n" in piece:
        return False
    ws = _WORDS.findall(piece)
    if not ws or len(piece.split()) > 3:
        return False
    return all(_name_word(w, particles) for w in ws)


@lru_cache(maxsize=8)
def _eponym_pairs(eponyms: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """The hyphen-glued word pairs of eponymous terms ('jackson-pratt' -> ('jackson', 'pratt'))."""
    pairs: set[tuple[str, str]] = set()
    for e in eponyms:
        ws = e.lower().split("-")
        pairs.update(zip(ws, ws[1:], strict=False))
    return frozenset(pairs)


def _eponym(left: str, right: str, eponyms: frozenset[tuple[str, str]]) -> bool:
    """Do the last word of `left` and the first of `right` make an eponymous term ('Jackson' + 'Pratt')?"""
    if not eponyms:
        return False
    lw, rw = _WORDS.findall(left), _WORDS.findall(right)
    return bool(lw and rw) and (lw[-1].lower(), rw[0].lower()) in eponyms


def _gap_joins(gap: str, left: str, right: str, text: str, a: Span, b: Span) -> bool:
    """Is the text between two pieces one name's joint: one blank or a hyphen between pieces in the same
    case, or a comma between a last name and a one-word first name (inverted order, 'MARES, Isabela'),
    outside a list of names?"""
    if gap in (" ", "-"):
        return _same_case(left, right)
    if not _WORDS.search(left):
        return False
    if gap.strip() != "," or len(gap) > 2 or "," in left or len(right.split()) != 1:
        return False
    if not (_same_case(left, right) or (_case(left) == "upper" and right[:1].isupper())):
        return False  # 'MARES, Isabela' is one name; 'Dr. vk, Latoya' two
    if len(_WORDS.findall(left)[-1]) < 3 or (a.label in _PERSON and b.label in _PERSON and a.label != b.label):
        return False  # initials before the comma, or two labels: no evidence which one the name has
    if regex.search(r",[ \t]*\Z", text[max(0, a.start - 3):a.start]):
        return False  # 'Dean, Reck' inside 'X, Dean, Reck'
    if text.startswith(("'s", "’s"), b.end):
        return False  # 'this is Luke, Ernest's nephew'
    if _LIST_AFTER.match(text, b.end, min(len(text), b.end + _REACH)):
        return False  # 'JERRELL, HOUSE AND CAVALERI'
    return right.strip().lower() in words("first_name")  # a given name: not 'Nephrology', 'BSN'


def _label(a: Span, b: Span) -> tuple[str, str]:
    """(label, source) of two joined pieces: the person piece's; of two person pieces, a context
    rule's over a CRF guess, else the first's."""
    if a.label not in _PERSON:
        return b.label, b.source
    if b.label not in _PERSON or is_crf(b) or not is_crf(a):
        return a.label, a.source
    return b.label, b.source


def _joinable(a: Span, b: Span, text: str, particles: frozenset[str], lead_words: frozenset[str],
              eponyms: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """May the neighbouring pieces a (first) and b be one person's name? Never with a role or kin word
    ('fiancee' + 'V. Malango': trim_person_spans cut it off), nor across an eponym's hyphen ('Jackson-Pratt')."""
    if (a.label not in _PERSON and b.label not in _PERSON) or not 0 < b.start - a.end <= 2:
        return False
    gap = text[a.end:b.start]
    left, right = text[a.start:a.end], text[b.start:b.end]
    if lead_words and any(w.lower() in lead_words for w in _WORDS.findall(left + " " + right)):
        return False
    for s, piece in ((a, left), (b, right)):
        if s.label in _PERSON:
            ws = _WORDS.findall(piece)
            if not all(is_name(w) or _name_word(w, particles) or (k and ws[k - 1].lower() in particles)
                       for k, w in enumerate(ws)):
                return False  # 'Caregiver' + 'Carma'
        elif not (s.label in _NAME_PIECE_LABELS and is_crf(s) and _name_shaped(piece, particles)):
            return False
    if gap == "-" and _eponym(left, right, eponyms):
        return False
    return _gap_joins(gap, left, right, text, a, b)


def _growable(word: str, piece: str) -> bool:
    """A word a person span may grow over: no clinical or dictionary word ('CARAFATE-', 'Quellby-like') but a
    known name capitalised, no function or medical word (round 15: 'Quell-Page', 'COX-QUELL': a double-barrelled
    surname cut at its hyphen; not 'Quell-page'), in the span's case."""
    low = word.lower()
    return _same_case(word, piece) and (not is_clinical_word(word) or (
        word[0].isupper() and is_name(low) and not is_function_word(low) and low not in words("medical_word")))


def _after_particle(word: str, text: str, end: int, piece: str) -> bool:
    """The word after a particle that ends a person span (ending at `end` in text), taken as the rest of the
    name; a dictionary or clinical word only when no word follows it on the line ('LA' + 'RUE, MD'; not
    'le' + 'fort fracture', 'al' + 'fresco meeting'); never a function word or an acronym in no dictionary ('LPN')."""
    return (not is_function_word(word) and _same_case(word, piece)
            and not (word.isupper() and len(word) <= 4 and not is_name(word) and not is_common(word))
            and (not is_clinical_word(word) or _WORD_NEXT.match(text, end) is None))


def _grown(s: Span, text: str, lo: int, hi: int, particles: frozenset[str],
           eponyms: frozenset[tuple[str, str]] = frozenset()) -> Span:
    """A person span grown over untagged name pieces at its edges (within lo..hi): an apostrophe
    particle ("O'" before 'Brien', "'Neil" after 'O'), a hyphen-glued name word (never onto an initial:
    'CARAFATE-W. QUELL'), a particle word before it ('VAN DYKE') or, after a particle ending a span of two
    words or a particle that is no given name, the word that follows ('RODNEY LA' + 'RUE', 'VAN' + 'DYKE';
    not 'AL' + 'LPN')."""
    start, end = s.start, s.end
    before = text[start - 1] if start > lo else ""  # one character each side first: most spans stop at a blank
    after = text[end] if end < hi else ""
    if before not in _EDGE_MARKS and after not in _EDGE_MARKS:
        return s
    piece = text[start:end]
    ws = _WORDS.findall(piece)
    if not ws:
        return s
    if before in _EDGE_MARKS:
        head = text[max(lo, start - 30):start]
        if before in "'’" and (m := _APOSTROPHE_LEFT.search(head)):
            start -= len(m.group(0))
        elif before == "-" and (m := _GLUED_LEFT.search(head)) and len(ws[0]) > 1 and _growable(m.group(1), piece) \
                and not _eponym(m.group(1), piece, eponyms):
            start -= len(m.group(0))
        elif before == " " and (m := _PARTICLE_LEFT.search(head)) and m.group(1).lower() in particles \
                and _same_case(m.group(1), piece):
            start -= len(m.group(0))
    if after in "'’" and (m := _APOSTROPHE_RIGHT.match(text, end, hi)) and _LETTER_END.search(piece):
        end = m.end()  # 'Milo O' + "'Neeil"
    elif after == "-" and (m := _GLUED_RIGHT.match(text, end, hi)) and _growable(m.group(1), piece) \
            and not _eponym(piece, m.group(1), eponyms):
        end = m.end()
    elif (after == " " and ws[-1].lower() in particles and (len(ws) > 1 or not is_name(ws[0]))
          and (m := _BLANK_WORD_RIGHT.match(text, end, hi)) and _after_particle(m.group(1), text, m.end(), piece)):
        end = m.end()
    if (start, end) == (s.start, s.end):
        return s
    return Span(start, end, s.label, s.source, s.confidence)


def join_name_pieces(spans: Sequence[Span], text: str, particles: Sequence[str],
                     lead_words: frozenset[str] = frozenset(), eponyms: Sequence[str] = ()) -> list[Span]:
    """Non-overlapping merged spans with each person's name pieces made one span (module doc); a piece
    with one of `lead_words` ([merge] crf_name_lead_words: roles, kin) is never joined, nor two words of one
    of `eponyms` ([merge] hyphen_eponyms: 'jackson-pratt')."""
    if not any(s.label in _PERSON for s in spans):
        return list(spans)
    parts = frozenset(p.lower() for p in particles)
    pairs = _eponym_pairs(tuple(eponyms))
    ordered = sorted(spans, key=lambda x: (x.start, x.end))
    grown: list[Span] = []
    for k, s in enumerate(ordered):
        if s.label in _PERSON:
            lo = max(ordered[k - 1].end, grown[-1].end) if k else 0  # never over the neighbour's growth
            hi = ordered[k + 1].start if k + 1 < len(ordered) else len(text)
            s = _grown(s, text, lo, hi, parts, pairs)
        grown.append(s)
    out: list[Span] = []
    last: Span | None = None  # the last piece as tagged: a joint is judged on the two pieces beside it
    for s in grown:
        if last is not None and _joinable(last, s, text, parts, lead_words, pairs):
            a = out[-1]
            label, source = _label(a, s)
            out[-1] = Span(a.start, s.end, label, source, max(a.confidence, s.confidence))
        else:
            out.append(s)
        last = s
    return out
