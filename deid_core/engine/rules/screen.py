"""One pass over a note decides which regex rules can match in it at all (RE2 Sets of their supersets).

Most rules match nowhere in a given note, and `regex` spends most of a rule's time scanning text where
it does not match. Each rule's pattern has supersets in RE2 syntax (superset.py: found in every ASCII
note where the pattern matches); RE2's Set finds which of them occur in one linear pass over the note
(a DFA; `google-re2`, wheels for x86-64 and aarch64; a few sets of _PER_SET patterns, read one after
the other, keep each DFA's states few). A rule some of whose supersets are absent cannot
match and is skipped; every other rule runs exactly as before, so the hits are the same. A rule's `needs`
(a pattern the note must hold for the rule to run at all) is screened the same way where the rule's pattern
is not (triggered rules, patterns not read safely): a note without its superset skips the rule without
searching the `needs` itself.
Fail closed: a note that is not ASCII, or a pass whose DFA gave up (RE2 then reports no match at all:
the set holds a pattern that always matches, so its absence shows it), screens nothing out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import re2

from deid_core.engine.rules.superset import search_superset, superset

_ALWAYS = r"\z"  # found in every text: missing from a pass's result only when the pass failed
_MAX_MEM = 64 << 20  # RE2's budget per set for its program and DFA cache (8 MB thrashes: 1.3-2.3 ms per note)
# patterns per set: one set of all ~80 multiplies their partial matches into new DFA states on every new note
# (150-200 µs per unseen note after 1,200 notes); sets of 8 settle at ~50 (docs/BENCHMARKS.md, round 11)
_PER_SET = 8


class RuleScreen:
    """The rules (by index) that may match in a note, from one pass of a few RE2 Sets over it."""

    def __init__(self, patterns: Sequence[tuple[str, str] | None], needs: Sequence[str] = ()) -> None:
        """patterns: each rule's (pattern, flags) in `regex` syntax, in rule order (None: not screened by its
        pattern). A rule is screened for its `search` over the whole note (scan rules; not for matches in a
        window). needs: each rule's `needs` pattern, searched without flags ("" or absent: none)."""
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1  # ASCII notes only: one byte per character
        options.max_mem = _MAX_MEM
        options.log_errors = False
        self._options = options
        entries: dict[bytes, list[int]] = {}  # RE2 pattern -> the rules needing it (a pattern shared by rules: once)
        needed: dict[int, int] = {}
        for i, entry in enumerate(patterns):
            need = needs[i] if i < len(needs) else ""
            # a `needs` is mostly a part of its rule's pattern: read only for a rule whose pattern is not
            found = None if entry is None else superset(*entry)
            if found is None or not self._valid(found):
                found = search_superset(need) if need else None
            if found is None or not self._valid(found):
                continue
            for p in found:  # superset() gives distinct patterns
                entries.setdefault(p.encode("ascii"), []).append(i)
            needed[i] = len(found)
        # (RE2 Set, its entry -> the rules it counts for; the canary \z first, counting for none)
        self._sets: list[tuple[Callable[[bytes], list[int] | None], tuple[tuple[int, ...], ...]]] = []
        items = list(entries.items())
        for k in range(0, len(items), _PER_SET):
            part = items[k:k + _PER_SET]
            rset = re2.Set.SearchSet(options)
            rset.Add(_ALWAYS)
            for p, _ in part:
                rset.Add(p)
            rset.Compile()
            # the set's own Match (bytes in, a list out), skipping the wrapper's Python frame (google-re2 is pinned)
            match = rset._set.Match
            self._sets.append((match, ((), *(tuple(rules) for _, rules in part))))
        self.screened = frozenset(needed)  # rules this screen can rule out
        self._always = frozenset(range(len(patterns))) - self.screened
        self._needed = needed

    def _valid(self, found: tuple[str, ...]) -> bool:
        """Does RE2 take every one of a rule's supersets (else the rule is not screened)?"""
        try:
            for p in found:
                re2.compile(p.encode("ascii"), self._options)
        except re2.error:
            return False
        return True

    def possible(self, text: str) -> frozenset[int] | None:
        """The indices of the rules that may match in `text`, or None when every rule may (not screened)."""
        found = self._found(text)
        return None if found is None else self._always | found

    def ruled_out(self, text: str) -> frozenset[int]:
        """The indices of the rules that cannot match in `text` (none when the note is not screened)."""
        out = self.screened_out(text)
        return frozenset() if out is None else out

    def screened_out(self, text: str) -> frozenset[int] | None:
        """The indices of the rules that cannot match in `text`, or None when the note is not screened (every
        rule may match; a `needs` read from the screen alone must then be searched)."""
        found = self._found(text)
        return None if found is None else self.screened - found

    def _found(self, text: str) -> frozenset[int] | None:
        """The screened rules all of whose supersets occur in `text`, or None when the note is not screened."""
        if not text.isascii():
            return None
        return _count(self._sets, self._needed, text.encode("ascii"))


def _count(sets: list, needed: dict[int, int], data: bytes) -> frozenset[int] | None:
    """RuleScreen._found's passes over an ASCII note's bytes (typed by screen.pxd)."""
    counts: dict[int, int] = {}
    for match, owner in sets:
        hits = match(data)
        if not hits or 0 not in hits:
            return None  # the pass failed (RE2 reports nothing then): screen nothing out
        for k in hits:
            for i in owner[k]:
                counts[i] = counts.get(i, 0) + 1
    return frozenset([i for i, n in counts.items() if n == needed[i]])
