"""Round 12 (issue 14): the merge-only id, login, room and unit rules of conf/rules/ids.toml.

Their examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features and
their label beats the CRF's in the shipped pipeline (default bundle), and their look-alikes stay clear.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.notes import Note
from tests.helpers_rules import shipped_deidentifier, span_stands

CONF = Path(__file__).resolve().parents[1] / "conf"
_IDS = [r for r in tomllib.loads((CONF / "rules" / "ids.toml").read_text())["rule"]]
ROUND12 = {r["id"]: r for r in _IDS[[r["id"] for r in _IDS].index("mrn-labelled"):]}


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("ids12")


def test_round12_rules_are_merge_only_and_decide_their_label():
    sources = effective_config().merge.rule_label_sources
    assert len(ROUND12) >= 15
    for rid, rule in ROUND12.items():
        assert rule.get("crf_feature") is False, rid
        assert any(s == rid or (s.endswith("*") and rid.startswith(s[:-1])) for s in sources), rid


@pytest.mark.parametrize("text,phi,label", [
    ("admit to 13f oncology when bed ready", "13f oncology", "DEPARTMENT"),
    ("SPECIMEN BANK # FXP86050.", "FXP86050", "BIOID"),
    ("Pump ID: IV88123 replaced", "IV88123", "DEVICE"),
    ("Patient identifier: BH4821905", "BH4821905", "MEDICALRECORD"),
    ("Tracking # 1Z99812 for the kit", "1Z99812", "IDNUM"),
    ("Rm #: 4N12 overnight", "4N12", "ROOM"),
    ("ADMIT TO SILVER POD UNDER DR. HADDICK", "SILVER POD", "DEPARTMENT"),
    # review 12i: the whole extent stands (no part of the id left in clear), and the missed forms are read
    ("Patient moved to Room: 412-2B.", "412-2B", "ROOM"),
    ("Room: 4N-12 overnight.", "4N-12", "ROOM"),
    ("Pump # IV88123 replaced", "IV88123", "DEVICE"),
    ("Pump  ID: IV88123", "IV88123", "DEVICE"),
    ("Med. Rec. #: 4821905", "4821905", "MEDICALRECORD"),
    ("Case # is C-22319.", "C-22319", "IDNUM"),
    ("Electronically signed by: xyz9", "xyz9", "USERNAME"),
    ("LPN / ahinzmann\r\nAttending", "ahinzmann", "USERNAME"),
])
def test_the_rule_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "ids12", text, phi, label)


@pytest.mark.parametrize("text", [
    "code blue team responded, ROSC at 0410", "PTT increased to 14 s", "on room air 95%", "2 units of blood given",
    "ID consult appreciated, vanc 1250 q12h", "PS 10/5 PEEP 5", "pump at 5 ml/hr", "24h medicine review",
    "discussed with pt/family", "charted by q4h rounds", "genetic testing 2019", "Room: OR 2",
    # review 12i: phone numbers, dates, ranges, seconds, saline, skin findings and role words
    "Left message at patient number 617 555 1212", "Pt no. 617-555-1212 is cell", "Hospital ID 617 555 1212",
    "Call referral number 800-555-1212", "Referral number is 800-555-1212", "The case number was 03-04-2020",
    "Pump ID: 617-555-1212", "Auth # 3-4-2020 approved", "Medical records 03 04 2020 reviewed",
    "PTT INCREASED TO 42 S", "Changed to 1 N saline", "Discharged to 5 West 57th Street", "Red firm 2 cm lesion",
    "Paged Dr. White team, no response", "Insurance: Medicare, Encounter # 12345678", "Room: 2 beds", "Suite: 100 mg",
    "Genetic no. 12-3 probes", "Research number 10-20%", "Note written by MS3", "rn / tele", "Her wing 2 injury",
])
def test_look_alikes_get_no_round12_span(deid, text):
    res = deid.process(Note("ids12", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND12]
