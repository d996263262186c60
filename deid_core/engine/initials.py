"""Initials standing for a person (issue 14, round 11): the patient's as the subject of a note ('Pt:
Takahashi, Chiyo (CT)', 'CT is a 41 yo', 'Pt CT, 41F'), a clinician's where a note signs with them ('FS =
FRANCINE SOWA, RN', 'GM/ak', a flowsheet line ending in 'FS'); tagged at the merge and across the patient's
notes only when they are the initials of one of the patient's PATIENT (DOCTOR) names. Configured by [merge]
patient_initials, patient_initials_verbs and doctor_initials."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

import regex

from deid_core.config import Merge as MergeOptions
from deid_core.gazetteers import is_frequent, is_function_word, words
from deid_core.spans import Span, sort_spans

_NAME_WORD = regex.compile(r"\p{L}[\p{L}'’-]*")
_INVERTED = regex.compile(r"\A[^,]+,[ \t]*\p{L}")  # 'Takahashi, Chiyo': the surname first
_INITIALS_REACH = 40  # characters read before and after an initials candidate for its context


def name_initials(name: str) -> set[str]:
    """Initials (upper case) a person's name of 2-3 words is written with: first letters in order
    ('Chiyo K. Takahashi': 'CKT', 'CT'), given name first when the surname leads ('Takahashi, Chiyo': 'CT')."""
    found = _NAME_WORD.findall(name)
    if not 2 <= len(found) <= 3:
        return set()
    if _INVERTED.match(name):
        found = found[1:] + found[:1]
    letters = [w[0].upper() for w in found]
    return {"".join(letters), letters[0] + letters[-1]}


_AGE = r"\d{1,3}[ \t-]*(?i:y/o|y\.o\.|yo|yr|year|y|m|f)(?![\p{L}])"  # '41F', '53 Y/O', '46-year'


@lru_cache(maxsize=8)
def _initials_context(verbs: tuple[str, ...]) -> tuple[regex.Pattern, regex.Pattern, regex.Pattern | None]:
    """(before, age, verb): a note's subject. After 'pt' / 'patient' (':' or '(' between) when a stop, ';',
    ',' or ')' or the line end follows ('Pt CT, 41F', 'pt (CT) 20yo', 'PT CT; completed by'); before 'is a
    41' or an age in brackets or after a comma ('CT is a 41 yo', 'CT (41 F) with'); before a verb of [merge]
    patient_initials_verbs ('CT states')."""
    before = regex.compile(r"(?<![\p{L}\d])(?i:pt|patient)\.?[ \t]*[:(]?[ \t]*\Z")
    age = regex.compile(r"(?:[ \t]+(?i:is|was)[ \t]+(?i:an?)[ \t]+" + _AGE + r"|[ \t]*\([ \t]*" + _AGE + r"|,[ \t]*" + _AGE + ")")
    verb = regex.compile(r"[ \t]+(?i:" + "|".join(regex.escape(v) for v in verbs) + r")(?![\p{L}\d])") if verbs else None
    return before, age, verb


def initials_of(spans: Sequence[Span], text: str, label: str = "PATIENT") -> set[str]:
    """The initials of the note's names of this label (name_initials of each)."""
    out: set[str] = set()
    for s in spans:
        if s.label == label:
            out |= name_initials(text[s.start:s.end])
    return out


def patient_initials(spans: Sequence[Span], text: str, verbs: Sequence[str], not_initials: Iterable[str],
                     known: Iterable[str] = ()) -> list[Span]:
    """The patient's initials as PATIENT where the note makes them its subject: a 2-3 letter word (all
    capitals or all lower case) that is the initials of a PATIENT name of the note, in brackets right
    after that name ('Pt: Takahashi, Chiyo (CT)'), after 'pt' ('Pt CT, 41F') or before an age or a verb
    ('CT is a 41 yo', 'CT states'; _initials_context); after 'pt' or before a verb never a word of `not_initials`
    ('pt states'). An untagged word becomes a span, a DOCTOR span on it PATIENT. The word must match the name's initials (a middle initial the name did not give allowed: 'CKT')
    and stand in such a context, so 'CT' of a scan stays. `known`: initials of the patient's names in their
    other notes (propagation.propagate_patient) or the note's metadata (metadata_initials)."""
    initials = initials_of(spans, text) | set(known)
    if not initials:
        return list(spans)  # no name of the patient: nothing to look for
    before, age, verb = _initials_context(tuple(verbs))
    ends = {s.end for s in spans if s.label == "PATIENT"}
    skip = _upper_words(tuple(not_initials))

    def subject(a: int, b: int) -> bool:
        if text[a - 1:a] == "(" and text[b:b + 1] == ")" and _blanks_back(text, a - 1) in ends:
            return True  # right after the name: even 'PA' of Pamela Adomah
        word = text[a:b]
        exact = word.upper() in initials  # not with a middle initial the name did not give
        if (not exact and is_function_word(word)) or (word.islower() and _dictionary_word(word)):
            return False  # 'SHE IS A 67 YO' of Sarah Evans; 'son states' of S. O. N.
        if age.match(text, b, b + _INITIALS_REACH):
            return True  # 'MS is a 34 y/o', 'svk is a 46-y/o': the subject, whatever the letters
        if not exact and (word.islower() or _dictionary_word(word)):
            return False  # a middle initial in lower case or making a word only before an age: 'MOM WANTS'
        if word.upper() in skip or is_function_word(word):
            return False  # 'pt states': the cue itself; 'he states', 'pt on'
        return bool((verb is not None and verb.match(text, b, b + _INITIALS_REACH))
                    or (before.search(text, max(0, a - _INITIALS_REACH), a) and _CLOSED.match(text, b, b + _INITIALS_REACH)))

    return _tag_initials(spans, text, initials, "PATIENT", subject, middle=True)


@lru_cache(maxsize=32)
def _upper_words(found: tuple[str, ...]) -> frozenset[str]:
    """The words in upper case, once per configured list (not per note)."""
    return frozenset(w.upper() for w in found)


def not_clinician_initials(opts: MergeOptions) -> tuple[str, ...]:
    """Words never a clinician's initials at a line end or in a dictation line: [merge] clinical_not_initials
    (routes, O2 devices: 'RA', 'NC') and the single words of propagate_dosing_cues ('PO', 'BID', 'mg')."""
    return tuple(opts.clinical_not_initials) + tuple(c for c in opts.propagate_dosing_cues if c.isalpha())


_KEYED = regex.compile(r"[ \t]*=[ \t]*")  # 'FS = FRANCINE SOWA, RN': an initials key
_LINE_END_AFTER = regex.compile(r"[ \t]*$", regex.MULTILINE)
_COLUMN_BEFORE = regex.compile(r"(?:[ ]{2}|\t|\|[ \t]*)\Z")  # a column: two blanks, a tab or '|' before
_DICTATION_BEFORE = regex.compile(r"(?:^|\n)[ \t]*(?:\p{L}{2,4}[ \t]*/[ \t]*){0,3}\Z")  # 'GM/ak/9912' lines
_DICTATION_AFTER = regex.compile(r"[ \t]*/")
_SIGNER_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:by|per|tech|attending|supervising)[ \t]*:?[ \t]*\Z")
_CLOSED = regex.compile(r"[ \t]*(?:[,;.)]|$)", regex.MULTILINE)


