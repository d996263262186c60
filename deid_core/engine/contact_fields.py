"""Phone and fax numbers by their cue word (issue 14, round 15): a CRF span's label read from the cue word right
before it on its line ([merge] contact_fields: 'Phone:' / 'Tel' a PHONE, 'Fax:' / 'faxed to' a FAX; an id label
only on a phone-shaped number), and a number's extension joined to it ('617-555-0123 ext. 42', '(617) 555-0123
x4-5908': one PHONE, not a number and a second PHONE or an id). After the merge policy, on the merged spans only."""

from __future__ import annotations

from collections.abc import Sequence

import regex

from deid_core.engine.field_ids import (
    field_label,
    field_words,
    id_labels,
    nearest_field,
    right_after,
)
from deid_core.engine.propagation import is_crf
from deid_core.spans import Span

CONTACT = frozenset({"PHONE", "FAX"})
# A phone number: 7 or 10 digits, the area code in parentheses or before a blank, '.', '-' or '/' ('586/579-6976').
_PHONE = r"(?:\+?1[ .-]?)?(?:\(\d{3}\)[ ]?|\d{3}[ ./-]?)?\d{3}[ .-]\d{4}"
_PHONE_SHAPE = regex.compile(_PHONE)
# An extension after a number: 'ext', 'ext.', 'extension' or a glued or spaced 'x' (two digits or more).
_EXTNUM = r"(?:\d-\d{4}|\d{1,6})(?![\w/-]|[.,]\d)"
_EXT_NUMBER = regex.compile(_EXTNUM)
_EXT_LEN = 6  # the longest extension number: six digits, or '4-5908'
_EXT = regex.compile(r"[ \t]*+,?[ \t]*+(?:(?i:ext|extension)\.?[ \t.:#]*+(?P<n>" + _EXTNUM + r")|(?i:x)[ \t]?(?P<n>\d-\d{4}|\d{2,6})"
                     r"(?![\w/-]|[.,]\d))")
_EXT_WORD = regex.compile(r"(?i:ext)")  # most notes name no phone number and no extension: skip them
_PHONE_EXT = regex.compile(_PHONE + _EXT.pattern)
# An extension number after its word alone, with or without the number before it (read from the extension back).
_EXT_BEFORE = regex.compile(r"(?:(?P<phone>(?<![\w/.-])" + _PHONE + r")[ \t]*+,?[ \t]*+)?(?<![\p{L}\d])(?i:ext|extension)\.?[ \t.:#]*+$")


def contact_cue_labels(spans: Sequence[Span], text: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> list[Span]:
    """CRF PHONE / FAX spans, and CRF id spans shaped as a phone number, labelled by the cue word of `table`
    (table_pairs of [merge] contact_fields) right before them on their line (separators only between); with no
    cue there, a CRF id span that is a phone number and its extension is a PHONE."""
    compiled = field_words(table)
    if compiled is None:
        return list(spans)
    pattern, label_of = compiled
    ids = id_labels()
    out: list[Span] = []
    for s in spans:
        if is_crf(s) and (s.label in CONTACT or s.label in ids):
            m = nearest_field(text, s.start, pattern)
            if (m is not None and right_after(text, m.end(), s.start) and not _glued(text, m.start(), m.end())
                    and (s.label in CONTACT or _PHONE_SHAPE.fullmatch(text, s.start, s.end))):
                s = s.with_label(field_label(label_of, m))
            elif s.label in ids and _PHONE_EXT.fullmatch(text, s.start, s.end):
                s = s.with_label("PHONE")  # a number with its extension ('1-614-436-9230X82295') is a phone
        out.append(s)
    return out


def _glued(text: str, a: int, b: int) -> bool:
    """Is the cue text[a:b] glued by '/' to another word ('Phone/Fax', 'Tel/Fax'): it names neither?"""
    return (a >= 2 and text[a - 1] == "/" and text[a - 2].isalpha()) or (
        b + 1 < len(text) and text[b] == "/" and text[b + 1].isalpha())


def phone_extensions(spans: Sequence[Span], text: str) -> list[Span]:
    """Merged spans with a phone number's extension joined to it: a PHONE / FAX span followed by 'ext' / 'x' and
    digits takes them in (CRF spans there are dropped); a CRF contact or id span on the digits after 'ext' alone
    becomes that PHONE extension, with the untagged phone number right before it when there is one."""
    out = sorted(spans, key=lambda x: (x.start, x.end))
    if not any(s.label in CONTACT for s in out) and _EXT_WORD.search(text) is None:
        return out
    ids = id_labels()
    kept: list[Span] = []
    i = 0
    while i < len(out):
        s = out[i]
        if s.label in CONTACT and (m := _EXT.match(text, s.end)) is not None:
            end = m.end()
            j = i + 1
            while j < len(out) and out[j].start < end and out[j].end <= end and is_crf(out[j]) and (
                    out[j].label in CONTACT or out[j].label in ids):
                j += 1
            if j == len(out) or out[j].start >= end:  # nothing but CRF contact or id guesses on the extension
                kept.append(Span(s.start, end, s.label, s.source, s.confidence))
                i = j
                continue
        elif is_crf(s) and (s.label in CONTACT or s.label in ids) and (ext := _extension(s, text, kept)) is not None:
            kept.append(ext)
            i += 1
            continue
        kept.append(s)
        i += 1
    return kept


def _extension(s: Span, text: str, before: list[Span]) -> Span | None:
    """The PHONE span of an extension `s` stands on ('4-5908' of 'ext. 4-5908', with '617-555-0123' before it when
    untagged or a CRF piece of it, popped from `before`), None when `s` is not on the digits after 'ext'."""
    num = _EXT_NUMBER.match(text, _digit_start(text, s.start))
    if num is None or num.end() < s.end:
        return None
    back = _EXT_BEFORE.search(text, max(0, num.start() - 40), num.start())
    if back is None:
        return None
    start = num.start()
    if back.group("phone"):
        a = back.start("phone")
        popped = []  # CRF pieces of the number ('598/879' of '598/879-6592 ext. 17876'): one span
        while before and before[-1].end > a and before[-1].start >= a and is_crf(before[-1]) and (
                before[-1].label in CONTACT):
            popped.append(before.pop())
        if before and before[-1].end > a:  # another span holds part of the number: every piece stays
            before.extend(reversed(popped))
        else:
            start = a
    return Span(start, num.end(), "PHONE", s.source, s.confidence)


def _digit_start(text: str, pos: int) -> int:
    """The start of the extension number `pos` is in ('4-5908' for a span on '5908'); read back at most _EXT_LEN
    characters (an extension is no longer: a longer run of digits is no extension, linear on crafted input)."""
    lo = max(0, pos - _EXT_LEN)
    while pos > lo and (text[pos - 1].isdigit() or (text[pos - 1] == "-" and pos > 1 and text[pos - 2].isdigit())):
        pos -= 1
    return pos
