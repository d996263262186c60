"""Spans never cross a line break into a line of another kind (issue 13.3): a name never starts with
the minutes of a clock time on the line before ('07:30\\nVerity ...' once became '07:92')."""

from __future__ import annotations

import datetime as dt

from deid_core.engine.guards import guard_line_breaks
from deid_core.notes import Note
from deid_core.spans import Span


def cut(text: str, start: int, end: int, label: str) -> list[str]:
    return [text[s.start:s.end] for s in guard_line_breaks([Span(start, end, label, "crf:single")], text)]


def test_a_name_loses_the_digit_line_before_it():
    text = "Nursing note 2023-11-02 07:30\nVerity Vandersloot resting"
    assert cut(text, 27, 48, "PATIENT") == ["Verity Vandersloot"]


def test_lines_of_the_right_kind_stay_together_or_split_around_the_wrong_one():
    assert cut("Ann\nLee x", 0, 7, "PATIENT") == ["Ann\nLee"]
    assert cut("Smith\n30\nJones x", 0, 14, "DOCTOR") == ["Smith", "Jones"]
    assert cut("call 555-0123\nSmith", 5, 19, "PHONE") == ["555-0123"]
    assert cut("March\n3, 2021", 0, 13, "DATE") == ["March\n3, 2021"]  # dates mix both kinds: untouched
    assert cut("7\n--\n", 0, 4, "PATIENT") == []  # nothing of its kind left: dropped


def test_the_pipeline_keeps_the_clock_time_before_a_name():
    from deid_core.app.options import effective_config
    from deid_core.bundle import load_bundle
    from deid_core.engine.pipeline import build_deidentifier

    deid = build_deidentifier(effective_config(), load_bundle(), b"guard-test-key-0123456789abcdefgh")
    text = ("Nursing note 2023-11-02 07:30\nVerity Vandersloot resting comfortably, family at bedside "
            "(daughter Corinne Vandersloot). VS stable.\n")
    known = (("Verity", "PATIENT"), ("Vandersloot", "PATIENT"), ("Colette Marchand", "DOCTOR"))
    res = deid.process(Note("N0003", text, "P1002", dt.date(2023, 11, 2), known))
    assert res.ok
    assert res.text.split("\n")[0].endswith(" 07:30")
    names = [s for s in res.spans if s.label == "PATIENT"]
    assert names and names[0].start == 30 and all("\n" not in text[s.start:s.end] for s in names)
