"""The word lists the CRF token features read, and the feature version derived from them.

Lists: conf/crf_features.toml (titles, holidays, profession suffixes, gazetteer names),
conf/calendar.toml (months, weekdays, seasons) and conf/sections.toml (section names). A
bundle records `features_version()`: FEATURES_CODE_VERSION (bumped by hand when the feature
code changes the strings it emits) plus a digest of those lists, so a changed list makes a
bundle trained with the old one refuse to load instead of tagging with features it never saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from deid_core.config import ConfigError, conf_file, conf_table, digest
from deid_core.gazetteers import LISTS
from deid_core.text.calendar_words import calendar_words

FEATURES_CODE_VERSION = "2"
FEATURE_FILES = ("crf_features.toml", "calendar.toml", "sections.toml")


@dataclass(frozen=True)
class FeatureLists:
    """conf/crf_features.toml."""

    titles: tuple[str, ...]
    holidays: tuple[str, ...]
    profession_suffixes: tuple[str, ...]
    gazetteer_lists: tuple[str, ...]


@dataclass(frozen=True)
class FeatureWords:
    """What the token features look words up in (lower case)."""

    months: frozenset[str]
    weekdays: frozenset[str]
    seasons: frozenset[str]  # seasons and holidays: the SEASON shape class
    titles: frozenset[str]
    profession_suffixes: tuple[str, ...]  # in order: the first one that ends a token wins
    gazetteer_lists: tuple[str, ...]


@lru_cache(maxsize=1)
def feature_words() -> FeatureWords:
    """The lists of conf/crf_features.toml and conf/calendar.toml, checked."""
    lists = conf_table(FeatureLists, "crf_features.toml")
    unknown = [g for g in lists.gazetteer_lists if g not in LISTS]
    if unknown:
        raise ConfigError(f"conf/crf_features.toml: gazetteer_lists names unknown gazetteers {unknown}; "
                          f"known: {', '.join(sorted(LISTS))}")
    cal = calendar_words()
    return FeatureWords(
        months=cal.month_words(),
        weekdays=cal.weekday_words(),
        seasons=frozenset(w.lower() for w in cal.seasons + lists.holidays),
        titles=frozenset(w.lower() for w in lists.titles),
        profession_suffixes=lists.profession_suffixes,
        gazetteer_lists=lists.gazetteer_lists,
    )


def features_version() -> str:
    """The feature code version and a digest of every list the features read: '2-<12 hex>'."""
    return f"{FEATURES_CODE_VERSION}-{digest({name: conf_file(name) for name in FEATURE_FILES})[:12]}"
