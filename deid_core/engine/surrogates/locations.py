"""Location, organization and profession surrogates of the same kind, from Faker, case kept."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import random
import re
from collections.abc import Callable
from functools import lru_cache
from importlib import metadata

from deid_core.config.surrogates import Surrogates
from deid_core.engine.surrogates import pool_cache
from deid_core.engine.surrogates.consistency import match_case
from deid_core.engine.surrogates.names import NamePools
from deid_core.engine.surrogates.numbers import format_preserving
from deid_core.engine.surrogates.pool_cache import POOL_SEED, POOL_SIZE


def _lead_digits(text: str) -> int:
    n = 0
    while n < len(text) and text[n].isdigit():
        n += 1
    return n


_WORD = re.compile(r"\w+")


def faker_version() -> str | None:
    """The installed Faker release: surrogates of several kinds (and the synthetic training notes'
    names and places) are drawn from its lists."""
    try:
        return metadata.version("faker")
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=32)
def value_pool(locale: str, kind: str) -> tuple[str, ...]:
    """Faker values of one kind generated once per process (fixed seed), picked by keyed hash; read from the
    checkout's pool cache when it holds this Faker's and Python's values (pool_cache.py: same tuple, ~0.7 CPU s
    of Faker calls per process saved)."""
    recipe = pool_recipe()
    values = pool_cache.read(locale, kind, faker_version(), recipe)
    if values is None:
        values = generate_pool(locale, kind)
        pool_cache.write(locale, kind, faker_version(), recipe, values)
    return values


def pool_recipe() -> str | None:
    """sha256 of generate_pool's source: a cached pool drawn by other code reads as absent (None: no cache)."""
    return _recipe_of(generate_pool)


@lru_cache(maxsize=4)
def _recipe_of(fn: Callable[..., object]) -> str | None:
    """sha256 of a function's source, read once per function object (see the import-time call below)."""
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):  # no source (a compiled or .pyc-only install): draw, never trust a file
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def generate_pool(locale: str, kind: str) -> tuple[str, ...]:
    """The pool of one kind from Faker itself (fixed seed): what value_pool holds."""
    from faker import Faker  # here: a run that draws no such surrogate never imports Faker (~0.1 s)

    fk = Faker(locale)
    fk.seed_instance(POOL_SEED)
    if kind == "job":
        values = set(getattr(fk.provider("faker.providers.job"), "jobs", ()) or ())
    elif kind == "country":
        values = set(getattr(fk.provider("faker.providers.address"), "countries", ()) or ())
    else:
        values = set()
    if not values:
        make = getattr(fk, kind)
        values = {make() for _ in range(POOL_SIZE)}
    return tuple(sorted(values))


@lru_cache(maxsize=4)
def _states(locale: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    try:
        p = importlib.import_module(f"faker.providers.address.{locale}").Provider
    except ImportError:
        p = importlib.import_module("faker.providers.address.en_US").Provider
    names = tuple(getattr(p, "states", ()) or ())
    abbrs = tuple(getattr(p, "states_abbr", ()) or ())
    return names, abbrs


def _style(original: str, value: str) -> str:
    """Whole-string case style: ALL CAPS / lower kept, else the generated value as is."""
    letters = [c for c in original if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return value.upper()
    if letters and all(c.islower() for c in letters):
        return value.lower()
    return value


class LocationSurrogates:
    """City for city, state for state, street for street, hospital-like names for hospitals, …"""

    def __init__(self, settings: Surrogates, pools: NamePools) -> None:
        self.locale = settings.locale
        self.last_names = tuple(n for v in pools.by_kind["last"].values() for n in v)
        self.first_names = tuple(n for v in pools.by_kind["unisex"].values() for n in v)
        conf = settings.locations
        self.hospital_patterns = conf.hospital_patterns
        self.acronym_suffixes = conf.hospital_acronym_suffixes
        self.departments = conf.departments
        self.other_patterns = conf.location_other_patterns
        self.generic = frozenset(w.casefold() for w in settings.generic_words)

    def pick(self, rng: random.Random, kind: str) -> str:
        """A value of a pre-generated pool (city, street_name, company, job, country)."""
        return rng.choice(value_pool(self.locale, kind))

    def _fill(self, rng: random.Random, pattern: str) -> str:
        last, first = rng.choice(self.last_names), rng.choice(self.first_names)
        return pattern.format(city=self.pick(rng, "city"), last=last, first=first)

    def _tokenwise(self, rng: random.Random, original: str) -> str:
        """Generic words kept, numbers format-preserved, every other word a surrogate last name."""
        def sub(m: re.Match) -> str:
            w = m.group(0)
            if any(c.isdigit() for c in w):
                return format_preserving(rng, w)
            if w.casefold() in self.generic or len(w) == 1:
                return w
            return match_case(w, rng.choice(self.last_names))

        return _WORD.sub(sub, original)

    def replace(self, label: str, rng: random.Random, original: str) -> str:
        """A surrogate of the same kind as `label` for `original`."""
        text = original.strip()
        if label == "CITY":
            return _style(original, self.pick(rng, "city"))
        if label == "STATE":
            names, abbrs = _states(self.locale)
            bare = text.replace(".", "")
            pool = abbrs if (len(bare) == 2 and bare.isalpha()) else names
            if not pool:
                return _style(original, self.pick(rng, "city"))
            return match_case(bare, rng.choice(pool)) if len(bare) == 2 else _style(original, rng.choice(pool))
        if label == "STREET":
            name = self.pick(rng, "street_name")
            if text[:1].isdigit():
                number = "".join(str(rng.randint(1 if i == 0 else 0, 9)) for i in range(_lead_digits(text)))
                name = f"{number} {name}"
            return _style(original, name)
        if label == "COUNTRY":
            return _style(original, self.pick(rng, "country"))
        if label == "ORGANIZATION":
            return _style(original, self.pick(rng, "company"))
        if label == "PROFESSION":
            return _style(original, self.pick(rng, "job"))
        if label == "HOSPITAL":
            letters = text.replace(".", "")
            if letters.isalpha() and letters.isupper() and len(letters) <= 6:
                suffix = rng.choice(self.acronym_suffixes)
                head = max(1, len(letters) - len(suffix))
                return "".join(rng.choice("ABCDEFGHJKLMNPRSTW") for _ in range(head)) + suffix
            return _style(original, self._fill(rng, rng.choice(self.hospital_patterns)))
        if label == "DEPARTMENT":
            if any(c.isdigit() for c in text) or any(w.casefold() in self.generic for w in _WORD.findall(text)):
                return self._tokenwise(rng, original)  # "Patterson 8 North" -> "Hodge 3 North"
            return _style(original, rng.choice(self.departments))
        if label == "LOCATION-OTHER":
            return _style(original, self._fill(rng, rng.choice(self.other_patterns)))
        return format_preserving(rng, original)  # ROOM and anything else


# Read generate_pool's source now, at import: the file the loaded code came from. Read later (the first place
# surrogate of a long run), an edit made meanwhile would file the old code's pool under the new code's recipe.
_recipe_of(generate_pool)
