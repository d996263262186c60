"""Synthetic identities: a patient with relatives, care team, hospital and ids, from one seeded RNG."""

from __future__ import annotations

import datetime as dt
import random
import string
from dataclasses import dataclass

from deid_core.training.synth.lexicon import Pools, lexicon, pick_locale

FIRST_DATE = dt.date(2008, 1, 1)
DATE_RANGE_DAYS = 15 * 365
P_AMBIGUOUS_NAME = 0.06
P_OOV_NAME = 0.05
_CONSONANTS = "bcdfghjklmnpqrstvwxz"
_VOWELS = "aeiouy"
_VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"


@dataclass(frozen=True, slots=True)
class Person:
    """A named person: first, middle initial, last, sex ('M'/'F'), name locale."""

    first: str
    middle: str
    last: str
    sex: str
    locale: str = "en_US"


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
class Hospital:
    """A hospital with its abbreviation, unit, contact numbers and web address."""

    name: str
    abbr: str
    department: str
    phone: str
    fax: str
    url: str
    city: str


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


def oov_name(rng: random.Random) -> str:
    """An out-of-vocabulary name of random letters ("Ymfgi"), loosely pronounceable or not."""
    n = rng.randint(3, 8)
    if rng.random() < 0.5:
        letters = [rng.choice(string.ascii_lowercase) for _ in range(n)]
    else:
        letters = [rng.choice(_CONSONANTS if i % 2 == 0 else _VOWELS) for i in range(n)]
    return "".join(letters).capitalize()


def make_person(rng: random.Random, pools: Pools, *, locale: str | None = None,
                sex: str | None = None, last: str | None = None) -> Person:
    """A person with names drawn from the locale's pools, sometimes ambiguous or OOV."""
    loc = locale or pick_locale(rng)
    sex = sex or rng.choice("MF")
    amb = lexicon()["ambiguous"]
    r = rng.random()
    if r < P_AMBIGUOUS_NAME:
        first = rng.choice(amb["first"]) if rng.random() < 0.5 else None
        last = last or rng.choice(amb["last"])
    elif r < P_AMBIGUOUS_NAME + P_OOV_NAME:
        first = oov_name(rng)
        last = last or oov_name(rng)
    else:
        first = None
    if first is None:
        first = rng.choice((pools.first_male if sex == "M" else pools.first_female)[loc])
    last = last or rng.choice(pools.last[loc])
    return Person(first, rng.choice(string.ascii_uppercase), last, sex, loc)


def digits(rng: random.Random, n: int) -> str:
    """n random digits (the first not zero)."""
    return str(rng.randint(1, 9)) + "".join(rng.choice(string.digits) for _ in range(n - 1))


def phone_digits(rng: random.Random) -> str:
    """Ten digits of a plausible US number (area and exchange not starting with 0/1)."""
    return f"{rng.randint(201, 989)}{rng.randint(201, 989)}{rng.randint(0, 9999):04d}"


def _username(rng: random.Random, p: Person) -> str:
    """A login name derived from a person's names."""
    base = rng.choice([p.first[0] + p.last, p.last + p.first[0], p.first + "." + p.last,
                       p.first[0] + p.middle + p.last])
    base = "".join(c for c in base.lower() if c.isascii() and (c.isalnum() or c == "."))
    return base[:10] + (str(rng.randint(1, 99)) if rng.random() < 0.4 else "")


def make_clinician(rng: random.Random, pools: Pools, role: str) -> Clinician:
    """A care-team member of the given role."""
    p = make_person(rng, pools, locale="en_US" if rng.random() < 0.85 else None)
    lic = rng.choice([f"{rng.choice(string.ascii_uppercase)}{rng.choice(string.ascii_uppercase)}{digits(rng, 7)}",
                      f"MD{digits(rng, 6)}", f"RN{digits(rng, 6)}", digits(rng, 8)])
    return Clinician(p, role, _username(rng, p), digits(rng, 5), lic)


def _initials(name: str) -> str:
    """Upper-case initials of the capitalized words of a name ("Lowery General Hospital" -> LGH)."""
    return "".join(w[0] for w in name.replace("-", " ").split() if w[:1].isupper() and w not in ("St.",))


def make_hospital(rng: random.Random, pools: Pools, state_name: str) -> Hospital:
    """A hospital named from a lexicon pattern, with unit, numbers and web address."""
    lex = lexicon()["lists"]
    city = rng.choice(pools.city)
    name = rng.choice(lex["hospital_patterns"]).format(
        city=city, last=rng.choice(pools.last["en_US"]), last2=rng.choice(pools.last["en_US"]),
        saint=rng.choice(lex["saints"]), state=state_name)
    abbr = _initials(name) or name.split()[0].upper()
    dept = rng.choice(lex["department_patterns"]).format(last=rng.choice(pools.last["en_US"]), n=rng.randint(2, 14))
    slug = abbr.lower() if len(abbr) >= 3 else "".join(c for c in name.lower() if c.isalpha())[:12]
    url = rng.choice([f"www.{slug}.org", f"https://www.{slug}health.org", f"http://{slug}.org/patients",
                      f"https://mychart.{slug}.org", f"www.{slug}-hospital.com/portal"])
    return Hospital(name, abbr, dept, phone_digits(rng), phone_digits(rng), url, city)