def doctor_initials(spans: Sequence[Span], text: str, not_initials: Iterable[str],
                    known: Iterable[str] = (), clinical: Iterable[str] = ()) -> list[Span]:
    """Clinicians' initials as DOCTOR where a note signs with them: a 2-3 letter word (all capitals or all
    lower case) that is the initials of a DOCTOR name of the note (or, `known`, of the patient's other
    notes) before '= ' and that name ('FS = FRANCINE SOWA, RN'), ending a line after a column break
    ('... TURNED L SIDE  FS'), in a dictation line ('GM/ak/99'), or after 'by', 'per', 'tech', 'attending'
    before a stop or the line end ('Tech GMW.'). `not_initials`: words never taken for initials (credentials
    and roles: 'MD', 'RN'; [merge] not_initials); `clinical` (not_clinician_initials): routes, frequencies, O2
    devices and units never at a line end or in a dictation line ('SpO2 97%  RA', '25 mg  BID'), nor a lower-case
    function or three-letter dictionary word ('and/or'). An untagged word becomes a span; a span on it keeps its label."""
    starts = {s.start for s in spans if s.label == "DOCTOR"}

    def signs(a: int, b: int) -> bool:
        key = _KEYED.match(text, b, b + _INITIALS_REACH)
        if key and key.end() in starts:
            return True
        word = text[a:b]
        if word.islower() and (is_function_word(word) or _dictionary_word(word)):
            return False  # 'and/or': words, not a signature
        lo = max(0, a - _INITIALS_REACH)
        if word.upper() not in clinical_words:
            if _LINE_END_AFTER.match(text, b, b + _INITIALS_REACH) and _COLUMN_BEFORE.search(text, lo, a):
                return True
            if _DICTATION_BEFORE.search(text, lo, a) and (_DICTATION_AFTER.match(text, b, b + _INITIALS_REACH) or text[a - 1:a] == "/"):
                return True
        return bool(_SIGNER_BEFORE.search(text, lo, a) and _CLOSED.match(text, b, b + _INITIALS_REACH))

    skip = _upper_words(tuple(not_initials))
    initials = {i for i in initials_of(spans, text, "DOCTOR") | set(known) if i not in skip}
    if not initials:
        return list(spans)  # no clinician's name: nothing to look for
    clinical_words = _upper_words(tuple(clinical))
    return _tag_initials(spans, text, initials, "DOCTOR", signs, relabel=False, skip=skip)


