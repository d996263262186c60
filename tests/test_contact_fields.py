"""Phone and fax numbers by their cue word and with their extension (engine/contact_fields.py, [merge]
contact_fields; round 15). Every example is invented."""

from __future__ import annotations

import pytest

from deid_core.app.options import effective_config
from deid_core.config import ConfigError, load_config
from deid_core.engine.contact_fields import contact_cue_labels, phone_extensions
from deid_core.engine.field_ids import field_id_labels, table_pairs
from deid_core.spans import Span
from tests.adversarial import cpu_seconds
from tests.helpers_rules import crf_span

PAIRS = table_pairs(effective_config().merge.contact_fields)


def _cue(text: str, spans: list[Span]) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label) for s in contact_cue_labels(spans, text, PAIRS)]


def _ext(text: str, spans: list[Span]) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label) for s in phone_extensions(spans, text)]


@pytest.mark.parametrize("text,piece,label,want", [
    ("Fax: 617 555 0100   Phone: 617/555-0123\n", "617/555-0123", "FAX", "PHONE"),
    ("RESULTS FAXED TO 617/555-0100 ON 3/4/2020", "617/555-0100", "PHONE", "FAX"),
    ("Tel. 617-555-0123 (office)", "617-555-0123", "FAX", "PHONE"),
    ("call 617/555-0123 ext.43 for an appointment", "617/555-0123 ext.43", "FAX", "PHONE"),
    ("Phone: 617-555-0123", "617-555-0123", "MEDICALRECORD", "PHONE"),  # a phone-shaped id guess after its cue
    ("REPORT CALLED TO ANN AT 1-617-555-0123X2295; RECORDS", "1-617-555-0123X2295", "IDNUM", "PHONE"),
])
def test_a_cue_word_right_before_a_number_names_it(text, piece, label, want):
    assert _cue(text, [crf_span(text, piece, label)]) == [(piece, want)]


@pytest.mark.parametrize("text,piece,label", [
    ("Phone/Fax: 617-555-0123", "617-555-0123", "FAX"),  # a cue glued to another by '/' counts for neither
    ("Fax: 617-555-0100 sent; phone on file 617-555-0123", "617-555-0123", "FAX"),  # words between: no cue
    ("Phone: 4455667", "4455667", "MEDICALRECORD"),  # an id not shaped as a phone number keeps its label
    ("Will call 4455667 tomorrow", "4455667", "MEDICALRECORD"),
    ("Fax: 617-555-0100", "617-555-0100", "FAX"),
])
def test_no_cue_right_before_or_no_phone_shape_keeps_the_label(text, piece, label):
    assert _cue(text, [crf_span(text, piece, label)]) == [(piece, label)]


def test_a_span_of_a_rule_keeps_its_label():
    text = "Phone: 617-555-0100"
    s = crf_span(text, "617-555-0100", "FAX")
    assert contact_cue_labels([Span(s.start, s.end, "FAX", "fax-nearest-cue", 1.0)], text, PAIRS)[0].label == "FAX"


@pytest.mark.parametrize("text,pieces,want", [
    ("Phone 617-555-0123 ext. 17876 | Fax", [("617-555-0123", "PHONE"), ("17876", "PHONE")],
     [("617-555-0123 ext. 17876", "PHONE")]),
    ("(617-555-0123 ext.10881), full code", [("617-555-0123", "PHONE"), (".10881", "PHONE")],
     [("617-555-0123 ext.10881", "PHONE")]),
    ("PHONE: 617-555-0123 EXT.99286\n", [("617-555-0123", "PHONE"), ("99286", "IDNUM")],
     [("617-555-0123 EXT.99286", "PHONE")]),
    ("at 617-555-0123X52262; records", [("617-555-0123", "FAX")], [("617-555-0123X52262", "FAX")]),
    # the number untagged or cut, the extension tagged: one PHONE
    ("Phone 617/555-0123 ext. 17876 |", [("617/555", "PHONE"), ("17876", "PHONE")],
     [("617/555-0123 ext. 17876", "PHONE")]),
    ("Phone 617-555-0123 ext. 17876 |", [("17876", "PHONE")], [("617-555-0123 ext. 17876", "PHONE")]),
    ("Social Work, ext. 4-5908\n", [("5908", "IDNUM")], [("4-5908", "PHONE")]),
])
def test_an_extension_is_part_of_its_phone_number(text, pieces, want):
    assert _ext(text, [crf_span(text, p, lab) for p, lab in pieces]) == want


