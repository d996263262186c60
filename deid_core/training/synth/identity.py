"""Synthetic identities: a patient with relatives, care team, hospital and ids, from one seeded RNG."""

from __future__ import annotations

import datetime as dt
import random
import string
from dataclasses import dataclass

from deid_core.training.synth.lexicon import Pools, lexicon, pick_locale, words
from deid_core.training.synth.names import nickname
from deid_core.training.synth.places import (
    Hospital,
    make_hospital,
    organization,
    phone_digits,
    room,
)

FIRST_DATE = dt.date(2008, 1, 1)
DATE_RANGE_DAYS = 15 * 365
# Shares of people whose names are ambiguous words, out-of-vocabulary letter strings, special
# shapes (O'Brien, van der Berg), hyphenated last names, double first names.
P_AMBIGUOUS_NAME = 0.08
P_OOV_NAME = 0.07
P_SPECIAL_LAST = 0.04
P_HYPHEN_LAST = 0.04
P_DOUBLE_FIRST = 0.02
_CONSONANTS = "bcdfghjklmnpqrstvwxz"
_VOWELS = "aeiouy"
_VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"


@dataclass(frozen=True, slots=True)
class Person:
    """A named person: first, middle initial, last, sex ('M'/'F'), name locale, everyday short first name."""

    first: str
    middle: str
    last: str
    sex: str
    locale: str = "en_US"
    nick: str = ""


@dataclass(frozen=True, slots=True)
class Clinician:
    """A member of the care team (their names are DOCTOR PHI), with username, pager and license."""

    person: Person
    role: str
    username: str
    pager: str
    license: str


@dataclass(frozen=True, slots=True)
class Relative:
    """A family member or proxy (PATIENT PHI): relation word, age, phone digits, profession."""

    person: Person
    relation: str
    age: int
    phone: str
    profession: str


@dataclass(frozen=True, slots=True)
class Patient:
    """Everything the notes of one patient may mention, consistent across those notes."""

    index: int
    person: Person
    dob: dt.date
    first_date: dt.date
    street: str
    city: str
    state: tuple[str, str]
    zip: str
    country: str
    home_phone: str
    cell_phone: str
    email: str
    mrn: str
    ssn: str
    insurer: str
    member_id: str
    account: str
    drivers_license: str
    plate: str
    vin: str
    device_kind: str
    device_serial: str
    bioid: str
    employer: str
    profession: str
    relatives: tuple[Relative, ...]
    attending: Clinician
    pcp: Clinician
    consultants: tuple[Clinician, ...]
    resident: Clinician
    nurses: tuple[Clinician, ...]
    hospital: Hospital
    other_hospital: Hospital
    room: str
    organization: str
    place: str
    ip: str
    metadata_style: tuple[int, int, int]
    facility: Hospital
    pharmacy: str
    school: str
    work_phone: str
    apt: str
    zip4: str


def oov_name(rng: random.Random) -> str:
    """An out-of-vocabulary name ("Ymfgi", "Dravenko"): random letters, alternating or syllables."""
    k = rng.random()
    if k < 0.3:
        letters = [rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8))]
    elif k < 0.6:
        letters = [rng.choice(_CONSONANTS if i % 2 == 0 else _VOWELS) for i in range(rng.randint(3, 8))]
    else:
        letters = list("".join(rng.choice(words("shapes.syllables")) for _ in range(rng.randint(2, 4))))
    return "".join(letters).capitalize()


def _ambiguous(kind: str) -> tuple[str, ...]:
    """Names that are also words, from both ambiguous lists."""
    return tuple(lexicon()["ambiguous"][kind]) + tuple(lexicon()["ambiguous_more"][kind])


def make_person(rng: random.Random, pools: Pools, *, locale: str | None = None,
                sex: str | None = None, last: str | None = None) -> Person:
    """A person with names drawn from the locale's pools, sometimes ambiguous, OOV or oddly shaped."""
    loc = locale or pick_locale(rng)
    sex = sex or rng.choice("MF")
    r = rng.random()
    first = None
    if r < P_AMBIGUOUS_NAME:
        first = rng.choice(_ambiguous("first")) if rng.random() < 0.5 else None
        last = last or rng.choice(_ambiguous("last"))
    elif r < P_AMBIGUOUS_NAME + P_OOV_NAME:
        first = oov_name(rng)
        last = last or oov_name(rng)
    elif r < P_AMBIGUOUS_NAME + P_OOV_NAME + P_SPECIAL_LAST:
        last = last or rng.choice(words("shapes.special_last"))
    elif r < P_AMBIGUOUS_NAME + P_OOV_NAME + P_SPECIAL_LAST + P_HYPHEN_LAST:
        last = last or f"{rng.choice(pools.last[loc])}-{rng.choice(pools.last[loc])}"
    elif r < P_AMBIGUOUS_NAME + P_OOV_NAME + P_SPECIAL_LAST + P_HYPHEN_LAST + P_DOUBLE_FIRST:
        first = rng.choice(words("shapes.double_first"))
    if first is None:
        first = rng.choice((pools.first_male if sex == "M" else pools.first_female)[loc])
    last = last or rng.choice(pools.last[loc])
    return Person(first, rng.choice(string.ascii_uppercase), last, sex, loc, nickname(first, rng))


