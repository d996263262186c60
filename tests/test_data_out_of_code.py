"""Declarative data read from conf/ and data files: calendar names, CRF feature word lists and the
feature version derived from them, gazetteer lists, PhysioNet label maps, surrogate generators."""

from __future__ import annotations

import typing

import pytest

from deid_core.bundle import load_bundle
from deid_core.config import conf_file, load_config
from deid_core.config.surrogates import Generator
from deid_core.doc import Doc
from deid_core.engine.crf import words
from deid_core.engine.crf.features import gazetteer_names, regex_shape
from deid_core.engine.crf.versions import current_versions
from deid_core.engine.surrogates import dates as dates_mod
from deid_core.engine.surrogates.generators import GENERATORS
from deid_core.engine.surrogates.modes import surrogate_mode
from deid_core.gazetteers import LISTS, SCANNED
from deid_core.gazetteers import words as gazetteer_words
from deid_core.io.physionet import category_map, label_categories
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.text.calendar_words import calendar_words
from deid_core.training.synth import audit
from deid_core.training.synth import dates as synth_dates


def test_one_calendar_list_for_features_surrogates_and_synthetic_notes():
    cal = calendar_words()
    assert cal.months[0] == "January" and cal.weekdays[0] == "Monday" and len(cal.months) == 12
    assert dates_mod.MONTHS == cal.months and dates_mod.WEEKDAYS == cal.weekdays
    assert synth_dates.MONTHS == cal.months and synth_dates.WEEKDAYS == cal.weekdays
    assert synth_dates.WEEKDAY_ABBR[1] == ("Tue", "Tues") and "may" not in audit.MONTHS_CHECKED
    for w in cal.months + cal.month_abbreviations:
        assert regex_shape(w) == "MONTH"
    for w in cal.weekdays + cal.weekday_abbreviations:
        assert regex_shape(w) == "WEEKDAY"
    assert regex_shape("Autumn") == regex_shape("xmas") == "SEASON" and regex_shape("Dr") == "TITLE"


def test_feature_version_is_derived_from_the_lists(monkeypatch):
    version = words.features_version()
    assert version.startswith(words.FEATURES_CODE_VERSION + "-") and current_versions()["features"] == version
    assert load_bundle().manifest["versions"]["features"] == version  # same lists: the default bundle holds
    real = words.conf_file

    def changed(name):
        data = real(name)
        return {**data, "titles": [*data["titles"], "sgt"]} if name == "crf_features.toml" else data

    monkeypatch.setattr(words, "conf_file", changed)
    assert words.features_version() != version  # a changed list: old bundles refuse (hard version)


def test_feature_lists_name_known_gazetteers_and_are_read():
    fw = words.feature_words()
    assert set(fw.gazetteer_lists) <= set(LISTS) and fw.profession_suffixes[0] == "ist"
    assert "first_name" in gazetteer_names("maria").split("+")


def test_gazetteer_index_is_data():
    assert set(SCANNED) <= set(LISTS) and "english_word" in LISTS
    assert "boston" in gazetteer_words("city")


def test_physionet_label_maps_read_and_write_from_conf():
    assert category_map()["HCPName"] == "DOCTOR"
    back, other = label_categories()
    assert back["DOCTOR"] == "HCPName" and other == "Location"
    assert conf_file("physionet_labels.toml")["write"] == back


def test_every_configured_generator_is_registered_and_every_label_has_one():
    assert set(GENERATORS) == set(typing.get_args(Generator))
    from deid_core import taxonomy

    gens = load_config().surrogates.generators
    assert set(gens) == set(taxonomy.labels()) and set(gens.values()) <= set(GENERATORS)


def test_the_generator_of_a_label_is_configuration():
    text = "Seen at Mercy Hospital."
    spans = [Span(8, 22, "HOSPITAL")]
    doc = Doc(Note("n", text, "p"))
    place = surrogate_mode(load_config(), DEMO_KEY)(doc, spans)[0]
    ident = surrogate_mode(load_config({"surrogates": {"generators": {"HOSPITAL": "identifier"}}}), DEMO_KEY)(doc, spans)[0]
    assert place != ident and len(ident) == len("Mercy Hospital") and ident[5] == " "  # format kept, letters drawn
    assert ident[0].isupper() and ident[1:5].islower()


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_each_generator_replaces_its_labels(name):
    from deid_core import taxonomy

    rep = surrogate_mode(load_config(), DEMO_KEY)
    labels = [lab for lab, g in load_config().surrogates.generators.items() if g == name]
    assert labels, name
    samples = {"DATE": "3/14/2019", "AGE": "94", "ZIP": "02114", "PHONE": "617-555-0143", "FAX": "617-555-0143",
               "EMAIL": "ann.lee@mail.org", "URL": "https://mercy.org/x", "IPADDR": "10.1.2.3", "SSN": "123-45-6789"}
    for label in labels:
        original = samples.get(label, "Quillaby" if taxonomy.category_of(label) != "ID" else "AB12345")
        out = rep(Doc(Note("n", original, "p")), [Span(0, len(original), label)])[0]
        assert out and out != original and "[**" not in out, (label, out)
