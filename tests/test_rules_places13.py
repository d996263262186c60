"""Round 13 (issue 14, places): the merge-only place rules of conf/rules/locations.toml and the place decisions
after the merge (engine/place_decisions.py). Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and
their label beats the CRF's, the decisions on hand-made spans, and the shipped pipeline (default bundle) on
invented notes, with clinical look-alikes left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.place_decisions import (
    person_records_organizations,
    place_rules_cut_net,
    state_after_town,
    trim_place_leads,
)
from deid_core.engine.rules.filters import country_filter
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_rules import shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
_LOC = tomllib.loads((CONF / "rules" / "locations.toml").read_text())["rule"]
ROUND13 = {r["id"]: r for r in _LOC[[r["id"] for r in _LOC].index("city-after-facility"):]}
MERGE = effective_config().merge


def _at(text: str, part: str, label: str, source: str = "crf:single") -> Span:
    start = text.index(part)
    return Span(start, start + len(part), label, source, 0.9)


def _shown(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places13")


def test_round13_rules_are_merge_only_and_decide_their_label():
    assert len(ROUND13) >= 7
    for rid, rule in ROUND13.items():
        assert rule.get("crf_feature") is False, rid
        assert any(s == rid or (s.endswith("*") and rid.startswith(s[:-1])) for s in MERGE.rule_label_sources), rid


@pytest.mark.parametrize("text,part,kept", [
    ("Attends Quorvel Counseling Associates.", "Attends Quorvel Counseling Associates", "Quorvel Counseling Associates"),
    ("HE WORKS FOR ZENTRIX PLC; A NOTE", "WORKS FOR ZENTRIX PLC", "ZENTRIX PLC"),
    ("from the Holy Quell Hospital clinic", "the Holy Quell Hospital", "Holy Quell Hospital"),
    ("prefers The Oaks at Quellton.", "The Oaks at Quellton", "The Oaks at Quellton"),  # a capital 'The' is the name's
    ("Attends.", "Attends", "Attends"),  # one word at least is left
])
def test_place_spans_lose_their_lead_words(text, part, kept):
    label = "ORGANIZATION" if "Hospital" not in part else "HOSPITAL"
    out = trim_place_leads([_at(text, part, label)], text, frozenset(MERGE.place_lead_words))
    assert _shown(out, text) == [(label, kept)]
    # a person span keeps its words ('Will Ames'), and [] turns the decision off
    person = _at(text, part, "PATIENT")
    assert trim_place_leads([person], text, frozenset(MERGE.place_lead_words)) == [person]
    assert trim_place_leads([_at(text, part, label)], text, frozenset()) == [_at(text, part, label)]


@pytest.mark.parametrize("text,town,state", [
    ("a 23 year old from Quellton, MA, regarding ESRD", "Quellton", "MA"),
    ("visit Fri - Ames, Jo - Quellton NH\nAssessment", "Quellton", "NH"),
    ("lives in Quellton (ID) with her neighbor", "Quellton", "ID"),
    ("visit - quellton, ma\nHome: two floors", "quellton", "ma"),
])
def test_a_state_abbreviation_after_a_town_is_a_state(text, town, state):
    out = state_after_town([_at(text, town, "CITY")], text)
    assert ("STATE", state) in _shown(out, text)


@pytest.mark.parametrize("text,town", [
    ("from Quellton, in the morning", "Quellton"),  # a lower-case 'in' after a Title-case town
    ("from Quellton, XY today", "Quellton"),        # no state
    ("from Quellton, MAry", "Quellton"),            # inside a word
    ("from Quellton, ME-2 trial", "Quellton"),      # glued to a word
])
def test_no_state_from_words_that_only_look_like_one(text, town):
    out = state_after_town([_at(text, town, "CITY")], text)
    assert [lab for lab, _ in _shown(out, text)] == ["CITY"]


def test_a_state_already_in_a_span_is_left_alone():
    text = "from Quellton, MD 20814"
    spans = [_at(text, "Quellton", "CITY"), _at(text, "MD", "DOCTOR")]
    assert state_after_town(spans, text) == spans


@pytest.mark.parametrize("text,name,org", [
    ("list (per partner Jo and Corvane records), May", "Corvane", "Corvane"),
    ("list (per friend Jo and Corvane Pharmacy records)", "Corvane", "Corvane Pharmacy"),
    ("MEDS: per Quillrx fill history: lasix", "Quillrx", "Quillrx"),
])
def test_a_person_span_whose_records_are_cited_is_an_organization(text, name, org):
    spans = [_at(text, name, "PATIENT", "name-kin")]
    if "Pharmacy" in org:
        spans.append(_at(text, "Pharmacy", "ORGANIZATION"))
    assert _shown(person_records_organizations(spans, text, MERGE.organization_record_words), text) == [
        ("ORGANIZATION", org)]


@pytest.mark.parametrize("text,name", [
    ("S: Ann Quell records from the clinic reviewed", "Ann Quell"),
    ("per Dr. Quell records the scan was normal", "Quell"),
])
def test_a_patient_or_doctor_before_records_stays_a_person(text, name):
    spans = [_at(text, name, "PATIENT")]
    assert person_records_organizations(spans, text, MERGE.organization_record_words) == spans


def test_name_net_spans_are_cut_by_deciding_place_rules_only():
    text = "Travel to Brazil January 2015."
    net = _at(text, "Brazil January", "PATIENT", "names:net")
    country = _at(text, "Brazil", "COUNTRY", "country-context")
    out = place_rules_cut_net([country, net], text, MERGE.rule_label_sources)
    assert _shown(out, text) == [("COUNTRY", "Brazil"), ("PATIENT", "January")]
    weak = _at(text, "Brazil", "COUNTRY", "gaz-country")  # a gazetteer look-up decides nothing
    assert place_rules_cut_net([weak, net], text, MERGE.rule_label_sources) == [weak, net]


@pytest.mark.parametrize("text,kept", [
    ("Trinidad and Tobago January 2015", "Trinidad and Tobago"),
    ("rwanda.", "rwanda"),
    ("BRAZIL LAST YEAR", "BRAZIL"),
])
def test_country_filter_keeps_the_longest_known_country(text, kept):
    span = country_filter(text, 0, len(text), {})
    assert span is not None and text[span[0]:span[1]] == kept


@pytest.mark.parametrize("text", ["chad's house", "the clinic", "turkey sandwich"])
def test_country_filter_drops_no_country_and_common_lower_case_words(text):
    assert country_filter(text, 0, len(text), {}) is None


@pytest.mark.parametrize("text,phi,label", [
    ("Results: QUEST DIAGNOSTICS, QUELLTON WI.", "QUELLTON", "CITY"),
    ("Results: QUEST DIAGNOSTICS, QUELLTON WI.", "WI", "STATE"),
    ("SH: lives w/ uncle in Quellton. +ETOH.", "Quellton", "CITY"),
    ("She is unable to serve jury duty in Quellton County on 3/4.", "Quellton", "CITY"),
    ("Home medication list (per son Ray and Corvane Pharmacy records), May 1:", "Corvane Pharmacy", "ORGANIZATION"),
    ("Drives; car. Travel to Brazil January 2015.", "Brazil", "COUNTRY"),
    ("Recently returned from Trinidad and Tobago.", "Trinidad and Tobago", "COUNTRY"),
    ("Ref: ins Quorvel Health 2NU2-AK2-IX85 | ref by Dr. Ames", "2NU2-AK2-IX85", "HEALTHPLAN"),
    ("PACEMAKER. FALL AT LAKE QUELLMERE THURSDAY.", "LAKE QUELLMERE", "LOCATION-OTHER"),
    ("Poor appetite after Outer Quell trip. Seen at clinic.", "Outer Quell", "LOCATION-OTHER"),
])
def test_the_place_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "places13", text, phi, label)


@pytest.mark.parametrize("text", [
    "He lives in a house with his wife.", "She works at home on weekends.", "Wound covered by dressing, clean.",
    "Lives with son in assisted living.", "Lives alone in an apartment.", "Per hospital records, no allergies.",
    "Per OSH records the CT was negative.", "travel to the clinic by bus", "Family in town this week.",
    "Seen at clinic, Dr. Zorbel MD.", "covered by insurance 2019-2020", "Insurance: pending, Medicare Part B-12",
    "Fell at the Nursing Home yesterday.", "MVC near the Hospital entrance.", "Tired after the ED trip.",
    "FELL AT HOME, NO LOC.", "Anxious after Christmas vacation.", "Fall at Work on Monday.",
])
def test_clinical_look_alikes_get_no_round13_span(deid, text):
    res = deid.process(Note("places13", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND13]


# -- review (round 13): decisions that uncovered PHI or made a clinical word a place (invented text)

@pytest.mark.parametrize("text,part,label", [
    ("Transferred to Via Quellis Hospital for cath.", "Via Quellis Hospital", "HOSPITAL"),  # 'Via' is the name's
    ("Admitted from Work Quell Memorial Hospital.", "Work Quell Memorial Hospital", "HOSPITAL"),
    ("Seen at Chose Quell Clinic today.", "Chose Quell Clinic", "HOSPITAL"),
    ("Member of Attending Quell Guild now.", "Attending Quell Guild", "ORGANIZATION"),
])
def test_a_capitalised_lead_word_inside_a_sentence_stays_in_the_name(text, part, label):
    span = _at(text, part, label)
    assert trim_place_leads([span], text, frozenset(MERGE.place_lead_words)) == [span]


@pytest.mark.parametrize("text,part,kept", [
    ("TRANSFERRED TO VIA QUELLIS HOSPITAL", "TO VIA QUELLIS HOSPITAL", "VIA QUELLIS HOSPITAL"),
    ("pt. Works for Quell Mills.", "Works for Quell Mills", "Quell Mills"),
    ("was sent via Quell Ambulance.", "via Quell Ambulance", "Quell Ambulance"),
])
def test_function_words_and_cue_phrases_are_still_trimmed(text, part, kept):
    label = "HOSPITAL" if "HOSPITAL" in part else "ORGANIZATION"
    out = trim_place_leads([_at(text, part, label)], text, frozenset(MERGE.place_lead_words))
    assert _shown(out, text) == [(label, kept)]


@pytest.mark.parametrize("text,town", [
    ("Seen by Dr. Quellan, MD today.", "Quellan"),  # a surname the CRF read as a town: 'MD' is his credential
    ("Dr Quellan, PA, saw her", "Quellan"),
    ("moved from quellton in 2010 with wife", "quellton"),  # lower-case 'in', 'or' are words
    ("went to quellton or harrow last year", "quellton"),
])
def test_no_state_after_a_titled_name_or_a_lower_case_word(text, town):
    spans = [_at(text, town, "CITY")]
    assert state_after_town(spans, text) == spans


@pytest.mark.parametrize("record", ["OT", "ST", "SLP", "SW", "CM", "RT", "Speech", "Nutrition"])
def test_therapy_and_service_records_are_no_organization(deid, record):
    text = f"Diet and meds per {record} records. Stable."
    out = deid.process_many([Note(note_id="r", text=text)])[0]
    assert not [s for s in out.spans if text[s.start:s.end] == record]


def test_georgia_after_moved_stays_a_state_reading():
    assert country_filter("Georgia in 2010", 0, len("Georgia in 2010"), {}) is None


@pytest.mark.parametrize("text", [
    "Hypotensive after CT trip.", "Desat after MRI trip.", "Agitated after OR trip.", "Tachycardic after Cath Lab trip.",
    "Tired after Dialysis trip.", "FALL AT SNF 2 DAYS AGO.", "FELL AT DIALYSIS.", "FALL AT ALF, then ED.", "FELL AT GYM.",
    "Slipped at Shower last night.", "lives with mother in Shelter.", "MVC near Exit 12 on the highway.",
])
def test_care_settings_and_common_words_are_no_landmark_or_town(deid, text):
    out = deid.process_many([Note(note_id="c", text=text)])[0]
    assert not [s for s in out.spans if s.source in ("landmark-trip", "landmark-accident", "city-lives-with-in")]
