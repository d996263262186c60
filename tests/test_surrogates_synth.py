"""Surrogates on deid_core.training.synth notes with gold spans: no original survives in place."""

from __future__ import annotations

import re

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.replace import apply_replacements
from deid_core.engine.surrogates.leaks import leaks_of
from deid_core.engine.surrogates.modes import ModeReplacer
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import resolve_overlaps
from deid_core.training.synth import generate


@pytest.fixture(scope="module")
def corpus():
    out = []
    for s in generate(300, 11):
        known = tuple((v, "PATIENT") for v in (s.patient_first_name, s.patient_last_name) if v)
        out.append((Note(s.note_id, s.text, s.patient_id, s.note_date, known), resolve_overlaps(s.spans)))
    return out


@pytest.mark.parametrize("mode,profile", [("surrogate", "default"), ("surrogate", "safe_harbor"),
                                          ("hash", "default"), ("redact", "default")])
def test_no_original_survives_in_place(corpus, mode, profile):
    rep = ModeReplacer(load_config({"surrogates": {"profile": profile}}), DEMO_KEY, mode)
    in_place = 0
    for note, spans in corpus:
        out, offsets = apply_replacements(note.text, spans, rep(Doc(note), spans))
        for out_s, (a, b) in zip(rep(Doc(note), spans), offsets, strict=True):
            assert out[a:b] == out_s
        # Ages under 90 are kept by policy ([surrogates.ages] under_threshold = "keep"): a decade
        # age ("60s") survives like "62" does (which leaks_of skips for being under 3 characters).
        audited = [(s, o) for s, o in zip(spans, offsets, strict=True) if not _kept_age(note.text[s.start:s.end], s.label)]
        in_place += sum(kind == "in place" for _, kind in leaks_of(note, [s for s, _ in audited], out,
                                                                   [o for _, o in audited]))
    assert in_place == 0


def _kept_age(original: str, label: str) -> bool:
    """An age the default policy keeps: its leading number is under the Safe Harbor threshold of 90."""
    digits = re.match(r"\d+", original)
    return label == "AGE" and digits is not None and int(digits.group()) < 90
