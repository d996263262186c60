"""Round 19's screen-read gates (`needs_search = false`): the same rule hits, in the same order, with and without them.

`city18-shape-after-preposition` (triggers 'in', 'near', 'outside', 'around', 'from', 'to': ~6.7 tries per dev note,
the stage's costliest rule) and `city18-message-frame` ('in', 'at': ~3 tries per dev note) got a `needs` read from the
RE2 screen's one pass alone (docs/BENCHMARKS.md "Round 19"). A gate only skips a rule in a note where it cannot match,
so every hit must stay: checked against a tagger whose copies of the rules have no `needs`, on the rules' own texts, invented notes holding its triggers in many contexts (ASCII, read by the
screen, and with a non-ASCII character, where the `needs` is searched instead) and synthetic training-type notes.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from deid_core.config import ConfigError, load_config
from deid_core.doc import Doc
from deid_core.engine.rules.loader import Rule, compile_rule
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note
from tests.gate_notes import gate_texts, regex_hits, tagger_with, training_type_notes

GATED19 = {"city18-shape-after-preposition", "city18-message-frame"}

TAGGER = RuleTagger(load_config({}).rules)


@pytest.fixture(scope="module")
def ungated():
    """The rules stage with the round-19 gates taken off (the reference every hit is compared with)."""
    plain = tagger_with(lambda r: dataclasses.replace(r, needs="", needs_search=True) if r.id in GATED19 else r)
    assert {r.id for r in plain.rules if r.id in GATED19 and not r.needs} == GATED19
    return plain


# Invented lines: the rule's frames, near misses, and its triggers in everyday clinical sentences.
LINES = [
    "I'm in Quellsburg until Friday.", "we are moving to quillbyville next week", "lives outside of Zandrowfield",
    "driving back from Ashfield tonight", "He is heading up to North Marlowton for", "seen in Cardiology",
    "moved from bedside to chair", "sent to Quellsford by fax", "a call from Carlton about", "placed in Trendelenburg.",
    "went to Quellton Hospital", "I AM IN QUELLSBURG TILL FRIDAY", "in bedside table", "transfer to support",
    "OOB to chair, walked around unit", "from Washington last week", "near   Port   Zandrowton, ME", "to\tBoston,",
    "Unsteady in Romberg, in skeleton", "drove in from Quellsmouth 20 years ago", "way to Quellhaven 3/1",
    "I'll be back in Quellhaven next week.", "Pt is out of town in Ashbury until Monday.", "I'm in Chemo today.",
    "I'm at my sister's in Marlowton this week.", "Her PCP is in Quellwood.", "we are   still   in  Zandrow Falls",
    "I am in pain at Quellton", "daughter's house in Quellport, ME", "Her PCP is in agreement.", "I'm at  Quellbury",
    "I'm in Atrial Fibrillation now.", "i'm in quellton", "WE'LL BE HOME IN QUELLFORD", "snowed in at Quellmouth.",
]


@functools.cache
def _notes() -> list[str]:
    own, invented = gate_texts(TAGGER, GATED19, LINES)
    synth = training_type_notes(30, seed=1919, n_patients=10)
    # not ASCII (the `needs` is searched): the rules' texts as written, and the invented lines
    return own + invented + synth + ["é " + t for t in own[::4] + invented]


def test_the_gated_rules_have_a_screen_read_needs():
    assert {r.id for r in TAGGER.rules if r.id in GATED19 and r.needs and not r.needs_search} == GATED19
    assert all(i in TAGGER.screen.screened for i, r in enumerate(TAGGER.rules) if r.id in GATED19)


def test_every_rule_hit_is_the_same_in_the_same_order(ungated):
    gated = [regex_hits(TAGGER, text) for text in _notes()]
    differ = [k for k, (text, hits) in enumerate(zip(_notes(), gated, strict=True)) if hits != regex_hits(ungated, text)]
    assert not differ, f"notes whose rule hits differ: {differ}"
    assert sum("city18-shape-after-preposition" in {s.source for s in hits[0]} for hits in gated) >= 20


@pytest.mark.parametrize("text, rule_id", [
    ("I'm in Quellsburg until Friday.", "city18-shape-after-preposition"),
    ("we are moving to quillbyville next week", "city18-shape-after-preposition"),
    ("é I'm in Quellsburg until Friday.", "city18-shape-after-preposition"),
    ("lives outside of Zandrowfield.", "city18-shape-after-preposition"),
    ("I'll be back in Quellhaven next week.", "city18-message-frame"),
    ("é I'm at my sister's in Marlowton this week.", "city18-message-frame"),
])
def test_the_gate_lets_the_rule_hit(text, rule_id):
    assert rule_id in {s.source for s in regex_hits(TAGGER, text)[0]}


@pytest.mark.parametrize("text", ["moved from bedside to chair, sent to Quellsford by fax", "in bedside table",
                                  "transfer to support; seen in Cardiology"])
def test_a_note_without_the_gate_skips_the_rule_without_a_search(text, monkeypatch):
    i = next(k for k, r in enumerate(TAGGER.rules) if r.id == "city18-shape-after-preposition")
    assert TAGGER.triggers.starts(Doc(Note("n", text)))[0].get(i)  # its triggers are there ...
    searched = []
    real = TAGGER._has
    monkeypatch.setattr(TAGGER, "_has", lambda k, *a: searched.append(k) or real(k, *a))
    assert i in TAGGER.screen.ruled_out(text) or "city18-shape-after-preposition" not in {
        s.source for s in regex_hits(TAGGER, text)[0]}  # ... its gate is not
    regex_hits(TAGGER, text)
    assert i not in searched  # read from the screen: never searched with `regex` in an ASCII note


def test_a_screened_note_that_holds_the_superset_runs_the_rule_without_a_search(monkeypatch):
    """'to support' holds the gate's superset (a lower-case shape after 'to') but not the `needs`: the rule runs."""
    i = next(k for k, r in enumerate(TAGGER.rules) if r.id == "city18-shape-after-preposition")
    text = "Pt transferred to support group."
    assert i not in TAGGER.screen.ruled_out(text) and not TAGGER.need_patterns[i].search(text)
    searched = []
    real = TAGGER._has
    monkeypatch.setattr(TAGGER, "_has", lambda k, *a: searched.append(k) or real(k, *a))
    assert "city18-shape-after-preposition" in {s.source for s in regex_hits(TAGGER, "Pt is in Quellsburg now.")[0]}
    searched.clear()
    regex_hits(TAGGER, text)
    assert i not in searched  # an ASCII note: the screen decided
    regex_hits(TAGGER, "é " + text)
    assert i in searched  # the note the screen does not read: searched


