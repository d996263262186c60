"""conf/rules/words/places.toml: the place word lists the filters and place decisions read, checked on load."""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.config import ConfigError
from deid_core.engine.rules.place_words import LISTS, load_place_words, place_words

_GOOD = """[words]
ward_last_words = ["north"]
street_suffixes = ["lane"]
person_street_suffixes = ["street"]
state_named_countries = ["georgia"]
care_settings = ["snf"]
town_named_states = ["new york"]
employer_care_words = ["hospital"]
landmark_last_words = ["airport"]
landmark_town_words = ["park"]
landmark_service_words = ["fire"]
town_after_preposition_landmark_words = ["gate"]
town_after_preposition_town_words = ["river"]
town_body_words = ["town"]
"""


def _file(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "places.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_the_shipped_lists_load_with_the_words_the_code_held() -> None:
    assert place_words("state_named_countries") == {"georgia"}
    assert place_words("town_named_states") == {"new york", "washington"}
    assert {"snf", "dialysis", "shelter"} <= place_words("care_settings")
    assert {"hospital", "vamc", "general"} <= place_words("employer_care_words")
    assert all(place_words(name) for name in LISTS)


def test_a_well_formed_file_loads(tmp_path: Path) -> None:
    assert load_place_words(_file(tmp_path, _GOOD))["town_named_states"] == {"new york"}


@pytest.mark.parametrize("bad", [
    "",  # no [words] table
    _GOOD.replace('care_settings = ["snf"]\n', ""),  # a list missing
    _GOOD + 'spare = ["x"]\n',  # an unknown list
    _GOOD.replace('["snf"]', '"snf"'),  # not a list
    _GOOD.replace('["snf"]', "[]"),  # empty
    _GOOD.replace('["snf"]', '["SNF"]'),  # not lower case
    _GOOD.replace('["new york"]', '["new  york"]'),  # not single-spaced
    _GOOD.replace('["snf"]', '["snf", 3]'),  # not a string
    _GOOD.replace('["snf"]', '[""]'),  # empty entry
])
def test_a_malformed_file_is_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError):
        load_place_words(_file(tmp_path, bad))


def test_an_unknown_list_name_is_refused() -> None:
    with pytest.raises(KeyError):
        place_words("town_words")
