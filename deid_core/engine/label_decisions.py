"""Label decisions before and after the merge policy (issue 14, unseen layouts): where a contextual
rule knows the label better than the CRF (a number after its fax cue word is a FAX, a town before its
state and ZIP is a CITY), where a CRF span runs over a line break, and where an identifier was cut
inside its word, where a person span took in a role or kin word or a second name joined by
'and', where a role or kin word was read as a login, and where a field key names whose name it is
('Patient: X', 'PCP: X'), and where a patient's title stands before a name ('Mr. X'). Configured by [merge]
rule_label_sources, crf_split_lines, whole_word_labels, crf_name_lead_words, patient_field_keys,
doctor_field_keys, patient_titles, hospital_head_words and organization_head_words."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate

import regex

from deid_core import taxonomy
from deid_core.engine.propagation import (
    back_over,
    is_crf,
    may_end_with,
    phrase_alternation,
    phrase_ends,
)
from deid_core.gazetteers import is_common, is_frequent, is_name
from deid_core.spans import Span, source_in

_WORD_CHARS = frozenset("._-")
_PERSON = frozenset({"PATIENT", "DOCTOR"})
_AND = regex.compile(r"[ \t]+(?:and|AND|&)[ \t]+")
_LEAD = regex.compile(r"(\p{Ll}+)[ \t]+(?=\p{Lu})")
_NAME_PART = regex.compile(r"\p{L}[\p{L}'’-]*")  # round 18: compiled once, not looked up per call
_LETTER_RUN = regex.compile(r"\p{L}+")


def trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """(start, end) without surrounding blanks and punctuation, None when no letter or digit is left."""
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return (start, end) if end > start else None


def split_crf_lines(spans: Sequence[Span], text: str) -> list[Span]:
    """CRF spans cut at line breaks: a letterhead's hospital line and the town line under it are two
    places, each part keeps the CRF's label and confidence."""
    out: list[Span] = []
    for s in spans:
        if not is_crf(s) or "\n" not in text[s.start:s.end]:
            out.append(s)
            continue
        pos = s.start
        for line in text[s.start:s.end].split("\n"):
            part = trimmed(text, pos, pos + len(line))
            if part:
                out.append(Span(part[0], part[1], s.label, s.source, s.confidence))
            pos += len(line) + 1
    return out


def trim_person_spans(spans: Sequence[Span], text: str, lead_words: frozenset[str]) -> list[Span]:
    """Person spans of any source (CRF, name net, title rules: the union merge joins them) cut where
    they took in more than a name: two names joined by 'and' are two spans ('ZV and aimee lee'), a piece
    that is one dictionary word and no known name is dropped ('Auvil and colleagues'), and a lower-case
    role or kin word before a capitalised name is left out ('cousin Miloslav', 'hospitalist Arlette
    Osei'; 'COUSIN, GEORGES' and 'Georges Cousin' stay whole), with any other span on that word alone
    but a PROFESSION (the role word itself may be PHI)."""
    out: list[Span] = []
    dropped: set[tuple[int, int]] = set()
    for s in spans:
        if s.label not in _PERSON:
            out.append(s)
            continue
        pos, cuts = s.start, []
        for m in _AND.finditer(text, s.start, s.end):
            cuts.append((pos, m.start()))
            pos = m.end()
        cuts.append((pos, s.end))
        for a, b in cuts:
            lead = _LEAD.match(text, a, b)
            if lead and lead.group(1) in lead_words:
                dropped.add(lead.span(1))
                a = lead.end()
            piece = text[a:b]
            if len(cuts) > 1 and piece.isalpha() and is_common(piece) and not is_name(piece):
                continue
            if (a, b) == (s.start, s.end):
                out.append(s)
            elif b > a:
                out.append(Span(a, b, s.label, s.source, s.confidence))
    if not dropped:
        return out
    return [s for s in out if s.label == "PROFESSION" or (s.start, s.end) not in dropped]


