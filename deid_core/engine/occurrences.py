"""Whole-word, case-insensitive occurrences of many strings in a text, in linear time.

Propagation (merge.py) tags every other occurrence of a name or place already tagged in the note
or in the patient's other notes. A regular-expression alternation of those strings costs, at each
position, up to the length of the longest string (a CRF span of thousands of repeated names made
that quadratic); an Aho-Corasick automaton reads the text once. Strings longer than MAX_CHARS are
left out (no name or place is that long), which bounds the matches that can end at one position.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import ahocorasick

from deid_core.text.normalize import fold_case

MAX_CHARS = 100


class Occurrences:
    """An automaton over lower-cased strings, each with a value (the label to give its occurrences)."""

    def __init__(self, strings: Mapping[str, str]) -> None:
        self._auto = ahocorasick.Automaton()
        for key, value in strings.items():
            folded = fold_case(key)
            if folded and len(folded) <= MAX_CHARS and folded not in self._auto:
                self._auto.add_word(folded, (len(folded), value))
        self.empty = len(self._auto) == 0
        if not self.empty:
            self._auto.make_automaton()

    def find(self, text: str) -> Iterator[tuple[int, int, str]]:
        """(start, end, value) of whole-word occurrences: leftmost first, then longest, never overlapping.

        The same matches as a regex finditer over the alternation of the strings (longest first),
        case-insensitive, with no letter or digit just before or after.
        """
        if self.empty:
            return
        n = len(text)
        hits = []
        for last, (length, value) in self._auto.iter(fold_case(text)):
            start, end = last + 1 - length, last + 1
            if (start == 0 or not text[start - 1].isalnum()) and (end == n or not text[end].isalnum()):
                hits.append((start, -end, value))
        hits.sort()
        covered = -1
        for start, neg_end, value in hits:
            if start >= covered:
                covered = -neg_end
                yield start, covered, value