# A flowsheet row: a time opens the line ("2300", "6:30 PM", "midnight"), a column break after it, and the row
# ends after another column break (two blanks, a tab, '|') in a 2-3 letter word of one case (round 13). The
# literal "\n" first (and a look at the next character): the scan jumps from line to line, 5x faster than "^" with
# MULTILINE or "\A|\n"; the first line is matched apart. Rows are bounded by their line.
_FLOW_TAIL = (r"[ \t]*(?:\d{1,2}:?\d{2}(?:[ ]?[AaPp][Mm])?|\d{1,2}[ ]?[AaPp][Mm]|[Mm]idnight|MIDNIGHT|[Nn]oon|NOON)"
              r"(?:[ ]{2}|\t)([^\n]*?)(?:[ ]{2}|\t|\|[ \t]*)([A-Z]{2,3}|[a-z]{2,3})[ \t]*(?=\n|\Z)")
_FLOW_ROW = re.compile(r"\n(?=[ \t]*[\dMmNn])" + _FLOW_TAIL)
_FLOW_FIRST = re.compile(_FLOW_TAIL)  # the first line's row, matched at 0
_ROWS_NEEDED = 2  # a note signs its rows: one word ends at least two rows with different entries


def flowsheet_initials(spans: Sequence[Span], text: str, not_initials: Iterable[str],
                       clinical: Iterable[str] = ()) -> list[Span]:
    """The initials that sign a flowsheet's rows as DOCTOR, whoever's they are (round 13: most clinicians who
    sign rows are named nowhere in the patient's notes, so doctor_initials cannot know them): the 2-3 letter
    word ending a row that a time opens (_FLOW_ROW: '2300  turned L side  QV', '6:30 PM  cousin at bedside  qv'),
    in a note where one such word ends two rows with different entries (a signer; not 'Site  CDI' twice, nor
    'Rhythm  SR' / 'Rhythm  AF': column values; review13n). Never a word of `not_initials` or `clinical`
    (not_clinician_initials: 'SpO2 97%  RA'), nor a frequent, dictionary or medical word ('BM', 'CC', 'pin'),
    and those never count as the signer. Words inside a span are left alone."""
    if "  " not in text and "\t" not in text and "|" not in text:
        return list(spans)  # no column break: no row (a literal prefilter)
    first = _FLOW_FIRST.match(text)
    matches = ([first] if first else []) + list(_FLOW_ROW.finditer(text))
    if len(matches) < _ROWS_NEEDED:
        return list(spans)
    skip = _upper_words(tuple(not_initials)) | _upper_words(tuple(clinical))
    rows = [m for m in matches if m.group(2).upper() not in skip and not _known_word(m.group(2))]
    entries: dict[str, set[str]] = {}  # a candidate word -> the different entries it ends
    for m in rows:
        entries.setdefault(m.group(2).upper(), set()).add(" ".join(m.group(1).split()).lower())
    if not rows or max(map(len, entries.values())) < _ROWS_NEEDED:
        return list(spans)  # no word signs two different entries: the row ends are column values ('Rhythm  AF')
    ordered = sort_spans(spans)
    starts = [s.start for s in ordered]
    added: list[Span] = []
    for m in rows:
        a, b = m.span(2)
        i = bisect_right(starts, b - 1)
        if i > 0 and ordered[i - 1].end > a:
            continue  # inside another span (known initials, a CRF span)
        added.append(Span(a, b, "DOCTOR", "initials:propagate", 0.5))
    return sort_spans(list(spans) + added) if added else list(spans)


def _known_word(word: str) -> bool:
    """A frequent, dictionary or medical word ('BM', 'cc', 'pin'): too often a row's own last word."""
    low = word.lower()
    return is_frequent(low) or low in words("english_word") or low in words("medical_word")