def drop_role_word_logins(spans: Sequence[Span], text: str, words: frozenset[str]) -> list[Span]:
    """USERNAME spans that are a role or kin word ('consent signed by fiance.') dropped at the merge, so
    the login rule keeps its CRF features as trained while its output loses the word (and propagation
    cannot spread it through the patient's notes)."""
    return [s for s in spans if s.label != "USERNAME" or text[s.start:s.end].lower() not in words
            or _inside_word(text, s.start, s.end)]


def _inside_word(text: str, start: int, end: int) -> bool:
    """Is text[start:end] cut out of a longer word ('u' of 'u307621': whole_words grows it later)?"""
    return _whole_word(text, start, end) != (start, end)


def _whole_word(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end] grown to the word it was cut inside (letters, digits, and dots, dashes,
    underscores between them)."""
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in _WORD_CHARS and start - 1 > 0
                         and text[start - 2].isalnum()):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] in _WORD_CHARS and end + 1 < len(text)
                               and text[end + 1].isalnum()):
        end += 1
    return start, end


_MIN_PART = 2  # parts_outside keeps a remainder of at least this many characters
_DELIMITED = frozenset({"CONTACT", "ID"})  # categories whose value a rule's pattern delimits (numbers, addresses)


def rule_labels_win(spans: Sequence[Span], text: str, sources: Sequence[str]) -> list[Span]:
    """A CRF span of another label overlapping a span of the deciding rules (`sources`, globs over
    rule ids) keeps only its parts outside the rule span, so the rule's label and extent stand; so
    does a CRF span of the same label that runs past a deciding rule's number or address into a cue word
    (CONTACT, ID: 'Fax +1 555 201 3344', 'MR 0012345'; the union would take the cue word in)."""
    if not sources:
        return list(spans)
    crf = [is_crf(s) for s in spans]
    deciding = [s for s, c in zip(spans, crf, strict=True) if not c and source_in(s.source, sources)]
    if not deciding:
        return list(spans)
    digits = _DigitCount(text)
    overlapping = _Overlaps(deciding)
    out: list[Span] = []
    for s, c in zip(spans, crf, strict=True):
        rivals = [r for r in overlapping(s) if r.label != s.label or _runs_past(s, r, text, digits)] if c else None
        out.extend(parts_outside(s, rivals, text) if rivals else [s])
    return out


class _Overlaps:
    """The spans overlapping a query span, found by bisection (not every CRF span against every rule span: a long
    note of many numbers that both taggers find)."""

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = sorted(spans, key=lambda r: r.start)
        self.starts = [r.start for r in self.spans]
        self.reach = list(accumulate((r.end for r in self.spans), max))  # the furthest end among the first k+1

    def __call__(self, s: Span) -> list[Span]:
        """The spans sharing a character with `s`."""
        found = []
        k = bisect_left(self.starts, s.end) - 1  # spans starting before s ends, latest first
        while k >= 0 and self.reach[k] > s.start:  # none before k reaches into s once the running end stops short
            if self.spans[k].end > s.start:
                found.append(self.spans[k])
            k -= 1
        return found


class _DigitCount:
    """Digits in text[a:b] in constant time, the prefix counts made on the first question (linear: a crafted
    long CRF span over many rule spans asks once per pair)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.prefix: list[int] | None = None

    def between(self, a: int, b: int) -> int:
        """How many digits text[a:b] holds."""
        if self.prefix is None:
            self.prefix = [0, *accumulate(ch.isdigit() for ch in self.text)]
        return self.prefix[b] - self.prefix[a]


def _runs_past(s: Span, r: Span, text: str, digits: _DigitCount) -> bool:
    """Does `s` cover the rule span `r` of its own label (a category whose extent the rule delimits) and more,
    only whole words without a digit ('Fax', 'MR'; not more digits of a grouped number: '2857 [8937]')?"""
    if not (s.start <= r.start and s.end >= r.end and s.end - s.start > r.end - r.start
            and taxonomy.category_of(r.label) in _DELIMITED):
        return False
    return (not (s.start < r.start and text[r.start - 1].isalnum()) and not (r.end < s.end and text[r.end].isalnum())
            and digits.between(s.start, r.start) + digits.between(r.end, s.end) == 0
            and _kept(text, s.start, r.start) and _kept(text, r.end, s.end))


