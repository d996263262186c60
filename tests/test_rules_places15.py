"""Round 15 (issue 14, places): the merge-only address-structure rules of conf/rules/places15.toml and the street
decision after the merge (engine/place_decisions.py street_numbers). Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and
their label beats the CRF's, the decision on hand-made spans, and the shipped pipeline (default bundle) on invented
notes, with clinical look-alikes left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.engine.place_decisions import street_numbers, towns_before_states
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_rules import shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND15 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "places15.toml").read_text())["rule"]}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places15")


def test_round15_rules_are_merge_only_and_decide_their_label():
    assert len(ROUND15) >= 9
    for rid, rule in ROUND15.items():
        assert rule.get("crf_feature") is False, rid
        assert rid in MERGE.rule_label_sources, rid
    assert "places15.toml" not in feature_rules(CONF / "rules")  # no file to the CRF's features: the rules version stands


# -- street_numbers on hand-made spans

def _crf(text: str, part: str, label: str) -> Span:
    start = text.index(part)
    return Span(start, start + len(part), label, "crf:single", 0.9)


def _shown(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


@pytest.mark.parametrize("text,part,label,want", [
    ("pt lives alone at 00952 quell key, west quellton.", "00952 quell key", "HOSPITAL", [("STREET", "00952 quell key")]),
    ("mailed to 2449 Quell Place #8, New Quellet", "2449 Quell Place", "PHONE", [("STREET", "2449 Quell Place")]),
    ("Home: 17 Quellin Crossing\nQuellton", "17 Quellin Crossing", "LOCATION-OTHER", [("STREET", "17 Quellin Crossing")]),
    ("PHARMACY: QUELL AID, 965 QUELLER STATION, QUELLAND, WA", "QUELL AID, 965 QUELLER STATION", "ORGANIZATION",
     [("ORGANIZATION", "QUELL AID"), ("STREET", "965 QUELLER STATION")]),
])
def test_a_house_number_and_words_where_the_address_goes_on_is_a_street(text, part, label, want):
    assert _shown(street_numbers([_crf(text, part, label)], text), text) == want


@pytest.mark.parametrize("text,part,label", [
    ("transferred to 1199 Quell Hospital, then home", "1199 Quell Hospital", "HOSPITAL"),  # a place of care
    ("moved to 7 Quell North, bed 4", "7 Quell North", "HOSPITAL"),  # a ward
    ("moved to 5 West, bed 4", "5 West", "HOSPITAL"),  # one word
    ("at 24 Hour Quellfit gym", "24 Hour Quellfit", "ORGANIZATION"),  # the address does not go on
    ("call 555 1212, ext", "555 1212", "PHONE"),  # no words
    ("Quell Rehab, Quellton", "Quell Rehab", "HOSPITAL"),  # no number
])
def test_no_street_from_a_ward_a_place_of_care_or_a_name(text, part, label):
    spans = [_crf(text, part, label)]
    assert street_numbers(spans, text) == spans


@pytest.mark.parametrize("text,part,label,want", [
    ("address:\n12 Quell Road\nQuellton", "12 Quell Road", "DOCTOR", ("STREET", "12 Quell Road")),
    ("Address: 12 quell ln, quellton", "quell ln", "DOCTOR", ("STREET", "12 quell ln")),  # the number before it
    ("Lives at 12 quell lane in quellton", "12 quell lane", "HOSPITAL", ("STREET", "12 quell lane")),
    ("bed 12 Ann Park", "Ann Park", "PATIENT", ("PATIENT", "Ann Park")),  # a surname that is a suffix: a person
    ("room 5: Ann Quell Street", "Ann Quell Street", "PATIENT", ("PATIENT", "Ann Quell Street")),  # no number right before
    ("gave 2 Ann Lee", "Ann Lee", "PATIENT", ("PATIENT", "Ann Lee")),
])
def test_a_name_after_a_house_number_ending_in_a_street_suffix_is_a_street(text, part, label, want):
    assert _shown(street_numbers([_crf(text, part, label)], text), text) == [want]


def test_a_rule_span_keeps_its_label():
    text = "lives at 12 quell key, quellton"
    spans = [Span(9, 21, "HOSPITAL", "hospital-keyword", 0.9)]
    assert street_numbers(spans, text) == spans


def test_street_numbers_has_its_own_key():
    assert MERGE.street_numbers is True


# -- the pipeline

@pytest.mark.parametrize("text,phi,label", [
    ("Address: 12 brook road unit 3, quellford, vermont, 05401\npt seen today.", "quellford", "CITY"),
    ("Address: 12 brook road unit 3, quellford, vermont, 05401\npt seen today.", "vermont", "STATE"),
    ("Address: 12 brook road unit 3, quellford, vermont, 05401\npt seen today.", "05401", "ZIP"),
    ("Quellis Memorial Hospital, 4410 Marrow Dale, Quellview, MD 04667\n    Ann Quell, M.D.", "Quellview", "CITY"),
    ("Quellis Memorial Hospital, 4410 Marrow Dale, Quellview, MD 04667\n    Ann Quell, M.D.", "MD", "STATE"),
    ("Quellis Memorial Hospital, 4410 Marrow Dale, Quellview, MD 04667\n    Ann Quell, M.D.", "04667", "ZIP"),
    ("sn visit mon 3/2 - quellan, ann - quellport mn\nassessment: vs 120/80.", "quellport", "CITY"),
    ("The 69 year old male from Kenya was visiting family.", "Kenya", "COUNTRY"),
    ("This 74 year old female from South Africa was visiting family.", "South Africa", "COUNTRY"),
    ("Retired farmer from the Quellton area. Lives alone.", "Quellton", "CITY"),
])
def test_the_round15_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "places15", text, phi, label)


@pytest.mark.parametrize("text", [
    "hx: copd, ms\nplan: nebs", "- chest pain, ct\n", "- lungs clear, co\n", "dx: lupus, ms\n", "- htn, mi\n",
    "- 2l via nc\n", "- f/u in 3 mo\n", "- see daughter, ma\n", "page np quellan prn.\nann quell ma\n", "a: vss, mn\n", "- wife visiting, ma\n",
    "Ann Quell, MD 04667", "called 3 times, Quellan, MD 12345", "NS 10000 units", "heparin, 25000 units",
    "pain, ms, 10000 units", "58 yo woman from home admitted", "man from rehab with fever", "woman from jail with cough",
    "gave 2 Tabs Of Tylenol, PA aware.", "pain in the groin area", "redness in the sacral area", "sat in the waiting area",
    "IN THE PERINEAL AREA",
])
def test_clinical_look_alikes_get_no_round15_span(deid, text):
    res = deid.process(Note("places15", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND15]


@pytest.mark.parametrize("text", ["moved to 7 North, bed 4\n", "transferred to 1199 Quell Hospital, then home",
                                  "Home with 2 tabs, prn"])
def test_wards_and_care_places_get_no_street(deid, text):
    res = deid.process(Note("places15", text))
    assert res.ok and not [s for s in res.spans if s.label == "STREET"]


# -- towns_before_states on hand-made spans

HEADS = {"hospital": "HOSPITAL", "medical center": "HOSPITAL", "school": "ORGANIZATION"}


@pytest.mark.parametrize("text,town,label,state", [
    ("records from Quellton, VT today", "Quellton", "ORGANIZATION", "VT"),
    ("lives in quellton, vermont now", "quellton", "LOCATION-OTHER", "vermont"),
    ("QUELLTON MA 01101", "QUELLTON", "STATE", "MA"),
    ("from West Quellbury, NY.", "West Quellbury", "HOSPITAL", "NY"),
])
def test_a_place_before_its_state_is_a_town(text, town, label, state):
    spans = [_crf(text, town, label), _crf(text, state, "STATE")]
    assert _shown(towns_before_states(spans, text, HEADS), text)[0] == ("CITY", town)


@pytest.mark.parametrize("text,town,label,state", [
    ("seen at Quell Hospital, VT.", "Quell Hospital", "HOSPITAL", "VT"),  # named by its head word
    ("from Quell Medical Center, VT.", "Quell Medical Center", "HOSPITAL", "VT"),
    ("trip to Canada, Vermont", "Canada", "LOCATION-OTHER", "Vermont"),  # a country's name
    ("Dr. Quellan PA", "Quellan", "DOCTOR", "PA"),  # a person stays
    ("seen at Quellmart ma", "Quellmart", "ORGANIZATION", "ma"),  # a lower-case abbreviation needs a comma
    ("Quell\nTown, VT", "Quell\nTown", "ORGANIZATION", "VT"),  # across a line
])
def test_no_town_from_a_named_place_a_person_or_a_country(text, town, label, state):
    spans = [_crf(text, town, label), _crf(text, state, "STATE")]
    assert towns_before_states(spans, text, HEADS) == spans


def test_a_rule_span_before_a_state_keeps_its_label():
    text = "Quellmart, VT"
    spans = [Span(0, 9, "ORGANIZATION", "organization-kind", 0.9), _crf(text, "VT", "STATE")]
    assert towns_before_states(spans, text, HEADS) == spans


# -- review15: look-alikes the first version read (invented)

@pytest.mark.parametrize("text", [
    "HPI: 61 yo woman from Israel Deaconess transferred.",  # a hospital opening with a country's name: no COUNTRY
])
def test_a_place_opening_with_a_country_name_is_no_country(deid, text):
    res = deid.process(Note("places15", text))
    assert res.ok and not [s for s in res.spans if s.label == "COUNTRY"]  # the physionet profile drops COUNTRY: a leak


@pytest.mark.parametrize("text", [
    "Room 12 North\nAnn Quell, MD 41234\n",  # a doctor and a pager after a ward line: no Maryland address
    "Seen with 3 Residents, Bob Quell, MD 21201.",
    "Fellow: 2 West Team, Ann Quell, MD 41234",
    "Pt has 2 Daughters, Ann Quell, MD 20001",
    "Discussed with 2 Nurses, Ann Quell, PA.",  # city-street-state: a physician assistant, no Pennsylvania town
    "Case reviewed with 4 Team Members, Ann Quell, OK.",
])
def test_a_doctor_md_and_digits_after_a_numbered_line_is_no_address(deid, text):
    res = deid.process(Note("places15", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND15]


def test_the_md_rules_street_suffixes_are_the_word_list():
    macro = tomllib.loads((CONF / "rules" / "places15.toml").read_text())["macros"]["STREETSUFFIX"]
    listed = tomllib.loads((CONF / "rules" / "words" / "places.toml").read_text())["words"]["street_suffixes"]
    assert sorted(macro.split("(?i:", 1)[1].split(")", 1)[0].split("|")) == sorted(listed)


@pytest.mark.parametrize("text", [
    "- per smith et al\n", "ref: jones et al\n",  # city-state-line-end-lower: 'al' of 'et al' is no Alabama
    "- ekg: sinus, wi\n", "- monitor, tn\n",  # nor is a dictionary word before a state a town
    "Redness In The Sacral Area Noted.", "Pain In The Epigastric Area", "Swelling In The Inguinal Area.",  # city-area
])
def test_et_al_and_title_case_anatomy_get_no_round15_span(deid, text):
    res = deid.process(Note("places15", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND15 or s.label == "CITY"]


@pytest.mark.parametrize("text", ["Heparin gtt, IL, 25000 units", "Insulin gtt, IN, 10000 units/hr"])
def test_a_dose_after_a_state_abbreviation_is_no_zip(deid, text):
    res = deid.process(Note("places15", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND15]


# -- the merge's gates (final15): a decision runs when an earlier step of the same merge made the labels it reads

def _merged(text: str, spans: list[Span]) -> list[tuple[str, str]]:
    from deid_core.doc import Doc
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger
    return _shown(Merger("union", MERGE)(spans, Doc(Note("x", text)), NoteState()), text)


@pytest.mark.parametrize("label", ["LOCATION-OTHER", "ORGANIZATION"])
def test_a_town_before_a_state_the_gazetteer_named_is_a_town(label):
    """gazetteer_place_labels makes 'Vermont' a STATE in the same merge: towns_before_states must still see it."""
    text = "Moved to Quellby, Vermont in 2019."
    assert _merged(text, [_crf(text, "Quellby", "LOCATION-OTHER"), _crf(text, "Vermont", label)]) == [
        ("CITY", "Quellby"), ("STATE", "Vermont")]


def test_a_person_span_after_a_house_number_is_a_street_in_a_note_with_no_place_span():
    """street_numbers reads person spans too ('12 [birch road]' read DOCTOR): its gate must not need a place span."""
    text = "Lives at 12 birch road with son."
    assert _merged(text, [_crf(text, "birch road", "DOCTOR")]) == [("STREET", "12 birch road")]


# review17 (strict17's column cut): a letterhead line 'SHMC\n08401 QUELL FORGES   QUELLBURGH, MD' cut into columns
# leaves the street column alone before a column gap: the town of the next column is where the address goes on, so the
# street column read HOSPITAL is a STREET (it was one as a whole line on main; seed 40740 STREET R fell without this).
def test_a_column_gap_after_a_house_number_street_is_where_the_address_goes_on():
    text = "SHMC\n08401 QUELL FORGES   QUELLBURGH, MD 09253\n"
    assert _shown(street_numbers([_crf(text, "08401 QUELL FORGES", "HOSPITAL")], text), text) == [
        ("STREET", "08401 QUELL FORGES")]
    tab = "08401 QUELL FORGES\tQUELLBURGH"
    assert _shown(street_numbers([_crf(tab, "08401 QUELL FORGES", "HOSPITAL")], tab), tab) == [
        ("STREET", "08401 QUELL FORGES")]
    one_blank = "at 24 Hour Quellfit gym"  # one blank: the sentence goes on, no street
    spans = [_crf(one_blank, "24 Hour Quellfit", "ORGANIZATION")]
    assert street_numbers(spans, one_blank) == spans