# A dictation trailer line (_dictation_line); <L> a letter, <D> a digit, <l> and <d> the same inside a class.
_DICTATION = (r"^[ \t]*(?P<run><L>{2,4}(?:[ \t]*[/:][ \t]*<L>{2,4}(?![<l><d>])){0,3})"
              r"(?P<job>[ \t]*[/:][ \t]*<L>?<D>[<d>-]*)?[ \t]*(?:\n[ \t]*)?"
              r"(?i:<keys>)[ \t]*:?[ \t]*(?:<D>{1,4}[/.-]|<L>{3,9}\.?[ \t]+<D>)")
_CLASSES = {False: {"<L>": r"\p{L}", "<l>": r"\p{L}", "<D>": r"\d", "<d>": r"\d"},
            True: {"<L>": "[A-Za-z]", "<l>": "A-Za-z", "<D>": "[0-9]", "<d>": "0-9"}}


@lru_cache(maxsize=8)
def _dictation_line(keys: tuple[str, ...], ascii_text: bool = False) -> regex.Pattern | re.Pattern | None:
    r"""A dictation trailer: a line of initials groups (2-4 letters) joined by '/' or ':', maybe a job number
    group, then, on the same line or the next, a dictation date key and a date ('GM/ak/9912', 'TCD/MC/TR',
    'NW:GBN:51-52' before 'D: 3/29', 'DD 12-01-08', 'Dictated: June 19'). `ascii_text`: the same pattern for
    ASCII texts only, as a stdlib pattern (\p{L} is [A-Za-z] there, \d [0-9]; ~3x faster, round 12); None
    when a key is not ASCII (its case folding could match an ASCII letter: the generic pattern serves)."""
    if not keys or (ascii_text and not all(k.isascii() for k in keys)):
        return None
    engine = re if ascii_text else regex
    source = _DICTATION
    for token, cls in _CLASSES[ascii_text].items():
        source = source.replace(token, cls)
    alternatives = "|".join(engine.escape(k) for k in sorted(keys, key=len, reverse=True))
    return engine.compile(source.replace("<keys>", alternatives), engine.MULTILINE)


_GROUP = regex.compile(r"\p{L}{2,4}")


def dictation_initials(spans: Sequence[Span], text: str, keys: Sequence[str]) -> list[Span]:
    """The initials of a dictation trailer as DOCTOR (the dictating clinician's and the transcriptionist's:
    'GM/ak/994606' then 'D: 3/29/2009', 'ctv/dr   DD: 1/30/11'): two groups or more, or one before a job
    number, on a line of their own followed by a dictation date key of [merge] dictation_keys. Groups inside
    another span are left alone."""
    keys = tuple(keys)
    line = (text.isascii() and _dictation_line(keys, True)) or _dictation_line(keys)
    if line is None:
        return list(spans)
    ordered: list[Span] | None = None
    added: list[Span] = []
    for m in line.finditer(text):
        groups = list(_GROUP.finditer(text, *m.span("run")))
        if len(groups) < 2 and m.group("job") is None:
            continue
        if ordered is None:  # sorted at the first trailer: most notes have none
            ordered = sort_spans(spans)
            starts = [s.start for s in ordered]
        for g in groups:
            a, b = g.span()
            i = bisect_right(starts, b - 1)
            if i > 0 and ordered[i - 1].end > a:
                continue
            added.append(Span(a, b, "DOCTOR", "initials:propagate", 0.5))
    return sort_spans(list(spans) + added) if added else list(spans)


_CANDIDATE = regex.compile(r"(?<![\p{L}\d'’.-])(?:\p{Lu}{2,3}|\p{Ll}{2,3})(?![\p{L}\d'’-])")  # a 2-3 letter word
_ASCII_INITIALS = re.compile(r"[A-Z]{2,3}|[a-z]{2,3}")  # an ASCII word _CANDIDATE matches (letters, one case)
_ASCII_PAIR = re.compile(r"[A-Z]{2}")


@lru_cache(maxsize=64)
def _ascii_words_from(letter: str) -> re.Pattern:
    r"""On an ASCII text, exactly the _CANDIDATE words (2-3 letters of one case) that open with this ASCII letter:
    a stdlib pattern with the letter first, so the scan skips to it, and _CANDIDATE's look-behind after it (on
    ASCII text \p{L} is [A-Za-z], \d [0-9], and no ’). One per letter (52 at most), not one per note's initials:
    compiling costs 100-250 us, more than a note's scan."""
    rest = "[A-Z]" if letter.isupper() else "[a-z]"
    return re.compile(letter + r"(?<![A-Za-z0-9'.\-].)" + rest + r"{1,2}(?![A-Za-z0-9'\-])", re.DOTALL)


