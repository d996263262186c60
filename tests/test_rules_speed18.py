"""Round 18's gates on round 17's costly merge-only rules: the same rule hits, in the same order, with and without them.

`organization17-firm-work` (triggers 'at', 'with': ~4 tries per dev note) and `city17-after-facility-name` (kind words
and credentials: ~1.6 tries per synthetic note) got a literal-first `needs` (docs/BENCHMARKS.md "Round 18"). A `needs`
only skips a rule in a note where it cannot match, so every hit must stay: checked against a tagger whose copies of
these rules have no `needs`, on the rules' own texts, invented notes that hold their triggers in many contexts, and
synthetic notes.
"""

from __future__ import annotations

import dataclasses

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note
from tests.gate_notes import gate_texts, regex_hits, tagger_with, training_type_notes

GATED18 = {"organization17-firm-work", "city17-after-facility-name"}

TAGGER = RuleTagger(load_config({}).rules)


@pytest.fixture(scope="module")
def ungated():
    """The rules stage with the round-18 `needs` taken off (the reference every hit is compared with)."""
    plain = tagger_with(lambda r: dataclasses.replace(r, needs="") if r.id in GATED18 else r)
    assert {r.id for r in plain.rules if r.id in GATED18 and not r.needs} == GATED18
    return plain


# Invented lines: the rules' frames, near misses, and their triggers in everyday clinical sentences.
LINES = [
    "Works at Quillby, Zandrow and Marsh as a clerk.", "works at Quillby, Zandrow & Marsh", "works at home, school and church",
    "EMPLOYED BY QUILLBY, ZANDROW AND MARSH.", "Employer: Quillby, Zandrow, and Marsh", "a teacher at Quillby, Zandrow and Marsh.",
    "Lasix, Vanco and Zosyn given with dinner.", "sat with wife, son and daughter at bedside", "at 0800, 1200 and 1600",
    "seen at Quell Clinic (Quellton) last week", "PCP: Dr. Ann Zandrow, MD (Quellton)", "Hospital: Quell Memorial, Quellton",
    "Quell Clinic (Cardiology)", "Quell Hospital, Main Campus", "Ann Quillby, MD, Quellton Surgical", "clinic (AM) with Dr. Quillby",
    "medical, surgical and social history reviewed", "Health, Wellness and Fitness", "group (PT, OT) at 2 pm",
    "Sp. MD(Quellton)", "CENTER,  QUELLTON", "Pharmacy, Quellbury", "np (Zandrow) at bedside",
]


def _notes() -> list[str]:
    own, invented = gate_texts(TAGGER, GATED18, LINES)
    return own + invented + training_type_notes(40, seed=1818, n_patients=12)


def test_the_gated_rules_have_their_needs():
    assert {r.id for r in TAGGER.rules if r.id in GATED18 and r.needs} == GATED18


def test_every_rule_hit_is_the_same_in_the_same_order(ungated):
    differ = [k for k, text in enumerate(_notes()) if regex_hits(TAGGER, text) != regex_hits(ungated, text)]
    assert not differ, f"notes whose rule hits differ: {differ}"


@pytest.mark.parametrize("text, rule_id", [
    ("She continues to work at Quillby, Zandrow and Marsh daily.", "organization17-firm-work"),
    ("Seen at Quell Clinic (Quellton) for follow-up.", "city17-after-facility-name"),
    ("Hospital: Quell Memorial, Quellton\n", "city17-after-facility-name"),
])
def test_the_gate_lets_the_rule_hit(text, rule_id):
    assert rule_id in {s.source for s in regex_hits(TAGGER, text)[0]}


@pytest.mark.parametrize("text, rule_id", [
    ("sat with wife at bedside, then at 0800 with RN", "organization17-firm-work"),
    ("seen in clinic at noon; hospital course reviewed", "city17-after-facility-name"),
])
def test_a_note_without_the_gate_skips_the_rule(text, rule_id):
    i = next(k for k, r in enumerate(TAGGER.rules) if r.id == rule_id)
    assert TAGGER.triggers.starts(Doc(Note("n", text)))[0].get(i)  # its triggers are there ...
    assert i in TAGGER.screen.ruled_out(text) or not TAGGER.need_patterns[i].search(text)  # ... its gate is not


# Review18: a `needs` is searched over the whole note (the RE2 screen lets it run on any non-ASCII note), so it must be
# linear there too. The facility gate's look-behind once stood after the blanks: read again at every blank the
# `[ \t]+` gave back, quadratic on 'Clinic,' and a long run of blanks (~1 s at 10,000 characters).
HOSTILE = {
    "a kind word, a comma and blanks": lambda n: ("é Clinic," + " \t" * n)[:n],
    "a kind word, a bracket and blanks": lambda n: ("é Clinic (" + " " * n)[:n],
    "a kind word, blanks and a bracket": lambda n: ("é Clinic" + " " * n)[:n - 1] + "(",
    "a partner's comma and blanks": lambda n: ("é works at Quillby," + " " * n)[:n],
    "kind words and commas": lambda n: ("Hospital, " * n)[:n],
    "partners and commas": lambda n: ("Quillby, Zandrow-" * n)[:n],
}


@pytest.mark.parametrize("rule_id", sorted(GATED18))
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