def _kept(text: str, a: int, b: int) -> bool:
    """Would parts_outside keep text[a:b] (nothing of it a letter or digit, or a piece of 2 characters or more)?
    A one-letter remainder ('4412983 K') would be dropped and leave a character of the id untagged."""
    part = trimmed(text, a, b)
    return part is None or part[1] - part[0] >= _MIN_PART


def parts_outside(s: Span, rivals: Sequence[Span], text: str) -> list[Span]:
    """The parts of `s` outside every rival span, trimmed of blanks and punctuation, of 2 characters or more."""
    pieces, pos = [], s.start  # one sweep over the rivals by start (linear in their number, not quadratic)
    for r in sorted(rivals, key=lambda r: r.start):
        if min(r.start, s.end) > pos:
            pieces.append((pos, min(r.start, s.end)))
        pos = max(pos, r.end)
    if s.end > pos:
        pieces.append((pos, s.end))
    out: list[Span] = []
    for a, b in pieces:
        part = trimmed(text, a, b)
        if part and part[1] - part[0] >= _MIN_PART:
            out.append(Span(part[0], part[1], s.label, s.source, s.confidence))
    return out


def whole_words(spans: Sequence[Span], text: str, labels: Sequence[str]) -> list[Span]:
    """Spans of these labels (user ids) grown to the whole word they were cut inside: 'gracem' of
    'gracem9', 'u' of 'u307621' (letters, digits, dots, dashes, underscores; never over '@')."""
    if not labels:
        return list(spans)
    out: list[Span] = []
    for s in spans:
        if s.label in labels:
            start, end = _whole_word(text, s.start, s.end)
            if (start, end) != (s.start, s.end):
                s = Span(start, end, s.label, s.source, s.confidence)
        out.append(s)
    return _drop_covered(out)