def test_the_message_frame_gate_reads_the_pattern_s_own_frames():
    """The frame gate copies the pattern's opening look-behind: an edit of the frames must edit the gate too."""
    rule = next(r for r in TAGGER.rules if r.id == "city18-message-frame")
    body = _opening_lookbehind(rule.pattern)
    assert rule.needs.startswith(f"(?:{body})(?:(?i:in|at)[ \\t]+)?"), "city18-message-frame: its `needs` is not its frames"


def _opening_lookbehind(pattern: str) -> str:
    """The body of the look-behind that opens `pattern`."""
    assert pattern.startswith("(?<=")
    depth, k = 0, 0
    while k < len(pattern):
        if pattern[k] == "\\":
            k += 2
            continue
        depth += {"(": 1, ")": -1}.get(pattern[k], 0)
        if depth == 0:
            return pattern[4:k]
        k += 1
    raise AssertionError("unclosed look-behind")


def test_needs_search_false_needs_a_triggered_rule_with_needs():
    with pytest.raises(ConfigError, match="needs_search"):
        compile_rule(Rule(id="t19", label="CITY", pattern="in (?P<phi>Quell)", triggers=("in",), needs_search=False))
    with pytest.raises(ConfigError, match="needs_search"):
        compile_rule(Rule(id="t19", label="CITY", pattern="in (?P<phi>Quell)", needs="Quell", needs_search=False))
    with pytest.raises(ConfigError, match="needs_search"):
        compile_rule(Rule(id="t19", label="CITY", pattern="in Quell", triggers=("in",), needs="Q", needs_search="no"))


def test_a_needs_the_screen_cannot_read_refuses_to_start():
    """A fuzzy match (`regex` only) has no RE2 superset: `needs_search = false` would then gate nothing (fail closed)."""
    def change(r):
        return dataclasses.replace(r, needs=r"(?:Quellsburg){e<=1}") if r.id in GATED19 else r

    with pytest.raises(ConfigError, match="needs_search = false"):
        tagger_with(change)


