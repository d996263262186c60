"""Round 18 (issue 14, cities on unseen note types): the merge-only town rules of conf/rules/places18.toml (a town by
its shape after a place preposition, a message's own place frames, 'Town of X', a report's site field, a town after a
facility's name and a dash) in the shipped pipeline, and the catalogue of invented sentences (tests/places18_catalogue.py)
of phone and portal messages, reports, addresses and employers. Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and their
label beats the CRF's, and clinical and personal look-alikes are left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.engine.place_decisions import (
    gazetteer_place_labels,
    state_after_town,
    towns_then_countries,
)
from deid_core.notes import Note
from deid_core.spans import Span, source_in
from tests.helpers_rules import crf_span, shipped_deidentifier, span_stands
from tests.places18_catalogue import LOOK_ALIKES, TARGETS, target

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND18 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "places18.toml").read_text())["rule"]}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places18")


def test_round18_rules_are_merge_only_decide_their_label_and_spread_their_towns():
    assert len(ROUND18) >= 5
    for rid, rule in ROUND18.items():
        assert rule.get("crf_feature") is False, rid
        assert source_in(rid, MERGE.rule_label_sources), rid
        assert source_in(rid, MERGE.town_label_sources), rid
    assert "places18.toml" not in feature_rules(CONF / "rules")  # no file to the CRF's features: the rules version stands


def test_round18_file_follows_round17_in_the_rule_files():
    files = effective_config().rules.files
    names = [Path(f).name for f in files]
    assert names.index("places18.toml") == names.index("places17.toml") + 1


def _shown(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


def _rule_span(text: str, piece: str, label: str, source: str) -> Span:
    start = text.index(piece)
    return Span(start, start + len(piece), label, source, 1.0)


# -- the decisions on hand-made spans

@pytest.mark.parametrize("text,piece,want", [
    ("Grew up in Zandrowstad Norway and moved", "Zandrowstad Norway", [("CITY", "Zandrowstad"), ("COUNTRY", "Norway")]),
    ("born in Port Quellan Trinidad and Tobago.", "Port Quellan Trinidad and Tobago",
     [("CITY", "Port Quellan"), ("COUNTRY", "Trinidad and Tobago")]),
    ("QUELLSTAD NORWAY", "QUELLSTAD NORWAY", [("CITY", "QUELLSTAD"), ("COUNTRY", "NORWAY")]),
])
def test_a_town_span_ending_in_a_country_is_split(text, piece, want):
    assert _shown(towns_then_countries([crf_span(text, piece, "CITY")], text), text) == want


@pytest.mark.parametrize("text,piece", [
    ("Lives in Quellton Georgia", "Quellton Georgia"),  # Georgia is a US state too
    ("Moved from New Jersey", "New Jersey"),  # a state's own name
    ("from Quellton", "Quellton"),  # one word
    ("lives in Quellton chad", "Quellton chad"),  # a lower-case country that is a common word
])
def test_no_split_without_a_country_tail(text, piece):
    spans = [crf_span(text, piece, "CITY")]
    assert towns_then_countries(spans, text) == spans


def test_the_crf_body_word_left_of_a_town_rule_cut_is_dropped():
    text = "works for the Town of Quellsbury highway department"
    spans = [crf_span(text, "Town of", "ORGANIZATION"), _rule_span(text, "Quellsbury", "CITY", "city18-town-of")]
    assert _shown(gazetteer_place_labels(spans, text), text) == [("CITY", "Quellsbury")]
    kept = [crf_span(text, "Town of", "ORGANIZATION")]  # no town after it: the CRF's span stands
    assert gazetteer_place_labels(kept, text) == kept
    other = "the Friends of Quellsbury group"
    spans = [crf_span(other, "Friends of", "ORGANIZATION"), _rule_span(other, "Quellsbury", "CITY", "city18-town-of")]
    assert len(gazetteer_place_labels(spans, other)) == 2  # not a local body's word


def test_md_alone_in_parentheses_after_a_rule_town_is_maryland():
    text = "LIVES WITH HER SON IN QUELLSBERG (MD); INDEPENDENT"
    town = _rule_span(text, "QUELLSBERG", "CITY", "city18-shape-after-preposition")
    assert _shown(state_after_town([town], text), text) == [("CITY", "QUELLSBERG"), ("STATE", "MD")]
    crf = crf_span(text, "QUELLSBERG", "CITY")  # a CRF's town: '(MD)' may be a credential ('Ann Quell (MD)')
    assert _shown(state_after_town([crf], text), text) == [("CITY", "QUELLSBERG")]


# -- the pipeline

@pytest.mark.parametrize("text,phi", [
    ("I'm in Quellsburg until Friday.", "Quellsburg"),  # untagged on main
    ("i am in quellsburg till friday", "quellsburg"),  # lower case: a town's shape and no dictionary word
    ("I'll be driving back from Ashfield tonight.", "Ashfield"),  # CRF LOCATION-OTHER on main
    ("Called from a rest stop outside Zandrowfield.", "Zandrowfield"),
    ("Will be driving in from Quellchester for the 9 am appointment.", "Quellchester"),
    ("Pt is snowed in at Zandrowton and cannot come today.", "Zandrowton"),  # CRF ORGANIZATION on main
    ("I'm at my sister's in Marlowton this week.", "Marlowton"),
    ("Her PCP is in Quellwood.", "Quellwood"),
    ("I'm in Fort Quellan with my husband's family.", "Fort Quellan"),  # CRF ORGANIZATION on main
    ("Works for the Town of Quellsbury highway department.", "Quellsbury"),  # inside CRF ORGANIZATION on main
    ("Employed by the City of Zandrowton as a bus driver.", "Zandrowton"),
    ("Site: Quellsford\n", "Quellsford"),  # CRF DOCTOR on main
    ("Exam location: Marlowfield\n", "Marlowfield"),
    ("Performing location: Quillby Heart Center - Zandrowton\n", "Zandrowton"),  # CRF ORGANIZATION on main
    ("Refill called in to Quillby Pharmacy, Marlowton.", "Marlowton"),
    ("Pt reports he was seen at the ER in Quellberg last night.", "Quellberg"),
    ("City\tQuellport\tState\tME", "Quellport"),  # a table cell read HOSPITAL on main
    ("4237 Hunt Inlet Quellsfield AZ 85001", "Quellsfield"),  # glued to the street: CITY 'Hunt Inlet Quellsfield' on main
    ("Grew up in Zandrowstad Norway and moved here in 1990.", "Zandrowstad"),
    ("transferred from Quell General Hospital (Zandrowbury, MD) on 3/2", "Zandrowbury"),  # DOCTOR on main
    ("PT IS 76, LIVES WITH HER SON IN QUELLSBERG (MD); INDEPENDENT.", "QUELLSBERG"),
])
def test_the_round18_town_stands_in_the_pipeline(deid, text, phi):
    assert span_stands(deid, "places18", text, phi, "CITY")


@pytest.mark.parametrize("text", [
    "Spoke to Mr. Quellington about his results.", "A call from Carlton re: labs.", "Message from Whitfield, RN.",
    "Dr. Ashford in clinic today.", "Moved from bedside to chair.", "I'm in pain until Friday.", "I'm in remission.",
    "Her PCP is in agreement with the plan.", "I'll be back in clinic next week.", "I'm in the waiting room.",
    "City of Hope", "Town of residence: unknown", "Site: Right arm\n", "Site: Bedside\n", "Location: ICU\n",
    "Exam location: Portable\n", "Quell Clinic - Cardiology\n", "Quell Hospital, Main Campus\n",
    "Quell Pharmacy - Mail Order\n", "Swelling in skeleton muscle", "Rash in armpit and groin.",
    "Pain around umbilicus.", "Seen in Cardiology.", "Went to Quellton Hospital by ambulance.",
    "He is from Ireland.", "Moved to Finland in 2010.", "Winters in Maryland.",
    "MVC on Route 45 near Mount Quellington. Airbags deployed.",  # a mountain: no 'Mount' prefix to the shape
    "Seen by cardiology (Ann Quell, MD) today.", "Quell Hospital (Ann Quell, MD)",
])
def test_look_alikes_get_no_round18_span(deid, text):
    res = deid.process(Note("places18", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND18]


def test_catalogue_recall_and_look_alikes(deid):
    """The catalogue's towns read as exactly one CITY span (main b26e6be: 110 of 158; round 18: 145), and none of its
    look-alikes gets a CITY span."""
    hits = 0
    for line in TARGETS:
        text, start, end = target(line)
        res = deid.process(Note("places18-cat", text))
        hits += res.ok and (start, end, "CITY") in {(s.start, s.end, s.label) for s in res.spans}
    assert len(TARGETS) >= 150 and hits >= 143, hits
    for text in LOOK_ALIKES:
        res = deid.process(Note("places18-cat", text))
        assert res.ok and not [s for s in res.spans if s.label == "CITY"], text


# -- linear time

def test_round18_rules_and_decisions_are_linear():
    """conf/rules/places18.toml (with the place files whose macros it reads) on the adversarial texts and on texts of
    its own triggers and examples, and the
    round 18 decisions on many town spans, each ending in a country or after a 'Town of', cost linear time."""
    import regex

    from deid_core.doc import Doc
    from deid_core.engine.rules.loader import load_rules, parse_example
    from tests.adversarial import KINDS, KNOWN_PHI
    from tests.test_linear_time import assert_linear, rule_tagger

    files = ["rules/locations.toml", "rules/places15.toml", "rules/places16.toml", "rules/places17.toml",
             "rules/places18.toml"]  # places18 reads the macros of the files before it
    tagger = rule_tagger(files=files, gazetteer_file="", metadata=False)
    ours = [r for r in load_rules(tuple(files)) if r.id in ROUND18]
    triggers = " \t ".join(sorted({t for r in ours for t in r.triggers})) + " "
    examples = " ".join(parse_example(e)[0] for r in ours for e in r.examples) + "\n"
    assert_linear(lambda t: tagger.tag(Doc(Note("adv", t, "p-adv", None, KNOWN_PHI))), "places18.toml", {
        **KINDS, "triggers": lambda n: (triggers * (n // len(triggers) + 1))[:n],
        "Triggers": lambda n: (triggers.title() * (n // len(triggers) + 1))[:n],
        "examples repeated": lambda n: (examples * (n // len(examples) + 1))[:n]})

    def run(text: str) -> None:
        towns = [Span(m.start(), m.end(), "CITY", "crf:single") for m in regex.finditer(r"Quell[a-z]+ Norway", text)]
        towns_then_countries(towns, text)
        spans = []
        for m in regex.finditer(r"(Town of) (Quell[a-z]+)", text):
            spans.append(Span(m.start(1), m.end(1), "ORGANIZATION", "crf:single"))
            spans.append(Span(m.start(2), m.end(2), "CITY", "city18-town-of"))
        gazetteer_place_labels(spans, text)

    assert_linear(run, "round 18 place decisions", {
        "countries": lambda n: ("Quellton Norway, " * n)[:n],
        "bodies": lambda n: ("Town of Quellbury and " * n)[:n]})


# -- review 18: clinical words with a town's shape, a clinical state in a message's frame, a doctor's '(MD)', a ward

@pytest.mark.parametrize("text", [
    "Pt placed in trendelenburg.", "Sway in romberg.", "Unsteady in Romberg, otherwise nonfocal.",  # a position, a sign
    "Tone: decrease in Ashworth to 1.",  # a scale
    "Toxicity from glycoside.", "Crackles in midfield.", "Defect in hemifield.",  # lower-case words no dictionary has
    "Tenderness around mediport.",  # a device
    "Verbal order from Ashford.", "Sign-out from Crawford.",  # a person's hand-off, not a place
    "I'm in Atrial Fibrillation now.", "I'm in Chemo today.", "I'm in Bigeminy.", "I'm in Ketoacidosis.", "I'm in Obs.",
    "Consult from Zandrowton (MD) appreciated.", "Seen in Burton (MD) clinic.", "Follow up in Norton (MD) office.",
    "Patient went to Chesterfield 7 for dialysis.", "Pt in Ellisonton 6, bed 2.",  # a ward's number is no span of time
    "Site: Mediport\n", "Site: Leftside\n",  # a report's site field: a device, a body side
])
def test_review18_clinical_look_alikes_get_no_round18_span(deid, text):
    res = deid.process(Note("places18", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND18], [(s.source, text[s.start:s.end]) for s in res.spans]


@pytest.mark.parametrize("text,phi", [
    ("we are staying near quellsburg this week", "quellsburg"),  # a lower-case town after a person's place verb
    ("i live in zandrowfield now", "zandrowfield"),
    ("Moving to Zandrowville 3/1.", "Zandrowville"),  # a date after the town still ends it
    ("Lived in Quellsburg 20 years.", "Quellsburg"),
    ("I'm in Plantation until Friday.", "Plantation"),  # a town ending like a clinical word ('-ation') is read
])
def test_review18_towns_still_read(deid, text, phi):
    assert span_stands(deid, "places18", text, phi, "CITY")
