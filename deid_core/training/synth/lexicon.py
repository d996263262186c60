"""Word lists (conf/synth/lexicon.toml) and seeded Faker pools, built once per process and seed."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from deid_core.config import conf_file

# How many values each Faker pool holds (a pool is drawn once per process and seed).
POOL_SIZES = {"first_male": 1500, "first_female": 1500, "last": 3000, "street": 2000,
              "city": 1200, "company": 1200, "job": 700, "country": 250}
FOREIGN_POOL_SCALE = 0.25


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


def lexicon() -> dict[str, Any]:
    """The parsed conf/synth/lexicon.toml (cached; treat as read-only)."""
    return conf_file("synth/lexicon.toml")


def _draw(fn, n: int) -> tuple[str, ...]:
    """n values of a Faker method, duplicates removed in first-seen order."""
    return tuple(dict.fromkeys(fn() for _ in range(n)))


def _clean_job(job: str) -> str | None:
    """A Faker job title usable in running text (no commas or parentheses), lower case."""
    if len(job) < 5 or any(c in job for c in ",()/"):
        return None
    return job.lower()


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
        f = fake[loc]
        scale = 1.0 if loc == "en_US" else FOREIGN_POOL_SCALE
        first_m[loc] = _draw(f.first_name_male, int(POOL_SIZES["first_male"] * scale))
        first_f[loc] = _draw(f.first_name_female, int(POOL_SIZES["first_female"] * scale))
        last[loc] = _draw(f.last_name, int(POOL_SIZES["last"] * scale))
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