@pytest.mark.parametrize("text,pieces", [
    ("Tel 617-555-0123 x2 daily", [("617-555-0123", "PHONE")]),  # 'x2': one digit after x is no extension
    ("Phone 617-555-0123 ext. 17876 (Ann Lee)", [("617-555-0123", "PHONE"), ("17876", "DOCTOR")]),  # not a guess
    ("Lic 4455667 ext 22", [("4455667", "LICENSE")]),  # no phone number before the extension
    ("BP 120/80 x 24 hours", [("120/80", "DATE")]),
])
def test_look_alikes_of_an_extension_are_left_alone(text, pieces):
    assert _ext(text, [crf_span(text, p, lab) for p, lab in pieces]) == pieces


def test_contact_fields_take_phone_or_fax_only():
    with pytest.raises(ConfigError, match="PHONE or FAX"):
        load_config({"merge": {"contact_fields": {"DOCTOR": ["dr"]}}})


@pytest.mark.parametrize("text,piece,label", [
    ("See next 44556", "44556", "MEDICALRECORD"),  # 'ext' inside a word is no extension
    ("Text: 44556", "44556", "MEDICALRECORD"),
])
def test_ext_inside_a_word_is_no_extension(text, piece, label):
    assert _ext(text, [crf_span(text, piece, label)]) == [(piece, label)]


@pytest.mark.parametrize("text,pieces,want", [
    # every CRF piece of the number before the extension is taken into the one PHONE span
    ("Call (617) 555-0123 ext 42 today", [("(617)", "PHONE"), ("555", "PHONE"), ("42", "IDNUM")],
     [("(617) 555-0123 ext 42", "PHONE")]),
    # a piece held by another span: no piece of the number is dropped (it was: '555' left uncovered)
    ("Call 617-555-0123 ext 42 today", [("617", "DOCTOR"), ("555", "PHONE"), ("42", "IDNUM")],
     [("617", "DOCTOR"), ("555", "PHONE"), ("42", "PHONE")]),
])
def test_extension_drops_no_piece_of_the_number(text, pieces, want):
    assert _ext(text, [crf_span(text, p, label) for p, label in pieces]) == want


def test_extension_reading_is_linear_on_a_long_run_of_digits():
    """Each CRF span in a run of digits and '-' read back the whole run for its extension's start: quadratic."""
    per_span = {}
    for n in (1000, 4000):
        text = "1-" * n + " ext"
        spans = [Span(i, i + 1, "IDNUM", "crf:single", 0.9) for i in range(0, 2 * n, 2)]
        out = phone_extensions(spans, text)
        best = cpu_seconds(lambda spans=spans, text=text: phone_extensions(spans, text))
        per_span[n] = best / n
        assert [s.label for s in out] == ["IDNUM"] * n  # no extension there
    assert per_span[4000] < 2 * per_span[1000] + 2e-5, per_span


def test_a_cue_or_field_word_in_another_case_form_is_read_not_a_crash():
    """The case-blind pattern matches 'facſimile' (long s) and 'ſſn'; their label was looked up by lower(): KeyError,
    the whole note failed (and the exception named note text)."""
    text = "Sent by facſimile: 617-555-0199 today."
    assert _cue(text, [crf_span(text, "617-555-0199", "PHONE")]) == [("617-555-0199", "FAX")]
    text = "Patient ſſn: 123456789"
    ids = table_pairs(effective_config().merge.id_fields)
    spans = field_id_labels([crf_span(text, "123456789", "IDNUM")], text, ids, effective_config().merge.rule_label_sources)
    assert [(text[s.start:s.end], s.label) for s in spans] == [("123456789", "SSN")]


def test_phone_extensions_has_its_own_key():
    """[merge] phone_extensions false leaves the extension out (final15: it ran whatever the configuration said)."""
    from deid_core.doc import Doc
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger
    from deid_core.notes import Note

    text = "Call 617-555-0123 ext. 42 today."
    spans = [crf_span(text, "617-555-0123", "PHONE")]
    on, off = (Merger("union", load_config({"merge": {"phone_extensions": v}}).merge)(spans, Doc(Note("x", text)),
                                                                                     NoteState()) for v in (True, False))
    assert [text[s.start:s.end] for s in on] == ["617-555-0123 ext. 42"]
    assert [text[s.start:s.end] for s in off] == ["617-555-0123"]
