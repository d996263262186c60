"""Word lists (conf/synth/*.toml) and seeded Faker pools, built once per process and seed."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from deid_core.config import ConfigError, conf_file

# The word-list files merged into one lexicon; a top-level table may appear in one file only.
LEXICON_FILES = ("synth/lexicon.toml", "synth/people.toml", "synth/places.toml", "synth/lookalikes.toml")
# How many values each Faker pool holds (a pool is drawn once per process and seed).
POOL_SIZES = {"first_male": 1500, "first_female": 1500, "last": 3000, "street": 2000,
              "city": 1200, "company": 1200, "job": 700, "country": 250}
FOREIGN_POOL_SCALE = 0.25
# US Census names (project gazetteers, public domain data) added to the en_US pools.
CENSUS_FIRST, CENSUS_LAST = 1200, 4000
# Locales whose Faker names are not in Latin script: their romanized names are used.
ROMANIZED = frozenset({"zh_CN", "ja_JP"})


@dataclass(frozen=True)
class Pools:
    """Value pools of one seed: names per locale, addresses, companies, jobs, countries."""

    first_male: dict[str, tuple[str, ...]]
    first_female: dict[str, tuple[str, ...]]
    last: dict[str, tuple[str, ...]]
    street: tuple[str, ...]
    city: tuple[str, ...]
    company: tuple[str, ...]
    job: tuple[str, ...]
    country: tuple[str, ...]
    states: tuple[tuple[str, str], ...]


@lru_cache(maxsize=1)
def lexicon() -> dict[str, Any]:
    """The word lists of LEXICON_FILES merged into one dict (cached; treat as read-only)."""
    out: dict[str, Any] = {}
    for name in LEXICON_FILES:
        for key, value in conf_file(name).items():
            if key in out:
                raise ConfigError(f"conf/{name}: table [{key}] is already defined by another synth word-list file")
            out[key] = value
    return out


def _draw(fn, n: int) -> tuple[str, ...]:
    """n values of a Faker method, duplicates removed in first-seen order."""
    return tuple(dict.fromkeys(fn() for _ in range(n)))


def _clean_job(job: str) -> str | None:
    """A Faker job title usable in running text (no commas or parentheses), lower case."""
    if len(job) < 5 or any(c in job for c in ",()/"):
        return None
    return job.lower()


def _census(seed: int, file: str, n: int) -> tuple[str, ...]:
    """n capitalized names sampled (seeded) from a census gazetteer file."""
    from deid_core.gazetteers import read_list

    names = sorted(read_list(file))
    rng = random.Random(f"census:{seed}:{file}")
    return tuple(w.capitalize() for w in rng.sample(names, min(n, len(names))) if w.isalpha())


def _locale_names(f, loc: str, scale: float) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(male first, female first, last) names of one Faker locale."""
    if loc in ROMANIZED:
        male = getattr(f, "first_romanized_name_male", f.first_romanized_name)
        female = getattr(f, "first_romanized_name_female", f.first_romanized_name)
        last = f.last_romanized_name
    else:
        male, female, last = f.first_name_male, f.first_name_female, f.last_name
    return (_draw(male, int(POOL_SIZES["first_male"] * scale)),
            _draw(female, int(POOL_SIZES["first_female"] * scale)),
            _draw(last, int(POOL_SIZES["last"] * scale)))


@lru_cache(maxsize=4)
def pools(seed: int) -> Pools:
    """The Faker pools for `seed`: deterministic for a given Faker version."""
    from faker import Faker
    from faker.providers.address.en_US import Provider as UsAddress

    locales = list(lexicon()["locales"])
    fake = Faker(locales)
    fake.seed_instance(seed)
    first_m: dict[str, tuple[str, ...]] = {}
    first_f: dict[str, tuple[str, ...]] = {}
    last: dict[str, tuple[str, ...]] = {}
    for loc in locales:
        scale = 1.0 if loc == "en_US" else FOREIGN_POOL_SCALE
        first_m[loc], first_f[loc], last[loc] = _locale_names(fake[loc], loc, scale)
    census_first = _census(seed, "census_first_names.txt", CENSUS_FIRST)
    first_m["en_US"] += census_first[: len(census_first) // 2]
    first_f["en_US"] += census_first[len(census_first) // 2:]
    last["en_US"] += _census(seed, "census_last_names.txt", CENSUS_LAST)
    us = fake["en_US"]
    jobs = tuple(j for j in (_clean_job(x) for x in _draw(us.job, POOL_SIZES["job"])) if j)
    states = tuple(zip(UsAddress.states, [a for a in UsAddress.states_abbr if a != "DC"], strict=True))
    return Pools(
        first_male=first_m, first_female=first_f, last=last,
        street=_draw(lambda: us.street_address().replace(".", ""), POOL_SIZES["street"]),
        city=_draw(us.city, POOL_SIZES["city"]),
        company=_draw(lambda: us.company().rstrip("."), POOL_SIZES["company"]),
        job=jobs + tuple(lexicon()["lists"]["professions"]) * 3,
        country=_draw(us.country, POOL_SIZES["country"]),
        states=states,
    )


@lru_cache(maxsize=1)
def weighted_locales() -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Locale names and cumulative weights for patient name origin."""
    loc = lexicon()["locales"]
    names = list(loc)
    cum, total = [], 0.0
    for n in names:
        total += float(loc[n])
        cum.append(total)
    return tuple(names), tuple(cum)


def pick_locale(rng: random.Random) -> str:
    """A locale drawn by the configured weights."""
    names, cum = weighted_locales()
    return rng.choices(names, cum_weights=cum)[0]


@lru_cache(maxsize=256)
def words(name: str) -> tuple[str, ...]:
    """A word list of the lexicon by table and key ("lists.meds", "places.trees", "lookalikes.scores")."""
    table, _, key = name.partition(".")
    return tuple(lexicon()[table][key])
