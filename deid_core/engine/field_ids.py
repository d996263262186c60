"""Field-word ids (issue 14, round 14): an identifier's label read from the field word before it on its
line ('MRN', 'Med Rec #', 'Unit No.', 'Acct', 'Policy', 'Member ID', 'Serial', 'NPI', 'Lic.'), one
table ([merge] id_fields: label -> field words) instead of one rule frame per layout. After the merge
policy, on the merged spans only (no scan of the note):

- an id span (category ID) is cut at a column break inside it (two blanks, a tab, ';', '|': 'X  NPI Y'
  is two ids), loses a field word it took in ('MR 3546262', 'N 181863DZ' of 'S/N'; not one glued inside
  an id another field word names: 'Accession: MR-21-004433'; words before it stay covered unless they are a
  model number or a device's make: 'Ames Lic 4455667'), and takes the label of the nearest field word
  before it on its line, a few words at most away with no digit between ('Medical Record Number: 003 93 182');
  with none right before it (separators only), a field word after it in brackets or after 'is' ('4455667
  (MRN)', '4455667 is her MRN') or ending the line above when it opens its line ('MRN:' / '  4455667') names
  it first; a writer's initials glued by '/' ('MR/cc/') are no field word;
- the reader's proposal (id-field-value) stands only right after a table word, and not when it is a clock
  time or time range with no number mark before it ('attended group 1500'; 'Group # 1230' stands);
- a CRF span of another label made of digits (a PHONE, FAX or DATE guess) right after a field word and
  its separator is that id ('Lic. 17342694', '(serial 2742-11-2051)', 'claim 15728720416'; a year range
  stays a DATE: 'Policy 2021-2022');
- an id span that is an age form ('73yo' after 'Assessment/Plan:') is the AGE it starts with;
- a one-word person span with a digit ('jdoe42') is a login, USERNAME; so is a word made of a person's name in
  the note ('ROBERTO AMESTOY / AMESTOYR') and a CRF DOCTOR capitals word after 'by' ending a mixed-case line
  ('Cosigned 3/4 by LVRB') that is no dictionary word nor part of a name in the note;
- an id string labelled by its field word gives that label to the spans of the same string elsewhere in
  the note ('Accession: X' ... 'Prior: X'); a field word right at one mention outranks one a few words away.
Spans of the deciding rules ([merge] rule_label_sources) keep their label: their context decided it."""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import regex

from deid_core import taxonomy
from deid_core.engine.note_text import may_contain
from deid_core.engine.propagation import is_crf
from deid_core.gazetteers import is_common, is_name
from deid_core.spans import Span, source_in

FIELD_RULE = "id-field-value"  # conf/rules/ids.toml: proposes the id after any field word; kept here only where one stands
_REACH = 48  # characters before an id span read for its field word (bounded: linear on crafted input)
_PERSON = frozenset({"DOCTOR", "PATIENT"})
_DIGIT_GUESSES = frozenset({"PHONE", "FAX", "DATE", "ROOM", "ZIP"})  # CRF labels a bare number after a field word may carry
_ROOM_GUESS = regex.compile(r"(?=(?:\D*+\d){5})[\d-]+")  # a CRF ROOM guess an id may be: five digits or more ('89891-340')
_LOCAL_PHONE = regex.compile(r"\d{3}-\d{4}")  # a local phone number ('261-1175'): no id form writes 3 then 4 digits
_AREA_CODE = regex.compile(r"(?<![\w/.(-])(?:\(\d{3}\)[ ]?|\d{3}[/.])$")  # its area code before it ('214/', '(214) ')
_RUN_REACH = 24  # characters an id span grows by on either side into the word it is glued in (linear on crafted input)
_NAMED_GUESSES = frozenset({"ROOM", "USERNAME"})  # CRF labels of a string a field word names an id elsewhere
_GROWN = frozenset({"ROOM"})  # a CRF guess of another label an id's glued piece may carry ('Job 39378-[476]')
# A column break inside an id span: two blanks, a tab, ';' or '|' (with the blanks around them).
_BREAK = regex.compile(r"[ \t]*[;|\t][ \t]*|[ ]{2,}")
# Between the ids of a list: a comma, 'and', 'or', '&' or a '/' with blanks ('1234567, 7654321', 'X and Y').
_COPULAS = frozenset({"is", "was", "are", "were"})
_LIST = regex.compile(r"[ \t]*+,[ \t]*+(?:(?i:and|or)[ \t]++)?|[ \t]++(?:(?i:and|or)|&|/)[ \t]++")
# Between a field word and its id: separators (':', '#', '=', '-', '(', '/', '.') and the words of a
# field name ('no', 'number', 'id', 'is'), blanks or tabs; nothing else.
_SEP = r"(?:[ \t]*+(?:[:#=(/.\-]|(?i:no|nbr|num|number|id|is|of)(?![\p{L}\d])))*+[ \t]*+"
_SEP_RE = regex.compile(_SEP)  # round 18: compiled once, not looked up per call
# An age form: 1-3 digits and 'yo', 'y/o', 'y', 'yr', '-year-old' (the span may end before the unit: '[48]y F').
_AGE = regex.compile(r"(\d{1,3})[ \t-]?(?i:yo|y/o|y\.o\.?|yrs?|y|years?)(?![\p{L}\d/])")
# A CRF DATE guess an id may be: six digits or more with blanks or dashes, in no date's shape ('2742-11-2051';
# not '2019', '03-04-2020', '2020-05-01', '2021-2022').
_DATE_GUESS = regex.compile(r"(?=(?:[ -]?\d){6})\d[\d -]*\d")
_DATE_SHAPE = regex.compile(r"(?:19|20)\d\d[ -][01]?\d[ -][0-3]?\d|[0-3]?\d[ -][0-3]?\d[ -](?:19|20)?\d\d"
                           r"|(?:19|20)\d\d[ ]?-[ ]?(?:19|20)?\d\d")  # and a year range ('2021-2022')
_PHONE = regex.compile(r"(?:1[ .-]?)?\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}")  # stays a PHONE or FAX
# A clock time or a time range ('1500', '0700-1900'): after a field word with no number mark ('#', 'No.',
# 'number', 'ID') before it, a session or a shift ('attended group 1500', 'Job: 0700-1900'), no id.
_CLOCK = regex.compile(r"(?:[01]\d|2[0-3])[0-5]\d(?:[ \t]*-[ \t]*(?:[01]\d|2[0-3])[0-5]\d)?")
_NUMBERED = regex.compile(r"(?:\#|(?<![\p{L}\d])(?i:no|nbr|num|number|id)\.?)[ \t:.\-]*$")
# A run of the characters _whole reads as glued (letters, digits, '.', '_', '-', '@'): a login is made of them
# (not 'VIN 1HGCM8263'), and a whole-word repeat of it starts a run.
_WORD_RUN = regex.compile(r"[\p{L}\p{N}._@-]+")
_MAKE_BEFORE = frozenset({"DEVICE", "VEHICLE"})  # labels whose field word follows a make and model, not a name
_LOGIN_MARK = regex.compile(r"[\d._]")  # a login's mark: a digit, a dot or an underscore
# Before a field word after its id: an opening bracket or parenthesis, or 'is' / 'was' and a possessive.
_AFTER = regex.compile(r"[ \t]*+(?:(?P<open>[(\[])[ \t]*+|[ \t,]*+(?i:is|was)[ \t]++(?i:the|his|her|their|pt'?s|"
                       r"patient'?s)?[ \t]*+)")