# The `needs` is searched over the whole note where the screen does not read it (any non-ASCII note): linear there too.
HOSTILE = {
    "a preposition and blanks": lambda n: ("é to" + " \t" * n)[:n - 1] + "a",
    "prepositions": lambda n: ("é" + " to in" * n)[:n],
    "a long lower-case word": lambda n: ("é moving to " + "quell" * n)[:n],
    "a long capital word": lambda n: ("é in Q" + "uellton" * n)[:n],
    "frames": lambda n: ("é we are moving back to " * n)[:n],
    "a frame and blanks": lambda n: ("é I'm" + " \t" * n)[:n - 1] + "Q",
    "frames and blanks": lambda n: ("é I'm still now " * n)[:n],
    "kin and blanks": lambda n: ("é sister's" + " " * n)[:n - 2] + "in",
}


@pytest.mark.parametrize("rule_id", sorted(GATED19))
def test_the_gates_are_linear_on_hostile_notes(rule_id):
    from tests.adversarial import growth
    from tests.test_linear_time import RATIO_LIMIT

    need = TAGGER.need_patterns[next(k for k, r in enumerate(TAGGER.rules) if r.id == rule_id)]
    bad = []
    for kind, make in HOSTILE.items():
        ratio = min(growth(need.search, make, 1_000, 10_000, 3)[2] for _ in range(2))  # 10: linear, 100: quadratic
        if ratio >= RATIO_LIMIT:
            bad.append(f"{kind}: x{ratio:.0f}")
    assert not bad, f"{rule_id}'s `needs` grows faster than linear: {bad}"


def test_a_wrong_gate_is_caught(ungated):
    """The identity check sees a gate that is not a necessary condition (a planted `needs` of one invented town)."""
    wrong = tagger_with(lambda r: dataclasses.replace(r, needs="Zandrowfield") if r.id in GATED19 else r)
    texts = [f"{a}\n{b}" for a in LINES for b in ("", "Plan: continue.")]
    assert sum(regex_hits(wrong, t) != regex_hits(ungated, t) for t in texts) >= 5


# Review 19: each trigger of a gated rule, in the rule's own frames, with a capital and a lower-case town; a trigger or
# preposition added to a pattern (towns19 and later rounds edit these patterns) must reach its `needs` and the screen.
FRAMED = {"city18-shape-after-preposition": ["moving {t} {w}.", "we are moving {t} {w}.", "Pt is {t} {w}."],
          "city18-message-frame": ["I'm {t} {w}.", "I'll be back {t} {w}.", "out of town {t} {w}."]}


def _gate_lets_in(tagger: RuleTagger, i: int, rule: Rule) -> int:
    """How many framed texts match rule i's pattern (each must hold its `needs` and pass the screen: else an error)."""
    checked = 0
    for frame in FRAMED[rule.id]:
        for t in rule.triggers + (("outside of",) if "outside" in rule.triggers else ()):
            for w in ("Quellsburg", "quellsburg", "QUELLSBURG", "North Zandrowton"):
                text = frame.format(t=t, w=w)
                if rule.compiled[0].search(text) is None:
                    continue
                checked += 1
                assert tagger.need_patterns[i].search(text), f"{rule.id}: matches {text!r} but its needs does not"
                assert i not in tagger.screen.ruled_out(text), f"{rule.id}: matches {text!r}, screened out"
    return checked


@pytest.mark.parametrize("rule_id", sorted(GATED19))
def test_every_trigger_in_the_rule_s_frames_reaches_its_gate(rule_id):
    i = next(k for k, r in enumerate(TAGGER.rules) if r.id == rule_id)
    rule = TAGGER.rules[i]
    assert _gate_lets_in(TAGGER, i, rule) >= 2 * len(rule.triggers)


def test_a_trigger_the_gate_does_not_read_is_caught():
    """A planted gate without 'near' (as if 'near' were added to the pattern and not to its `needs`) fails the check."""
    def drop_near(r):
        return dataclasses.replace(r, needs=r.needs.replace("in|near|", "in|")) if r.id in GATED19 else r

    planted = tagger_with(drop_near)
    i = next(k for k, r in enumerate(planted.rules) if r.id == "city18-shape-after-preposition")
    assert "near" not in planted.rules[i].needs.split("[")[0]
    with pytest.raises(AssertionError, match="near"):
        _gate_lets_in(planted, i, planted.rules[i])
