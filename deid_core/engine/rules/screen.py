"""One pass over a note decides which regex rules can match in it at all (an RE2 Set of their supersets).

Most rules match nowhere in a given note, and `regex` spends most of a rule's time scanning text where
it does not match. Each rule's pattern has supersets in RE2 syntax (superset.py: found in every ASCII
note where the pattern matches); RE2's Set finds which of them occur in one linear pass over the note
(a DFA; `google-re2`, wheels for x86-64 and aarch64). A rule some of whose supersets are absent cannot
match and is skipped; every other rule runs exactly as before, so the hits are the same.
Fail closed: a note that is not ASCII, or a pass whose DFA gave up (RE2 then reports no match at all:
the set holds a pattern that always matches, so its absence shows it), screens nothing out.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from deid_core.engine.rules.superset import superset

_ALWAYS = r"\z"  # found in every text: missing from a pass's result only when the pass failed
_MAX_MEM = 64 << 20  # RE2's budget for the set's program and DFA cache (the default 8 MB is enough today)


class RuleScreen:
    """The rules (by index) that may match in a note, from one RE2 Set pass over it."""

    def __init__(self, patterns: Sequence[tuple[str, str] | None]) -> None:
        """patterns: each rule's (pattern, flags) in `regex` syntax, in rule order (None: never screened out).
        A rule is screened for its `search` over the whole note (scan rules; not for matches in a window)."""
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1  # ASCII notes only: one byte per character
        options.max_mem = _MAX_MEM
        options.log_errors = False
        self._options = options
        self._set = re2.Set.SearchSet(options)
        self._set.Add(_ALWAYS)
        self._owner: list[int] = [-1]  # set entry -> rule index (-1: the canary, entry 0)
        needed: dict[int, int] = {}
        for i, entry in enumerate(patterns):
            if entry is None:
                continue
            found = superset(*entry)
            if found is None or not self._add_all(i, found):
                continue
            needed[i] = len(found)
        self._set.Compile()
        self.screened = frozenset(needed)  # rules this screen can rule out
        self._always = frozenset(range(len(patterns))) - self.screened
        self._single = tuple(needed.get(i) == 1 for i in range(len(patterns)))
        self._needed = needed

    def _add_all(self, rule: int, found: tuple[str, ...]) -> bool:
        """Add a rule's supersets; False (nothing added) when RE2 refuses one of them."""
        for p in found:
            try:
                re2.compile(p.encode("ascii"), self._options)  # refuse before touching the set: it keeps what it took
            except re2.error:
                return False
        for p in found:
            self._set.Add(p.encode("ascii"))
            self._owner.append(rule)
        return True

    def possible(self, text: str) -> frozenset[int] | None:
        """The indices of the rules that may match in `text`, or None when every rule may (not screened)."""
        if not text.isascii():
            return None
        hits = self._set.Match(text.encode("ascii"))
        if not hits or 0 not in hits:
            return None  # the pass failed (RE2 reports nothing then): screen nothing out
        owner, single = self._owner, self._single
        out = set(self._always)
        counts: dict[int, int] = {}
        for k in hits:
            i = owner[k]
            if i < 0:
                continue
            if single[i]:
                out.add(i)
            else:
                counts[i] = counts.get(i, 0) + 1
        out.update(i for i, n in counts.items() if n == self._needed[i])
        return frozenset(out)
