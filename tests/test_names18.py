"""Round 18 (names readable): frames for names that are dictionary words, a signature's time, the "ccm" role and
4-capital surname parts spread in their note. Invented names only."""

from __future__ import annotations

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.names import NameNet
from deid_core.engine.propagation import capital_part, propagate_note
from deid_core.notes import Note
from deid_core.spans import Span

CONFIG = load_config()
NET = NameNet(CONFIG.names)
OPTS = CONFIG.merge


def found(text: str) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label) for s in NET.run(Doc(Note("n", text)), NoteState())]


@pytest.mark.parametrize(("text", "expected"), [
    # an initial and a dictionary word (no frequent one) in capitals after "by", to the line end
    ("DATE - ORDERED BY G. BASKET\nINDICATION: COPD FLARE", [("G. BASKET", "DOCTOR")]),
    # a dictionary word after "Dr." in Title case
    ("Seen by Dr. Basket today.", [("Basket", "DOCTOR")]),
    # a capitals title and word as a whole field's value
    ("SUBMITTING MD: DR. LANTERN   COPIES TO: DR. QUILLBY", [("LANTERN", "DOCTOR"), ("QUILLBY", "DOCTOR")]),
    ("CALLED: DR. LANTERN", [("LANTERN", "DOCTOR")]),
    # a dictionary word in Title case as the subject of an age, after a field key
    ("Identifying data: Rusty is a 67year old male", [("Rusty", "PATIENT")]),
    ("Identifying data: Rusty is a 67 year old male", [("Rusty", "PATIENT")]),
    # a signature line with a date and a time after the credential
    ("will update cousin.\n\ncliff long, licsw  2/23/2017 at 0900", [("cliff long", "DOCTOR")]),
    ("Note written.\nquill brook, licsw  2/23/2017 at 9:00 pm", [("quill brook", "DOCTOR")]),
    # a case manager's abbreviation before a word in no dictionary
    ("CCM QUIBEX TO FOLLOW UP.", [("QUIBEX", "DOCTOR")]),
    ("ccm zandrow to arrange", [("zandrow", "DOCTOR")]),
])
def test_dictionary_word_names_in_frames(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", [
    "CV: BP 86/62. DR AWARE. NEO WEANED",  # capitals after "DR" in prose, no field
    "NOTIFIED: DR. AWARE",  # a relative's state / cue word as the value
    "MD: DR. ON CALL",  # a function word
    "BP low, DR. NOTIFIED",  # no field key before the title
    "Given by K. long walks daily",
    "caused by H. Flu",  # an organism: a short word, in Title case, or an abbreviation's shape in capitals
    "caused by C. Diff",
    "CAUSED BY C. DIFF",  # the word does not end the line or a clause, and is lower case
    "Dr. Orders: none",  # a field key, not a name
    "HPI: Mother is a 67 year old woman",  # a relative, not a name
    "HPI: Baby is a 3 day old",  # an addressee word
    "ID: Patient is a 45 yo man",
    "HPI: Cardiomyopathy is a 45 yo",  # a condition's ending
    "Summary: Fever is a 3 day history",  # no age after the copula
    "HPI: Pleasant is a 45 yo",  # a mood word
    "Note written.\nwound care rn  2/23/2017 at 0900",  # a service before the credential: no name evidence
    "Note written.\nnight float md at 0900",
    "pain at site rn at bedside",
    "CCM to follow up.",
    "ccm team aware",
])
def test_near_misses_stay_clear(text):
    assert found(text) == []


@pytest.mark.parametrize(("word", "expected"), [
    ("VEOV", True), ("QUOB", True),
    ("MICU", False), ("HCTZ", False), ("PEEP", False), ("CPAP", False), ("ARDS", False),  # clinical words
    ("LOVE", False),  # a dictionary word
    ("Veov", False), ("VEOVA", False), ("VEO", False),  # not four capitals
    ("BRMS", False),  # no vowel: an abbreviation's shape
])
def test_capital_part(word, expected):
    assert capital_part(word) is expected


def _propagated(text: str, spans: list[Span]) -> list[str]:
    return [text[s.start:s.end] for s in propagate_note(spans, text, OPTS)]


def test_four_capital_surname_spreads_in_capitals_in_its_note():
    text = "READ BY: SASAVAQE VEOV, MD\nFINDINGS CALLED AT 08:15 BY VEOV."
    spans = [Span(9, 22, "DOCTOR", "crf:single")]
    assert _propagated(text, spans) == ["SASAVAQE VEOV", "VEOV"]


def test_four_capital_part_without_a_name_word_beside_it_stays():
    # the other word is clinical: no evidence the capitals are a surname
    text = "SEEN WITH HEPATITIS QUOB\nQUOB NEGATIVE."
    assert _propagated(text, [Span(10, 24, "PATIENT", "crf:single")]) == ["HEPATITIS QUOB"]


def test_four_capital_part_spreads_capitalised_only():
    text = "READ BY: SASAVAQE VEOV, MD\nveov noted."
    assert _propagated(text, [Span(9, 22, "DOCTOR", "crf:single")]) == ["SASAVAQE VEOV"]


# Review 18: each case below was read as a name before the fixes (invented clinical sentences).
@pytest.mark.parametrize("text", [
    "ACCOMPANIED BY N. VOMITING",  # a verb's form in capitals after "by" and an initial
    "SUPPORTED BY V. PACING",
    "PCP: DR. NONE",  # a field's placeholder value
    "ATTENDING: DR. PENDING",
    "HPI: Woman is a 67 year old",  # person nouns as an age's subject
    "HPI: Man is a 67 year old",
    "HPI: Male is a 60 year old",
    "HPI: Female is a 60 year old",
    "HPI: Child is a 7 year old",
    "Social: Smoker is a 60 year old",
])
def test_review_near_misses_stay_clear(text):
    assert found(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("ORDERED BY G. BASKET", [("G. BASKET", "DOCTOR")]),  # the frame still reads a dictionary-word surname
    ("Identifying data: Rusty is a 67 year old male", [("Rusty", "PATIENT")]),
    ("SUBMITTING MD: DR. LANTERN", [("LANTERN", "DOCTOR")]),
])
def test_review_frames_still_read(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", [
    "DR. ZANDROW ECMO TEAM CALLED.\nECMO FLOWS 4L.",  # an acronym the CRF took into a name: no credential after it
    "READ BY: QUILLBY ASAP\nCALL ASAP IF WORSE.",
    "SIGNED: ZANDROW ONCO\nONCO FOLLOWING.",
])
def test_review_four_capital_acronym_in_a_name_does_not_spread(text):
    first = text.split("\n")[0]
    start = first.index("QUILLBY") if "QUILLBY" in first else first.index("ZANDROW")
    end = start + len(" ".join(first[start:].split()[:2]))
    spans = [Span(start, end, "DOCTOR", "crf:single")]
    assert _propagated(text, spans) == [text[start:end]]


def test_review_four_capital_surname_spreads_after_a_role_word():
    text = "SEEN BY: SASAVAQE VEOV (NP)\nPLAN D/W VEOV."
    assert _propagated(text, [Span(9, 22, "DOCTOR", "crf:single")]) == ["SASAVAQE VEOV", "VEOV"]
