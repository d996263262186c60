"""Output profiles ([surrogates] profile): default replaces every detected PHI, safe_harbor keeps
ages under 90 in clear (audited as kept), physionet drops what PhysioNet's gold does not mark.
Through the engine with the default bundle, and through `deid tag` (the profile file runs with its own bundle)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from deid_core.config import ConfigError, conf_dir, load_config
from deid_core.engine.pipeline import build_deidentifier
from deid_core.engine.profiles import OutputProfile, age_value
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_job import read_rows

TEXT = ("Zebulon Quackenbush is a 45 yo retired nurse from Austin, Texas; his mother, 92 yo, "
        "lives in Canada. Seen on Tuesday. Admitted 3/14/2019.")
PHYSIONET = conf_dir() / "profiles" / "physionet.toml"


def _sub(text: str, s) -> str:
    return text[s["start"]:s["end"]] if isinstance(s, dict) else text[s.start:s.end]


def test_profiles_typed_and_checked():
    sur = load_config().surrogates
    assert sur.profile == "default" and {"default", "safe_harbor", "physionet"} <= set(sur.profiles)
    assert load_config(config_file=PHYSIONET).surrogates.profile == "physionet"
    with pytest.raises(ConfigError, match=r"\[surrogates\] profile = 'strict'.*surrogates.profiles"):
        load_config({"surrogates": {"profile": "strict"}})
    with pytest.raises(ConfigError, match=r"\[surrogates.profiles.physionet\] unknown key 'drop_lables'"):
        load_config({"surrogates": {"profiles": {"physionet": {"drop_lables": ["STATE"]}}}})
    with pytest.raises(ConfigError, match="drop_labels"):
        load_config({"surrogates": {"profiles": {"physionet": {"drop_labels": ["STAT"]}}}})
    with pytest.raises(ConfigError, match="keep_ages_under"):
        load_config({"surrogates": {"profiles": {"mine": {"safe_harbor": False, "drop_ages_under": 0,
                                                          "drop_labels": [], "drop_weekdays": False}}}})


def test_profile_decisions():
    p = OutputProfile(load_config().surrogates.profiles["physionet"])
    text = "45 yo, 92 yo, forty-five year old, Tuesday, Tues., Mondays, Tuesday 3/4, nurse, Ohio"
    spans = [Span(0, 2, "AGE"), Span(7, 9, "AGE"), Span(14, 24, "AGE"), Span(35, 42, "DATE"),
             Span(44, 49, "DATE"), Span(51, 58, "DATE"), Span(60, 71, "DATE"), Span(73, 78, "PROFESSION"),
             Span(80, 84, "STATE")]
    assert [_sub(text, s) for s in p.select(text, spans)] == ["92", "forty-five", "Tuesday 3/4"]
    assert age_value("in her 80s") == 80 and age_value("ninety") == 90
    sh = OutputProfile(load_config().surrogates.profiles["safe_harbor"])
    assert sh.select(text, spans) == spans
    assert sh.replacements(text, spans[:2], ["44", "90+"]) == ["45", "90+"]


@pytest.fixture(scope="module")
def engine():
    from deid_core.bundle import load_bundle

    bundle = load_bundle(conf_dir().parent / "models" / "default")
    note = Note("n1", TEXT, "p1", None, (("Zebulon Quackenbush", "PATIENT"),))

    def run(profile: str):
        deid = build_deidentifier(load_config({"surrogates": {"profile": profile}}), bundle, DEMO_KEY)
        return deid.tag(note), deid.process(note)
    return run


def test_default_replaces_every_detected_age(engine):
    spans, res = engine("default")
    ages = {_sub(TEXT, s): a for s, a in zip(spans, res.spans, strict=True) if s.label == "AGE"}
    assert set(ages) == {"45", "92"}
    assert ages["45"].replacement != "45" and ages["92"].replacement == "90+"
    assert "45 yo" not in res.text and "Tuesday" not in res.text


def test_safe_harbor_keeps_ages_under_90_audited(engine):
    spans, res = engine("safe_harbor")
    kept = [a for a in res.spans if a.label == "AGE" and a.replacement == "45"]
    assert len(kept) == 1 and res.text[kept[0].out_start:kept[0].out_end] == "45"
    assert "45 yo" in res.text and "90+ yo" in res.text and "Quackenbush" not in res.text


def test_physionet_drops_what_its_gold_does_not_mark(engine):
    spans, res = engine("physionet")
    found = {_sub(TEXT, s) for s in spans}
    assert "45" not in found and "Tuesday" not in found and "nurse" not in found
    assert not {s.label for s in spans} & {"STATE", "COUNTRY", "PROFESSION"}
    assert {(a.start, a.end) for a in res.spans} == {(s.start, s.end) for s in spans}
    for kept in ("45 yo", "Seen on Tuesday.", "retired nurse"):
        assert kept in res.text
    assert "90+ yo" in res.text and "Quackenbush" not in res.text and "3/14/2019" not in res.text


def test_physionet_profile_through_deid_tag(tmp_path):
    """The comparability profile file (its bundle, models/physionet): spans/ and notes/ without what it drops."""
    table = pa.Table.from_pylist([{"note_id": "n1", "patient_id": "p1", "text": TEXT,
                                   "note_date": dt.date(2024, 2, 3), "first": "Zebulon", "last": "Quackenbush"}])
    pq.write_table(table, tmp_path / "in.parquet")
    outs = {}
    for name, extra in (("default", []), ("physionet", ["--config", str(PHYSIONET)])):
        out = tmp_path / name
        assert deid_main(["tag", "--input", str(tmp_path / "in.parquet"), "--output", str(out),
                          "--name-columns", "first,last", "--demo-key", *extra]) == 0
        outs[name] = ({_sub(TEXT, r): r["label"] for r in read_rows(out / "spans")},
                      read_rows(out / "notes")[0]["text"])
    (dspans, dtext), (pspans, ptext) = outs["default"], outs["physionet"]
    assert {"45", "92"} <= set(dspans) and "45" not in pspans and pspans.get("92") == "AGE"
    assert "Tuesday" in dspans and "Tuesday" not in pspans and "Seen on Tuesday." in ptext
    assert "45 yo" in ptext and "45 yo" not in dtext
    assert not set(pspans.values()) & {"STATE", "COUNTRY", "PROFESSION"}
    assert set(pspans) < set(dspans)
