"""Per-note text the merge's steps share (round 18, issue 15): the lower-cased text, computed once per Doc, and the
literal gates a step runs before a case-insensitive scan of the whole note that most notes cannot match.

A case-insensitive pattern can only match where the note holds its literal parts in some case. On an ASCII note that
is a plain substring test on the lower-cased text, exact for ASCII; a note with any other character (whose case
folding could meet an ASCII letter: 'ſ' and 's', the Kelvin sign and 'k') always runs the full scan. A gate only
skips a scan that finds nothing: the step's output is the same (tests/test_merge_speed18.py runs the steps with every
gate open on generated notes and compares)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from deid_core.doc import Doc

# a measuring and testing switch: True runs every gated step as if its gate had passed (tests/test_merge_speed18.py)
FORCE_OPEN = False

Needs = tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]  # per phrase: a first word, groups of substrings


def lower_text(doc: Doc) -> str:
    """doc.text.lower(), once per note (same offsets for an ASCII note; the gates read it only then)."""
    return doc.memo("merge_lower", lambda: doc.text.lower())


def may_contain(text: str, low: str | None, literals: Iterable[str]) -> bool:
    """False only when `text` is ASCII and holds none of the lower-case ASCII `literals` in any case (`low`:
    text.lower(), computed here when None)."""
    if FORCE_OPEN or not text.isascii():
        return True
    if low is None:
        low = text.lower()
    return any(lit in low if lit.isascii() else True for lit in literals)


def may_occur(text: str, low: str | None, phrases: tuple[str, ...] | frozenset[str]) -> bool:
    """False only when no phrase can match the case-insensitive pattern propagation.phrase_alternation(phrases) makes
    (a phrase's words apart by blanks or tabs): `text` is ASCII and, for every phrase, its lower-cased form `low` misses
    a word, a blank or tab after a word that has one next, or one before a word that has one before it."""
    if FORCE_OPEN or not text.isascii():
        return True
    if low is None:
        low = text.lower()
    for first, groups in _needs(phrases):  # plain loops: a few C substring searches per phrase, no generator
        if first in low:
            for group in groups:
                for n in group:
                    if n in low:
                        break
                else:
                    break
            else:
                return True
    return False


@lru_cache(maxsize=32)
def _needs(phrases: tuple[str, ...] | frozenset[str]) -> Needs:
    """What each phrase needs in the lower-cased text (may_occur): its first ASCII word ('' when none: every text
    holds it), then groups of substrings, one of each group: every ASCII word, with a blank or tab after it when a word
    follows and before it when one precedes."""
    out = []
    for p in phrases:
        words = p.lower().split()
        groups: list[tuple[str, ...]] = []
        for i, w in enumerate(words):
            if not w.isascii():
                continue  # its case folding could meet ASCII letters: no need read from it
            groups.append((w,))
            if i + 1 < len(words):
                groups.append((w + " ", w + "\t"))
            if i > 0:
                groups.append((" " + w, "\t" + w))
        first = groups[0][0] if groups else ""
        out.append((first, tuple(groups[1:])))
    return tuple(out)