def digits(rng: random.Random, n: int) -> str:
    """n random digits (the first not zero)."""
    return str(rng.randrange(10 ** (n - 1), 10 ** n))


def letters(rng: random.Random, n: int) -> str:
    """n random upper-case letters."""
    return "".join(rng.choices(string.ascii_uppercase, k=n))


def ascii_id(s: str) -> str:
    """Lower-case ASCII letters, digits and dots of a string (logins and e-mail local parts)."""
    return "".join(c for c in s.lower() if c.isascii() and (c.isalnum() or c in "._"))


def login_name(rng: random.Random, p: Person) -> str:
    """A login name: from the person's names ("jsmith2", "smithj") or opaque ("xyz9", "ABCD", "u482913")."""
    k = rng.randrange(9)
    if k < 4:
        base = (p.first[0] + p.last, p.last + p.first[0], p.first + "." + p.last, p.first[0] + p.middle + p.last)[k]
        base = ascii_id(base)[:10] or "user"
        return base + (str(rng.randint(1, 99)) if rng.random() < 0.4 else "")
    if k == 4:
        return letters(rng, 3).lower() + str(rng.randint(1, 99))
    if k == 5:
        return letters(rng, 4)
    if k == 6:
        return rng.choice("uep") + digits(rng, 6)
    if k == 7:
        return ascii_id(p.first[0] + p.middle + p.last[0]) + digits(rng, rng.choice((2, 3, 4)))
    return ascii_id(p.first)[:6] + ascii_id(p.last[:1]) + str(rng.randint(1, 9))


def make_clinician(rng: random.Random, pools: Pools, role: str) -> Clinician:
    """A care-team member of the given role."""
    p = make_person(rng, pools, locale="en_US" if rng.random() < 0.75 else None)
    lic = rng.choice([f"{letters(rng, 2)}{digits(rng, 7)}", f"MD{digits(rng, 6)}", f"RN{digits(rng, 6)}",
                      digits(rng, 8), f"{letters(rng, 1)}-{digits(rng, 5)}"])
    return Clinician(p, role, login_name(rng, p), digits(rng, 5), lic)


def _email(rng: random.Random, p: Person) -> str:
    """A personal e-mail address built from a person's name."""
    local = rng.choice([f"{p.first}.{p.last}", f"{p.first[0]}{p.last}{rng.randint(1, 99)}",
                        f"{p.last}{p.first[0]}", f"{p.first}{rng.randint(1950, 2005)}",
                        f"{p.first}_{p.last}", f"{p.nick}{p.last[:1]}{rng.randint(1, 999)}"])
    return f"{ascii_id(local) or 'user'}@{rng.choice(words('lists.email_domains'))}"


def _age(rng: random.Random) -> int:
    """A patient's age at the first note: mostly adults, some over 89, a few children."""
    r = rng.random()
    if r < 0.07:
        return rng.randint(90, 104)
    if r < 0.10:
        return rng.randint(1, 17)
    return rng.randint(18, 89)


def make_relative(rng: random.Random, pools: Pools, patient: Person, age: int) -> Relative:
    """A relative or proxy of the patient, often sharing the last name."""
    sex = rng.choice("MF")
    relation = rng.choice(words("lists.relations_male") if sex == "M" else words("lists.relations_female"))
    same_last = relation not in ("friend", "partner", "neighbor") and rng.random() < 0.7
    p = make_person(rng, pools, locale=patient.locale, sex=sex, last=patient.last if same_last else None)
    rel_age = max(1, age + rng.randint(-40, 10)) if relation not in ("mother", "father") else age + rng.randint(18, 35)
    return Relative(p, relation, min(rel_age, 108), phone_digits(rng), rng.choice(pools.job))


def device_serial(rng: random.Random) -> str:
    """An implant serial number in one of several maker styles."""
    return rng.choice([f"{letters(rng, 3)}{digits(rng, 6)}{letters(rng, 1)}", f"SN{digits(rng, 8)}",
                       f"{digits(rng, 4)}-{digits(rng, 2)}-{digits(rng, 4)}", f"{letters(rng, 2)}{digits(rng, 9)}",
                       f"{letters(rng, 3)} {digits(rng, 6)}", f"{digits(rng, 6)}{letters(rng, 2)}"])


