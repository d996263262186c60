"""Training recipes (conf/recipes/*.toml, `deid train --recipe`): typed, re-inserted copies of the
target notes with PHI, synthetic notes, a short real training run."""

from __future__ import annotations

import json
import typing
from dataclasses import replace

import pytest

from deid_core.app.cli import main as deid_main
from deid_core.config import ConfigError, recipe_settings
from deid_core.config.recipe import Kind
from deid_core.engine.surrogates.locations import faker_version
from deid_core.io.corpus import Corpus
from deid_core.io.physionet import write_physionet
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.recipe import copy_kinds, reinserted_docs, synthetic_docs, target_docs
from deid_core.training.reinsert import KINDS
from deid_core.training.train import crf_config

TEXT = "Pt Zorblatt Quimby, 58 yo, seen by Dr. Healey on 3/14. Wife called from Ohio."


def _note(i: int, text: str = TEXT) -> Note:
    return Note(f"n{i}", text, f"p{i % 2}", None, (("Zorblatt Quimby", "PATIENT"),))


def _gold(text: str = TEXT) -> list[Span]:
    spans = []
    for sub, label in (("Zorblatt Quimby", "PATIENT"), ("Healey", "DOCTOR"), ("3/14", "DATE")):
        i = text.index(sub)
        spans.append(Span(i, i + len(sub), label))
    return spans


def test_recipe_typed_and_checked(tmp_path):
    r = recipe_settings("default")
    assert r.reinsert.copies >= 1 and set(r.reinsert.kinds) <= set(KINDS) and r.synthetic.notes >= 1000
    assert set(typing.get_args(Kind)) == set(KINDS)  # the schema's kinds are the re-insertion kinds
    with pytest.raises(ConfigError, match="no such recipe"):
        recipe_settings("nosuch")
    bad = tmp_path / "bad.toml"
    bad.write_text('[reinsert]\ncopies = 1\nkinds = ["oov"]\nkey = "k"\nconfig = "evaluation/reinsert.toml"\n'
                   'coppies = 2\n[synthetic]\nnotes = 1\nseed = 1\npatients = 1\nbreadth = []\n')
    with pytest.raises(ConfigError, match=r"\[reinsert\] unknown key 'coppies'"):
        recipe_settings(str(bad))
    bad.write_text('[reinsert]\ncopies = 1\nkinds = ["typo"]\nkey = "k"\nconfig = "evaluation/reinsert.toml"\n'
                   '[synthetic]\nnotes = 1\nseed = 1\npatients = 1\nbreadth = []\n')
    with pytest.raises(ConfigError, match="kinds"):
        recipe_settings(str(bad))
    bad.write_text('[reinsert]\ncopies = 0\nkinds = ["oov"]\nkey = "k"\nconfig = "evaluation/reinsert.toml"\n'
                   '[synthetic]\nnotes = 1\nseed = 1\npatients = 1\nbreadth = ["nosuch"]\n')
    with pytest.raises(ConfigError, match="breadth names 'nosuch': no such overlay"):
        recipe_settings(str(bad))


def test_each_shipped_bundle_names_its_recipe_and_the_profiles_takes_no_breadth():
    """conf/deidentify.toml and the physionet profile name the recipe of their bundle; the profile's
    recipe names no breadth overlay, so the default recipe's breadth cannot reach models/physionet."""
    from deid_core.config import load_config

    default, profile = load_config(), load_config().with_file("profiles/physionet.toml")
    assert (default.model.bundle, profile.model.bundle) == ("default", "physionet")
    assert default.model.recipe != profile.model.recipe
    assert recipe_settings(profile.model.recipe).synthetic.breadth == ()


def test_copies_rotate_kinds_and_skip_notes_without_phi():
    r = recipe_settings("default")
    notes = [_note(i) for i in range(4)] + [Note("empty", "No PHI in this note.", "p9")]
    by_copy = copy_kinds(notes[:4], r)
    assert len(by_copy) == r.reinsert.copies
    for i, n in enumerate(notes[:4]):  # copy j of note i has kind (i + j) mod len(kinds): all distinct
        kinds = [k for copy in by_copy for k, ns in copy.items() if n in ns]
        assert kinds == [r.reinsert.kinds[(i + j) % len(r.reinsert.kinds)] for j in range(r.reinsert.copies)]
    gold = {n.note_id: _gold() for n in notes[:4]}
    docs = reinserted_docs(notes, gold, r)
    assert len(docs) == 4 * r.reinsert.copies  # the note without PHI is not copied
    for d in docs:
        text = d.doc.text
        assert "Zorblatt" not in text and "Healey" not in text and "3/14" not in text
        assert "Zorblatt" not in " ".join(v for v, _ in d.doc.note.known_phi)
        assert [s.label for s in d.gold] == ["PATIENT", "AGE", "DOCTOR", "DATE"] or \
            [s.label for s in d.gold] == ["PATIENT", "DOCTOR", "DATE"]
        assert all(text[s.start:s.end].strip() for s in d.gold)


def test_target_docs_harmonize_then_copy():
    r = recipe_settings("default")
    notes = [_note(i) for i in range(2)]
    docs = target_docs(notes, {n.note_id: _gold() for n in notes}, crf_config(), r)
    assert len(docs) == 2 + 2 * r.reinsert.copies
    assert "AGE" in {s.label for s in docs[0].gold}  # the harmonized age of the original
    ages = [d.doc.text[s.start:s.end] for d in docs[2:] for s in d.gold if s.label == "AGE"]
    assert len(ages) == 2 * r.reinsert.copies and all(a.isdigit() for a in ages)  # re-drawn, moved with the text
    assert len(target_docs(notes, {}, crf_config(), None)) == 2  # no recipe: the notes alone


def test_synthetic_docs_leave_types_out():
    r = recipe_settings("default")

    small = replace(r, synthetic=replace(r.synthetic, notes=40, patients=8))
    docs, types = synthetic_docs(small, exclude_types=("telephone",))
    assert len(docs) == 40 and "telephone" not in types and all(d.domain == "S" for d in docs)


def test_deid_train_with_a_recipe(tmp_path):
    """A real (short) training run from a recipe file: bundle.json records the recipe."""
    data = tmp_path / "pn"
    notes = [replace(n, note_id=f"{n.patient_id[1:]}-{i + 1}") for i, n in enumerate(_note(i) for i in range(6))]
    write_physionet(Corpus(notes, {n.note_id: _gold() for n in notes}), data)  # invented notes, PhysioNet layout
    recipe = tmp_path / "tiny.toml"
    recipe.write_text('[reinsert]\ncopies = 2\nkinds = ["oov", "lower"]\nkey = "k"\n'
                      'config = "evaluation/reinsert.toml"\n[synthetic]\nnotes = 12\nseed = 3\npatients = 4\nbreadth = []\n')
    crf = tmp_path / "crf.toml"
    from deid_core.config import conf_dir

    crf.write_text((conf_dir() / "crf.toml").read_text().replace("max_iterations = 150", "max_iterations = 5"))
    out = tmp_path / "bundle"
    assert deid_main(["train", "--physionet", str(data), "--recipe", str(recipe), "--crf-config", str(crf),
                      "--output", str(out)]) == 0
    training = json.loads((out / "bundle.json").read_text())["training"]
    assert training["notes"] == 6 + 6 * 2 + 12 and training["harmonized"] is True
    assert training["recipe"]["reinsert"]["kinds"] == ["oov", "lower"]
    assert training["synthetic_faker_version"] == faker_version() and faker_version()  # the notes drawn now
    assert deid_main(["train", "--physionet", str(data), "--recipe", "nosuch", "--output", str(out)]) == 2
