"""Round 16 (issue 14, places on unseen note types): the merge-only town frames of conf/rules/places16.toml, a CITY
span that took in its state abbreviation split in two, a lower-case state in parentheses after a town, and landmarks
named by their last word (engine/place_decisions.py split_town_states, state_after_town, landmark_heads). Examples
are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and
their label beats the CRF's, the decisions on hand-made spans, and the shipped pipeline (default bundle) on invented
notes, with clinical look-alikes left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.engine.place_decisions import landmark_heads, split_town_states, state_after_town
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_rules import crf_span, shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND16 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "places16.toml").read_text())["rule"]}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places16")


def test_round16_rules_are_merge_only_decide_their_label_and_spread_their_towns():
    assert len(ROUND16) >= 4
    for rid, rule in ROUND16.items():
        assert rule.get("crf_feature") is False, rid
        assert rid in MERGE.rule_label_sources, rid
        assert rid in MERGE.town_label_sources, rid
    assert "places16.toml" not in feature_rules(CONF / "rules")  # no file to the CRF's features: the rules version stands
    assert MERGE.landmark_heads is True


def _shown(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


# -- split_town_states and state_after_town on hand-made spans

@pytest.mark.parametrize("text,part,want", [
    ("# Social: lives in Quellbury UT with wife", "Quellbury UT", [("CITY", "Quellbury"), ("STATE", "UT")]),
    ("LIVES IN NORTH QUELLFURT MT WITH COUSIN", "NORTH QUELLFURT MT", [("CITY", "NORTH QUELLFURT"), ("STATE", "MT")]),
    ("26yo female from Quellfurt  AZ via ED", "Quellfurt  AZ", [("CITY", "Quellfurt"), ("STATE", "AZ")]),
])
def test_a_town_span_that_took_in_its_state_is_split(text, part, want):
    assert _shown(split_town_states([crf_span(text, part, "CITY")], text), text) == want


@pytest.mark.parametrize("text,part,label", [
    ("CONSULTATION - Quellborough VA\n", "Quellborough VA", "CITY"),  # a veterans' hospital after its town
    ("lives in Quellbury Ut with wife", "Quellbury Ut", "CITY"),  # no capital abbreviation
    ("lives in Quellbury XY with wife", "Quellbury XY", "CITY"),  # no state
    ("seen by Quellbury UT today", "Quellbury UT", "DOCTOR"),  # no town span
])
def test_no_split_for_a_veterans_hospital_a_non_state_or_another_label(text, part, label):
    spans = [crf_span(text, part, label)]
    assert split_town_states(spans, text) == spans


def test_a_lower_case_state_in_parentheses_after_a_town_is_a_state():
    text = "sn visit sat 8/15 - quell, ann - quellport (sc)\nassessment: vs"
    out = state_after_town([crf_span(text, "quellport", "CITY")], text)
    assert ("STATE", "sc") in _shown(out, text)
    text = "lives in quellport (in 2010 moved)"
    assert _shown(state_after_town([crf_span(text, "quellport", "CITY")], text), text) == [("CITY", "quellport")]


# -- landmark_heads on hand-made spans

@pytest.mark.parametrize("text,part,label,want", [
    ("vomiting after South Station trip.", "South Station", "ORGANIZATION", ("LOCATION-OTHER", "South Station")),
    ("MVC ON ROUTE 98 NEAR SOUTH STATION. AIRBAGS", "SOUTH", "CITY", ("LOCATION-OTHER", "SOUTH STATION")),
    ("fell at Quellmere Pond", "Quellmere Pond", "CITY", ("LOCATION-OTHER", "Quellmere Pond")),
    ("swimming at Quell Beach", "Quell Beach", "HOSPITAL", ("LOCATION-OTHER", "Quell Beach")),
    ("camping in Quell State Park", "Quell State Park", "CITY", ("LOCATION-OTHER", "Quell State Park")),
])
def test_a_place_named_by_a_landmark_word_is_a_landmark(text, part, label, want):
    assert _shown(landmark_heads([crf_span(text, part, label)], text), text) == [want]


@pytest.mark.parametrize("text,part,label", [
    ("lives in Quellton Park with", "Quellton Park", "CITY"),  # many towns end in Park
    ("lives in Quell Beach", "Quell Beach", "CITY"),
    ("works at Quellton Fire Station", "Quellton Fire Station", "ORGANIZATION"),  # a service named by its kind
    ("seen at the Nurses Station", "Nurses Station", "ORGANIZATION"),
    ("took a cab to Station", "Station", "ORGANIZATION"),  # one word
    ("lives in quellton station today", "quellton", "CITY"),  # lower case: no growth
    ("lives on Quellton Station Rd", "Quellton", "CITY"),  # a street's name
])
def test_no_landmark_from_a_town_word_a_service_or_one_word(text, part, label):
    spans = [crf_span(text, part, label)]
    assert landmark_heads(spans, text) == spans


def test_a_rule_span_keeps_its_label():
    text = "vomiting after South Station trip."
    start = text.index("South Station")
    spans = [Span(start, start + len("South Station"), "ORGANIZATION", "organization-kind", 0.9)]
    assert landmark_heads(spans, text) == spans


# -- the pipeline

@pytest.mark.parametrize("text,phi,label", [
    ("Follow up: endocrine clinic, 478 Quell Point Apt 134, Quellanton, 06/03/2011; fax records", "Quellanton", "CITY"),
    ("Lives alone at 5452 Quell Unions Apt 626, New Quellet. Unemployed since 2019.", "New Quellet", "CITY"),
    ("CLINIC, 623 QUELL CREST, QUELLBURY, DECEMBER 25TH, 2018; FAX", "QUELLBURY", "CITY"),
    ("Returned from Port Quellan last week with cough.", "Port Quellan", "CITY"),
    ("She is traveling to New Quellet next week for a wedding.", "New Quellet", "CITY"),
    ("Commutes to Lake Quellan daily for work.", "Lake Quellan", "CITY"),
    ("He is a retired clergyman and resident of Quellside, admitted via the ED.", "Quellside", "CITY"),
    ("visit Tue 5/24 - Quell, Ann - Quellfurt MI\nHome: lives alone", "Quellfurt", "CITY"),
    ("visit Tue 5/24 - Quell, Ann - Quellfurt MI\nHome: lives alone", "MI", "STATE"),
    ("Report: GENEDX, QUELLCHESTER CO.\nResult: negative", "QUELLCHESTER", "CITY"),
    ("FELL AT SOUTH STATION. HE IS FOLLOWED AT QUELL HILL HOSPITAL", "SOUTH STATION", "LOCATION-OTHER"),
])
def test_the_round16_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "places16", text, phi, label)


@pytest.mark.parametrize("text", [
    "returned from the OR at 1400", "returned from dialysis", "Returned From Cath Lab at 1500", "returned from MRI.",
    "RETURNED FROM CT SCAN AT 1400", "lives in a nursing home", "lives alone in apartment.", "lives in senior housing.",
    "moved from bed to chair", "moved to the floor", "commutes to work daily", "visiting with family in the ICU",
    "Dr. Quell is from Cardiology", "She is from Quell Hospital", "Plan: Repeat CT.\n", "- Ann Quell MD\n",
    "Signed: Ann Quell, MD\n", "- Ann Quell, PA\n", "Note: Ann Quell, MA\n", "CONSULTATION - Quellborough VA\n",
    "seen 3 Times, OK.", "room 12 North Wing, Bed 4.", "transferred to 5 West Medicine, 12/3",
    "returned from vacation yesterday", "originally from Mexico, moved here", "Returned From Interventional Radiology",
    "Patient Is From Home.", "Originally From Rehab, here for", "Is From Quell Nursing Home", "Returned From Procedure With",
])
def test_clinical_look_alikes_get_no_round16_span(deid, text):
    res = deid.process(Note("places16", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND16]


# review16: a clinical phrase before a state-like abbreviation at a line end, and equipment, wards or states of mind
# after a move or residence frame, are no town (conf/rules/places16.toml filter town_whole)
@pytest.mark.parametrize("text", [
    "Hx: Metastatic Breast CA\n", "Dx: Recurrent Ovarian CA\n", "Echo: Moderately Dilated LA\n",
    "Psych: Denies SI, HI\n", "O2 Delivery: Nasal Cannula, NC\n", "- Insulin Glargine SC\n", "- Nasal Spray IN\n",
    "Anesthesia: General Endotracheal, GA\n", "Follow up: Infectious Disease, ID\n", "Access: Right Subclavian, SC\n",
    "Plan: Ex Lap, OR\n", "Labs: Elevated Troponin, MI\n", "Plan: Home With VNA, ME\n",
    "moved to telemetry.", "moved to recliner.", "moved to commode.", "moved from stretcher to bed.",
    "moved to droplet precautions.", "moved to isolation.", "moved to nasal cannula.", "living in denial about drinking.",
    "moved to hallway.", "moved to left lateral decubitus.", "moved to high flow.", "moved to face mask.",
    "moved to trach collar.", "moved to oral intake.", "moved to clears.", "MOVED TO TELEMETRY.", "LIVING IN DENIAL.",
    "returned from Physical Therapy.",
])
def test_clinical_phrases_before_a_state_or_after_a_frame_get_no_round16_span(deid, text):
    res = deid.process(Note("places16", text))
    assert res.ok and not [(text[s.start:s.end], s.source) for s in res.spans if s.source in ROUND16]


# review16: a Title-case count, words and a broad street suffix ('Course', 'Center', 'Way', 'Bridge') before a clinical
# word is no street line and its town (city-after-street-line, filter town_whole)
@pytest.mark.parametrize("text", [
    "Completed 10 Day Course, Improved.", "Started 14 Day Course, Improving.", "Ambulated 50 Feet To Hall Way, Steady.",
    "Seen in 2 West Medical Center, Discharged.",
    "12 Lead ECG Via Bridge, Sinus.",
])
def test_a_clinical_word_after_a_title_case_count_is_no_town(deid, text):
    res = deid.process(Note("places16", text))
    assert res.ok and not [(text[s.start:s.end], s.source) for s in res.spans if s.source in ROUND16]


# review16: a caller or sender named after 'was from' is a person, no town (town_whole: a first name opens no town
# unless the town is a known one, 'originally from [Quincy]')
@pytest.mark.parametrize("text", ["Call was from Jo Quellan; will call back.", "The call was from Jo; she says ok."])
def test_a_first_name_after_was_from_is_no_town(deid, text):
    res = deid.process(Note("places16", text))
    assert res.ok and not [(text[s.start:s.end], s.source) for s in res.spans if s.source in ROUND16]


def test_a_known_town_that_is_a_first_name_stays_a_town(deid):
    assert span_stands(deid, "places16", "He is originally from Quincy and moved here in 2010.", "Quincy", "CITY")


# review16: a rule's town cut out of a CRF person or organization span leaves its state abbreviation in that span's
# label ('Springfield IL' read DOCTOR): state_after_town makes it the STATE
@pytest.mark.parametrize("text,state", [("- Quell, Ann - Springfield IL\n", "IL"), ("Lab: GENEDX, Atlanta GA\n", "GA")])
def test_the_state_left_of_a_crf_span_cut_by_a_rule_town_is_a_state(deid, text, state):
    assert span_stands(deid, "places16", text, state, "STATE")


def test_a_crf_state_reading_after_a_crf_town_is_left_alone():
    text = "seen by Quellan Dr, Quellton NY today"
    spans = [crf_span(text, "Quellton", "CITY"), crf_span(text, "NY", "DOCTOR")]
    assert state_after_town(spans, text) == spans