def _initials_words(text: str, spelt: set[str], pairs: set[str]) -> Iterator[tuple[int, int, str]]:
    """(start, end, word) of the whole 2-3 letter words (_CANDIDATE) that are a word of `spelt` or three letters
    whose first and last (upper case) are a pair of `pairs`, in text order: on an ASCII text only the words
    opening with a letter those can open with (_ascii_words_from, round 12: the generic scan made every 2-3
    letter word a match object), else the generic scan; then set lookups. Linear whatever the names."""
    if text.isascii():
        letters = {w[0] for w in spelt if _ASCII_INITIALS.fullmatch(w)}
        letters.update(c for p in pairs if _ASCII_PAIR.fullmatch(p) for c in (p[0], p[0].lower()))
        found = [(m.start(), m.end(), m.group()) for c in letters for m in _ascii_words_from(c).finditer(text)]
        found.sort()
    else:
        found = [(m.start(), m.end(), m.group()) for m in _CANDIDATE.finditer(text)]
    for a, b, w in found:
        if w in spelt or (len(w) == 3 and (w[0] + w[2]).upper() in pairs):
            yield a, b, w


def _tag_initials(spans: Sequence[Span], text: str, initials: set[str], label: str, context, relabel: bool = True,
                  middle: bool = False, skip: frozenset[str] | set[str] = frozenset()) -> list[Span]:
    """Whole-word occurrences of `initials` (all capitals or all lower case; `middle`: two-letter ones also
    with a middle initial the name did not give between, 'CKT' or 'ckt' of 'CT', which `context` must judge:
    a middle letter makes words of them, 'she' of S. E.) for which `context(a, b)` holds as `label` spans (source
    'initials:propagate'), but words of `skip` (upper case); with `relabel`, a person span exactly on one takes
    the label."""
    if not initials:
        return list(spans)
    spelt = set(initials) | {i.lower() for i in initials}
    pairs = {i for i in initials if len(i) == 2} if middle else set()
    by_place: dict[tuple[int, int], int] | None = None
    out = list(spans)
    added: list[Span] = []
    for a, b, w in _initials_words(text, spelt, pairs):
        if w.upper() in skip or not context(a, b):
            continue
        if by_place is None:  # built at the first word kept: most notes have none
            by_place = {(s.start, s.end): k for k, s in enumerate(spans)}
            ordered = sort_spans(spans)
            starts = [s.start for s in ordered]
        k = by_place.get((a, b))
        if k is not None:
            if relabel and spans[k].label in ("PATIENT", "DOCTOR") and spans[k].label != label:
                out[k] = spans[k].with_label(label)
            continue
        i = bisect_right(starts, b - 1)
        if i > 0 and ordered[i - 1].end > a:
            continue  # inside another span
        added.append(Span(a, b, label, "initials:propagate", 0.5))
    return sort_spans(out + added) if added else out


def _dictionary_word(word: str) -> bool:
    """A three-letter dictionary word ('she', 'MOM', 'son'): initials only where they are exactly the name's
    and, in lower case, never (two letters are too often both: 'CT', 'MS')."""
    return len(word) == 3 and word.lower() in words("english_word")


def metadata_initials(known_phi: Iterable[tuple[str, str]], label: str) -> frozenset[str]:
    """Initials of the note's metadata names of this label (Note.known_phi): one value ('Quenby Tarrow') or
    a first and a last name given apart, in that order ('Quenby', 'Tarrow': 'QT'). Memoised: a patient's
    notes come together and carry the same metadata."""
    return _metadata_initials(tuple(map(tuple, known_phi)), label)


@lru_cache(maxsize=256)
def _metadata_initials(known_phi: tuple[tuple[str, str], ...], label: str) -> frozenset[str]:
    """metadata_initials of a hashable copy of the metadata."""
    values = [v for v, lab in known_phi if lab == label and v.strip()][:4]
    out: set[str] = set()
    for i, v in enumerate(values):
        out |= name_initials(v)
        for w in values[i + 1:]:
            out |= name_initials(f"{v} {w}")
    return frozenset(out)


def _blanks_back(text: str, pos: int) -> int:
    """`pos` moved back over the blanks before it."""
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos
