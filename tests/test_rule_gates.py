"""Scan rules' cost made visible: every shipped scan rule declares a gate or is listed as measured cheap,
and every `needs`/`anchors` gate is a necessary condition of its pattern on the rule's own texts.

A scan rule (no `triggers`) is searched over every note; without a gate (`requires`, `needs`, `anchors`,
`guard`) a pattern that opens with look-behinds or a letter class costs 50-700 µs per note (round 4's
layout rules: docs/BENCHMARKS.md), which no unit test notices. A new scan rule therefore fails here
until it gets a gate or its per-note cost is measured and it is added to UNGATED.
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.rules.loader import parse_example
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.gazetteers import lowered, normalize_phrase
from deid_core.notes import Note

# Ungated scan rules and their plain search cost, µs per PhysioNet note (CPU, min of 5 passes over the
# 1,213 dev notes, round 4): `regex` skips to a literal or a narrow first character, so a gate would
# not pay for itself. Measure a rule the same way before listing it; above ~20 µs give it a gate.
UNGATED = {
    "date-mdy": 2.8, "date-mdy-dash": 4.5,
    "date-md": 5.8, "date-my-glued": 2.3, "date-my": 2.8,
    "hospital-acronym": 6.9, "city-state": 1.6, "state-after-city": 1.7,
    "hospital-ward-number": 8.4, "name-initial-last": 5.1, "name-initial-surname": 9.6,
    "name-dictation-initials": 3.9, "name-transcriptionist-initials": 3.6, "nonphi-strength": 1.4,
    "nonphi-strength-after": 1.2, "nonphi-pain-score": 0.8, "nonphi-ratio-time": 2.6, "nonphi-vent-settings": 4.3,
    "nonphi-fraction-exam": 3.4, "nonphi-same-fraction": 1.4, "nonphi-fraction-of": 3.1, "nonphi-vital-range": 5.7,
}

TAGGER = RuleTagger(load_config({}).rules)
SCAN = [r for r in TAGGER.rules if not r.triggers]


def _gated(rule) -> bool:
    return bool(rule.requires or rule.needs or rule.anchors or rule.digits or rule.guard)


def test_every_scan_rule_has_a_gate_or_a_measured_cost():
    ungated = sorted(r.id for r in SCAN if not _gated(r) and r.id not in UNGATED)
    assert not ungated, f"scan rules without requires/needs/anchors/guard (give them one, or measure and list): {ungated}"


def test_the_ungated_list_names_ungated_scan_rules():
    current = {r.id for r in SCAN if not _gated(r)}
    assert set(UNGATED) <= current, f"stale entries (gone, gated or triggered): {sorted(set(UNGATED) - current)}"


def _texts(rule) -> list[str]:
    """The rule's examples and negatives as plain text, in their own, upper, lower and title case."""
    plain = [parse_example(e)[0] for e in rule.examples] + list(rule.negatives)
    return [v for t in plain for v in (t, t.upper(), t.lower(), t.title())]


@pytest.mark.parametrize("rule", [r for r in TAGGER.rules if r.needs or r.anchors], ids=lambda r: r.id)
def test_gates_hold_wherever_the_pattern_matches(rule):
    """`needs` and `anchors` are necessary conditions: wherever the pattern matches, the gate lets the note in."""
    anchors = [" " + normalize_phrase(a) for a in rule.anchors]
    need = rule.needs and TAGGER.need_patterns[TAGGER.rules.index(rule)]
    checked = 0
    for text in _texts(rule):
        if rule.compiled[0].search(text) is None:
            continue
        checked += 1
        assert not need or need.search(text), f"{rule.id}: matches {text!r} but its needs does not"
        low = lowered(Doc(Note("g", text)))
        assert not anchors or any(a in low for a in anchors), f"{rule.id}: matches {text!r} but no anchor begins a word"
    assert checked, f"{rule.id}: no example matches the pattern"


def _digit_variants(text: str, rng) -> list[str]:
    """The text with one digit removed, one replaced by a space, one doubled, and its digits shuffled:
    runs one shorter and one longer than the example's, in the places the pattern reads."""
    pos = [i for i, c in enumerate(text) if c.isdigit()]
    out = []
    for i in pos:
        out += [text[:i] + text[i + 1:], text[:i] + " " + text[i + 1:], text[:i] + text[i] + text[i:]]
    digits = [text[i] for i in pos]
    for _ in range(5):
        rng.shuffle(digits)
        chars = list(text)
        for i, d in zip(pos, digits, strict=True):
            chars[i] = d
        out.append("".join(chars))
    return out


@pytest.mark.parametrize("rule", [r for r in TAGGER.rules if r.digits], ids=lambda r: r.id)
def test_digit_gates_hold_wherever_the_pattern_matches(rule):
    """`digits` is a necessary condition: wherever the pattern matches an ASCII text, the text holds that many
    digits in a row (each rule's `digits` comment names the part of its pattern that needs them)."""
    import random

    from deid_core.engine.rules.prefilter import digit_shape

    rng = random.Random(rule.id)
    run = b"0" * rule.digits
    texts = [v for t in _texts(rule) for v in (t, *_digit_variants(t, rng))]
    checked = 0
    for text in texts:
        if not text.isascii() or rule.compiled[0].search(text) is None:
            continue
        checked += 1
        assert run in digit_shape(text), f"{rule.id}: matches {text!r} without {rule.digits} digits in a row"
    assert checked, f"{rule.id}: no example matches the pattern"


# `needs` rewritten literal-first for speed: the old form, which the shipped one must agree with everywhere.
REWRITTEN_NEEDS = {"age-not-temperature": r"(?i:[\d°gs]\s{0,2}f\b)"}


@settings(deadline=None, max_examples=2000)
@given(st.text(alphabet="0123456789°gsGSfFſK \t\n.x_aé", max_size=16))
def test_rewritten_needs_agree_with_their_old_form(text):
    for rid, old in REWRITTEN_NEEDS.items():
        i = [r.id for r in TAGGER.rules].index(rid)
        assert (regex.search(old, text) is None) == (TAGGER.need_patterns[i].search(text) is None), (rid, text)
