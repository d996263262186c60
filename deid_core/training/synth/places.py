"""Hospitals, facilities, named units, rooms and organizations drawn from conf/synth/places.toml patterns."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

from deid_core.training.synth.lexicon import Pools, words


@dataclass(frozen=True, slots=True)
class Hospital:
    """A hospital or facility: full and short name, acronym, a named unit, numbers, web address, city."""

    name: str
    abbr: str
    department: str
    phone: str
    fax: str
    url: str
    city: str
    short: str = ""


def phone_digits(rng: random.Random) -> str:
    """Ten digits of a plausible US number (area and exchange not starting with 0/1)."""
    return f"{rng.randint(201, 989)}{rng.randint(201, 989)}{rng.randint(0, 9999):04d}"


def acronym(name: str) -> str:
    """Upper-case initials of the capitalized words of a name ("Lowery General Hospital" -> LGH)."""
    return "".join(w[0] for w in name.replace("-", " ").split() if w[:1].isupper() and w not in ("St.", "The"))


def _fill(pattern: str, rng: random.Random, pools: Pools, state: str, city: str) -> str:
    """A pattern of places.toml with its fields drawn."""
    last = pools.last["en_US"]
    return pattern.format(
        city=city, last=rng.choice(last), last2=rng.choice(last), saint=rng.choice(words("lists.saints")),
        state=state, holy=rng.choice(words("places.holy")), tree=rng.choice(words("places.trees")),
        n=rng.randint(2, 14), color=rng.choice(words("places.colors")),
        dir=rng.choice(words("places.directions")), unit=rng.choice(words("places.dept_units")),
        letter=rng.choice("ABCDEFGHJKNSW"))


def department(rng: random.Random, pools: Pools, state: str = "", city: str = "") -> str:
    """A named unit of a hospital ("Tower 5 Telemetry", "Blue 3 CCU", "Ellison 12")."""
    return _fill(rng.choice(words("places.departments")), rng, pools, state, city)


def make_hospital(rng: random.Random, pools: Pools, state_name: str, kind: str = "hospitals") -> Hospital:
    """A hospital (kind "hospitals") or facility ("facilities") with unit, numbers and web address."""
    city = rng.choice(pools.city)
    full, short = rng.choice(words(f"places.{kind}"))
    fields = {"city": city, "last": rng.choice(pools.last["en_US"]), "last2": rng.choice(pools.last["en_US"]),
              "saint": rng.choice(words("lists.saints")), "state": state_name,
              "holy": rng.choice(words("places.holy")), "tree": rng.choice(words("places.trees"))}
    name, short = full.format(**fields), short.format(**fields)
    abbr = acronym(name) or name.split()[0].upper()
    dept = department(rng, pools, state_name, city)
    slug = abbr.lower() if len(abbr) >= 3 else "".join(c for c in name.lower() if c.isascii() and c.isalpha())[:12]
    url = rng.choice([f"www.{slug}.org", f"https://www.{slug}health.org", f"http://{slug}.org/patients",
                      f"https://mychart.{slug}.org", f"www.{slug}-hospital.com/portal",
                      f"https://{slug}.org/telehealth", f"https://portal.{slug}.com/login"])
    return Hospital(name, abbr, dept, phone_digits(rng), phone_digits(rng), url, city, short)


def room(rng: random.Random) -> str:
    """A room or bed in one of many house styles ("4N12", "C114", "1102-B", "612", "5B-23", "14")."""
    k = rng.randrange(10)
    if k == 0:
        return f"{rng.randint(2, 9)}{rng.choice('NSEW')}{rng.randint(1, 40):02d}"
    if k == 1:
        return f"{rng.choice('ABCDEFGH')}{rng.randint(100, 499)}"
    if k == 2:
        return f"{rng.randint(101, 1299)}-{rng.choice('ABW12')}"
    if k == 3:
        return f"{rng.randint(2, 12)}{rng.choice('ABCDE')}-{rng.randint(1, 30)}"
    if k == 4:
        return str(rng.randint(1, 40))
    if k == 5:
        return f"{rng.choice(string.ascii_uppercase)}{rng.randint(1, 9)}-{rng.randint(1, 30):02d}"
    if k == 6:
        return f"{rng.randint(2, 9)}{rng.randint(0, 3)}{rng.randint(0, 9)}{rng.randint(0, 9)}"
    return str(rng.randint(101, 1299))


def organization(rng: random.Random, pools: Pools, kind: str, state: str, city: str) -> str:
    """An employer, pharmacy, school or community organization (ORGANIZATION)."""
    if kind == "employer":
        r = rng.random()
        if r < 0.4:
            return rng.choice(pools.company)
        if r < 0.7:
            return rng.choice(words("places.chains"))
        return _fill(rng.choice(words("places.employers")), rng, pools, state, city)
    if kind == "org":
        if rng.random() < 0.6:
            return rng.choice(words("lists.organizations"))
        return _fill(rng.choice(words("places.organizations_more")), rng, pools, state, city)
    return _fill(rng.choice(words(f"places.{kind}")), rng, pools, state, city)  # pharmacies, schools, org_*
