"""The place word lists of conf/rules/words/places.toml (filters and place decisions), loaded once and checked."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from deid_core.config import ConfigError, conf_dir, load_toml

PLACE_WORDS_FILE = "rules/words/places.toml"
LISTS = ("state_named_countries", "care_settings", "town_named_states", "employer_care_words", "ward_last_words",
         "street_suffixes", "person_street_suffixes", "landmark_last_words", "landmark_town_words", "landmark_service_words",
         "town_after_preposition_landmark_words", "town_after_preposition_town_words", "town_body_words")


def load_place_words(path: Path) -> dict[str, frozenset[str]]:
    """Each list of the file's [words] table as a frozen set; ConfigError names a missing or unknown list or a bad entry."""
    return load_word_lists(path, "words", LISTS)


def load_word_lists(path: Path, table_name: str, lists: Sequence[str]) -> dict[str, frozenset[str]]:
    """Each of `lists` in the file's [table_name] table as a frozen set of non-empty, lower-case, single-spaced entries;
    ConfigError names a missing or unknown list or a bad entry."""
    table = load_toml(path).get(table_name)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: no [{table_name}] table")
    if unknown := sorted(set(table) - set(lists)):
        raise ConfigError(f"{path}: unknown [{table_name}] list(s) {', '.join(unknown)}; known: {', '.join(lists)}")
    out: dict[str, frozenset[str]] = {}
    for name in lists:
        entries = table.get(name)
        if not isinstance(entries, list) or not entries:
            raise ConfigError(f"{path}: [{table_name}] {name} must be a non-empty list of strings")
        for e in entries:
            if not isinstance(e, str) or not e or e != " ".join(e.lower().split()):
                raise ConfigError(f"{path}: [{table_name}] {name}: every entry must be a non-empty, lower-case, "
                                  "single-spaced string")
        out[name] = frozenset(entries)
    return out


@cache
def place_words(name: str) -> frozenset[str]:
    """One list of conf/rules/words/places.toml (read and checked once); KeyError names an unknown list."""
    if name not in LISTS:
        raise KeyError(f"unknown place word list {name!r}; known: {', '.join(LISTS)}")
    return _all()[name]


@cache
def _all() -> dict[str, frozenset[str]]:
    return load_place_words(conf_dir() / PLACE_WORDS_FILE)
