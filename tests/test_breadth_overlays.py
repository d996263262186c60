"""Round 12's breadth overlays (conf/synth/breadth/ctx12.toml, ctx12u.toml): training note types only,
no date words written as non-PHI, countries in the frames of cities, look-alikes without PHI, audit clean."""

from __future__ import annotations

import calendar
import re

import pytest

from deid_core.training.generalization import synth_types
from deid_core.training.generalization_config import settings
from deid_core.training.synth import generate
from deid_core.training.synth.audit import audit_corpus
from deid_core.training.synth.lexicon import words
from deid_core.training.synth.notetypes import breadth_overlay
from deid_core.training.synth.template import Slot

ROUND12 = ("ctx12", "ctx12u")
HELD_OUT = ("echo", "portal", "telephone")


def _templates(name: str) -> list[tuple]:
    """Every parsed template of an overlay's snippets."""
    return [t for alts, _ in breadth_overlay(name).snippets.values() for t in alts]


def _frame(template: tuple) -> tuple[str, str] | None:
    """(literal text before the first PHI slot, its label), or None for a look-alike (no PHI slot)."""
    text = []
    for part in template:
        if isinstance(part, Slot) and part.phi:
            return "".join(text).strip(), part.name
        text.append(part if isinstance(part, str) else "{" + part.name + "}")
    return None


@pytest.mark.parametrize("name", ROUND12)
def test_a_round12_overlay_reaches_every_training_type_and_no_held_out_one(name):
    """The overlay lists exactly the training note types of the leave-type-out split."""
    train, held_out = synth_types(settings())
    types = set(breadth_overlay(name).types)
    assert types == set(train) and not types & set(held_out)


@pytest.mark.parametrize("name", ROUND12)
def test_a_round12_overlay_writes_no_date_word_as_non_phi(name):
    """Seasons, months, weekdays and "ago" are DATE gold (or relative time) in the templates: an overlay
    writing them in literal text would teach the CRF they are not PHI (ctx11's "last spring")."""
    dated = {w.lower() for w in words("lists.seasons")} | {"ago"}
    dated |= {m.lower() for m in calendar.month_name[1:]} | {d.lower() for d in calendar.day_name}
    for template in _templates(name):
        literal = " ".join(p for p in template if isinstance(p, str)).lower()
        assert not set(re.findall(r"[a-z]+", literal)) & dated, literal


def test_ctx12_writes_countries_in_the_frames_of_cities():
    """The origin and travel frames that carry a CITY also carry a COUNTRY (ctx11 taught them as city
    frames and COUNTRY fell); no "trip to <place>" frame, where the templates write a country."""
    frames: dict[str, set[str]] = {}
    for template in _templates("ctx12"):
        framed = _frame(template)
        if framed:
            frames.setdefault(framed[0], set()).add(framed[1])
    for prefix in ("{He} grew up in", "Back from visiting family in"):
        assert frames[prefix] == {"CITY", "COUNTRY"}, prefix
    assert not [p for p in frames if "trip to" in p.lower()]
    assert frames["Order entered by"] == {"DOCTOR"}  # the one login frame names the clinician too


def test_round12_overlays_render_with_their_look_alikes_and_without_unannotated_phi():
    """Generated notes of the training types with both overlays pass the audit; a look-alike sentence
    carries no span, a PHI sentence carries its spans (the login frame: DOCTOR then USERNAME)."""
    notes = generate(400, seed=12, exclude=HELD_OUT, breadth=ROUND12)
    assert audit_corpus(notes, 12) == []
    last = {}
    for n in notes:
        line = n.text.rstrip().splitlines()[-1]
        start = len(n.text.rstrip()) - len(line)
        last[line] = [s.label for s in sorted(n.spans, key=lambda s: s.start) if s.start >= start]
    assert last.get("Hometown: not obtained.") == [] or last.get("Charge nurse aware.") == []
    logins = [labels for line, labels in last.items() if line.startswith("Order entered by ")]
    assert logins and all(labels == ["DOCTOR", "USERNAME"] for labels in logins)
