"""Schema of conf/surrogates.toml's [surrogates] (a job config's [surrogates] merges over it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from deid_core.config.convert import Check, between
from deid_core.config.tables import Count, Label, Positive, _labels

Mode = Literal["surrogate", "mask", "redact", "hash"]
# Surrogate generators by name (deid_core/engine/surrogates/generators.py registers one each).
Generator = Literal["name", "username", "date", "age", "zip", "ssn", "phone", "email", "url",
                    "ip_address", "identifier", "place"]
EVERY_LABEL = Check(lambda d: set(d) >= set(_labels()), "a generator for every label of conf/taxonomy.toml")
MonthDay = Annotated[str, Check(lambda v: v == "" or (len(v) == 5 and v[2] == "-"), "'MM-DD' or ''")]


@dataclass(frozen=True)
class Redact:
    """[surrogates.redact]."""

    filler: Annotated[str, Check(lambda v: len(v) == 1, "one character")]


@dataclass(frozen=True)
class Hash:
    """[surrogates.hash]."""

    digits: Annotated[int, between(1, 64)]


@dataclass(frozen=True)
class Names:
    """[surrogates.names]: tokens kept inside names, surrogate initials, gender look-up locales."""

    keep_tokens: tuple[str, ...]
    initial_letters: Annotated[str, Check(lambda v: v.isalpha() and v.isupper(), "upper-case letters")]
    gender_locales: tuple[str, ...]


@dataclass(frozen=True)
class Ages:
    """[surrogates.ages]: the Safe Harbor bucket and ages under it."""

    threshold: Positive
    bucket: str
    under_threshold: Literal["keep", "surrogate"]
    jitter: Positive


@dataclass(frozen=True)
class Zip:
    """[surrogates.zip]."""

    policy: Literal["truncate", "surrogate"]
    style: Literal["stars", "zeros"]
    restricted_zip3: tuple[str, ...]


@dataclass(frozen=True)
class DateFormat:
    """One [[surrogates.dates.formats]] shape."""

    name: str
    pattern: str


@dataclass(frozen=True)
class Dates:
    """[surrogates.dates]: the per-patient shift and how each date shape is re-rendered."""

    shift_min_days: int
    shift_max_days: int
    avoid_weekday_preserving: bool
    yearless_year: Literal["fixed", "note_date"]
    reference_year: int
    two_digit_pivot: Annotated[int, between(0, 99)]
    year_alone: Literal["shift", "keep"]
    holidays: Literal["mask", "shift"]
    decades: Literal["keep", "mask"]
    bare_two_digits: Literal["year", "mask"]
    seasons: Literal["shift", "mask"]
    connectors: tuple[str, ...]
    safe_harbor_year: Literal["keep", "shift"]
    holiday_dates: dict[str, MonthDay]
    formats: tuple[DateFormat, ...]


@dataclass(frozen=True)
class Locations:
    """[surrogates.locations]: patterns and pools of place surrogates."""

    hospital_patterns: tuple[str, ...]
    hospital_acronym_suffixes: tuple[str, ...]
    departments: tuple[str, ...]
    location_other_patterns: tuple[str, ...]


@dataclass(frozen=True)
class Profile:
    """[surrogates.profiles.<name>]: what an output profile keeps in clear or drops of what was detected."""

    safe_harbor: bool
    keep_ages_under: Count
    drop_ages_under: Count
    drop_labels: tuple[Label, ...]
    drop_weekdays: bool


@dataclass(frozen=True)
class Surrogates:
    """[surrogates]: profile, per-label modes and generators, and each generator's settings."""

    profile: str  # a key of `profiles` (checked with the whole configuration)
    profiles: dict[str, Profile]
    locale: str
    max_redraws: Count
    generic_words: tuple[str, ...]
    global_labels: tuple[Label, ...]
    label_modes: dict[Label, Mode]
    generators: Annotated[dict[Label, Generator], EVERY_LABEL]
    redact: Redact
    hash: Hash
    names: Names
    ages: Ages
    zip: Zip
    dates: Dates
    locations: Locations
