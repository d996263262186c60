"""Round 19 (issue 14, towns): the merge-only town rules of conf/rules/places19.toml (a town opened by 'Glen' / 'Mount'
/ 'Fort' / 'Port' / 'Lake' in a person's place frame, a town before ', <state>' after a place preposition, 'the / our
<town> office', a town in parentheses after a facility, a lower-case town after a lower-case street line), round 18's
shape rule tightened by context (a care act before 'in' / 'from'), its lower-case frames widened, and the second
catalogue of invented sentences (tests/places19_catalogue.py). Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: the shipped pipeline on them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.notes import Note
from deid_core.spans import source_in
from tests import places18_catalogue, places19_catalogue
from tests.helpers_rules import shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND19 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "places19.toml").read_text())["rule"]}
TOWN_RULES = {*ROUND19, *(r["id"] for r in tomllib.loads((CONF / "rules" / "places18.toml").read_text())["rule"])}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("places19")


def test_round19_rules_are_merge_only_decide_their_label_and_spread_their_towns():
    assert len(ROUND19) >= 5
    for rid, rule in ROUND19.items():
        assert rule.get("crf_feature") is False, rid
        assert source_in(rid, MERGE.rule_label_sources), rid
        assert source_in(rid, MERGE.town_label_sources), rid
    assert "places19.toml" not in feature_rules(CONF / "rules")
    names = [Path(f).name for f in effective_config().rules.files]
    assert names.index("places19.toml") == names.index("places18.toml") + 1


def _batch(deid, texts):
    """The pipeline's results on several texts in one call, each note its own patient (no town spreads between them)."""
    return deid.process_many([Note(f"places19-{i}", text, f"p19-{i}") for i, text in enumerate(texts)])


def _hits(deid, lines, module) -> int:
    targets = [module.target(line) for line in lines]
    return sum(res.ok and (start, end, "CITY") in {(s.start, s.end, s.label) for s in res.spans}
               for (_, start, end), res in zip(targets, _batch(deid, [t for t, _, _ in targets]), strict=True))


def test_catalogues_recall(deid):
    """Round 19's catalogue (main c83be33: 63 of 86; round 19: 83) and round 18's (main: 148 of 158; round 19: 151)."""
    assert len(places19_catalogue.TARGETS) >= 80
    assert _hits(deid, places19_catalogue.TARGETS, places19_catalogue) >= 81
    assert _hits(deid, places18_catalogue.TARGETS, places18_catalogue) >= 150
    looks = places18_catalogue.LOOK_ALIKES
    assert [text for text, res in zip(looks, _batch(deid, looks), strict=True)
            if not res.ok or [s for s in res.spans if s.label == "CITY"]] == []


def test_look_alikes_get_no_town_rule_span(deid):
    """No round 18 or 19 town rule reads a device, an eponym, a ward or a person handing over care (main: four of
    these, 'Head secured in [Mayfield].', 'Converted from [Norwood] to Glenn', 'Care taken over from [Dalton]',
    'Received pt from [Crawford] in PACU', were round 18 CITY spans; the CRF's and older rules' readings are left).
    Scored in one batch (review 19)."""
    looks = places19_catalogue.LOOK_ALIKES
    assert len(looks) >= 40
    found = {text: [(s.source, text[s.start:s.end]) for s in res.spans if s.source in TOWN_RULES] if res.ok else "error"
             for text, res in zip(looks, _batch(deid, looks), strict=True)}
    assert {text: f for text, f in found.items() if f} == {}


