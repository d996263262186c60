"""Convention harmonization: PhysioNet-style gold completed with every age, weekday, state, profession."""

from __future__ import annotations

import pytest

from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.harmonize import SOURCE, complete_gold


def test_adds_unmarked_convention_types_only_where_gold_is_silent():
    text = "Pt is a 67 yo man, seen Monday. Wife (a nurse) lives in Ohio. Dr. Smith 555-1212."
    note = Note("n1", text, "p1")
    dr = text.index("Smith")
    gold = {"n1": [Span(dr, dr + 5, "DOCTOR")]}
    out, added = complete_gold([note], gold)
    got = {(text[s.start:s.end], s.label) for s in out["n1"]}
    assert ("67", "AGE") in got and ("Monday", "DATE") in got and ("Smith", "DOCTOR") in got
    assert {s.source for s in out["n1"] if s.label != "DOCTOR"} <= {s.source for s in out["n1"] if s.source.startswith(SOURCE)}
    assert not any(s.label == "PHONE" for s in out["n1"])  # only the conventions' rules complete gold
    assert added["AGE"] == 1 and added["DATE"] == 1


def test_never_overlaps_existing_gold():
    text = "Seen on Monday 3/4."
    note = Note("n2", text, "p1")
    gold = {"n2": [Span(8, 18, "DATE")]}
    out, added = complete_gold([note], gold)
    assert out["n2"] == gold["n2"] and added == {}


def test_training_gold_follows_the_typed_option():
    """[training] harmonize (default on) completes the target corpus's training gold; off keeps it."""
    import copy
    from dataclasses import replace

    from deid_core.config import ConfigError, crf_from_tables, crf_settings
    from deid_core.config.files import conf_file
    from deid_core.training.harmonize import training_gold

    conf = crf_settings()
    assert conf.training.harmonize is True
    note = Note("n3", "a 58 yo woman seen Friday", "p1")
    gold = {"n3": []}
    assert [s.label for s in training_gold([note], gold, conf)["n3"]] == ["AGE", "DATE"]
    off = replace(conf, training=replace(conf.training, harmonize=False))
    assert training_gold([note], gold, off) is gold
    tables = copy.deepcopy(conf_file("crf.toml"))
    tables["training"]["harmonise"] = tables["training"].pop("harmonize")
    with pytest.raises(ConfigError, match=r"\[training\] unknown key 'harmonise'"):
        crf_from_tables(tables, "misspelt")


def test_merge_only_rules_never_complete_gold(caplog):
    """A complete_with glob ('age-*') that matches a merge-only rule (age-sex-slash: 'F/65') skips it, and
    says so: merge-only rules never reach training, not even through the completed gold."""
    text = "AGE/SEX: F/65\nORDERING: Dr. Ames"
    with caplog.at_level("INFO", logger="deid_core.training.harmonize"):
        out, added = complete_gold([Note("n2", text, "p2")], {"n2": []})
    assert not any("age-sex-slash" in s.source for s in out["n2"])
    assert any("merge-only rules not used" in r.getMessage() and "age-sex-slash" in r.getMessage()
               for r in caplog.records)