def _bioid(rng: random.Random, year: int) -> str:
    """A biobank, specimen-bank or genomic id."""
    return rng.choice([f"{rng.choice(['FP', 'BIO', 'RS', 'BB', 'GEN'])}-{digits(rng, 8)}",
                       f"BB-{year}-{digits(rng, 6)}", f"{letters(rng, 3)}{digits(rng, 5)}",
                       f"GID{digits(rng, 7)}", f"{digits(rng, 2)}-{digits(rng, 4)}-{letters(rng, 1)}"])


def make_patient(rng: random.Random, pools: Pools, index: int) -> Patient:
    """Patient `index` with every identity detail drawn from `rng`."""
    lex = lexicon()
    person = make_person(rng, pools)
    age = _age(rng)
    first_date = FIRST_DATE + dt.timedelta(days=rng.randrange(DATE_RANGE_DAYS))
    dob = first_date - dt.timedelta(days=age * 365 + rng.randrange(1, 360))
    state = rng.choice(pools.states)
    city = rng.choice(pools.city)
    country = lex["locale_country"][person.locale] if person.locale != "en_US" or rng.random() < 0.7 \
        else rng.choice(pools.country)
    plate = rng.choice([f"{rng.randint(1, 9)}{letters(rng, 3)}{rng.randint(100, 999)}",
                        f"{letters(rng, 3)}-{rng.randint(1000, 9999)}", f"{letters(rng, 2)} {digits(rng, 5)}"])
    mrn = rng.choice(words("lists.mrn_prefixes")) + digits(rng, rng.choice([6, 7, 7, 8, 9]))
    relatives = tuple(make_relative(rng, pools, person, age) for _ in range(rng.randint(2, 4)))
    return Patient(
        index=index, person=person, dob=dob, first_date=first_date,
        street=rng.choice(pools.street), city=city, state=state,
        zip=f"{rng.randint(1001, 99950):05d}", country=country,
        home_phone=phone_digits(rng), cell_phone=phone_digits(rng), email=_email(rng, person),
        mrn=mrn, ssn=f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}",
        insurer=rng.choice(words("lists.insurers")),
        member_id=rng.choice([f"{letters(rng, 3)}{digits(rng, 9)}", f"W{digits(rng, 8)}", f"{digits(rng, 9)}A",
                              f"{digits(rng, 1)}{letters(rng, 2)}{digits(rng, 1)}-{letters(rng, 2)}{digits(rng, 1)}-{letters(rng, 2)}{digits(rng, 2)}",
                              f"{letters(rng, 1)}{digits(rng, 10)}"]),
        account=rng.choice([digits(rng, rng.choice([8, 10, 12])), f"{digits(rng, 4)}-{digits(rng, 6)}",
                            f"A{digits(rng, 9)}"]),
        drivers_license=rng.choice([f"S{digits(rng, 8)}", f"{letters(rng, 1)}{digits(rng, 7)}",
                                    f"{digits(rng, 3)}-{digits(rng, 3)}-{digits(rng, 3)}"]),
        plate=plate, vin="".join(rng.choices(_VIN_CHARS, k=17)),
        device_kind=rng.choice(words("lists.device_kinds")), device_serial=device_serial(rng),
        bioid=_bioid(rng, first_date.year),
        employer=organization(rng, pools, "employer", state[0], city), profession=rng.choice(pools.job),
        relatives=relatives,
        attending=make_clinician(rng, pools, "attending"), pcp=make_clinician(rng, pools, "pcp"),
        consultants=(make_clinician(rng, pools, "consultant"), make_clinician(rng, pools, "consultant")),
        resident=make_clinician(rng, pools, "resident"),
        nurses=(make_clinician(rng, pools, "nurse"), make_clinician(rng, pools, "nurse")),
        hospital=make_hospital(rng, pools, state[0]), other_hospital=make_hospital(rng, pools, state[0]),
        room=room(rng), organization=organization(rng, pools, "org", state[0], city),
        place=rng.choice(words("lists.location_other")),
        ip=rng.choice([f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                       f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                       f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}"]),
        metadata_style=(rng.randrange(100), rng.randrange(100), rng.randrange(100)),
        facility=make_hospital(rng, pools, state[0], "facilities"),
        pharmacy=organization(rng, pools, "pharmacies", state[0], city),
        school=organization(rng, pools, "schools", state[0], city),
        work_phone=phone_digits(rng),
        apt=rng.choice(["", "", "", f"Apt {rng.randint(1, 40)}{rng.choice(['', 'A', 'B', 'C'])}",
                        f"Unit {rng.randint(1, 300)}", f"#{rng.randint(1, 20)}"]),
        zip4=f"{rng.randint(0, 9999):04d}",
    )
