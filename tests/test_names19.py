"""Round 19 (issue 14, names): the merge-only staff-name frames of conf/rules/names19.toml in the shipped pipeline
(a person after 'by' before 'at <time>', a name before a bracketed credential, a staff field's value, a name after a
contact verb and a role, 'Your nurse today was X', a signature line opened by the credential, initials closing the
note after a dash or opening a line before a role or a pager) and the catalogue of invented sentences
(tests/names19_catalogue.py). Names are invented.

The rules' own examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features, their
DOCTOR beats the CRF's other label, and clinical look-alikes are left clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.crf.versions import feature_rules
from deid_core.notes import Note
from deid_core.spans import source_in
from tests.helpers_rules import shipped_deidentifier, span_stands
from tests.names19_catalogue import LOOK_ALIKES, TARGETS, target

CONF = Path(__file__).resolve().parents[1] / "conf"
ROUND19 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "names19.toml").read_text())["rule"]}
MERGE = effective_config().merge


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("names19")


def test_round19_rules_are_merge_only_and_decide_their_label():
    assert len(ROUND19) >= 8
    priorities = [r["priority"] for r in ROUND19.values()]
    assert len(set(priorities)) == len(priorities)  # no tie between two of them (round 18's windows failure)
    for rid, rule in ROUND19.items():
        assert rule.get("crf_feature") is False, rid
        assert rule["label"] == "DOCTOR", rid
        assert source_in(rid, MERGE.rule_label_sources), rid
    assert "names19.toml" not in feature_rules(CONF / "rules")  # no file to the CRF's features: the bundles stand
    assert "rules/names19.toml" in effective_config().rules.files


@pytest.mark.parametrize(("text", "phi"), [
    ("Wife updated in the waiting room by Quillby at 2 pm.", "Quillby"),
    ("FAMILY UPDATED IN THE WAITING ROOM BY ZANDROW AT 08:15.", "ZANDROW"),
    ("ASSISTANT: Stanzione, Alec, M.D., Zandrowq (CCM)\nSCRUB: J. Quillby", "Zandrowq"),
    ("GROSSED BY MARLA ZANDROW, PA(ASCP).\nMICROSCOPIC: benign.", "MARLA ZANDROW"),
    ("Spoke with hospitalist Quillby Zandrow at midnight.", "Quillby Zandrow"),  # ORGANIZATION by the CRF on main
    ("Sepsis: follow. Case discussed with LCSW Quillby and Dr. Zandrow.", "Quillby"),
    ("Sonographer: Marla Zandrow, RDMS", "Marla Zandrow"),  # the credential stays out of the span
    ("Discharge instructions given.\nYour nurse today was Quillby.", "Quillby"),
    ("PILL BOTTLES REVIEWED WITH PT.\nPA-C QUILLBY 4/12 14:32", "QUILLBY"),
    ("I agree with the findings and plan. -- QMZ", "QMZ"),
    ("Plan as above.\n\nQMZ, Hospitalist, pager 41234", "QMZ"),
    ("Read back confirmed.\nZANDROW, MARLA MD / QMZ / tr: qz", "QMZ"),
    ("Case discussed with Jo Quillby and Dr Zandrow.", "Jo Quillby"),
    ("Appointment: July 21st at 0800 with Marla Quillby, ID, 6 E Medicine.", "Marla Quillby"),  # CITY by the CRF on main
    ("Time-out performed with Mackenzie, Raymond and Quillby present.", "Raymond"),  # PATIENT by the CRF on main
    ("Results called to Quillby-Marr at 8:15 am.", "Quillby-Marr"),
])
def test_the_round19_name_stands_in_the_pipeline(deid, text, phi):
    assert span_stands(deid, "names19", text, phi, "DOCTOR")


@pytest.mark.parametrize("text", [
    "Seen by cardiology at 2 pm.", "Updated by phone at 1400.", "Seen by PT at 10 am.", "Evaluated by ID at noon.",
    "Given by mouth at 2 pm.", "Followed by Lasix at 2 pm.",  # no person verb before 'by'
    "Physical therapy (PT) consulted.", "Case management (CM) following.", "Lasix (PO) given.",
    "Witness: none", "Interpreter: Spanish", "Interpreter: not needed", "SCRUB: per protocol", "Technologist: CT",
    "Spoke with hospitalist team.", "Discussed with attending physician.", "Met with social worker today.",
    "Your nurse today was helpful.", "Your doctor was concerned.", "The physician was called.",
    "RN AWARE 4/12 14:32", "MD NOTIFIED 4/12", "PT seen 3/4",
    "Plan as above. -- end", "BP stable -- NAD", "Follow up in 2 weeks. -- PRN",
    "ICU, attending aware", "CT / pager pending", "NPO, NP aware",
    "Case discussed with family and Dr. Zandrow.", "discussed with patient and Dr. Quillby",
    "spoke with cardiology and Dr. Zandrow", "discussed with her and Dr. Quillby",
    "CT / MRI / tr: none", "Follow up with cardiology in 2 weeks.", "Follow up with PCP, MD in 1 week.",
    "Appointment with Physical Therapy, PT, on Monday.", "Follow up with primary care in 2 weeks.",
])
def test_look_alikes_get_no_round19_span(deid, text):
    res = deid.process(Note("names19", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND19]


@pytest.mark.parametrize(("text", "service"), [
    ("Seen by Rheumatology at 2 pm.", "Rheumatology"), ("Seen by Hepatology at 2 pm.", "Hepatology"),
    ("Seen by NSGY at 2 pm.", "NSGY"), ("seen by OMFS at 10 am", "OMFS"),
    ("Called by Micro at 0300 re: GPC in 2/2 bottles.", "Micro"),
    ("Follow up with Rheumatology in 2 weeks.", "Rheumatology"), ("Follow up with Endocrinology on 5/2.", "Endocrinology"),
    ("Discussed with Hepatology and Dr. Quillby.", "Hepatology"), ("Discussed with Micro and Dr. Zandrow.", "Micro"),
    ("Your provider was Telehealth.", "Telehealth"), ("Sonographer: Hepatology", "Hepatology"),
])
def test_review_services_are_no_staff_names(deid, text, service):
    """Review (round 19): a service, unit or mode of visit after 'by', 'with' or 'was' is no clinician (SERVICE19);
    before the review each of these was a DOCTOR span (of a round 19 frame, or the CRF's over 'Micro')."""
    res = deid.process(Note("names19-svc", text))
    start = text.index(service)
    assert res.ok and not [s for s in res.spans if s.source in ROUND19], text
    assert not [s for s in res.spans if s.label == "DOCTOR" and s.start < start + len(service) and s.end > start], text


@pytest.mark.parametrize(("text", "phi"), [
    ("Seen by Marla Quillby at 2 pm.", "Marla Quillby"), ("Follow up with Quillby in 2 weeks.", "Quillby"),
    ("Discussed with Quillby and Dr. Zandrow.", "Quillby"), ("Sonographer: Marla Zandrow, RDMS", "Marla Zandrow"),
])
def test_review_names_beside_the_services_still_stand(deid, text, phi):
    """The service guard's near misses: a name in the same frames still reads as DOCTOR."""
    assert span_stands(deid, "names19", text, phi, "DOCTOR")


def test_catalogue_recall_and_look_alikes(deid):
    """The catalogue's staff names read as exactly one DOCTOR span over the mark (main c83be33: 120 of 128; round
    19: 122), and its look-alikes get no span of the round 19 rules (main's CRF reads 6 of 45 as a person:
    'Dear Colonel,', 'Keppra', 'Seuss', ... no round 19 rule is among them)."""
    hits = 0
    for line in TARGETS:
        text, start, end = target(line)
        res = deid.process(Note("names19-cat", text))
        hits += res.ok and (start, end, "DOCTOR") in {(s.start, s.end, s.label) for s in res.spans}
    assert len(TARGETS) >= 120 and hits >= 122, hits
    for text in LOOK_ALIKES:
        res = deid.process(Note("names19-cat", text))
        assert res.ok and not [s for s in res.spans if s.source in ROUND19], text


def test_round19_rules_are_linear():
    """conf/rules/names19.toml on the adversarial texts and on texts of its own examples costs linear time."""
    from deid_core.doc import Doc
    from deid_core.engine.rules.loader import load_rules, parse_example
    from tests.adversarial import KINDS, KNOWN_PHI
    from tests.test_linear_time import assert_linear, rule_tagger

    files = ["rules/names19.toml"]
    tagger = rule_tagger(files=files, gazetteer_file="", metadata=False)
    ours = [r for r in load_rules(tuple(files)) if r.id in ROUND19]
    examples = " ".join(parse_example(e)[0] for r in ours for e in r.examples) + "\n"
    words = "updated by by by by by at at SCRUB: Witness: ( (CCM) -- - , / pager Your nurse was RN PA-C \n"
    assert_linear(lambda t: tagger.tag(Doc(Note("adv", t, "p-adv", None, KNOWN_PHI))), "names19.toml", {
        **KINDS, "cue words": lambda n: (words * (n // len(words) + 1))[:n],
        "examples repeated": lambda n: (examples * (n // len(examples) + 1))[:n]})
