"""Keyed, stateless consistency: scope of a note, keyed seeds and RNGs, case matching, collisions."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable

from deid_core.keys import keyed_bytes
from deid_core.notes import Note

_WS = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[^\w]+")


def scope_of(note: Note) -> str:
    """The consistency scope: the patient id, or the note id when the patient is unknown."""
    if note.patient_id:
        return "p:" + str(note.patient_id)
    return "n:" + str(note.note_id)


def keyed_seed(key: bytes, *parts: str) -> int:
    """A 64-bit integer from HMAC-SHA256(key, parts): the seed of every surrogate choice."""
    return int.from_bytes(keyed_bytes(key, *parts)[:8], "big")


def keyed_rng(key: bytes, *parts: str) -> random.Random:
    """A private random.Random seeded by the keyed hash of the parts (never global state)."""
    return random.Random(keyed_seed(key, *parts))


def normalize(text: str) -> str:
    """Case-, space- and punctuation-insensitive form of an original string."""
    return _NON_ALNUM.sub(" ", text.casefold()).strip()


def match_case(template: str, value: str) -> str:
    """`value` in the case style of `template`: ALL CAPS, lower, Title, else as given."""
    if template.isascii() and template.isalpha():  # the common case: the letters are the template itself
        return _match_letters(template, value)
    return _match_any(template, value)


def _match_any(template: str, value: str) -> str:
    """match_case for any template: its letters picked one by one."""
    letters = [c for c in template if c.isalpha()]
    if not letters:
        return value
    if all(c.isupper() for c in letters) and (len(letters) > 1 or len(value) == 1):
        return value.upper()
    if all(c.islower() for c in letters):
        return value.lower()
    if letters[0].isupper() and len(letters) > 1 and all(c.islower() for c in letters[1:]):
        # Title: keep the surrogate's own inner capitals (McDonald) but start upper.
        return value[:1].upper() + value[1:] if value[:1].isalpha() else value
    return value


def _match_letters(letters: str, value: str) -> str:
    """match_case for a template of ASCII letters only (str methods in C: the same result as the loop)."""
    if letters.isupper() and (len(letters) > 1 or len(value) == 1):
        return value.upper()
    if letters.islower():
        return value.lower()
    if len(letters) > 1 and letters[0].isupper() and letters[1:].islower():
        return value[:1].upper() + value[1:] if value[:1].isalpha() else value
    return value


def forbidden_strings(note: Note, originals: Iterable[str], name_originals: Iterable[str] = ()) -> frozenset[str]:
    """Casefolded real PHI of a note: every span original and metadata value as a whole, plus
    the words of person names (name spans and metadata), which no surrogate may contain.

    Words of other PHI (a profession's "officer", a street's "Oval") are not forbidden: they
    identify nobody, and forbidding them would make surrogates depend on which other PHI a
    note holds, i.e. less consistent across a patient's notes.
    """
    out: set[str] = set()
    meta = [v for v, _ in note.known_phi if isinstance(v, str)]
    for s in list(originals) + meta:
        f = s.casefold().strip()
        if f:
            out.add(f)
    for s in list(name_originals) + meta:
        out.update(t for t in _WS.split(normalize(s)) if len(t) > 1)
    return frozenset(out)


def words(text: str) -> set[str]:
    """Normalized words of 3+ characters with a letter (what a surrogate must not share with
    real PHI; digit groups are left to the whole-string checks, so a phone ending in "2007"
    is not re-drawn because a date of the note says 2007)."""
    return {t for t in _WS.split(normalize(text)) if len(t) >= 3 and not t.isdigit()}


def contains_word(text: str, part: str) -> bool:
    """True when `part` occurs in `text` not glued to a letter or digit on either side."""
    i = text.find(part)
    while i >= 0:
        j = i + len(part)
        if (i == 0 or not text[i - 1].isalnum()) and (j == len(text) or not text[j].isalnum()):
            return True
        i = text.find(part, i + 1)
    return False


def collides(candidate: str, original: str, forbidden: frozenset[str],
             generic: frozenset[str] = frozenset()) -> bool:
    """True if the candidate equals, contains or shares a non-generic word with real PHI."""
    c = candidate.casefold().strip()
    o = original.casefold().strip()
    if c == o or c in forbidden:
        return True
    if len(o) >= 3 and contains_word(c, o):
        return True  # "United States" inside "United States Virgin Islands"
    shared = words(candidate) - generic  # a word shared with real PHI: no union of the note's set per call
    return bool(shared) and (not shared.isdisjoint(forbidden) or not shared.isdisjoint(words(original)))


def draw_distinct(
    original: str,
    forbidden: frozenset[str],
    make: Callable[[int], str],
    max_redraws: int,
    generic: frozenset[str] = frozenset(),
) -> str | None:
    """make(attempt) for attempt 0.. until it collides with neither the original nor real PHI."""
    for attempt in range(max_redraws + 1):
        cand = make(attempt)
        if not collides(cand, original, forbidden, generic):
            return cand
    return None
