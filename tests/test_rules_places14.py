"""Round 14 (issue 14, places): the merge-only town, employer, school, payer and firm frames of
conf/rules/locations.toml and the place decisions after the merge (engine/place_decisions.py: gazetteer
labels, towns of strong frames, employers after a profession, a state closing an address, a place grown over its
head word). Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and
their label beats the CRF's, the decisions on hand-made spans, and the shipped pipeline (default bundle) on
invented notes, with clinical look-alikes left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.label_decisions import place_head_labels, place_heads
from deid_core.engine.place_decisions import (
    gazetteer_place_labels,
    grow_place_heads,
    profession_employers,
    state_after_town,
    town_labels,
)
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_rules import shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
_LOC = tomllib.loads((CONF / "rules" / "locations.toml").read_text())["rule"]
ROUND14 = {r["id"]: r for r in _LOC[[r["id"] for r in _LOC].index("city-person-from"):]}
MERGE = effective_config().merge


def _at(text: str, part: str, label: str, source: str = "crf:single", nth: int = 0) -> Span:
    start = -1
    for _ in range(nth + 1):
        start = text.index(part, start + 1)
    return Span(start, start + len(part), label, source, 0.9)


def _shown(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places14")


def test_round14_rules_are_merge_only_and_decide_their_label():
    assert len(ROUND14) >= 8
    for rid, rule in ROUND14.items():
        assert rule.get("crf_feature") is False, rid
        assert rid in MERGE.rule_label_sources, rid


# -- gazetteer labels

@pytest.mark.parametrize("text,part,label,want", [
    ("winters in South Carolina.", "South Carolina", "CITY", "STATE"),
    ("FEMALE FROM FRANCE, VISITING", "FRANCE", "CITY", "COUNTRY"),
    ("moved to Ohio in May", "Ohio", "LOCATION-OTHER", "STATE"),
    ("grew up in Kenya.", "Kenya", "STREET", "COUNTRY"),
])
def test_a_whole_state_or_country_name_takes_its_label(text, part, label, want):
    assert _shown(gazetteer_place_labels([_at(text, part, label)], text), text) == [(want, part)]


@pytest.mark.parametrize("text,part,label", [
    ("lives in New York now", "New York", "CITY"),  # a town too
    ("moved to Washington", "Washington", "CITY"),
    ("transferred to Jordan for cath", "Jordan", "HOSPITAL"),  # a hospital named after a person
    ("works at Chad", "Chad", "ORGANIZATION"),
    ("Dr. Jordan saw her", "Jordan", "DOCTOR"),  # persons are not places
    ("from quellton today", "quellton", "CITY"),
])
def test_towns_hospitals_and_persons_keep_their_label(text, part, label):
    span = _at(text, part, label)
    assert gazetteer_place_labels([span], text) == [span]


@pytest.mark.parametrize("text,first,second,want", [
    ("Lives with cousin in west virginia; works", ("west", "CITY"), ("virginia", "STATE"), [("STATE", "west virginia")]),
    ("quarrowton, new york\npt lives", ("new", "STATE"), ("york", "DOCTOR"), [("STATE", "new york")]),
    # no comma before: 'new york' may be the town, the pieces stay
    ("moved to new york. Dr. York", ("new", "STATE"), ("york", "DOCTOR"), [("STATE", "new"), ("DOCTOR", "york")]),
    ("Dr. North Carolina", ("North", "DOCTOR"), ("Carolina", "PATIENT"), [("DOCTOR", "North"), ("PATIENT", "Carolina")]),
])
def test_pieces_naming_a_state_together_are_one_state_span(text, first, second, want):
    spans = [_at(text, *first), _at(text, *second)]
    assert _shown(gazetteer_place_labels(spans, text), text) == want


# -- towns of strong frames

def test_a_town_found_by_a_strong_frame_relabels_the_crf_readings_of_it():
    text = "Lives in Quellton, MA. Returned to Quellton today; QUELLTON wife."
    spans = [_at(text, "Quellton", "CITY", "city-residence-state"), _at(text, "Quellton", "HOSPITAL", nth=1),
             _at(text, "QUELLTON", "PATIENT", "crf:propagate")]
    assert [s.label for s in town_labels(spans, text, MERGE.town_label_sources)] == ["CITY", "CITY", "CITY"]
    assert town_labels(spans, text, ()) == spans  # [] turns it off


def test_a_town_that_is_a_name_leaves_person_spans_and_rules_alone():
    text = "Lives in Jackson, MS. Dr. Jackson saw him at Jackson."
    spans = [_at(text, "Jackson", "CITY", "city-residence-state"), _at(text, "Jackson", "DOCTOR", nth=1),
             _at(text, "Jackson", "HOSPITAL", "hospital-transfer", nth=2)]
    assert [s.label for s in town_labels(spans, text, MERGE.town_label_sources)] == ["CITY", "DOCTOR", "HOSPITAL"]
    # a CRF town is no strong frame
    crf = [_at(text, "Jackson", "CITY"), _at(text, "Jackson", "HOSPITAL", nth=2)]
    assert town_labels(crf, text, MERGE.town_label_sources) == crf


# -- employers after a profession

@pytest.mark.parametrize("text,job,employer,rival", [
    ("Social hx: roofer at Quellmart; his cousin", "roofer", "Quellmart", None),
    ("SH: cashier at QUELLMART FOODS since 2010", "cashier", "QUELLMART FOODS", None),  # up to a frequent word
    ("pt is a driver for Quellex. wife", "driver", "Quellex", ("Quellex", "PATIENT")),
    ("electrician at Quell-Ames Co since", "electrician", "Quell-Ames", ("Quell", "DOCTOR")),
])
def test_the_name_after_a_profession_and_at_is_the_employer(text, job, employer, rival):
    spans = [_at(text, job, "PROFESSION")] + ([_at(text, *rival)] if rival else [])
    out = profession_employers(spans, text)
    assert ("ORGANIZATION", employer) in _shown(out, text)
    assert ("PROFESSION", job) in _shown(out, text)


@pytest.mark.parametrize("text,job,rival", [
    ("She is a nurse at Quell Hospital.", "nurse", ("Quell Hospital", "HOSPITAL")),  # a place of care
    ("nurse at Quell Medical Center", "nurse", None),
    ("teacher at school today", "teacher", None),
    ("nurse at night, sleeps days", "nurse", None),
    ("roofer at home", "roofer", None),
    ("driver for Quellex", "driver", ("Quellex", "ORGANIZATION", "organization-works-at")),  # a rule decided
    ("cashier at\nQuellmart", "cashier", None),
])
def test_no_employer_where_a_rule_or_a_place_of_care_stands(text, job, rival):
    spans = [_at(text, job, "PROFESSION")] + ([_at(text, *rival)] if rival else [])
    assert profession_employers(spans, text) == spans


# -- a state closing an address

@pytest.mark.parametrize("text,town,state", [
    ("BIBA from home (Quellmouth, ma) 8/24", "Quellmouth", "ma"),
    ("lives alone in east quell, co. enrolled", "east quell", "co"),
    ("lives in quellshire, in.\nCaregiver", "quellshire", "in"),
])
def test_a_lower_case_state_closing_an_address_is_a_state(text, town, state):
    out = state_after_town([_at(text, town, "CITY")], text)
    assert ("STATE", state) in _shown(out, text)


@pytest.mark.parametrize("text,town", [
    ("from Quellmouth, in the morning", "Quellmouth"),
    ("from quellton, in 2010", "quellton"),
    ("Quellmouth, ma said", "Quellmouth"),  # a Title town and a lower-case word that does not close
])
def test_no_state_from_a_word_that_goes_on(text, town):
    spans = [_at(text, town, "CITY")]
    assert state_after_town(spans, text) == spans


# -- the shipped pipeline

@pytest.mark.parametrize("text,phi,label", [
    ("pt is 58 y/o woman from quarrowview admitted to sicu with chf.", "quarrowview", "CITY"),
    ("PT IS 61 Y/O MAN FROM HAYNESQUELL ADMITTED TO CSRU.", "HAYNESQUELL", "CITY"),
    ("concerns re: safety at home (quellside, ms).", "quellside", "CITY"),
    ("LIVES W NIECE IN QUARROWSIDE. A: VSS.", "QUARROWSIDE", "CITY"),
    ("SH: he developed back pain while at work at quellmart. she is 40.", "quellmart", "ORGANIZATION"),
    ("Social hx: employed by Quellan, Burke and White as a nurse.", "Quellan, Burke and White", "ORGANIZATION"),
    ("grandson attends quellton high school. children", "quellton high school", "ORGANIZATION"),
    ("insurance: quellna\npolicy #: w304", "quellna", "ORGANIZATION"),
    ("she developed insomnia while at work at quellbat construction. she", "quellbat construction", "ORGANIZATION"),
    ("Lives with cousin in West Virginia; works nights.", "West Virginia", "STATE"),
])
def test_the_round14_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "places14", text, phi, label)


@pytest.mark.parametrize("text", [
    "He lives in a house with his wife.", "She works at home on weekends.", "58 yo woman from home admitted with CP.",
    "Man from nursing home with sepsis.", "Woman from OSH with GI bleed.", "Man from rehab with fever.",
    "woman from jail with cough", "Works for himself.", "Works at a bank.", "At work at the time of the fall.",
    "Employer: retired", "Employer: none", "Insurance: none", "insurance: self pay", "Attends school.",
    "attends day care", "Code status, maine.", "Plan: continue lasix.", "works for social services",
    "Lives w wife in an apartment.", "Job with benefits.", "works as a nurse at night",
    # review14: generic school and firm kinds in lower case
    "attends boarding school", "goes to private school", "attends local community college", "attends beauty school",
    "attends Catholic school", "attends adult day care", "attends Head Start preschool", "works for moving company",
    "works at sperm bank", "works for electric company",
    # review14: a lower-case word after a comma in parentheses that is also a state abbreviation
    "bp stable (coags, ok)", "(coumadin, ok)", "(ett, in)", "(foley, me)",
    # review14: a plan kind or a colonization in a payer or 'carrier:' field
    "carrier: vre", "Isolation: contact; carrier: esbl", "insurance: hmo", "insurance: ppo",
])
def test_clinical_look_alikes_get_no_round14_span(deid, text):
    res = deid.process(Note("places14", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND14 or s.source == "profession-employer"]


# -- a place cut before its head

@pytest.mark.parametrize("text,part,label,want", [
    ("To the school nurse, Quellton High School:\n", "Quellton High", "HOSPITAL", ("ORGANIZATION", "Quellton High School")),
    ("presented to Quell Hospital today", "Quell", "HOSPITAL", ("HOSPITAL", "Quell Hospital")),
    ("at quell high school today", "quell", "ORGANIZATION", ("ORGANIZATION", "quell high school")),
    ("from Quell Hospital General Surgery", "Quell Hospital", "HOSPITAL", ("HOSPITAL", "Quell Hospital")),  # has its head
    ("from Quell general surgery", "Quell", "HOSPITAL", ("HOSPITAL", "Quell")),  # a lower-case word after a Title name
    ("seen by Quell Hospital", "Quell", "DOCTOR", ("DOCTOR", "Quell")),  # persons do not grow
])
def test_a_place_cut_before_its_head_grows_over_it_and_the_head_decides(text, part, label, want):
    heads = place_heads(MERGE.hospital_head_words, MERGE.organization_head_words)
    out = place_head_labels(grow_place_heads([_at(text, part, label)], text, heads), text, heads)
    assert _shown(out, text) == [want]


def test_a_head_inside_the_next_span_is_not_taken():
    text = "at Quell High School today"
    spans = [_at(text, "Quell High", "HOSPITAL"), _at(text, "School", "ORGANIZATION")]
    heads = place_heads(MERGE.hospital_head_words, MERGE.organization_head_words)
    assert grow_place_heads(spans, text, heads) == spans


# -- review14: a kind in lower case needs a name before it (named_kind); a payer field's value is the payer

@pytest.mark.parametrize("text,keep", [
    ("quellton high school", True), ("newton high school", True), ("peter catholic school", True),
    ("Quell Community College", True), ("Catholic School", True), ("quellbat construction", True),
    ("boarding school", False), ("Catholic school", False), ("local community college", False),
    ("adult day care", False), ("moving company", False), ("Head Start preschool", False),
])
def test_named_kind_needs_a_name_before_a_lower_case_kind(text, keep):
    from deid_core.engine.rules.filters import named_kind_filter
    assert (named_kind_filter(text, 0, len(text), {}) is not None) is keep


@pytest.mark.parametrize("text,phi", [
    ("insurance: mosaic health plan (id i181)", "mosaic health plan"),  # a dictionary word names a payer
    ("Insurance: lantern health plan", "lantern health plan"),
    ("Insurance: Quell Health Plan (id i181)", "Quell Health Plan"),
])
def test_a_payer_field_names_the_payer_before_its_kind(deid, text, phi):
    assert span_stands(deid, "places14", text, phi, "ORGANIZATION")


def test_grow_place_heads_has_its_own_key():
    """review14: [merge] grow_place_heads = false turns the growth off (the head words still label whole spans)."""
    from deid_core.config import load_config
    from deid_core.doc import Doc
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger

    text = "To the school nurse, Quellton High School:\n"
    spans = [_at(text, "Quellton High", "HOSPITAL")]
    # the organization lists (orgs16: the kind "high school") read the same span on their own: off in both
    on = Merger("union", load_config({"merge": {"grow_place_heads": True, "organization_gazetteer": False}}).merge)(
        spans, Doc(Note("x", text)), NoteState())
    off = Merger("union", load_config({"merge": {"grow_place_heads": False, "organization_gazetteer": False}}).merge)(
        spans, Doc(Note("x", text)), NoteState())
    assert ("ORGANIZATION", "Quellton High School") in _shown(on, text)
    assert ("ORGANIZATION", "Quellton High School") not in _shown(off, text)


@pytest.mark.parametrize("text,employer", [
    ("teacher for Quellton students. She", "Quellton"),  # review14: a lower-case word ends a Title name
    ("cashier at QUELLMART shoppers since", "QUELLMART"),
    ("roofer at quellmart roofing. He", "quellmart roofing"),  # a lower-case name reads on
])
def test_an_employer_name_ends_where_its_case_changes(text, employer):
    job = text.split()[0]
    shown = _shown(profession_employers([_at(text, job, "PROFESSION")], text), text)
    assert [s for s in shown if s[0] == "ORGANIZATION"] == [("ORGANIZATION", employer)]


@pytest.mark.parametrize("text", [
    "man from interventional radiology with", "woman from nuclear medicine admitted",  # review14: trimmed to 1 word
    "ATTENDS PRIVATE SCHOOL", "WORKS FOR MOVING COMPANY",  # review14: capitals carry no case
    "WORKS AT HOME AND SCHOOL", "works at Night and Weekends", "WORKS FOR MOM AND DAD",  # review14: no firm
    "employer: Self and Family",
])
def test_review14_look_alikes_get_no_round14_span(deid, text):
    res = deid.process(Note("places14", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND14 or s.source == "profession-employer"]


@pytest.mark.parametrize("text,phi,label", [
    ("PT IS 61 Y/O MAN FROM EAST QUARROWVILLE ADMITTED TO CSRU.", "EAST QUARROWVILLE", "CITY"),
    ("58 yo woman from port quellton, admitted", "port quellton", "CITY"),
    ("GRANDSON ATTENDS QUELLTON HIGH SCHOOL. CHILDREN", "QUELLTON HIGH SCHOOL", "ORGANIZATION"),
])
def test_review14_positives_stand(deid, text, phi, label):
    assert span_stands(deid, "places14", text, phi, label)
