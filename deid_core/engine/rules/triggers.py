"""Where each triggered rule is tried: one Aho-Corasick pass over the note's trigger text for every rule.

The automaton reads `trigger_text(doc)`: `lowered(doc)` (lower case, ASCII punctuation as blanks, same
offsets plus one), and on a note that is not ASCII also the other Unicode blanks (no-break space...: `regex`'s
\\s, as the tokenizer reads them) as spaces and the other Unicode digits (`regex`'s \\d) as '0'. A trigger is
stored as ' phrase ' (whole words), so its words match one blank or punctuation mark apart ('updated by',
'updated-by').

Runs of blanks (round 14): a note's words are often further apart ('Documented  by', 'Updated,  by',
'red\\n\\npod'). Each phrase w1 .. wk also gets the keys ' w1 .. wj  ' (its first j words, then two blanks),
whose hit is a trigger when the phrase's other words follow, each after a run of blanks (a small `regex`
match on the trigger text). The trigger then never asks for less blank space than a pattern may allow; the
rule's pattern decides (`[ \\t]+` between the words does not match across a line break, `\\s+` does).

`trigger_next` (round 14): a rule whose pattern can only match where one of a few words, or a number ('#'),
follows its trigger (after blanks or punctuation: `peep 5/5`, `BP: 120/80`, `transferred back to`) has its
triggers stored with each next word ('transferred to', 'bp 1', 'bp  1'), so the automaton finds the few
places the pattern can match and the others are never tried. A necessary condition like `needs`: every
example holds a trigger followed by a next word (loader.py), and tests/test_rule_engine.py checks on the
examples and invented notes that every match of the pattern is still tried.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from math import prod

import ahocorasick
import regex

from deid_core.config import ConfigError
from deid_core.doc import Doc
from deid_core.engine.rules.prefilter import risky_syntax
from deid_core.gazetteers import lowered, normalize_phrase

NUMBER = "#"  # in `trigger_next`: a digit follows the trigger (after blanks or punctuation)
_DIGITS = "0123456789"
# the characters beyond ASCII that `regex`'s \s (and str.isspace) reads as blank, each as one space
_BLANKS = {c: " " for c in range(0x80, 0x3001) if chr(c).isspace()}
_OTHER_DIGIT = regex.compile(r"(?=[^\x00-\x7f])\d")
ANCHOR, RUN = -1, -2  # automaton values (back, rules): an anchor word; a key whose hit is checked further


def trigger_text(doc: Doc) -> str:
    """What the automaton reads: `lowered(doc)`, on a note that is not ASCII with every Unicode blank as a space
    and every other Unicode digit as '0' (the same length: offsets as in the note plus one)."""
    low = lowered(doc)
    return low if doc.text.isascii() else _OTHER_DIGIT.sub("0", low.translate(_BLANKS))


def _words(phrase: str, rule_id: str, what: str) -> list[str]:
    norm = normalize_phrase(phrase)
    if not norm:
        raise ConfigError(f"rule {rule_id}: empty {what} {phrase!r}")
    return norm.split(" ")


class TriggerIndex:
    """The automaton of every rule's triggers (and scan rules' anchors) and the positions it finds in a note."""

    def __init__(self, rules: Sequence, narrow: bool = True) -> None:
        """rules: loader.Rule objects (`id`, `triggers`, `trigger_next`, `anchors`, `compiled`), in rule order;
        narrow=False: every trigger tried wherever it occurs (no `trigger_next`, no dead triggers: the reference
        the tests compare with)."""
        # key -> rule entries: i (try the rule where the key's phrase starts) or ~i (only enter the rule in the
        # note's order of rules: a trigger narrowed by `trigger_next`, or one where its pattern cannot match)
        exact: dict[str, set[int]] = {}  # ' w1 .. wk ' (or '... 5'): the phrase starts len - 1 before the key's end
        runs: dict[str, dict[str, set[int]]] = {}  # ' w1 .. wj  ' -> pattern of what must follow -> entries
        anchors: dict[str, set[int]] = {}
        self.dead: list[tuple[str, str]] = []  # (rule id, trigger) where the rule's pattern cannot match
        for i, r in enumerate(rules):
            nexts = [NUMBER if n == NUMBER else " ".join(_words(n, r.id, "trigger_next"))
                     for n in r.trigger_next] if narrow else []
            for trig in r.triggers:
                words = _words(trig, r.id, "trigger")
                dead = narrow and len(words) == 1 and cannot_start(r.compiled[0], words[0])
                if dead:
                    self.dead.append((r.id, trig))
                if dead or nexts:  # the key still enters the rule in the note's order of rules
                    _phrase_keys(words, ~i, exact, runs)
                if not dead:
                    for nxt in nexts or [""]:
                        _phrase_keys(words + nxt.split(" ") if nxt else words, i, exact, runs)
            for word in r.anchors:
                anchors.setdefault(normalize_phrase(word), set()).add(i)
        self.automaton = ahocorasick.Automaton()
        for key, idx in exact.items():
            self.automaton.add_word(key, (len(key) - 1, _entries(idx)))
        for key, idx in anchors.items():  # a word start, not a whole word
            self.automaton.add_word(f" {key}", (ANCHOR, tuple(sorted(idx))))
        for key, tails in runs.items():
            by_rules: dict[tuple[int, ...], list[str]] = {}
            for tail, idx in tails.items():
                by_rules.setdefault(_entries(idx), []).append(tail)
            self.automaton.add_word(key, (RUN, (len(key) - 1, tuple(
                (regex.compile(" *(?:" + "|".join(sorted(alts)) + ")"), idx) for idx, alts in sorted(by_rules.items())))))
        self.active = bool(exact or anchors)
        if self.active:
            self.automaton.make_automaton()

    def starts(self, doc: Doc) -> tuple[dict[int, list[int]], set[int]]:
        """(triggered rule -> the note offsets where it is tried, in text order with repeats; the rules one of
        whose `anchors` begins a word of the note), from one automaton pass. The rules are in the order their
        first trigger word occurs (a narrowed rule's with no offset where none of its narrowed keys occurs):
        the order of their spans, which breaks ties between equal spans when overlaps are resolved."""
        starts: dict[int, list[int]] = {}
        anchored: set[int] = set()
        if self.active:
            _collect(self.automaton, trigger_text(doc), starts, anchored)
        return starts, anchored


def _collect(automaton: ahocorasick.Automaton, low: str, starts: dict[int, list[int]], anchored: set[int]) -> None:
    """TriggerIndex.starts' pass of the automaton over the trigger text `low` (its loop, typed by triggers.pxd)."""
    for end_idx, (back, idx) in automaton.iter(low):
        if back < 0:
            if back == ANCHOR:
                anchored.update(idx)
                continue
            back, tails = idx  # a phrase's first words and a run of blanks: does the rest follow?
            idx = ()
            for tail, entries in tails:
                if tail.match(low, end_idx + 1) is not None:
                    idx += entries
            if len(tails) > 1:
                idx = tuple(sorted(idx, key=_rule))
        pos = end_idx - back
        for i in idx:
            if i >= 0:
                found = starts.get(i)
                if found is None:
                    starts[i] = [pos]
                else:
                    found.append(pos)
            elif ~i not in starts:
                starts[~i] = []


def _rule(entry: int) -> int:
    return entry if entry >= 0 else ~entry


def _entries(idx: set[int]) -> tuple[int, ...]:
    """A key's entries in rule order; a rule tried there is not also only entered."""
    return tuple(sorted((i for i in idx if i >= 0 or ~i not in idx), key=_rule))


def _case_forms(word: str, folded: bool) -> list[str] | None:
    """Every string the trigger text reads as `word` (letters in any case, the Kelvin sign...; one of them
    when the pattern ignores case), or None when there are too many or any Unicode digit may stand there."""
    if any(c.isdigit() for c in word):
        return None
    if folded:
        return [word]
    options = [_PREIMAGES.get(c, (c,)) for c in word]
    if prod(len(o) for o in options) > 64:
        return None
    return ["".join(p) for p in product(*options)]


_PREIMAGES: dict[str, tuple[str, ...]] = {}
for _c in range(0x3001):
    _low = chr(_c).lower()
    if len(_low) == 1 and _low.isascii() and _low.isalpha():
        _PREIMAGES[_low] = (*_PREIMAGES.get(_low, ()), chr(_c))


def cannot_start(pattern: regex.Pattern, word: str) -> bool:
    """True when no match of `pattern` can start at the word (a one-word trigger) in any note: a partial match
    of every form of the word, after each kind of character a trigger can follow, fails. Only for patterns
    without look-behinds (they read before the trigger) and with no syntax Python's parser reads otherwise."""
    if "(?<" in pattern.pattern or risky_syntax(pattern.pattern):
        return False
    forms = _case_forms(word, bool(pattern.flags & regex.IGNORECASE))
    if forms is None:
        return False
    for form in forms:
        for before in ("", " ", "\n", ".", "_", "-", "(", ":"):
            if pattern.match(before + form, len(before), partial=True) is not None:
                return False
    return True


def _phrase_keys(seq: list[str], i: int, exact: dict[str, set[int]], runs: dict[str, dict[str, set[int]]]) -> None:
    """The keys of one phrase (words, the last one NUMBER when a digit must follow) for entry i: every gap one
    blank, or two before a digit, as exact keys; a longer run at any gap as a key checked further."""
    number = seq[-1] == NUMBER
    words = seq[:-1] if number else seq
    phrase = " ".join(words)
    if number:
        for sep in (" ", "  "):
            for d in _DIGITS:
                exact.setdefault(f" {phrase}{sep}{d}", set()).add(i)
        runs.setdefault(f" {phrase}   ", {}).setdefault("[0-9]", set()).add(i)
    else:
        exact.setdefault(f" {phrase} ", set()).add(i)
    end = " +[0-9]" if number else "(?= )"
    for j in range(1, len(words)):
        tail = " +".join(map(regex.escape, words[j:])) + end
        runs.setdefault(" " + " ".join(words[:j]) + "  ", {}).setdefault(tail, set()).add(i)