_CLOSE = regex.compile(r"[ \t]*+[:#]?[ \t]*+[)\]]")
_INITIALS = regex.compile(r"\p{Lu}{1,3}|\p{Ll}{1,3}")  # initials of one case ('MR', 'cc')
_INITIALS_BEFORE = regex.compile(r"(?:\p{Lu}{1,3}|\p{Ll}{1,3})/$")
_FIND_FORMS = 64  # up to this many login forms, one str.find each; more: one pass over the words
_LETTER_RUN = regex.compile(r"\p{L}{5,}")
_CAPITALS = regex.compile(r"\p{Lu}{4,8}")
_BY_END = regex.compile(r"(?<![\p{L}\d])(?i:by)[ \t]*+:?[ \t]*+$")
_LINE_END = regex.compile(r"[ \t]*+\.?[ \t]*+(?:\r?\n|$)")  # CRLF notes too
_LOGIN = regex.compile(r"(?=[\p{L}\d._-]*\d)(?=[\p{L}\d._-]*\p{L})[\p{L}\d][\p{L}\d._-]*")


# Round 17: a record number written right after a patient's or a hospital's name with no field word between ('Ann
# Lee 4455667', 'LEE, ANN (4455667)', 'MGH #123-45-67'): 6-10 digits (a capitals prefix may be glued) or 6+ digits
# in dash groups; no phone, social security number, date or dose.
_BARE_ID = regex.compile(r"(?:[A-Z]{1,3}-?)?(?:\d{6,10}|\d{2,4}(?:-\d{2,4}){1,3})(?![\w/@-]|[.,:]\d|[ \t]*+(?:%|"
                         r"(?i:mg|mcg|kg|ml|cc|units?|x|lbs?|cm|mm|min|hrs?)(?![\p{L}])))")
_LONG_NUMBER = regex.compile(r"\d{5,}")  # a CRF AGE guess of five digits or more is an id
_DATE_LEAD = regex.compile(r"(\d{6,12})(?:\t|[ ]{2,})[ \t]*+(?=\S)")  # a number before a column break
_SIGNS = " \t|•·*_#-"  # signs a CRF guess of a record number may take in ('· 4455667 ·')
_BELOW = regex.compile(r"[ \t]*+\r?\n[ \t]*+")  # a name ending its line; the number opening the next
_NAME_GAP = regex.compile(r"[ \t]*+(?:[,(\[|•·]|-(?=[ \t])|/(?=[ \t]))?[ \t]*+\#?[ \t]*+")
_SSN_SHAPE = regex.compile(r"\d{3}-\d{2}-\d{4}")
_DATE_DIGITS = regex.compile(r"(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:(?:19|20)?\d\d)"
                             r"|(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")  # '030450', '03041950', '19500304'
_TITLE_BEFORE = regex.compile(r"(?i:dr|doctor|prof)\.?[ \t]*+$")
_NAMES_AN_ID = frozenset({"PATIENT", "DOCTOR", "HOSPITAL"})  # labels of a name a record number may follow
_NAMED_ID_GUESSES = frozenset({"PHONE", "FAX", "ZIP", "ROOM", "DATE"})  # CRF readings of a bare record number
_BARE_RELABELLED = frozenset({"IDNUM", "MEDICALRECORD"})  # a CRF id reading it replaces (a LICENSE or ACCOUNT stands)


# An id span that is a count glued to its unit word ('2-day', '3-view', '12-month', '54-year-old': feature rules read
# them after 'Hospital', 'Acc', 'Medicaid', 'Member'), a dose ('1200000' of '1200000 units') or, with no field word
# right before it, a year range or a date with dashes ('HTN 2010-2015', 'Quell Hospital 03-04-2020'): no id (round 17).
_COUNT_UNIT = regex.compile(r"(\d{1,3})(?:-\p{Ll}+)+")
_YEARS_OLD = regex.compile(r"\d{1,3}-(?:years?|yrs?)-old")
_YEAR_RANGE = regex.compile(r"(?:19|20)\d\d[ ]?-[ ]?(?:19|20)?\d\d"  # and a date with dashes ('03-04-2020')
                            r"|(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12]\d|3[01])-(?:19|20)\d\d"
                            r"|(?:19|20)\d\d-(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12]\d|3[01])")
# A dose unit after a number: 'units' / 'IU' after any number ('1200000 units'); the others after five digits at most
# (no dose is '4455667 mg'); 'cc' not before a capital or 'Dr' (a copy list: 'Job 4455667 cc Dr. Lee' keeps its id).
_DOSE_AFTER = regex.compile(r"[ \t]*+(?:(?P<units>units?|IU)|mg|mcg|kg|g|ml|mL|cc(?![ \t]*+(?:\p{Lu}|(?i:dr)\b))|%|mmHg"
                            r"|bpm|kcal|mEq|mmol)(?![\p{L}\d:])")
_DOSE_DIGITS = 5  # digits at most of a number before a dose unit other than 'units' / 'IU'


def _count_or_range(s: Span, text: str, pattern: regex.Pattern) -> Span | None | bool:
    """What an id span that reads as a count, dose or year range is: its AGE ('54' of '54-year-old'), its DATE (a
    year range or dashed date with no field word right before it), False (no span: '2-day', '1200000 units'), or
    None: an id."""
    if _COUNT_UNIT.fullmatch(text, s.start, s.end):
        if _YEARS_OLD.fullmatch(text, s.start, s.end):
            return Span(s.start, s.start + text.index("-", s.start, s.end) - s.start, "AGE", s.source, s.confidence)
        return False
    dose = _dose_after(s, text)
    if not dose and not _YEAR_RANGE.fullmatch(text, s.start, s.end):
        return None
    m = nearest_field(text, s.start, pattern)
    if m is not None and right_after(text, m.end(), s.start):
        return None  # 'MRN: 2019-2020' stands
    return False if dose else s.with_label("DATE")


