"""The text the trigger automaton reads, and a multi-word trigger's keys for words set apart by runs of blanks.

The automaton holds every trigger as ' phrase ' over `lowered(doc)` (lower case, ASCII punctuation as
blanks), so a phrase's words match one blank or punctuation mark apart ('updated by', 'updated-by'). A
note's words are often further apart ('Documented  by', 'Updated,  by', 'red\\n\\npod'): for such runs each
phrase w1 .. wk also gets the keys ' w1 .. wj  ' (its first j words, then two blanks), and a hit of one is a
trigger when the phrase's other words follow it, each after a run of blanks. The trigger then never asks
for less blank space than a pattern may allow; the rule's own pattern decides (a pattern joining the words
with `[ \\t]+` does not match across a line break, one with `\\s+` does). On a note that is not ASCII the
other Unicode blanks (no-break space...: `regex`'s \\s, as the tokenizer reads them) are blanks too.
"""

from __future__ import annotations

from collections.abc import Mapping

import regex

from deid_core.doc import Doc
from deid_core.gazetteers import lowered

# the characters beyond ASCII that `regex`'s \s (and str.isspace) reads as blank, each as one space
_BLANKS = {c: " " for c in range(0x80, 0x3001) if chr(c).isspace()}


def trigger_text(doc: Doc) -> str:
    """`lowered(doc)` with every Unicode blank as a space (the same length: offsets as in the note plus one)."""
    low = lowered(doc)
    return low if doc.text.isascii() else low.translate(_BLANKS)


def phrase_runs(keys: Mapping[str, set[int]]) -> dict[str, tuple[int, tuple[tuple[regex.Pattern, tuple[int, ...]], ...]]]:
    """For the multi-word keys of `keys` (normalized phrase -> rule indices): automaton key ' w1 .. wj  ' ->
    (how far back of the key's end the phrase starts in the note, ((pattern of the words left, rules), ...));
    the pattern is matched on the trigger text right after the key."""
    tails: dict[str, dict[tuple[str, ...], set[int]]] = {}
    for phrase, idx in keys.items():
        words = phrase.split(" ")
        for j in range(1, len(words)):
            head = " " + " ".join(words[:j]) + "  "
            tails.setdefault(head, {}).setdefault(tuple(words[j:]), set()).update(idx)
    out = {}
    for head, rest in tails.items():
        by_rules: dict[tuple[int, ...], list[str]] = {}
        for words, idx in rest.items():
            by_rules.setdefault(tuple(sorted(idx)), []).append(" +".join(map(regex.escape, words)))
        out[head] = (len(head) - 1, tuple((regex.compile(" *(?:" + "|".join(sorted(alts)) + ")(?= )"), idx)
                                          for idx, alts in sorted(by_rules.items())))
    return out
