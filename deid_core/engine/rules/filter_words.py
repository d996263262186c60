"""Words of a rule hit as the post-filters see them: words with offsets, base forms, case shapes."""

from __future__ import annotations

import regex

_WORD_RE = regex.compile(r"[^\W\d_](?:[\w'’-]*[^\W\d_])?\.?|\d+")
_POSSESSIVE_RE = regex.compile(r"['’]s$", regex.I)


def hit_words(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """The words (and digit runs) of text[start:end] as (start, end, word), offsets into text."""
    # the pattern reads nothing outside its match (no look-around, no anchor): searching text between
    # start and end finds what searching the slice would, with offsets into text already
    return [(m.start(), m.end(), m.group(0)) for m in _WORD_RE.finditer(text, start, end)]


def first_word(text: str, start: int, end: int) -> str | None:
    """The first of hit_words(text, start, end), without finding the others (None when there is none)."""
    m = _WORD_RE.search(text, start, end)
    return None if m is None else m.group(0)


def base(word: str) -> str:
    """A word lower-cased, without a possessive 's or a trailing period: the form the word lists hold."""
    if "'" in word or "’" in word:  # the possessive pattern needs an apostrophe: most words skip it
        word = _POSSESSIVE_RE.sub("", word)
    return word.rstrip(".").lower()


def titled(word: str) -> bool:
    """Title case: a capital first letter, not all capitals."""
    return word[:1].isupper() and not word.isupper()


def is_initial(word: str) -> bool:
    """One letter, with or without its period ("K.", "k")."""
    return len(base(word)) == 1 and word[:1].isalpha()
