"""The rule stage inside the Deidentifier built from conf/deidentify.toml."""

from __future__ import annotations

from deid_core.config import conf_file, load_config
from deid_core.doc import Doc
from deid_core.engine.pipeline import build_deidentifier
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note


def test_default_config_builds_rule_stage_and_masks():
    deid = build_deidentifier(load_config(), None, b"k" * 32)
    note = Note("n1", "Dr. Zelnik saw Mr. Ovantis on 3/14/2019, call 617-555-0123.",
                known_phi=(("Ovantis", "PATIENT"),))
    res = deid.process(note)
    assert res.ok
    for secret in ("Zelnik", "Ovantis", "3/14/2019", "617-555-0123"):
        assert secret not in res.text
    assert {s.label for s in res.spans} == {"DOCTOR", "PATIENT", "DATE", "PHONE"}


def test_rules_table_in_default_config():
    rules = conf_file("deidentify.toml")["rules"]
    assert rules["metadata"] is True and rules["fuzzy"] is True and rules["min_age"] == 0
    assert all(f.startswith("rules/") for f in rules["files"])


def test_plain_clinical_text_gives_no_phi():
    """A de-identified-looking note full of numbers and clinical words yields nothing."""
    text = ("NEURO: A&Ox3, MAE. CV: HR 88 NSR, BP 118/62, MAP 70s. RESP: CPAP 5/5 40%, "
            "sats mid 90's, RR 18. ABG 7.41/40/98. GI: NPO, abd soft NT ND. GU: foley, "
            "UO 40-60 cc/hr. Lasix 20 mg IV x2, K 3.9, Mg 2.0. Pain 2/10. Plan: wean vent, "
            "transfer to floor when stable, pt to OR at 0730.")
    spans = RuleTagger(load_config().rules).tag(Doc(Note("c", text)))
    assert [(text[s.start:s.end], s.label) for s in spans] == []


def test_email_wins_over_known_name_inside_it():
    """A patient's name inside an e-mail address is part of one EMAIL span, not PATIENT spans."""
    tagger = RuleTagger(load_config().rules)
    text = "write to maria.lopez@example.org today"
    spans = tagger.tag(Doc(Note("1", text, "p", known_phi=(("Maria", "PATIENT"), ("Lopez", "PATIENT")))))
    assert [(text[s.start:s.end], s.label) for s in spans] == [("maria.lopez@example.org", "EMAIL")]
