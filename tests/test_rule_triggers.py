"""Trigger narrowing (engine/rules/triggers.py): `trigger_next` and dead triggers try a rule at fewer places, never
where its pattern can match. Each shortcut is compared with the same rules tried at every trigger (same hits, in
the same order: the order breaks ties between equal spans), and pinned by invented notes it must not skip."""

from __future__ import annotations

import copy

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.config import ConfigError, load_config
from deid_core.doc import Doc
from deid_core.engine.rules.loader import Rule, compile_rule, parse_example
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.engine.rules.triggers import TriggerIndex, cannot_start
from deid_core.notes import Note

TAGGER = RuleTagger(load_config().rules)
REFERENCE = copy.copy(TAGGER)
REFERENCE.triggers = TriggerIndex(TAGGER.rules, narrow=False)
NARROWED = [r for r in TAGGER.rules if r.trigger_next or any(rid == r.id for rid, _ in TAGGER.triggers.dead)]
GAPS = ["  ", "\t", " \n ", ":  ", "\u00a0", " \u00a0\u2009", "\n\n", "=  "]


def _hits(tagger: RuleTagger, text: str) -> list[tuple]:
    phi, sup = tagger.regex_hits(Doc(Note("e", text)))
    return [(s.start, s.end, s.label, s.source) for s in phi + sup]


def _same(text: str) -> None:
    assert _hits(TAGGER, text) == _hits(REFERENCE, text), repr(text)


def test_the_shipped_rules_narrow_some_triggers():
    assert {"nonphi-vent", "nonphi-bp", "hospital-transfer", "hospital-transfer-acronym", "city-lives-in",
            "date-ordinal-orientation", "nonphi-continued-home"} <= {
        r.id for r in TAGGER.rules if r.trigger_next}


def test_triggers_where_the_pattern_cannot_start_are_found():
    assert {("hospital-acronym-context", "at"), ("hospital-acronym-context", "from"), ("nonphi-vent", "ac")} <= set(
        TAGGER.triggers.dead)


@pytest.mark.parametrize("rule", [r for r in TAGGER.rules if r.triggers], ids=lambda r: r.id)
def test_every_example_and_negative_is_tagged_as_with_every_trigger_tried(rule):
    for example in rule.examples + rule.negatives:
        _same(parse_example(example)[0])


@pytest.mark.parametrize("rule", NARROWED, ids=lambda r: r.id)
@pytest.mark.parametrize("gap", GAPS, ids=repr)
def test_narrowed_rules_examples_with_their_blanks_stretched(rule, gap):
    for example in rule.examples + rule.negatives:
        text = parse_example(example)[0]
        _same(text.replace(" ", gap))
        _same(regex.sub(r"(?<=\w)(?=[\s:=])", gap, text))


# invented notes each shortcut must not skip: (text, rule, the span's text)
PINNED = [
    ("BP 120/80 at rest", "nonphi-bp", "BP 120/80"),
    ("BP:  120/80 at rest", "nonphi-bp", "BP:  120/80"),
    ("B/P:\t\t 110/70", "nonphi-bp", "B/P:\t\t 110/70"),
    ("A-line=\u00a0\u00a0\u00a0118/60", "nonphi-bp", "A-line=\u00a0\u00a0\u00a0118/60"),
    ("art\n\nline 100/50", "nonphi-bp", "art\n\nline 100/50"),
    ("PEEP 5/5 then", "nonphi-vent", "PEEP 5/5"),
    ("I:E    1/2 then", "nonphi-vent", "I:E    1/2"),
    ("H/H   9/27 then", "nonphi-vent", "H/H   9/27"),
    ("bun/cr  23/1.1", "nonphi-vent", "bun/cr  23/1.1"),
    ("K \u0665/\u0664 then", "nonphi-vent", "K \u0665/\u0664"),  # \d reads Arabic-Indic digits too
    ("was transferred\n\nback  to Walden Hospital for care", "hospital-transfer", "Walden"),
    ("was med-flighted  to Ostrow General for care", "hospital-transfer", "Ostrow"),
    ("sent back to RMH today", "hospital-transfer-acronym", "RMH"),
    ("patient grew  up in Springfield and", "city-lives-in", "Springfield"),
    ("daughter lives\tnear Worcester and", "city-lives-in", "Worcester"),
    ("ABG 7.35/49/117 sat", "nonphi-lab-run", "7.35/49/117"),  # its `needs`: a digit, '/', a number, '/', a digit
    ("CO/CI/SVR  3.43/1.98/1609", "nonphi-lab-run", "3.43/1.98/1609"),
    ("Is she oriented? It's  the\n14th, she says", "date-ordinal-orientation", "14th"),
    ("today   is 3rd of", "date-ordinal-orientation", "3rd"),
    ("coumadin held\n\nthe home dose", "nonphi-continued-home", "held\n\nthe home"),
    ("seen at NWH for same", "hospital-acronym-context", "NWH"),
    ("transferred from RMH yesterday", "hospital-acronym-context", "RMH"),
]


