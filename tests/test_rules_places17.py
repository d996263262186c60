"""Round 17 (issue 14, cities on unseen note types): the merge-only town rules of conf/rules/places17.toml (address
lines' towns of two words or an abbreviated prefix, form fields, '<town> resident / native', place phrases) and the
place decisions after the merge (engine/place_decisions.py: a town opening a long country's name, a known town of two
words after a preposition, 'MD' as Maryland after a town, 'New York' as a state after a town). Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and
their label beats the CRF's, the decisions on hand-made spans, and the shipped pipeline (default bundle) on invented
notes, with clinical look-alikes left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.engine.place_decisions import (
    countries_over_towns,
    gazetteer_place_labels,
    state_after_town,
)
from deid_core.notes import Note
from deid_core.spans import Span, source_in
from tests.helpers_rules import crf_span, shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND17 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "places17.toml").read_text())["rule"]}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places17")


def test_round17_rules_are_merge_only_decide_their_label_and_spread_their_towns():
    assert len(ROUND17) >= 6
    for rid, rule in ROUND17.items():
        assert rule.get("crf_feature") is False, rid
        assert source_in(rid, MERGE.rule_label_sources), rid
        assert source_in(rid, MERGE.town_label_sources), rid
    assert "places17.toml" not in feature_rules(CONF / "rules")  # no file to the CRF's features: the rules version stands


def _shown(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


# -- the decisions on hand-made spans

@pytest.mark.parametrize("text,parts,want", [
    ("sister moved to South Georgia and the South Sandwich Islands. Sleeps",
     [("South Georgia", "CITY"), ("South Sandwich Islands", "COUNTRY")],
     [("COUNTRY", "South Georgia and the South Sandwich Islands")]),
    ("visiting from South Georgia and  the South Sandwich Islands.\n", [("South Georgia", "CITY")],
     [("COUNTRY", "South Georgia and  the South Sandwich Islands")]),
    ("moved to Saint Kitts and Nevis in 2010", [("Saint Kitts", "CITY")], [("COUNTRY", "Saint Kitts and Nevis")]),
    ("moved to Trinidad and Tobago", [("Trinidad", "CITY")], [("COUNTRY", "Trinidad and Tobago")]),
])
def test_a_town_opening_a_long_country_name_is_that_country(text, parts, want):
    spans = [crf_span(text, p, label) for p, label in parts]
    assert _shown(countries_over_towns(spans, text), text) == want


@pytest.mark.parametrize("text,part", [
    ("visiting from South Quellton and the kids", "South Quellton"),  # no country
    ("moved to Saint Quell and Nevis", "Saint Quell"),  # no known country
    ("South Georgia and the South", "South Georgia"),  # the name does not go on
])
def test_no_country_without_the_whole_long_name(text, part):
    spans = [crf_span(text, part, "CITY")]
    assert countries_over_towns(spans, text) == spans


@pytest.mark.parametrize("text,part,label,want", [
    ("Grew up in Fall River.", "Fall River", "LOCATION-OTHER", "CITY"),
    ("LIVES ALONE IN FALL RIVER.", "FALL RIVER", "LOCATION-OTHER", "CITY"),
    ("Moved here from New Bedford last year", "New Bedford", "ORGANIZATION", "CITY"),
    ("Works as a teacher in Cedar Falls. Denies SI/HI.", "Cedar Falls", "LOCATION-OTHER", "CITY"),  # review17
    ("Moved from Sioux Falls last year", "Sioux Falls", "LOCATION-OTHER", "CITY"),  # review17
    ("Fishing on Fall River.", "Fall River", "LOCATION-OTHER", "LOCATION-OTHER"),  # no preposition of place before it
    ("Walk in Golden Gate park", "Golden Gate", "LOCATION-OTHER", "LOCATION-OTHER"),  # a landmark's last word
    ("MVC on Route 72 near Niagara Falls.", "Niagara Falls", "LOCATION-OTHER", "LOCATION-OTHER"),  # seed 40040
    ("trip to White Plains", "White Plains", "LOCATION-OTHER", "LOCATION-OTHER"),  # 'to': a trip's landmark too
    ("grew up in Quellton", "Quellton", "LOCATION-OTHER", "LOCATION-OTHER"),  # one word: the frames read those
    ("admitted to Fall River", "Fall River", "HOSPITAL", "HOSPITAL"),  # a hospital named by its town
])
def test_a_known_town_of_two_words_after_a_preposition_is_a_city(text, part, label, want):
    assert _shown(gazetteer_place_labels([crf_span(text, part, label)], text), text) == [(want, part)]


def test_new_york_after_a_town_and_a_comma_is_the_state():
    text = "Unit 284, Port Quellfurt, New York, 29056\nHome: moved to New York in 2003"
    spans = [crf_span(text, "Port Quellfurt", "CITY"), crf_span(text, "New York", "CITY"),
             crf_span(text, "New York", "CITY", nth=1)]
    assert _shown(gazetteer_place_labels(spans, text), text) == [
        ("CITY", "Port Quellfurt"), ("STATE", "New York"), ("CITY", "New York")]


@pytest.mark.parametrize("text,town,state", [
    ("SOCIAL: lives alone in Quellville, md.\nplan: cont", "Quellville", "md"),
    ("safety at home (East Quellton, MD).\n", "East Quellton", "MD"),
    ("34 Quell Mountain, East Quellton, MD 39915", "East Quellton", "MD"),
])
def test_md_after_a_town_closing_an_address_is_maryland(text, town, state):
    out = state_after_town([crf_span(text, town, "CITY")], text)
    assert ("STATE", state) in _shown(out, text)


@pytest.mark.parametrize("text,town", [
    ("Seen by Dr. Quellan, MD.\n", "Quellan"),  # a titled name
    ("Quellton, MD, was called", "Quellton"),  # the address does not close
    ("signed Quellton, MD 123456789", "Quellton"),  # no ZIP: nine digits
])
def test_md_stays_a_credential_otherwise(text, town):
    out = state_after_town([crf_span(text, town, "CITY")], text)
    assert "STATE" not in [s.label for s in out]


# -- the pipeline

@pytest.mark.parametrize("text,phi,label", [
    ("Ann Quell\n12 Birch Lane\nFall River, MA 02720\n", "Fall River", "CITY"),
    ("Ann Quell\n12 Birch Lane\nFALL RIVER MA 02720\n", "FALL RIVER", "CITY"),
    ("Address: 71 Pine Rd Ft. Myers, FL 33901", "Ft. Myers", "CITY"),
    ("St. Louis, MO 63110", "St. Louis", "CITY"),
    ("City/State/Zip: Quellton / VT / 05401", "Quellton", "CITY"),
    ("CITY: PORT QUELLAN   STATE: ME   ZIP: 04101", "PORT QUELLAN", "CITY"),
    ("Birthplace: Quellstad, Norway", "Quellstad", "CITY"),
    ("Place of Birth: Salem, MA", "Salem", "CITY"),
    ("Location: Mobile, AL", "Mobile", "CITY"),
    ("He is a Quellton resident and works nights.", "Quellton", "CITY"),
    ("Pt is a Quellfield native.", "Quellfield", "CITY"),
    ("A lifelong Port Quellan resident, retired.", "Port Quellan", "CITY"),
    ("Moved here from the greater Quellport area in 2010.", "Quellport", "CITY"),
    ("Lives on a farm outside Quellton.", "Quellton", "CITY"),
    ("lives in a suburb of Quellham.", "Quellham", "CITY"),
    ("lives 20 miles north of Quellville.", "Quellville", "CITY"),
    ("Has lived in Quellton for 30 years.", "Quellton", "CITY"),
    ("Transferred from an outside hospital in Quellton.", "Quellton", "CITY"),
    ("Seen at urgent care in Quellmouth on 3/2.", "Quellmouth", "CITY"),
    ("Pharmacy: CVS in Quellton", "Quellton", "CITY"),
    ("Pharmacy: Walgreens - Quellfield", "Quellfield", "CITY"),
    ("Pharmacy: Target Pharmacy - Quellfield", "Quellfield", "CITY"),
    ("Works in Quellton as a teacher.", "Quellton", "CITY"),
    ("Moved from Quellfield to Quellbury in 2010.", "Quellbury", "CITY"),
    ("Recently moved to Reading from Salem.", "Salem", "CITY"),
    ("Flown from Quellport by MedFlight.", "Quellport", "CITY"),
    ("Grew up in Fall River.", "Fall River", "CITY"),
    ("Discharged to home in Quellton.", "Quellton", "CITY"),
    ("Her daughter in Quellton is the HCP.", "Quellton", "CITY"),
    ("Incarcerated in Quellfield 2010-2015.", "Quellfield", "CITY"),
    ("Quell Clinic (Quellton)", "Quellton", "CITY"),
    ("Hospital: Quell Memorial, Quellton\n", "Quellton", "CITY"),
    ("part-time electrician; visiting from South Georgia and the South Sandwich Islands.\nPE: T 101.4",
     "South Georgia and the South Sandwich Islands", "COUNTRY"),
])
def test_the_round17_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "places17", text, phi, label)


@pytest.mark.parametrize("text", [
    "Lives in a group home.", "Pt moved to 5 West overnight.", "Transferred from ICU to floor.", "near syncope",
    "Reading: 120/80", "Mobile X-ray obtained.", "Works in Radiology as a tech.", "Works in IT.", "Works in Sales.",
    "Lesion near Apex.", "Pain near Umbilicus.", "Dialysis in AM.", "clinic in Spanish.", "Arrived from PACU.",
    "Arrived from Cath Lab.", "Moved from Bed to Chair.", "Lives near her daughter.", "lives 2 miles from Quell Hospital.",
    "He is a PGY2 resident", "a Surgery resident", "Is a Spanish native speaker", "a Cuban native", "a Medicaid resident",
    "Native coronary arteries", "a Quell Manor resident", "City: N/A", "Town: unknown", "Place of birth: home",
    "Place of Birth: USA", "Hometown: Yes", "Location: Left forearm", "Location: Left Arm, MD", "Location: ICU, NY",
    "Pt. Tolerated, OK", "Ft. Tolerated Well, OK", "CVS / Caremark", "Target - LDL < 70", "Winters in AZ.",
    "Flew in from Europe last week.", "Greater Saphenous vein", "Greater Occipital nerve block",
    "Ann Quell, MD 02720", "Relocated from 5 West to 7 North", "returned to Baseline.", "returned to Sinus rhythm",
    "Return to Clinic in 2 weeks.", "return to Dr. Quell", "Son In Law at bedside", "hospitalized in March",
    "Quell Clinic (Cardiology)", "Ann Quell, MD (Attending)", "Quell Health (VNA)", "Quell Pharmacy (Mail Order)",
    "Quell Clinic, Friday\n", "followed by Quell Medical, Dermatology\n",
    # review17: anatomy after 'greater' is no town ('the greater omentum'); a service, a payer's or a people's
    # name before 'resident' / 'native' is none
    "The greater Omentum was unremarkable.", "Pain over the Greater Trochanter on the left.",
    "Seen by an IM resident.", "He is a VA resident.", "Seen by a Peds resident.", "Is a Puerto Rican native.",
    "Discussed with the Ortho resident.", "Seen by a GI resident.",
    # review17: a payer in parentheses after a facility's name is no town
    "Insurance: Quell Medical (Medicaid)", "Quell Health (Medicare)", "Quell Medical Group (Aetna)",
    "Quell Clinic (Blue Cross)",
    # review17: a clinical target is no store ('Target - Euvolemia'); CVS's own businesses are no town
    "Target - Euvolemia.", "Target - Normothermia", "CVS, Caremark", "CVS - MinuteClinic",
    "Arrived to ED in Extremis.",  # review17: a Latin phrase after 'ED in'
])
def test_clinical_look_alikes_get_no_round17_span(deid, text):
    res = deid.process(Note("places17", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND17]
