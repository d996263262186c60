"""EHR-metadata name matching (seed 002): find every mention of a note's known names.

Given `note.known_phi` pairs (value, label), tags each mention with the pair's label: any
case (names that are frequent or clinical words only as Title-case names mid-sentence),
first/last/full names, dotted initials of a full name ("J. S."), possessives, names
glued to a neighbouring word by bad text extraction ("smithHx", "ptSmith", "SMITHpt"),
and, for names of at least `fuzzy_min_len` letters, one-edit misspellings (substitution,
insertion, deletion, adjacent transposition) of a whole token.

Matching is one Aho-Corasick pass over the lower-cased note per distinct name tuple: the
automaton (exact names plus the two halves used to find fuzzy candidates) is built once and
cached by the tuple, so a patient's many notes share it.
"""

from __future__ import annotations

from functools import lru_cache

import ahocorasick
import regex

from deid_core.doc import Doc
from deid_core.gazetteers import is_common, is_frequent, is_name, lowered
from deid_core.spans import Span

SOURCE = "metadata"
_MIN_LEN = 2  # shorter known values (initials) are matched only as dotted initials
_GLUE = 4  # letters a long name may be glued to ("smithpt")


def _split_values(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Each value and each of its words, lower-cased, with its label (first label wins); computed once per
    distinct tuple of pairs (a patient's notes share theirs), as _compiled is."""
    try:
        hash(pairs)
    except TypeError:  # an unhashable value (not the typed input): computed each time
        return _split(pairs)
    return _split_cached(pairs)


def _split(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    seen: dict[str, str] = {}
    for value, label in pairs:
        if not isinstance(value, str):
            continue
        low = value.strip().lower()
        if not low:
            continue
        seen.setdefault(low, label or "PATIENT")
        parts = [p.strip(".'-") for p in low.replace(",", " ").split()]
        if len(parts) < 2:
            continue
        for part in parts:
            # titles and suffixes of a multi-word value ("Dr.", "MD", "Jr") are not names
            if len(part) >= _MIN_LEN and (is_name(part) or not is_frequent(part)):
                seen.setdefault(part, label or "PATIENT")
    return tuple(seen.items())


_split_cached = lru_cache(maxsize=4096)(_split)


@lru_cache(maxsize=4096)
def _initials_pattern(value: str) -> regex.Pattern | None:
    """The dotted-initials pattern of a multi-word value ('J. S.', 'J.S.'), or None for one word."""
    parts = value.split()
    if len(parts) < 2:
        return None
    return regex.compile(r"(?<![\w.])" + r"\.?\s?".join(regex.escape(p[0]) for p in parts) + r"\.(?!\w)",
                         regex.IGNORECASE)


class _Compiled:
    """The automaton for one tuple of known names."""

    __slots__ = ("auto", "names", "empty", "ambiguous")

    def __init__(self, names: tuple[tuple[str, str], ...], fuzzy_min_len: int) -> None:
        self.names = dict(names)
        # names that are frequent or clinical words ("Will", "Hope", "Foley"): Title case only
        self.ambiguous = frozenset(n for n, _ in names if " " not in n and is_frequent(n))
        self.auto = ahocorasick.Automaton()
        keys: dict[str, list] = {}
        for name, label in names:
            keys.setdefault(name, []).append(("exact", name, label))
            if fuzzy_min_len and len(name) >= fuzzy_min_len and " " not in name:
                h = len(name) // 2
                keys.setdefault(name[:h], []).append(("pre", name, label))
                keys.setdefault(name[h:], []).append(("suf", name, label))
        for key, vals in keys.items():
            self.auto.add_word(key, (len(key), tuple(vals)))
        self.empty = not keys
        if keys:
            self.auto.make_automaton()


@lru_cache(maxsize=4096)
def _compiled(names: tuple[tuple[str, str], ...], fuzzy_min_len: int) -> _Compiled:
    return _Compiled(names, fuzzy_min_len)


def within_one_edit(a: str, b: str) -> bool:
    """True when a and b differ by at most one substitution, insertion, deletion or transposition."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    i = 0
    while i < min(la, lb) and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1:] == b[i + 1:]:
            return True
        return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]
    if la > lb:
        return a[i + 1:] == b[i:]
    return a[i:] == b[i + 1:]


def _is_letter(c: str) -> bool:
    return c.isalpha()


def _title_mid_sentence(text: str, start: int, end: int) -> bool:
    """'Will' written as a name: Title case and not the first word of a sentence or line."""
    word = text[start:end]
    if not (word[:1].isupper() and word[1:].islower()):
        return False
    i = start - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    if i >= 0 and text[i] == "." and _TITLE_BEFORE.search(text, max(0, i - 5), i + 1):
        return True  # "Mr. Will", "Dr. Hope"
    return i >= 0 and text[i] not in ".!?:;\n\r-*"


_TITLE_BEFORE = regex.compile(r"(?i)\b(?:mr|mrs|ms|dr|drs|miss)\.$")


class MetadataMatcher:
    """Finds mentions of a note's known names; picklable, holds only settings."""

    name = "metadata"

    def __init__(self, *, fuzzy: bool = True, fuzzy_min_len: int = 5, glued: bool = True) -> None:
        self.fuzzy = fuzzy
        self.fuzzy_min_len = fuzzy_min_len if fuzzy else 0
        self.glued = glued

    def match(self, doc: Doc) -> list[Span]:
        """Spans (label of the known value, source 'metadata') of every mention, possibly overlapping."""
        names = _split_values(doc.note.known_phi)
        if not names:
            return []
        comp = _compiled(names, self.fuzzy_min_len)
        if comp.empty:
            return []
        text = doc.text
        low = lowered(doc)  # ' ' + text + ' ' normalized, same offsets shifted by one
        n = len(text)
        out: list[Span] = []
        fuzzy_seen: set[tuple[int, int]] = set()
        for end_idx, (length, vals) in comp.auto.iter(low):
            end = end_idx  # inclusive end in the padded text == exclusive end in the note
            start = end - length
            if start < 0 or end > n:
                continue
            for kind, name, label in vals:
                if kind == "exact":
                    if self._exact_ok(text, start, end, len(name)) and (
                            name not in comp.ambiguous or _title_mid_sentence(text, start, end)):
                        out.append(Span(start, end, label, SOURCE, 1.0))
                else:
                    span = self._fuzzy(text, low, start, end, kind, name)
                    if span is not None and span not in fuzzy_seen:
                        fuzzy_seen.add(span)
                        out.append(Span(span[0], span[1], label, SOURCE + "-fuzzy", 0.8))
        out.extend(self._initials(text, names))
        return out

    def _exact_ok(self, text: str, start: int, end: int, length: int) -> bool:
        """A whole word, or (glued) a name at a case boundary / glued to a long token.

        Names of 3 letters or fewer ("Al", "Don") match only as Title-case whole words, and
        never before a contraction ("don't")."""
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        left = not _is_letter(before)
        right = not _is_letter(after)
        if after in "'’" and text[end + 1:end + 2].lower() == "t" and not _is_letter(text[end + 2:end + 3] or " "):
            return False
        if length <= 3:
            word = text[start:end]
            return left and right and word[:1].isupper() and (length == 1 or word[1:].islower())
        if left and right:
            return True
        if not self.glued or length < 3:
            return False
        first, last = text[start], text[end - 1]
        if not left:
            # lower->Upper ("ptSmith") or UPPER->lower ("ptSMITH" / "hxJONES")
            left = (before.islower() and first.isupper()) or (length >= 5 and before.islower() and text[start:end].isupper())
        if not right:
            right = (last.islower() and after.isupper()) or (last.isupper() and after.islower() and text[start:end].isupper())
        if left and right:
            return True
        # a long name glued to other letters ("smithpt"): accept when the rest is short. The scans
        # stop after 5 letters each way (more is too long anyway): a long run of glued names
        # ("smithsmithsmith...") is not rescanned from every hit.
        if length >= 6:
            ws, we = start, end
            while ws > 0 and start - ws <= _GLUE and _is_letter(text[ws - 1]):
                ws -= 1
            while we < len(text) and we - end <= _GLUE and _is_letter(text[we]):
                we += 1
            return (we - ws) - length <= _GLUE and not is_common(text[ws:we])
        return False

    def _fuzzy(self, text: str, low: str, start: int, end: int, kind: str, name: str) -> tuple[int, int] | None:
        """The whole token around a half-name hit when it is one edit from the name."""
        longest = len(name) + 1  # scans stop past the longest word one edit away (linear time)
        if kind == "pre":
            if start > 0 and _is_letter(text[start - 1]):
                return None
            we = end
            while we < len(text) and we - start <= longest and _is_letter(text[we]):
                we += 1
            ws = start
        else:
            if end < len(text) and _is_letter(text[end]):
                return None
            ws = start
            while ws > 0 and end - ws <= longest and _is_letter(text[ws - 1]):
                ws -= 1
            we = end
        word = low[ws + 1:we + 1]
        if word == name or len(word) < len(name) - 1 or len(word) > len(name) + 1:
            return None
        if not within_one_edit(word, name) or is_common(word):
            return None
        return (ws, we)

    def _initials(self, text: str, names: tuple[tuple[str, str], ...]) -> list[Span]:
        """Dotted initials of multi-word known values, e.g. 'J. S.' or 'J.S.'."""
        out = []
        for value, label in names:
            pat = _initials_pattern(value)
            if pat is None:
                continue
            for m in pat.finditer(text):
                if "." in m.group(0)[:-1]:
                    out.append(Span(m.start(), m.end(), label, SOURCE + "-initials", 0.7))
        return out