def _dose_after(s: Span, text: str) -> bool:
    """Is the span a dose's number: a dose unit right after it ('1200000 units', '500 mg'; _DOSE_AFTER)?"""
    m = _DOSE_AFTER.match(text, s.end)
    return m is not None and (m.group("units") is not None
                              or sum(c.isdigit() for c in text[s.start:s.end]) <= _DOSE_DIGITS)


def _bare_record(number: str) -> bool:
    """Is `number` (a _BARE_ID match) a record number: 6 digits or more, and no 10-digit phone number (not opening
    with 0), phone number, social security number, date written in digits ('03041950', '03-04-1950') or year
    range?"""
    digits = sum(c.isdigit() for c in number)
    bare = number.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ-")
    return (digits >= 6 and not _SSN_SHAPE.fullmatch(bare) and not _DATE_DIGITS.fullmatch(bare)
            and not _DATE_SHAPE.fullmatch(bare) and not _PHONE.fullmatch(bare) and not _LOCAL_PHONE.fullmatch(bare)
            and not (len(bare) == 10 and bare.isdigit() and bare[0] != "0"))


_HEAD_TAIL = " \t\r\n\v\f,(#-"  # signs and blanks cut off a name's end before its record number
# Words a name span may take in between the name and its record number ('Quellton Regional was X'): only these, not
# any lower-case word ('Dana marlow X', 'Ann de la cruz X': a surname in lower case stays in the name).
_TAKEN_IN = _COPULAS | {"at", "in", "from"}


def _hospital_tail(s: Span, text: str) -> tuple[Span, tuple[int, int]] | None:
    """(the name span without it, the record number) of a CRF hospital or person span that took in the record number
    after the name ('[MGH 1234567]', '[MGH 123]-45-67', '[Quellton Regional was 4455667]', '[Ann Lee 4455667]'), None
    when it took in none."""
    k = text.rfind(" ", s.start, s.end)
    if k < 0 or k + 1 >= s.end:
        return None
    b = _run_bounds(text, k + 1, s.end)[1]
    lo = k + 1 + (text[k + 1] == "#")
    m = _BARE_ID.fullmatch(text, lo, b)
    if m is None or not _bare_record(m.group()):
        return None
    head = text[s.start:k].rstrip(_HEAD_TAIL)
    while (words := head.split()) and words[-1] in _TAKEN_IN:  # 'was', 'at' the span took in after the name
        head = head[:len(head) - len(words[-1])].rstrip(_HEAD_TAIL)
    if not head or not head[-1].isalpha():
        return None
    return Span(s.start, s.start + len(head), s.label, s.source, s.confidence), (lo, b)


# Round 17: a table whose header line names a column by a record or account field word, the values in the rows under
# it ('Name      MRN       DOB' / 'Ann Lee   4455667   03/04/1950'): the header cell alone between column breaks.
_COLUMN_HEAD = regex.compile(
    r"(?<![^\t\n ]|[^\t\n ][ ])(?i:mrn|mr[ ]?\#|med(?:ical)?\.?[ ]rec(?:ord)?\.?(?:[ ](?:no\.?|number|\#))?"
    r"|(?:unit|hosp(?:ital)?\.?)[ ](?:no\.?|number|\#)|acct\.?(?:[ ](?:no\.?|\#))?|account(?:[ ](?:no\.?|number|\#))?)"
    r"[ ]?:?(?=\t|[ ]{2,}|[ \t]*+(?:\r?\n|$))")
# Round 18: every header cell _COLUMN_HEAD reads holds one of these in some case, as written (the pattern's [ ] is one
# blank): note_text.may_contain, an ASCII note holding none skips the scan (tests/test_merge_speed18.py). Keep in step.
_COLUMN_HEAD_LITERALS = ("mrn", "mr#", "mr #", "med rec", "med. rec", "medical rec", "medical. rec", "unit ", "hosp",
                         "acct", "account")
_CELL = regex.compile(r"[^\t ](?:[^\t\n ]|[ ](?=[^\t\n ]))*+")  # a cell: words apart by one blank
_CELL_ID = regex.compile(r"(?:[A-Z]{1,3}-?)?(?:\d{2,4}(?:[ -]\d{1,6}){1,3}|\d{5,12})")
_RULE_LINE = regex.compile(r"[ \t]*+[-=_]{3,}[-=_ \t]*+(?:\r?\n|$)")  # an underline line
_ROWS = 30  # rows read under a header line (bounded)