@pytest.mark.parametrize(("text", "rule", "span"), PINNED, ids=[p[0] for p in PINNED])
def test_a_note_a_shortcut_must_not_skip(text, rule, span):
    got = {(text[s:e], src) for s, e, _, src in _hits(TAGGER, text)}
    assert (span, rule) in got
    _same(text)


_WORDS = sorted({w for r in NARROWED for w in r.triggers + r.trigger_next if w != "#"}) + [
    "120/80", "5/5", "7.35/40/90", "\u0663/\u0664", "Walden", "Hospital", "General", "RMH", "the", "x", "up", "med"]
_SEPS = [" ", "  ", "\t", "\n", ":", ": ", "=", "-", "/", "\u00a0", ",  ", ""]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_SEPS)), min_size=1, max_size=12))
def test_any_run_of_trigger_words_is_tagged_as_with_every_trigger_tried(parts):
    _same("".join(w.title() if len(w) % 3 == 0 else w for w, sep in parts for w in (w, sep)))


@pytest.mark.parametrize(("pattern", "word", "dead"), [
    (r"\bseen\s+at\s+\w+", "at", True),
    (r"\bseen\s+at\s+\w+", "seen", False),
    (r"(?<=seen )at\s+\w+", "at", False),  # a look-behind reads before the trigger: never judged
    (r"\Bat\s+\w+", "at", False),  # '_at': \B holds there
    (r"(?-i:AT)\s+\w+", "at", False),  # the trigger text reads 'AT' as 'at'
    (r"(?i:ward)\s+\d", "ward", False),
    (r"\u212a\d", "k", False),  # the Kelvin sign reads as 'k'
    (r"\bmg\s+\d", "k", True),
    (r"\bk\d", "k", False),  # a partial match: the trigger word may go on
    (r"\w{1,4}\s+\d", "longer", True),
    (r"7\s+north", "7", False),  # any Unicode digit reads as '0': not judged
])
def test_cannot_start(pattern, word, dead):
    assert cannot_start(regex.compile(pattern), word) is dead


@pytest.mark.parametrize(("fields", "message"), [
    ({"trigger_next": ("#",)}, "has none"),
    ({"triggers": ("bp",), "trigger_next": ("to",), "examples": ("[[bp 120/80]]",)}, "followed by"),
    ({"triggers": ("bp",), "trigger_next": ("",)}, "empty"),
])
def test_bad_trigger_next_is_refused(fields, message):
    with pytest.raises(ConfigError, match=message):
        compile_rule(Rule("t-bad", "NONPHI", r"\bbp\s*\d+/\d+", **fields))


def test_trigger_next_holds_in_its_examples():
    rule = compile_rule(Rule("t-ok", "NONPHI", r"\bbp\b[\s:]*\d+/\d+", triggers=("bp",), trigger_next=("#",),
                             examples=("[[BP:  120/80]]",)))
    assert rule.trigger_next == ("#",)
