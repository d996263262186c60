"""Round 19 (issue 14, USERNAME on unseen note types): the merge-only login rules of conf/rules/ids19.toml (a login after a
record-keeping verb and 'by', after a message's routing words, in a sign-off, account or session field, as the subject
of an audit verb after a time stamp, in brackets after a credential) in the shipped pipeline, the merge step
spaced_logins (engine/field_ids.py: a CRF login guess with a blank inside is a person's name), and the catalogue of
invented sentences (tests/users19_catalogue.py). Examples are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features, their label
beats the CRF's, and the look-alikes (doses, units, vent modes, role pairs, codes, rooms, common words) stay clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.engine.field_ids import spaced_logins
from deid_core.notes import Note
from deid_core.spans import Span, source_in
from tests.helpers_rules import crf_span, shipped_deidentifier, span_stands
from tests.users19_catalogue import LOOK_ALIKES, TARGETS, target

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND19 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "ids19.toml").read_text())["rule"]}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("users19")


def test_round19_rules_are_merge_only_and_decide_their_label():
    assert len(ROUND19) >= 5
    for rid, rule in ROUND19.items():
        assert rule.get("crf_feature") is False, rid
        assert rule["label"] == "USERNAME", rid
        assert source_in(rid, MERGE.rule_label_sources), rid
    assert "ids19.toml" not in feature_rules(CONF / "rules")  # no file to the CRF's features: the rules version stands


def test_round19_file_follows_round17_ids_in_the_rule_files():
    names = [Path(f).name for f in effective_config().rules.files]
    assert names.index("ids19.toml") == names.index("ids17.toml") + 1


def test_round19_priorities_are_apart_from_the_other_login_rules():
    """No tie with an existing USERNAME rule at the same priority (round 18's windows failure came from one)."""
    others = {}
    for path in (CONF / "rules").glob("*.toml"):
        if path.name == "ids19.toml":
            continue
        for r in tomllib.loads(path.read_text()).get("rule", []):
            if r.get("label") == "USERNAME":
                others[r["priority"]] = r["id"]
    for rid, rule in ROUND19.items():
        assert rule["priority"] not in others, (rid, others.get(rule["priority"]))


@pytest.mark.parametrize("text,phi", [
    ("Released by czandrow 9/9/2019 13:00", "czandrow"),  # main: CRF DOCTOR
    ("Note opened by cquillby 11/11/2020 08:00", "cquillby"),  # main: missed
    ("Signed electronically by rqbly9 at 1530", "rqbly9"),
    ("Telephone encounter by czandrow2 2/8/2019 15:12", "czandrow2"),
    ("Routed to: pquill2 for review", "pquill2"),
    ("Reply from gquill77: please call the patient back.", "gquill77"),
    ("Signed: jquillby (RN)", "jquillby"),  # main: CRF DOCTOR
    ("Account gzandrow8 unlocked by IT.", "gzandrow8"),
    ("Screen name: sunnyquill", "sunnyquill"),
    ("Patient Unit No: 693092: 9/11/2017 10:45 mhudnut viewed notes from 10.1.2.3", "mhudnut"),  # main: CRF HOSPITAL
    ("from 10.2.3.4; 3/13/2018 14:32 TQUE printed AVS at PC4298.", "TQUE"),  # main: missed
    ("ANN QUILLBY, PT, DPT  (RUE32)\nNext visit Tuesday.", "RUE32"),  # main: missed
])
def test_the_round19_login_stands_in_the_pipeline(deid, text, phi):
    assert span_stands(deid, "users19", text, phi, "USERNAME")


@pytest.mark.parametrize("text", [
    "Released by pharmacy on 3/4/2021.", "Collected by patient at home.", "Taken by mouth at 0800.",
    "Reviewed by PGY2 on 3/4.", "Routed to: triage pool", "Sent to: pharmacy", "Forwarded to PCP for review.",
    "Assigned to: QUILLBY 3/4", "Signed: patient", "Signature: on file", "Tech: ultrasound", "Account 12345678 closed.",
    "0800 patient signed consent.", "at 14:32 RN printed the AVS", "Ann Zandrow, MD (PGY2) saw the patient.",
    "Ann Zandrow, RN (ICU3)\n", "Vent: PS/PEEP 10/5.", "RN/MD aware.", "Heparin 18 units/kg/hr.",
    # review: services, routes, modalities and payers in no common-word list (ids19.toml NOTLOGIN19)
    "Blood cultures collected by phlebotomy at 0600.", "Morphine 2 mg administered by IVP at 0900", "Tech: xray 3/3",
    "Account: medicaid 3/4", "Routed to: phlebotomy for review",
    "CC: syncope", "Chief complaint below.\nCC: hematuria for 2 days",  # review: 'CC:' is the chief complaint
])
def test_look_alikes_get_no_round19_span(deid, text):
    res = deid.process(Note("users19", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND19]


def test_catalogue_recall_and_look_alikes(deid):
    """The catalogue's logins read as exactly one USERNAME span (main c83be33: 93 of 129; round 19: 121), and only
    two look-alikes get a USERNAME span, both from main's feature rule `username` ('User ID: pending',
    'Portal username: not set up'; a feature rule: not changed here)."""
    hits = 0
    for line in TARGETS:
        text, start, end = target(line)
        res = deid.process(Note("users19-cat", text))
        hits += res.ok and (start, end, "USERNAME") in {(s.start, s.end, s.label) for s in res.spans}
    assert len(TARGETS) >= 120 and hits >= 120, hits
    flagged = []
    for text in LOOK_ALIKES:
        res = deid.process(Note("users19-cat", text))
        assert res.ok
        flagged += [text for s in res.spans if s.label == "USERNAME"]
    assert len(LOOK_ALIKES) >= 60 and flagged == ["User ID: pending", "Portal username: not set up"], flagged


# -- spaced_logins (engine/field_ids.py): a CRF login guess with a blank inside is a person's name

@pytest.mark.parametrize("text,piece", [
    ("Family at bedside and updated.\n-- allene quillby\n", "allene quillby"),  # a lower-case name signing a line
    ("Departed 08:15.\nNeal Zandrow / LCSW Quillby\n", "LCSW Quillby"),
])
def test_a_crf_login_with_a_blank_is_a_person(text, piece):
    got = spaced_logins([crf_span(text, piece, "USERNAME")], text)
    assert [(s.label, text[s.start:s.end]) for s in got] == [("DOCTOR", piece)]


@pytest.mark.parametrize("text,piece,source", [
    ("Entered by user KQUILL", "user KQUILL", "crf:single"),  # a login field word opens it: the login is inside
    ("Username tzandrow99 reset", "Username tzandrow99", "crf:single"),
    ("Result verified by vquill7 at 0612", "vquill7 at", "crf:single"),  # a digit: a login
    ("Signed by qz quill on 3/4", "qz quill", "username-signed-word"),  # a rule's span: its context decided
    ("signed by qzandrow on 3/4", "qzandrow", "crf:single"),  # one word
])
def test_a_login_without_a_blank_or_with_a_login_mark_stays(text, piece, source):
    start = text.index(piece)
    span = Span(start, start + len(piece), "USERNAME", source, 0.9)
    assert [s.label for s in spaced_logins([span], text)] == ["USERNAME"]


def test_spaced_logins_are_linear():
    from tests.test_linear_time import assert_linear

    def run(text: str) -> None:
        spans = [Span(i, i + 9, "USERNAME", "crf:single", 0.9)
                 for i in range(0, len(text) - 9, 12)]
        spaced_logins(spans, text)

    assert_linear(run, "spaced_logins", {"names": lambda n: ("ann quill, " * n)[:n]})


def test_round19_rules_are_linear():
    """conf/rules/ids19.toml (with ids.toml, whose macros the id files share) on the adversarial texts and on texts of
    its own triggers and examples costs linear time."""
    from deid_core.doc import Doc
    from deid_core.engine.rules.loader import load_rules, parse_example
    from tests.adversarial import KINDS, KNOWN_PHI
    from tests.test_linear_time import assert_linear, rule_tagger

    files = ["rules/ids.toml", "rules/ids19.toml"]
    tagger = rule_tagger(files=files, gazetteer_file="", metadata=False)
    ours = [r for r in load_rules(tuple(files)) if r.id in ROUND19]
    triggers = " \t ".join(sorted({t for r in ours for t in r.triggers})) + " by : 10:45 RN, ( "
    examples = " ".join(parse_example(e)[0] for r in ours for e in r.examples) + "\n"
    assert_linear(lambda t: tagger.tag(Doc(Note("adv", t, "p-adv", None, KNOWN_PHI))), "ids19.toml", {
        **KINDS, "triggers": lambda n: (triggers * (n // len(triggers) + 1))[:n],
        "Triggers": lambda n: (triggers.upper() * (n // len(triggers) + 1))[:n],
        "examples repeated": lambda n: (examples * (n // len(examples) + 1))[:n]})


# -- review (round 19): after a union the group's source is its CRF member's; a rule's login there is no CRF guess

@pytest.mark.parametrize("text,phi", [
    ("The patient was seen today and is doing well.\nE-signed by QZA12 12/30/2020 2330", "QZA12"),  # main: dropped
    ("Note reviewed with the attending.\nE-signed by ZQB17 on 3/4/2021", "ZQB17"),  # main: dropped
])
def test_a_login_a_rule_found_survives_the_crf_login_guard(deid, text, phi):
    """guard_crf_logins drops a CRF-only 'by <code>' (HCO3, HSV2); the rules and the CRF agreeing on a capitals
    login with digits credited the union to the CRF, and the guard dropped the login (a leak)."""
    assert span_stands(deid, "users19-review", text, phi, "USERNAME")


@pytest.mark.parametrize("text,phi", [
    ("Result verified by zquill at 0612", "zquill"),  # the CRF's extent 'zquill at' (a blank), a rule's 'zquill'
    ("Specimen received by qzandrow at 0540.", "qzandrow"),
])
def test_a_login_a_rule_found_keeps_its_label_in_spaced_logins(deid, text, phi):
    res = deid.process(Note("users19-review", text))
    start = text.index(phi)
    assert res.ok and [s.label for s in res.spans if s.start <= start < s.end] == ["USERNAME"]


def test_rule_cover_answers_overlaps_only():
    from deid_core.engine.vetoes import guard_crf_logins, rule_cover

    text = "The pt was seen.\nSigned by QZA12 on 3/4 and compensated by HCO3 of 30."
    q, h = text.index("QZA12"), text.index("HCO3")
    rule = Span(q, q + 5, "USERNAME", "username19-record-verb", 1.0)
    crf = [Span(q, q + 5, "USERNAME", "crf:single", 0.9), Span(h, h + 4, "USERNAME", "crf:single", 0.9)]
    ruled = rule_cover([rule, *crf], lambda s: s.source == rule.source)
    assert ruled(q, q + 5) and ruled(q + 4, q + 9) and not ruled(q + 5, q + 9) and not ruled(h, h + 4)
    assert [text[s.start:s.end] for s in guard_crf_logins(crf, text, ruled)] == ["QZA12"]
    assert guard_crf_logins(crf, text) == []  # no answer given: the CRF-only guard as before
    text = "Plan reviewed by PGY2 Ames today."  # a rule's name beside the code: the code is cut as before
    p = text.index("PGY2")
    ames = rule_cover([Span(p + 5, p + 9, "DOCTOR", "name-title", 1.0)], lambda s: True)
    got = guard_crf_logins([Span(p, p + 9, "USERNAME", "crf:single", 0.9)], text, ames)
    assert [(text[s.start:s.end], s.label) for s in got] == [("Ames", "DOCTOR")]
    text = "Result verified by zquill at 0612"
    z = text.index("zquill")
    guess = [Span(z, z + 9, "USERNAME", "crf:single", 0.9)]  # 'zquill at': a blank, no digit
    assert spaced_logins(guess, text)[0].label == "DOCTOR"
    ruled = rule_cover([Span(z, z + 6, "USERNAME", "username19-record-verb", 1.0)], lambda s: True)
    assert spaced_logins(guess, text, ruled)[0].label == "USERNAME"