def _drop_covered(spans: list[Span]) -> list[Span]:
    """Spans left overlapping after growth: keep the first of each overlapping run, grown over the rest."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda x: (x.start, -x.end)):
        if out and s.start < out[-1].end:
            last = out[-1]
            if s.end > last.end:
                out[-1] = Span(last.start, s.end, last.label, last.source, last.confidence)
            continue
        out.append(s)
    return out


_KEY_REACH = 60  # characters looked at before a person span for its field key
# A capitalised word of the name that the span left out, between a key's separator and the span; never a
# clinician's title or "by" ('Name: Dr. Ann [Lee]' is no patient's name).
_GAP_WORD = r"(?!(?:dr|doctor|prof|professor|by)(?![\p{L}\d]))(?-i:\p{Lu}[\p{L}'’.-]*[ \t]+)"


@lru_cache(maxsize=8)
def _field_key(keys: tuple[str, ...]) -> regex.Pattern | None:
    """A field key right before the end of the searched text: the key opens its line or follows a
    column break ('|', ';', '(', a tab, two blanks, a sentence end, ' - '), then ':' or '#' or a spaced
    '-' and up to two capitalised words of the same name the span left out ('Pt name: Ann K. [Quell]'),
    or blanks alone ('Ordered by [X]'; 'Patient Care Coordinator [X]' and 'Re-Evaluated By [X]' are no keys)."""
    if not keys:
        return None
    return regex.compile(r"(?:^|[|;(\t]|[ ]{2}|[.:][ ]|[ ]-[ ])[ \t]*(?:" + phrase_alternation(keys)
                         + r")(?![\p{L}\d])\.?(?:[ \t]*[:#][ \t]*" + _GAP_WORD + r"{0,2}|[ \t]+-[ \t]+"
                         + _GAP_WORD + r"{0,2}|[ \t]+)\Z", regex.IGNORECASE | regex.MULTILINE)


def person_field_labels(spans: Sequence[Span], text: str, patient_keys: Sequence[str],
                        doctor_keys: Sequence[str], roles: frozenset[str] = frozenset(),
                        kin: frozenset[str] = frozenset()) -> list[Span]:
    """Person spans (PATIENT or DOCTOR, any source) labelled by the field key right before them, as an
    attribute-value pair says whose name it is (seed 000): 'Patient: X', 'RE: X', 'Pt name: X' give
    PATIENT; 'PCP: X', 'Referring physician: X', 'Ordered by X' give DOCTOR. The key must open its line
    or follow a column break, so 'Provider name: X' is no patient key. A DOCTOR span that a role or
    credential word (`roles`) follows stays DOCTOR after a patient key ("Caller: X RN from the clinic"), a PATIENT
    span that a kin word or 'patient' (`kin`) follows stays PATIENT after a clinician key ("Sent by: X (daughter)")."""
    if not (patient_keys or doctor_keys):
        return list(spans)
    keyed = [(_field_key(tuple(patient_keys)), "PATIENT"), (_field_key(tuple(doctor_keys)), "DOCTOR")]
    out: list[Span] = []
    for s in spans:
        if s.label in _PERSON:
            lo = max(0, s.start - _KEY_REACH)
            for pattern, label in keyed:
                if label != s.label and pattern is not None and pattern.search(text, lo, s.start):
                    if not (_role_after(text, s.end, roles) if label == "PATIENT" else _kin_after(text, s.end, kin)):
                        s = s.with_label(label)
                    break
        out.append(s)
    return out


_PLACE_NAMES = frozenset({"HOSPITAL", "ORGANIZATION", "LOCATION-OTHER", "CITY"})
_HEAD_REACH = 60  # characters at a place span's end read for its head (linear on a crafted long span)
_LAST_WORDS = regex.compile(r"(\p{L}+)(?:[ \t]+(\p{L}+))?[^\p{L}]*\Z")


def place_heads(hospital_words: Sequence[str], organization_words: Sequence[str]) -> dict[str, str]:
    """Head word or two (lower case) -> label, for place_head_labels ([merge] hospital_head_words and
    organization_head_words; a head in both lists is a hospital)."""
    return {**{w.lower(): "ORGANIZATION" for w in organization_words}, **{w.lower(): "HOSPITAL" for w in hospital_words}}


def place_head_labels(spans: Sequence[Span], text: str, heads: dict[str, str]) -> list[Span]:
    """Named places (HOSPITAL, ORGANIZATION, LOCATION-OTHER, CITY; any source) labelled by their head word,
    the last word or two (`heads`: place_heads): 'South Quell General' and
    'Quell Nursing' are hospitals, 'Quell High School' and 'Quell Baptist Church' organizations (i2b2 2014
    keeps schools, churches and firms apart from the places of care)."""
    if not heads:
        return list(spans)
    out: list[Span] = []
    for s in spans:
        if s.label in _PLACE_NAMES and (m := _LAST_WORDS.search(text, max(s.start, s.end - _HEAD_REACH), s.end)):
            last = m.group(2) or m.group(1)
            label = heads.get(f"{m.group(1)} {m.group(2)}".lower()) if m.group(2) else None
            label = label or heads.get(last.lower())
            if label and label != s.label:
                s = s.with_label(label)
        out.append(s)
    return out


_KIN_REACH = 40  # characters read before and after a person span for a kin word
_TITLED = regex.compile(r"(?i:dr|doctor|prof|professor)\.?(?![\p{L}\d])")
_TITLE_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:dr|doctor|prof|professor)\.?[ \t]*\Z")  # 'Dr. Patel, his wife'


@lru_cache(maxsize=8)
def _kin_context(kin: tuple[str, ...]) -> tuple[regex.Pattern, regex.Pattern] | None:
    """(before, after): a kin word right before a person span ('his partner, X', 'granddaughter x'; a
    blank, ',' or ':' between, never ';', which ends a clause: 'consent signed by stepson; krista to
    follow up'), or right after it in brackets ('X (stepson) updated') or after a comma and a
    possessive ('X, her husband,')."""
    if not kin:
        return None
    words = phrase_alternation(kin)
    before = regex.compile(r"(?<![\p{L}\d'’-])(?:" + words + r")[ \t]*[,:]?[ \t]*\Z", regex.IGNORECASE)
    after = regex.compile(r"[ \t]*(?:\([ \t]*|,[ \t]*(?:his|her|their|the[ \t]+patient'?s|pt'?s)[ \t]+)(?:"
                          + words + r")(?![\p{L}\d'’-])", regex.IGNORECASE)
    return before, after


def kin_person_labels(spans: Sequence[Span], text: str, kin_words: Sequence[str]) -> list[Span]:
    """DOCTOR spans (any source) that a kin word names as a relative made PATIENT, as i2b2 2014 labels
    a patient's relatives: 'X (stepson) updated', 'lives with his partner, X,', 'granddaughter X arrived',
    'X, her husband'. A span opening with a clinician's title ('son Dr. X') or right after one stays."""
    context = _kin_context(tuple(kin_words))
    if context is None:
        return list(spans)
    before, after = context
    ends = phrase_ends(tuple(kin_words))
    out: list[Span] = []
    for s in spans:
        if s.label == "DOCTOR":
            lo = max(0, s.start - _KIN_REACH)
            # the kin word first (rare), and searched only where a kin word ends right before the span
            if ((may_end_with(text, back_over(text, s.start, lo, ",:"), ends) and before.search(text, lo, s.start))
                    or after.match(text, s.end, min(len(text), s.end + _KIN_REACH))) and not (
                    _TITLED.match(text, s.start) or _TITLE_BEFORE.search(text, lo, s.start)):
                s = s.with_label("PATIENT")
        out.append(s)
    return out


@lru_cache(maxsize=8)
def _recipient_cue(words: tuple[str, ...]) -> regex.Pattern | None:
    """A recipient word ('attn', 'ATTN:', 'Attention') as a word of its own, then blanks."""
    if not words:
        return None
    return regex.compile(r"(?<![\p{L}\d])(?:" + phrase_alternation(words) + r")(?![\p{L}\d])[.:]?[ \t]+",
                         regex.IGNORECASE)


def recipient_names(spans: Sequence[Span], text: str, words: Sequence[str]) -> list[Span]:
    """CRF spans that ran over a recipient cue ('FAX to 555 201 3344 attn Ann Quell', 'ATTN ANN QUELL'
    read as a street or a hospital) cut at the cue: what follows it is the person the fax is for, a
    DOCTOR span when it is one to three name words (no frequent or clinical word, no digit: 'attn
    Billing Office' keeps its span), and the part before keeps the CRF's label."""
    cue = _recipient_cue(tuple(words))
    if cue is None:
        return list(spans)
    lowered = text.lower()
    if not any(w.lower() in lowered for w in words):
        return list(spans)  # a literal prefilter: most notes have no recipient word
    out: list[Span] = []
    for s in spans:
        m = cue.search(text, s.start, s.end) if is_crf(s) and s.label not in _PERSON else None
        name = trimmed(text, m.end(), s.end) if m else None
        if m is None or name is None or not _name_words(text[name[0]:name[1]]):
            out.append(s)
            continue
        before = trimmed(text, s.start, m.start())
        if before and before[1] - before[0] >= 2:
            out.append(Span(before[0], before[1], s.label, s.source, s.confidence))
        out.append(Span(name[0], name[1], "DOCTOR", s.source, s.confidence))
    return out


def _name_words(piece: str) -> bool:
    """One to three words of letters (with "'" or '-'), none frequent or clinical: a person's name."""
    parts = piece.split()
    return (0 < len(parts) <= 3 and all(_NAME_PART.fullmatch(p) for p in parts)
            and not any(is_frequent(w) for w in _LETTER_RUN.findall(piece)))


_TITLE_REACH = 12  # characters read before a person span for its title ("Mrs. ", "Dear Ms "); [merge] clinician_roles are checked to fit (config/tables.py RoleWord)
_ROLE_AFTER = regex.compile(r"[ \t]*[,(]?[ \t]*(\p{L}+)")  # the word after a name: "Ms. Ann Quell, RN", "Ms. Quell (SW)"
# a kin word after a name: after ',' or '(' or one blank ("X (daughter)", "X, wife"; not a next column: "X  Patient: Y")
_KIN_AFTER = regex.compile(r"(?:[ \t]*[,(][ \t]*| )(\p{L}+)")


def _kin_after(text: str, end: int, kin: frozenset[str]) -> bool:
    """A kin word or 'patient' right after a name ('Sent by: Ann Quell (daughter)')."""
    m = _KIN_AFTER.match(text, end, min(len(text), end + 16)) if kin else None
    return m is not None and m.group(1).lower() in kin


@lru_cache(maxsize=8)
def _title_before(titles: tuple[str, ...], dot: bool = True) -> regex.Pattern | None:
    """One of `titles` as a word of its own, '.' optional (unless not `dot`), then blanks, at the end of the
    searched text."""
    if not titles:
        return None
    return regex.compile(r"(?<![\p{L}\d'’-])(?:" + phrase_alternation(titles) + (r")\.?" if dot else ")")
                         + r"[ \t]+\Z", regex.IGNORECASE)


def title_labels(spans: Sequence[Span], text: str, titles: Sequence[str], roles: frozenset[str]) -> list[Span]:
    """DOCTOR spans (any source) right after a patient's title, or opening with one, made PATIENT (round 14;
    i2b2 2014: clinicians are titled "Dr.", patients and their relatives "Mr."/"Ms."): "Mr. X is a 22 yo man",
    "Dear Ms. X,"; not when a role or credential word (`roles`: [merge] crf_name_lead_words and title_roles)
    follows the name ("Ms. Ann Quell, RN", "Mr. Quell (CRNA)")."""
    pattern = _title_before(tuple(titles))
    if pattern is None:
        return list(spans)
    out: list[Span] = []
    for s in spans:
        if (s.label == "DOCTOR" and (pattern.search(text, max(0, s.start - _TITLE_REACH), s.start)
                                     or _opens_with(pattern, text, s)) and not _role_after(text, s.end, roles)):
            s = s.with_label("PATIENT")
        out.append(s)
    return out


def clinician_labels(spans: Sequence[Span], text: str, titles: Sequence[str], roles: frozenset[str],
                     roles_before: Sequence[str] = ()) -> list[Span]:
    """PATIENT spans (any source) right after a clinician's title ("Dr. X", "Doctor X") or role (`roles_before`,
    round 15: "chaplain X"; no '.' after a role, which ends a sentence: "discussed with attending. X is a 45 yo") or
    followed by a role or credential word (`roles`, no kin word or title: "X, RN", "X (CRNA)") made DOCTOR (lead,
    round 14; i2b2 2014: the title or credential says who is the clinician, also when the patient shares the name:
    "Pt Jordan Lee ... reviewed by Dr. Jordan Park"). Runs before the relatives' decision, which makes a span beside
    a kin word PATIENT again."""
    patterns = [p for p in (_title_before(tuple(titles)), _title_before(tuple(roles_before), dot=False)) if p is not None]
    out: list[Span] = []
    for s in spans:
        if s.label == "PATIENT" and (any(p.search(text, max(0, s.start - _TITLE_REACH), s.start) for p in patterns)
                                     or _role_after(text, s.end, roles)):
            s = s.with_label("DOCTOR")
        out.append(s)
    return out


def _opens_with(pattern: regex.Pattern, text: str, s: Span) -> bool:
    """Does the span open with the title, then a name ('[Mr. Quell]')?"""
    gap = text.find(" ", s.start, min(s.end, s.start + _TITLE_REACH))
    return gap > 0 and pattern.search(text, s.start, gap + 1) is not None and gap + 1 < s.end


def _role_after(text: str, end: int, roles: frozenset[str]) -> bool:
    """A role or credential word right after a name ('Ms. Quell, RN', 'Mr. Quell NP')."""
    m = _ROLE_AFTER.match(text, end, min(len(text), end + 16))
    return m is not None and m.group(1).lower() in roles