def _cells(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The cells of the line text[a:b]: runs of words apart by one blank, between tabs or two blanks or more."""
    return [m.span() for m in _CELL.finditer(text, a, b)]


def column_ids(spans: list[Span], text: str, deciding: Sequence[str] = (), low: str | None = None) -> list[Span]:
    """The values under a header cell 'MRN', 'Med Rec #', 'Unit No.', 'Acct' of a table ('Name   MRN   DOB' then
    'Ann Lee   4455667   03/04/1950'; or a header alone over an underline, 'Medical Record Number' / '-----' / X),
    the rows down to the first blank line or shorter row: MEDICALRECORD (ACCOUNT
    under 'Acct'), untagged, a CRF id or digit guess of it, or cut out of a CRF span run across the columns. `low`:
    text.lower() when the caller has it; a note with no header word skips the scan (round 18)."""
    if not may_contain(text, low, _COLUMN_HEAD_LITERALS):
        return spans
    heads = list(_COLUMN_HEAD.finditer(text))
    if not heads:
        return spans
    found: list[tuple[int, int, str]] = []
    lines: dict[int, list[tuple[int, str]]] = {}  # header line start -> (cell index, label) of its header cells
    cells: dict[int, tuple[list[tuple[int, int]], list[int]]] = {}  # header line start -> its cells, their starts
    ls = le = -1
    for h in heads:  # the cells of a header line once, however many header cells it has (linear on wide tables)
        if h.start() >= le:  # the first header cell of its line (heads come in order)
            ls = text.rfind("\n", 0, h.start()) + 1
            le = text.find("\n", h.end())
            le = len(text) if le < 0 else le
            line = _cells(text, ls, le)
            cells[ls] = (line, [a for a, _ in line])
            lines[ls] = []
        head, starts = cells[ls]
        i = bisect_right(starts, h.start()) - 1
        if i < 0 or not head[i][0] <= h.start() < head[i][1] or head[i][1] > h.end() + 1:
            continue  # the word is part of a longer cell
        lines[ls].append((i, "ACCOUNT" if h.group().lower().startswith("acc") else "MEDICALRECORD"))
    for ls, cols in lines.items():
        le = text.find("\n", ls)
        le = len(text) if le < 0 else le
        pos = le + 1
        rule = _RULE_LINE.match(text, pos)  # an underline under the header ('-----')
        if rule is not None:
            pos = rule.end()
        if not cols or (len(cells[ls][0]) < 2 and rule is None):
            continue  # no table
        for _ in range(_ROWS):  # the rows under the header, each read once for all its columns
            if pos >= len(text) or not cols:
                break
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            row = _cells(text, pos, end)
            cols = [(k, label) for k, label in cols if k < len(row)]  # a shorter row ends a column
            for k, label in cols:
                a, b = row[k]
                if (_CELL_ID.fullmatch(text, a, b) and not _DATE_SHAPE.fullmatch(text, a, b)
                        and not _PHONE.fullmatch(text, a, b)):
                    found.append((a, b, label))
            pos = end + 1
    if not found:
        return spans
    out = sorted(spans, key=lambda x: (x.start, x.end))
    reach, top = [], 0  # the furthest end so far: sorted, so one bisect finds the first span that may overlap
    for s in out:
        top = max(top, s.end)
        reach.append(top)
    drop: set[int] = set()
    extra: list[Span] = []
    last = 0
    for a, b, label in sorted(set(found)):
        if a < last:
            continue  # one value under two headers
        over, i = [], bisect_right(reach, a)
        while i < len(out) and out[i].start < b:
            if out[i].end > a:
                over.append(i)
            i += 1
        if any(j in drop or (not is_crf(out[j]) and (source_in(out[j].source, deciding)
                                                     or not (a <= out[j].start and out[j].end <= b))) for j in over):
            continue  # a deciding rule's span, or a rule's span run across the cell: left to it
        for j in over:  # a CRF span run across the columns keeps its parts outside the cell
            s = out[j]
            for x, y in ((s.start, a), (b, s.end)):
                seg = text[x:y]
                if seg.strip(" \t,"):
                    x2 = x + len(seg) - len(seg.lstrip(" \t,"))
                    extra.append(Span(x2, x2 + len(seg.strip(" \t,")), s.label, s.source, s.confidence))
        drop.update(over)
        extra.append(Span(a, b, label, out[over[0]].source if over else "id-column", 0.9))
        last = b
    if not extra:
        return spans
    return sorted([s for j, s in enumerate(out) if j not in drop] + extra, key=lambda x: (x.start, x.end))


def ids_after_names(spans: list[Span], text: str, deciding: Sequence[str] = (),
                    fields: regex.Pattern | None = None) -> list[Span]:
    """A record number right after a patient's or a hospital's name with no field word between ('Ann Lee 4455667',
    'LEE, ANN (4455667)', 'MGH #123-45-67', 'Quell General #1234567'; a label block's name ending its line and the
    number alone on the next, 'MARLOW, DANA' / '7712093'): MEDICALRECORD, untagged or a CRF IDNUM, phone,
    zip, room or date guess of it, or taken in by the hospital span; not after a doctor's title ('Dr. Lee 4455667':
    a pager), nor a number of a deciding rule (`deciding`, rule_label_sources), nor one right after a field word of
    `fields` (the field word pattern: 'auth RN98815112' with 'auth' read as a name stays the auth's)."""
    if not any(s.label in _NAMES_AN_ID for s in spans):
        return spans
    out = sorted(spans, key=lambda x: (x.start, x.end))
    added: list[Span] = []
    for i, s in enumerate(out):
        if s.label not in _NAMES_AN_ID:
            continue
        if s.label == "DOCTOR" and _TITLE_BEFORE.search(text, max(0, s.start - 10), s.start):
            continue
        if is_crf(s) and (cut := _hospital_tail(s, text)) is not None:
            nxt = out[i + 1].start if i + 1 < len(out) else len(text)
            if cut[1][1] <= nxt:
                out[i] = cut[0]
                added.append(Span(cut[1][0], cut[1][1], "MEDICALRECORD", "id-after-name", 0.9))
            continue
        gap = _NAME_GAP.match(text, s.end, min(len(text), s.end + 8))
        below = _BELOW.match(text, s.end, min(len(text), s.end + 8))  # a label block: the number on the next line
        if gap.end() == s.end and below is None:
            continue  # a number glued to the name is no record number
        m = _BARE_ID.match(text, below.end() if below is not None else gap.end())
        if m is None or m.end() - m.start() > 16 or not _bare_record(m.group()):
            continue
        if below is not None and not _LINE_END.match(text, m.end()):
            continue  # a name ending its line, then the number alone on the next ('MARLOW, DANA' / '7712093')
        a, b = m.span()
        lead = len(m.group()) - len(m.group().lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ-"))
        if fields is not None and ((lead and fields.match(text, a, a + lead)) or (
                (f := nearest_field(text, a, fields)) is not None and right_after(text, f.end(), a))):
            continue  # a field word names it ('Almus - MRN7864519'): the field reading stands
        j = i + 1
        over = []
        while j < len(out) and out[j].start < b:
            if out[j].end > a:
                over.append(j)
            j += 1
        if not over:
            added.append(Span(a, b, "MEDICALRECORD", "id-after-name", 0.9))
            continue
        o = out[over[0]]
        if (len(over) == 1 and is_crf(o) and not text[min(a, o.start):a].strip(_SIGNS)
                and not text[b:max(b, o.end)].strip(_SIGNS) and text[o.start:o.end].strip(_SIGNS)
                and (o.label in _BARE_RELABELLED or o.label in _NAMED_ID_GUESSES)
                and not source_in(o.source, deciding)):
            out[over[0]] = Span(a, b, "MEDICALRECORD", o.source, o.confidence)
    if not added:
        return out
    return sorted(out + added, key=lambda x: (x.start, x.end))


@lru_cache(maxsize=1)
def id_labels() -> frozenset[str]:
    """The labels of category ID (conf/taxonomy.toml)."""
    return frozenset(taxonomy.labels_of("ID"))


@lru_cache(maxsize=8)
def field_words(pairs: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[regex.Pattern, dict[str, str]] | None:
    """(field word pattern, field_key of a word -> label) of a table of field words (id_fields); field_label reads it."""
    label_of = {field_key(w): label for label, words in pairs for w in words}
    if not label_of:
        return None
    # a field word as a word of its own, its words apart by blanks or tabs, a '#' glued or not ('Unit #', 'Unit#')
    phrases = {" ".join(w.lower().split()) for _, words in pairs for w in words}
    words = "|".join(r"[ \t]+".join(regex.escape(w) for w in p.split()).replace(r"[ \t]+\#", r"[ \t]*\#")
                     for p in sorted(phrases, key=len, reverse=True))
    # a '#' closing the word may touch the id ('Hosp#4455667', 'MR#A12345'); a letter or digit glued to a word may not
    return regex.compile(r"(?<![\p{L}\d])(?:" + words + r")(?:(?<=\#)|(?![\p{L}\d]))", regex.IGNORECASE), label_of


def field_key(phrase: str) -> str:
    """A field word as a key of field_words' table: case-folded ('ſſn' or 'SSN' of a note, as the case-blind pattern
    matches them, is 'ssn'), blanks collapsed and none before a '#' (the pattern matches 'Unit#' and 'Unit #'), and
    no combining mark: 'İ' of 'UNİT', which the pattern matches as 'i', casefolds to 'i' and a combining dot."""
    folded = unicodedata.normalize("NFD", phrase.casefold())
    if not folded.isascii():
        folded = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(folded.split()).replace(" #", "#")


def field_label(label_of: Mapping[str, str], m: regex.Match) -> str:
    """The label of the field word `m` matched by field_words' pattern."""
    return label_of[field_key(m.group())]


def table_pairs(table: Mapping[str, Sequence[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The id_fields table as a hashable, ordered form."""
    return tuple(sorted((label, tuple(words)) for label, words in table.items()))


def nearest_field(text: str, start: int, pattern: regex.Pattern) -> regex.Match | None:
    """The last field word on the line before `start` (within _REACH), None when none."""
    lo = max(0, start - _REACH)
    nl = text.rfind("\n", lo, start)
    lo = nl + 1 if nl >= 0 else lo
    last = None
    for m in pattern.finditer(text, lo, start):
        if not _initials(text, m):
            last = m
    return last


def _initials(text: str, m: regex.Match) -> bool:
    """Is the field word `m` a writer's initials glued by '/' to others ('MR/cc/' of a dictation footer): one to
    three letters of one case, with initials of one case (1-3 letters) glued by '/' before or after it? Not
    'Med Rec/MRN', 'MRN/Acct'."""
    a, b = m.start(), m.end()
    if not _INITIALS.fullmatch(text, a, b):
        return False
    after = _INITIALS.match(text, b + 1) if text[b:b + 1] == "/" else None
    before = _INITIALS_BEFORE.search(text, max(0, a - 4), a) if a and text[a - 1] == "/" else None
    return (after is not None and not text[after.end():after.end() + 1].isalpha()) or (
        before is not None and not (before.start() and text[before.start() - 1].isalpha()))


def _field_after(text: str, end: int, pattern: regex.Pattern) -> regex.Match | None:
    """The field word that names the id ending at `end` from after it, None when none: in brackets or
    parentheses ('4455667 (MRN)', '[Acct]') or after 'is' ('4455667 is her MRN')."""
    m = _AFTER.match(text, end, min(len(text), end + _REACH))
    if m is None:
        return None
    f = pattern.match(text, m.end(), min(len(text), m.end() + _REACH))
    if f is not None and m.group("open") and not _CLOSE.match(text, f.end()):
        return None  # '(MRN 99887766)' names another id
    return f


def _field_above(text: str, start: int, pattern: regex.Pattern) -> regex.Match | None:
    """The field word ending the line before an id that opens its own line ('MRN:' then '  4455667'), None when
    none: only separators may follow it there."""
    nl = text.rfind("\n", max(0, start - _REACH), start)
    if nl < 0 or text[nl + 1:start].strip(" \t"):
        return None
    prev = text.rfind("\n", max(0, nl - _REACH), nl) + 1
    last = None
    for m in pattern.finditer(text, prev, nl):
        if not _initials(text, m):
            last = m
    end = nl - 1 if text[nl - 1:nl] == "\r" else nl  # CRLF notes too
    if last is None or not _SEP_RE.fullmatch(text, pos=last.end(), endpos=end):
        return None
    return last


def right_after(text: str, a: int, b: int) -> bool:
    """Is text[a:b] only separators between a field word and its value (':', '#', 'No.', blanks)?"""
    return _SEP_RE.fullmatch(text, pos=a, endpos=b) is not None


def _gap_ok(text: str, a: int, b: int, strict: bool) -> bool:
    """Is text[a:b] what may stand between a field word and its id? strict: separators only; else also
    up to three words without a digit ('Medical Record Number (hospital):'), six before 'is' or 'was'."""
    if right_after(text, a, b):
        return True
    if strict:
        return False
    gap = text[a:b]
    if any(c.isdigit() for c in gap):
        return False
    words = gap.split()  # a few words; up to six before 'is' / 'was' ('MRN at the outside hospital was X')
    return len(words) <= 3 or (len(words) <= 6 and words[-1].lower() in _COPULAS)


def _split_breaks(s: Span, text: str) -> list[Span]:
    """An id span cut at the column breaks inside it, and at the commas, 'and', 'or' and ' / ' of a list of ids
    ('MRNs: 1234567 and 7654321': two ids when each has 5 digits or more), each part trimmed of blanks."""
    parts, pos = [], s.start
    for m in _BREAK.finditer(text, s.start, s.end):
        parts.append((pos, m.start()))
        pos = m.end()
    parts.append((pos, s.end))
    listed = []
    for a, b in parts:
        cuts, pos = [], a
        for m in _LIST.finditer(text, a, b):
            cuts.append((pos, m.start()))
            pos = m.end()
        cuts.append((pos, b))
        if len(cuts) > 1 and all(sum(c.isdigit() for c in text[x:y]) >= 5 for x, y in cuts):
            listed.extend(cuts)
        else:
            listed.append((a, b))
    if len(listed) == 1:
        return [s]
    return [Span(a, b, s.label, s.source, s.confidence) for a, b in listed if b > a]


def _inner_field(s: Span, text: str, pattern: regex.Pattern) -> tuple[regex.Match, int] | None:
    """(the field word `s` took in, where its id starts after the separator), None when it took in none."""
    inner = None
    outer = None  # is a field word right before the span (computed once, when asked)
    for m in pattern.finditer(text, max(0, s.start - 8), s.end):
        if m.end() > s.start and m.start() < s.end:  # a field word inside the span or across its start
            if m.start() > s.start and not text[m.start() - 1].isspace():
                continue  # glued to the id before it: a piece of it ('LAB-REF-20334')
            sep = _SEP_RE.match(text, pos=m.end(), endpos=s.end)
            rest = sep.end() if sep else m.end()
            if not text[m.end():rest].strip("-."):  # glued to the id after it by '-' or '.'
                if outer is None:
                    near = nearest_field(text, s.start, pattern)
                    outer = near is not None and _gap_ok(text, near.end(), s.start, strict=True)
                if outer:
                    continue  # another field word names the id: a piece of it ('Accession: MR-21-004433')
            if rest < s.end and any(c.isdigit() for c in text[rest:s.end]):
                inner = (m, rest)
    return inner


def _lead(s: Span, text: str, pattern: regex.Pattern, label_of: dict[str, str]) -> Span | None:
    """The words of `s` before the field word it took in ('Ames' of 'Ames Lic 4455667'), None when none, when they
    hold a digit or when the field word names a device or vehicle: they stay covered with the span's label (a name
    a CRF span took in is no leak once the id is cut)."""
    inner = _inner_field(s, text, pattern)
    if inner is None or inner[0].start() <= s.start:
        return None
    if field_label(label_of, inner[0]) in _MAKE_BEFORE:
        return None  # a device's or vehicle's make and model ('Medtronic SN 4455667'), no name
    head = text[s.start:inner[0].start()]
    if not any(c.isalpha() for c in head) or any(c.isdigit() for c in head):
        return None  # nothing, or a model number ('ADDR01 SN PJN445566'): no name
    end = s.start + len(head.rstrip(" \t,;:|/(-"))
    return Span(s.start, end, s.label, s.source, s.confidence)


def _take_field(s: Span, text: str, pattern: regex.Pattern, label_of: dict[str, str],
                strict: bool) -> tuple[Span, bool] | None:
    """(`s` without a field word it took in, labelled by its field word; whether that word stands right at it:
    separators only between, or after it, or ending the line above), None when no field word names it."""
    inner = _inner_field(s, text, pattern)
    if inner is not None:
        m, rest = inner
        return Span(rest, s.end, field_label(label_of, m), s.source, s.confidence), True
    m = nearest_field(text, s.start, pattern)
    if m is not None and _gap_ok(text, m.end(), s.start, True):
        return s.with_label(field_label(label_of, m)), True
    if s.source == FIELD_RULE:
        return None  # the reader's proposal stands only right after its field word
    other = _field_after(text, s.end, pattern) or _field_above(text, s.start, pattern)
    if other is not None:
        return s.with_label(field_label(label_of, other)), True
    if m is None or strict or not _gap_ok(text, m.end(), s.start, False):
        return None
    return s.with_label(field_label(label_of, m)), False


def _age_form(s: Span, text: str) -> Span | None:
    """The AGE span of an id span that is an age form ('73yo', '48' of '48y F'), None when it is none."""
    age = _AGE.match(text, s.start, min(len(text), s.end + 12))
    if age is None or s.end not in (age.end(1), age.end()):
        return None
    return Span(s.start, age.end(1), "AGE", s.source, s.confidence)


def _id_guess(s: Span, text: str) -> bool:
    """May this CRF PHONE, FAX or DATE span be an id? Not when phone-shaped; a DATE only as _DATE_GUESS."""
    if _PHONE.match(text, s.start, s.end):
        return False
    if s.label == "ROOM":
        return bool(_ROOM_GUESS.fullmatch(text, s.start, s.end))
    return s.label != "DATE" or bool(_DATE_GUESS.fullmatch(text, s.start, s.end)
                                     and not _DATE_SHAPE.fullmatch(text, s.start, s.end))


def _run_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The word text[start:end] is glued in: letters and digits, and '-' between two of them ('BB-6395741' of
    '6395741', '39378-476' of '39378'), at most _RUN_REACH characters either side."""
    a, lo = start, max(0, start - _RUN_REACH)
    while a > lo and (text[a - 1].isalnum() or (text[a - 1] == "-" and a >= 2 and text[a - 2].isalnum())):
        a -= 1
    b, hi = end, min(len(text), end + _RUN_REACH)
    while b < hi and (text[b].isalnum() or (text[b] == "-" and b + 1 < len(text) and text[b + 1].isalnum())):
        b += 1
    return a, b


def _prefix_start(text: str, start: int, fields: regex.Pattern | None = None) -> int:
    """The start of a capitals prefix of one to three letters glued to the id at `start` that opens its word
    ('BH' of 'BH4455667'; not 'Acct' of 'AcctA500947173', nor a field word of `fields`: 'MRN' of 'MRN7864519'
    names the id and is not part of it), else `start`."""
    a = start
    while a > max(0, start - 4) and "A" <= text[a - 1] <= "Z":
        a -= 1
    if a == start or start - a > 3 or (a > 0 and (text[a - 1].isalnum() or text[a - 1] in "-_.")):
        return start
    if fields is not None and fields.fullmatch(text[a:start]):
        return start
    return a


def _digits_end(text: str, end: int, limit: int) -> int:
    """The end of the dash-and-digits groups glued after an id ending in a digit at `end` ('39378[-476]', a check
    digit '4455667[-3]'; not a block's '-A1'), at most up to `limit`."""
    while end < limit and end and text[end - 1].isdigit() and text[end] == "-":
        k = end + 1
        while k < limit and text[k].isdigit():
            k += 1
        if k == end + 1 or (k < limit and text[k].isalnum()):
            break
        end = k
    return end


def _trimmed(s: Span, text: str) -> Span:
    """A CRF id span without the signs it took in at either end ('– 4455667', '№ 4455667', '_4455667_', '* X'):
    an id opens and ends with a letter or a digit."""
    a, b = s.start, s.end
    while a < b and not text[a].isalnum():
        a += 1
    while b > a and not text[b - 1].isalnum():
        b -= 1
    return s if (a, b) == (s.start, s.end) or a == b else Span(a, b, s.label, s.source, s.confidence)


def join_id_pieces(spans: Sequence[Span], text: str, fields: regex.Pattern | None = None) -> list[Span]:
    """CRF id spans joined with the CRF id or room pieces of the word they are glued in ('BB-' and '6395741' of
    'BB-6395741', 'Job [39378]-[476]'), and grown over a capitals prefix glued before them ('[BH]4455667'): one id
    span, the label of its first id piece (its field word decides it next); `fields`: the field word pattern, whose
    words glued before an id are not grown over ('MRN7864519'). Untagged parts of the word stay out
    ('S17-7816' of a block 'S17-7816-A1'); nothing changes when a span of another label holds part of the word."""
    ids = id_labels()
    if not any(s.label in ids and is_crf(s) for s in spans):
        return list(spans)
    out = sorted(spans, key=lambda x: (x.start, x.end))
    i = 0
    while i < len(out):
        s = out[i]
        if s.label not in ids or not is_crf(s):
            i += 1
            continue
        a, b = _run_bounds(text, s.start, s.end)
        j, k = i, i + 1  # the spans overlapping the word: out[j:k]
        while j > 0 and out[j - 1].end > a:
            j -= 1
        while k < len(out) and out[k].start < b:
            k += 1
        group = out[j:k]
        if not all(is_crf(p) and (p.label in ids or p.label in _GROWN) and a <= p.start and p.end <= b
                   for p in group):
            i += 1
            continue
        start = _prefix_start(text, group[0].start, fields)
        end = _digits_end(text, max(p.end for p in group), b)
        if len(group) == 1 and (start, end) == (s.start, s.end):
            i += 1
            continue
        label = next(p.label for p in group if p.label in ids)
        out[j:k] = [Span(start, end, label, s.source, s.confidence)]
        i = j + 1
    return out


def field_id_labels(spans: Sequence[Span], text: str, table: tuple[tuple[str, tuple[str, ...]], ...],
                    deciding: Sequence[str], low: str | None = None,
                    ruled: Callable[[int, int], bool] | None = None) -> list[Span]:
    """Merged spans with id labels and extents read from the field words before them (module docstring);
    `table`: table_pairs of [merge] id_fields; `deciding`: the rule sources whose label stands (rule_label_sources);
    `low`: text.lower() when the caller has it (note_text.lower_text), handed to column_ids' literal gate (computed
    there when None; read only for an ASCII note, so the spans are the same either way; round 18); `ruled`: does a login
    rule's span before the merge overlap [start, end) (vetoes.rule_cover; spaced_logins leaves those)."""
    compiled = field_words(table)
    if compiled is None:  # no field word: the reader's proposals stand after none
        return [s for s in spans if s.source != FIELD_RULE]
    pattern, label_of = compiled
    ids = id_labels()
    out: list[Span] = []
    named: dict[str, tuple[str, bool]] = {}  # id string -> (the label its field word gave it, that word right at it)
    phoned: set[tuple[int, int]] = set()  # CRF id spans read as local phones: a field word elsewhere may name them
    for s in join_id_pieces(spans, text, pattern):
        if s.label in ids and is_crf(s):
            s = _trimmed(s, text)
        elif s.label == "AGE" and is_crf(s) and _LONG_NUMBER.fullmatch(text, s.start, s.end):
            s = s.with_label("IDNUM")  # no age has five digits: an id ('medical record number, [4455667],')
        elif s.label == "DATE" and is_crf(s) and (lead := _DATE_LEAD.match(text, s.start, s.end)) is not None \
                and not _DATE_DIGITS.fullmatch(lead.group(1)):
            # a number and a column break the CRF read into a date ('CG/AO/[72068617   DICT 09-AUG-11]'): an id
            out.append(Span(s.start, lead.end(1), "IDNUM", s.source, s.confidence))
            s = Span(lead.end(), s.end, s.label, s.source, s.confidence)
        if s.label in ids or (s.label in _DIGIT_GUESSES and is_crf(s) and _id_guess(s, text)):
            if s.label in ids and (age := _age_form(s, text)) is not None:
                out.append(age)
                continue
            if s.label in ids and (look := _count_or_range(s, text, pattern)) is not None:
                if look is not False:  # a count, dose or year range is no id, whatever read it
                    out.append(look)
                continue
            if not is_crf(s) and source_in(s.source, deciding):
                out.append(s)
                continue
            pieces = _split_breaks(s, text) if s.label in ids else [s]
            for p in pieces:
                if len(pieces) > 1 and pattern.fullmatch(text, p.start, p.end):
                    continue  # a field word alone ('X  NPI' of 'License X  NPI Y') is no id
                if p.label in ids and (age := _age_form(p, text)) is not None:
                    out.append(age)
                    continue
                proposed = p.source == FIELD_RULE
                if proposed and _CLOCK.fullmatch(text, p.start, p.end) and not _NUMBERED.search(
                        text, max(0, p.start - 12), p.start):
                    continue  # a time after a field word: 'group 1500', 'Job: 0700-1900'
                got = _take_field(p, text, pattern, label_of, strict=proposed or p.label not in ids)
                if got is not None:
                    got, near = got
                    if got.start > p.start and (lead := _lead(p, text, pattern, label_of)) is not None:
                        out.append(lead)  # words the span took in before its field word ('Ames' of 'Ames Lic 4455667')
                    key = text[got.start:got.end]
                    if key not in named or (near and not named[key][1]):  # a field word right at it names it first
                        named[key] = (got.label, near)
                    out.append(got)
                elif proposed:
                    continue  # no field word of the table right before it
                elif p.label in ids and is_crf(p) and _LOCAL_PHONE.fullmatch(text, p.start, p.end):
                    area = _AREA_CODE.search(text, max(0, p.start - 6), p.start)
                    if area and out and out[-1].end > area.start():
                        area = None  # a span before it holds the area code already
                    phone = Span(area.start() if area else p.start, p.end, "PHONE", p.source, p.confidence)
                    out.append(phone)  # 'crisis line 261-1175' named by no field word: a phone, with its area code
                    phoned.add((phone.start, phone.end))
                elif p.label in ids:
                    out.append(p)
                else:
                    out.append(s)
        elif s.label in _PERSON and any(c.isdigit() for c in text[s.start:s.end]) and _LOGIN.fullmatch(
                text, s.start, s.end):
            out.append(s.with_label("USERNAME"))
        else:
            out.append(s)
    if named:  # and a CRF room, login or local-phone reading of a named id's string ('SD/RCD/[89891-340]' ... 'JOB #: 89891-340')
        out = [s.with_label(named[text[s.start:s.end]][0])
               if (s.label in ids or (s.label in _NAMED_GUESSES and is_crf(s)) or (s.start, s.end) in phoned)
               and s.label != named.get(text[s.start:s.end], (s.label,))[0]
               and not (not is_crf(s) and source_in(s.source, deciding)) else s for s in out]
        out = named_repeats(out, text, {k: v[0] for k, v in named.items()})
    out = ids_after_names(column_ids(out, text, deciding, low), text, deciding, pattern)
    return login_repeats(capital_logins(name_logins(spaced_logins(out, text, ruled), text), text), text)


_SPACED = regex.compile(r"[ \t]+")  # a blank inside a span: no login has one
_LOGIN_FIELD = regex.compile(r"(?i:user(?:[ \t]*name|[ \t]*id)?|log(?:in|on)|by)(?![\p{L}\d])")  # 'user KQUILL'


def spaced_logins(spans: list[Span], text: str, ruled: Callable[[int, int], bool] | None = None) -> list[Span]:
    """A USERNAME span only the CRF proposes that holds a blank and no digit, and opens with no login field word
    ('user KQUILL'), is a person's name, not a login (a login has no blank): DOCTOR ('-- allene shinkel' signing a
    line, 'LCSW Strng'; round 19, seed 41741's false logins). `ruled`: does a login rule's span before the merge
    overlap it? Then a rule read a login there and the union only credited the CRF ('verified by jquill at 0612',
    the CRF's extent 'jquill at'): it stays (round 19 review)."""
    out = None
    for i, s in enumerate(spans):
        if (s.label == "USERNAME" and is_crf(s) and _SPACED.search(text, s.start, s.end)
                and not any(c.isdigit() for c in text[s.start:s.end]) and not _LOGIN_FIELD.match(text, s.start)
                and not (ruled is not None and ruled(s.start, s.end))):
            out = out or list(spans)
            out[i] = s.with_label("DOCTOR")
    return spans if out is None else out


def named_repeats(spans: list[Span], text: str, named: Mapping[str, str]) -> list[Span]:
    """An id a field word names ('MRN: 7712093'), one word of five digits or more, wherever it stands again in the
    note as a word of its own and no span holds it ('7712093  Page 2 of 2'): a span of that label. One pass over the
    note's words, whatever the number of ids."""
    keys = {k for k in named if sum(c.isdigit() for c in k) >= 5 and _WORD_RUN.fullmatch(k)}
    if not keys:
        return spans
    taken = sorted((s.start, s.end) for s in spans)
    added = []
    for m in _WORD_RUN.finditer(text):
        pos, end = m.start(), m.end()
        while end > pos and text[end - 1] == ".":  # 'X.' ending a sentence
            end -= 1
        if text[pos:end] in keys and _whole(text, pos, end) and not _covered(taken, pos, end):
            added.append(Span(pos, end, named[text[pos:end]], "id-repeat", 0.9))
    return sorted(spans + added, key=lambda x: (x.start, x.end)) if added else spans


def capital_logins(spans: list[Span], text: str) -> list[Span]:
    """A CRF DOCTOR span of one capitals word (4-8 letters, no dictionary word or known name) after
    'by' that ends its line, in a line with lower-case letters, is a login ('Cosigned 3/4 by LVRB'):
    USERNAME, unless the word is part of a person's name of two words or more in the note ('Dr. Ann Pini ... by PINI')."""
    out = None
    named: set[str] | None = None  # the words of the person spans of two words or more (made once, when asked)
    for i, s in enumerate(spans):
        if s.label != "DOCTOR" or not is_crf(s) or not _CAPITALS.fullmatch(text, s.start, s.end):
            continue
        if not _LINE_END.match(text, s.end):  # first: one span a line at most reads back to its line's start
            continue
        lo = text.rfind("\n", 0, s.start) + 1
        if (not _BY_END.search(text, max(lo, s.start - 40), s.start)
                or not any(c.islower() for c in text[lo:s.start]) or is_common(text[s.start:s.end])
                or is_name(text[s.start:s.end])):
            continue
        if named is None:
            named = {w for p in spans if p.label in _PERSON and " " in text[p.start:p.end]
                     for w in text[p.start:p.end].lower().split()}
        if text[s.start:s.end].lower() in named:
            continue
        out = out or list(spans)
        out[i] = s.with_label("USERNAME")
    return spans if out is None else out


def _login_forms(name: str) -> set[str]:
    """Logins made from a person's name of two words or more ('Ann Marie Quell': 'aquell', 'quella', 'annquell',
    'annmarie'), five letters or more, lower-case; none from a name of one word or with an initial for a surname."""
    words = ["".join(c for c in w if c.isalpha()).lower() for w in name.split()]
    words = [w for w in words if w]
    if len(words) < 2 or len(words[-1]) < 3 or len(words[0]) < 2:
        return set()
    first, last = words[0], words[-1]
    forms = {first[0] + last, last + first[0], first + last}
    if len(words) > 2:
        forms.add("".join(words[:-1]))  # a first name of two words ('sarahjane')
    return {f for f in forms if len(f) >= 5}


def name_logins(spans: list[Span], text: str) -> list[Span]:
    """A word made of a person's name in the note, as a login is ('ROBERTO CAPEHART / CAPEHARTR', '[sarahjane.]' of
    'Sarah Jane Ames'), is a login: USERNAME, untagged or a person span of that one word; no dictionary word
    ('willpower' of 'Will Power')."""
    forms: set[str] = set()
    for s in spans:
        if s.label in _PERSON and " " in text[s.start:s.end]:
            forms |= _login_forms(text[s.start:s.end])
    if not forms:
        return spans
    lowered = text.lower()
    found = []
    # a few names: one C-level search each, when lower() keeps the offsets (not with 'İ': two characters lower-cased)
    if len(forms) <= _FIND_FORMS and len(lowered) == len(text):
        for f in forms:
            pos = lowered.find(f)
            while pos >= 0:
                if _whole(text, pos, pos + len(f)) and text[pos:pos + len(f)].isalpha() and not is_common(f):
                    found.append((pos, pos + len(f)))
                pos = lowered.find(f, pos + 1)
    else:  # many names: one pass over the words (linear whatever their number)
        found = [m.span() for m in _LETTER_RUN.finditer(text) if m.group().lower() in forms
                 and _whole(text, *m.span()) and not is_common(m.group())]
    if not found:
        return spans
    at = {(s.start, s.end): i for i, s in enumerate(spans)}
    out = list(spans)
    taken = sorted((s.start, s.end) for s in spans)
    for a, b in found:
        i = at.get((a, b))
        if i is not None:
            if out[i].label in _PERSON:
                out[i] = out[i].with_label("USERNAME")
        elif not _covered(taken, a, b):
            out.append(Span(a, b, "USERNAME", "login-from-name", 0.9))
    return sorted(out, key=lambda x: (x.start, x.end))


def login_repeats(spans: list[Span], text: str) -> list[Span]:
    """A login (a USERNAME span with a digit, '.' or '_', 4 characters or more) is a login wherever it stands
    again in the note as a whole word: a person or id span of the same string becomes USERNAME, an untagged
    repeat a USERNAME span ('signed by kq77' ... 'kq77 called back')."""
    logins = {text[s.start:s.end] for s in spans if s.label == "USERNAME" and s.end - s.start >= 4
              and _LOGIN_MARK.search(text, s.start, s.end) and _WORD_RUN.fullmatch(text, s.start, s.end)}
    if not logins:
        return spans
    out = [s.with_label("USERNAME") if text[s.start:s.end] in logins and s.label != "USERNAME" else s for s in spans]
    taken = sorted((s.start, s.end) for s in out)
    longest = max(map(len, logins))
    for m in _WORD_RUN.finditer(text):  # one pass over the text, whatever the number of logins
        pos = m.start()
        # a whole word starts a run and ends it or stops before a '.' ('kq77.' ending a sentence)
        ends = [e for e in range(pos + 1, min(m.end(), pos + longest + 1)) if text[e] == "."] + [m.end()]
        for end in ends:
            if end - pos <= longest and text[pos:end] in logins and _whole(text, pos, end):
                if not _covered(taken, pos, end):
                    out.append(Span(pos, end, "USERNAME", "login-repeat", 0.9))
                break
    return sorted(out, key=lambda x: (x.start, x.end))


def _whole(text: str, start: int, end: int) -> bool:
    """Is text[start:end] a word of its own (no letter, digit, '.', '_', '-' or '@' glued on either side)?"""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before in "._-@" or after.isalnum() or after in "_-@"
                or (after == "." and end + 1 < len(text) and text[end + 1].isalnum()))


def _covered(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Does a span of `taken` (sorted, not overlapping one another: the merged spans) overlap [start, end)?"""
    i = bisect_right(taken, (start, 1 << 62))
    return (i > 0 and taken[i - 1][1] > start) or (i < len(taken) and taken[i][0] < end)