def _email(rng: random.Random, p: Person) -> str:
    """A personal e-mail address built from a person's name."""
    local = rng.choice([f"{p.first}.{p.last}", f"{p.first[0]}{p.last}{rng.randint(1, 99)}",
                        f"{p.last}{p.first[0]}", f"{p.first}{rng.randint(1950, 2005)}"])
    local = "".join(c for c in local.lower() if c.isascii() and (c.isalnum() or c in "._"))
    return f"{local or 'user'}@{rng.choice(lexicon()['lists']['email_domains'])}"


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
    lex = lexicon()["lists"]
    sex = rng.choice("MF")
    relation = rng.choice(lex["relations_male"] if sex == "M" else lex["relations_female"])
    same_last = relation not in ("friend", "partner") and rng.random() < 0.7
    p = make_person(rng, pools, locale=patient.locale, sex=sex, last=patient.last if same_last else None)
    rel_age = max(1, age + rng.randint(-40, 10)) if relation not in ("mother", "father") else age + rng.randint(18, 35)
    return Relative(p, relation, min(rel_age, 108), phone_digits(rng), rng.choice(pools.job))


def make_patient(rng: random.Random, pools: Pools, index: int) -> Patient:
    """Patient `index` with every identity detail drawn from `rng`."""
    lex = lexicon()
    person = make_person(rng, pools)
    age = _age(rng)
    first_date = FIRST_DATE + dt.timedelta(days=rng.randrange(DATE_RANGE_DAYS))
    dob = first_date - dt.timedelta(days=age * 365 + rng.randrange(1, 360))
    state = rng.choice(pools.states)
    country = lex["locale_country"][person.locale] if person.locale != "en_US" or rng.random() < 0.7 \
        else rng.choice(pools.country)
    dk = rng.choice(lex["lists"]["device_kinds"])
    serial = rng.choice([f"{''.join(rng.choices(string.ascii_uppercase, k=3))}{digits(rng, 6)}{rng.choice(string.ascii_uppercase)}",
                         f"SN{digits(rng, 8)}", f"{digits(rng, 4)}-{digits(rng, 2)}-{digits(rng, 4)}"])
    plate = rng.choice([f"{rng.randint(1, 9)}{''.join(rng.choices(string.ascii_uppercase, k=3))}{rng.randint(100, 999)}",
                        f"{''.join(rng.choices(string.ascii_uppercase, k=3))}-{rng.randint(1000, 9999)}"])
    mrn = rng.choice(lex["lists"]["mrn_prefixes"]) + digits(rng, rng.choice([7, 8, 9]))
    relatives = tuple(make_relative(rng, pools, person, age) for _ in range(rng.randint(1, 3)))
    return Patient(
        index=index, person=person, dob=dob, first_date=first_date,
        street=rng.choice(pools.street), city=rng.choice(pools.city), state=state,
        zip=f"{rng.randint(1001, 99950):05d}", country=country,
        home_phone=phone_digits(rng), cell_phone=phone_digits(rng), email=_email(rng, person),
        mrn=mrn, ssn=f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}",
        insurer=rng.choice(lex["lists"]["insurers"]),
        member_id=rng.choice([f"{''.join(rng.choices(string.ascii_uppercase, k=3))}{digits(rng, 9)}",
                              f"W{digits(rng, 8)}", f"{digits(rng, 9)}A"]),
        account=digits(rng, rng.choice([8, 10, 12])),
        drivers_license=rng.choice([f"S{digits(rng, 8)}", f"{rng.choice(string.ascii_uppercase)}{digits(rng, 7)}"]),
        plate=plate, vin="".join(rng.choices(_VIN_CHARS, k=17)),
        device_kind=dk, device_serial=serial, bioid=f"{rng.choice(['FP', 'BIO', 'RS'])}-{digits(rng, 8)}",
        employer=rng.choice(pools.company), profession=rng.choice(pools.job), relatives=relatives,
        attending=make_clinician(rng, pools, "attending"), pcp=make_clinician(rng, pools, "pcp"),
        consultants=(make_clinician(rng, pools, "consultant"), make_clinician(rng, pools, "consultant")),
        resident=make_clinician(rng, pools, "resident"),
        nurses=(make_clinician(rng, pools, "nurse"), make_clinician(rng, pools, "nurse")),
        hospital=make_hospital(rng, pools, state[0]), other_hospital=make_hospital(rng, pools, state[0]),
        room=rng.choice([str(rng.randint(101, 1299)), f"{rng.randint(2, 12)}{rng.choice('ABCDE')}-{rng.randint(1, 30)}",
                         f"{rng.randint(1, 40)}"]),
        organization=rng.choice(lex["lists"]["organizations"] + list(pools.company[:50])),
        place=rng.choice(lex["lists"]["location_other"]),
        ip=f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        metadata_style=(rng.randrange(100), rng.randrange(100), rng.randrange(100)),
    )