@pytest.mark.parametrize("text,phi", [
    ("Lived in Glen Quellan for 20 years.", "Glen Quellan"),  # CRF ORGANIZATION on main
    ("She is moving to Mount Marlow to be near family.", "Mount Marlow"),  # LOCATION-OTHER on main
    ("He is stationed at Fort Quellbury until June.", "Fort Quellbury"),  # HOSPITAL on main
    ("Hi, we are in Glen Marlow this weekend, can the refill wait?", "Glen Marlow"),  # PATIENT on main
    ("Ordering location: Glen Quellan", "Glen Quellan"),  # HOSPITAL on main
    ("Pt is from Springfield, OH and is here visiting.", "Springfield"),  # LOCATION-OTHER on main
    ("Seen at the Quellsbury office last month.", "Quellsbury"),  # LOCATION-OTHER on main
    ("Follows at our Marlowfield clinic.", "Marlowfield"),  # 'Marlowfield clinic' LOCATION-OTHER on main
    ("Quell Urgent Care (Zandrowton) visit reviewed.", "Zandrowton"),  # DOCTOR on main
    ("pt lives alone at 65 quell corners apt 3, zandrowtown. unemployed", "zandrowtown"),
    ("Pharmacy: Quell Scripts, 52 Quell Road, Zandrowview, MD; fax on file", "Zandrowview"),  # DOCTOR on main
    ("pt's daughter says she is in quellford tonight", "quellford"),  # lower-case frames of round 19
    ("can you send it to the cvs in marlowton", "marlowton"),
    ("26 yo man admitted 5/16 from quellsbury with chest pain", "quellsbury"),
    ("Spoke with the home health agency in Quellfield re: wound care.", "Quellfield"),  # 're' ends a town
    ("He is a retired teacher from Quellbridge.", "Quellbridge"),  # '-bridge' is a town's shape
    # Review 19: people and events are held, kept or lying in a town; only a care act ('placed', 'secured') refuses
    ("The wedding was held in Quellsburg last weekend.", "Quellsburg"),  # no span at all before the review
    ("Kept in Quellsburg by the snowstorm, she missed the visit.", "Quellsburg"),  # no span at all before the review
    ("Pt is currently staying with son, lying in Marlowton.", "Marlowton"),  # LOCATION-OTHER before the review
    ("She had the hip fixed in Quellsburg in May.", "Quellsburg"),
    ("Address changed from Quellsburg to Marlowton last month.", "Quellsburg"),  # 'Quellsburg to Marlowton' ORGANIZATION
    ("Pt switched from Zandrowton to our clinic.", "Zandrowton"),  # ORGANIZATION before the review
    ("Records received from Quellsburg yesterday.", "Quellsburg"),  # LOCATION-OTHER before the review
])
def test_the_round19_town_stands_in_the_pipeline(deid, text, phi):
    assert span_stands(deid, "places19", text, phi, "CITY")


@pytest.mark.parametrize("text", [
    "MVC near Mount Quellan. Airbags deployed.",  # a mountain: no person's frame
    "Pt came from Mount Quell for a higher level of care.",  # a care's movement: a hospital may be named so
    "Seen at the Quellsbury Clinic.",  # a facility's name (HOSPITAL under i2b2), not 'the <town> clinic'
    "Follows at the cardiology clinic.",
    "Quell Clinic (Ann Quell)",
    "referral from Quell, MD",  # a credential, not Maryland
    "12 quell lane, pt is home",
    "Crackles in midfield.", "Sway in romberg.",  # round 18's lower-case look-alikes stay clear with the wider frames
    "pt is in trendelenburg", "she is in bigeminy",
    # review 19: 'at' names a hospital after a person's frame but 'stationed' / 'based' (HOSPITAL read CITY before)
    "She is staying at Mount Auburn for rehab.", "Pt was born at Mount Sinai.",
])
def test_round19_near_misses_get_no_round19_span(deid, text):
    res = deid.process(Note("places19", text))
    assert res.ok and not [s for s in res.spans if s.source in TOWN_RULES], \
        [(s.source, text[s.start:s.end]) for s in res.spans]


def test_round19_rules_are_linear():
    """conf/rules/places19.toml (with the place files whose macros it reads) on the adversarial texts and on texts of
    its own triggers and examples cost linear time."""
    from deid_core.doc import Doc
    from deid_core.engine.rules.loader import load_rules, parse_example
    from tests.adversarial import KINDS, KNOWN_PHI
    from tests.test_linear_time import assert_linear, rule_tagger

    files = ["rules/locations.toml", "rules/places15.toml", "rules/places16.toml", "rules/places17.toml",
             "rules/places18.toml", "rules/places19.toml"]
    tagger = rule_tagger(files=files, gazetteer_file="", metadata=False)
    ours = [r for r in load_rules(tuple(files)) if r.id in TOWN_RULES]
    triggers = " \t ".join(sorted({t for r in ours for t in r.triggers})) + " "
    examples = " ".join(parse_example(e)[0] for r in ours for e in r.examples) + "\n"
    lower = "65 quell corners apt 3, " * 3 + "i am in " * 3
    assert_linear(lambda t: tagger.tag(Doc(Note("adv", t, "p-adv", None, KNOWN_PHI))), "places19.toml", {
        **KINDS, "triggers": lambda n: (triggers * (n // len(triggers) + 1))[:n],
        "Triggers": lambda n: (triggers.title() * (n // len(triggers) + 1))[:n],
        "examples repeated": lambda n: (examples * (n // len(examples) + 1))[:n],
        "lower frames": lambda n: (lower * (n // len(lower) + 1))[:n]})
