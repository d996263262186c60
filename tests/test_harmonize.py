"""Convention harmonization: PhysioNet-style gold completed with every age, weekday, state, profession."""

from __future__ import annotations

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
