"""Slot values of one note: PHI surface forms (names, dates, ids, contacts) and non-PHI filler."""

from __future__ import annotations

import datetime as dt
import random
import string
from collections.abc import Callable

from deid_core.training.synth.identity import Clinician, Patient, Person, digits
from deid_core.training.synth.lexicon import lexicon
from deid_core.training.synth.template import Slot

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
P_UPPER, P_LOWER, P_MISSPELL = 0.05, 0.02, 0.03


def fmt_date(d: dt.date, fmt: str, rng: random.Random) -> str:
    """A date in one of many surface formats (fmt 'any' picks one)."""
    if fmt in ("", "any"):
        fmt = rng.choice(("mdy", "mdy", "mdy", "mdy0", "mdy2", "dash2", "long", "dmy", "md", "md",
                          "iso", "mon_d", "dmon", "long"))
    m, day, y = d.month, d.day, d.year
    mon = MONTHS[m - 1]
    match fmt:
        case "mdy":
            return f"{m}/{day}/{y}"
        case "mdy0":
            return f"{m:02d}/{day:02d}/{y}"
        case "mdy2":
            return f"{m}/{day}/{y % 100:02d}"
        case "dash2":
            return f"{m:02d}-{day:02d}-{y % 100:02d}"
        case "dash4":
            return f"{m}-{day}-{y}"
        case "long":
            return f"{mon} {day}, {y}"
        case "dmy":
            return f"{day} {mon[:3]} {y}"
        case "dmon":
            return f"{day:02d}-{mon[:3]}-{y}"
        case "md":
            return f"{m}/{day}"
        case "md0":
            return f"{m:02d}/{day:02d}"
        case "mon_d":
            return f"{mon[:3]} {day}"
        case "month_d":
            suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
            return f"{mon} {day}{suffix}"
        case "monyear":
            return f"{mon} {y}"
        case "month":
            return mon
        case "year":
            return str(y)
        case "yr2":
            return f"'{y % 100:02d}"
        case "iso":
            return d.isoformat()
        case "weekday":
            return WEEKDAYS[d.weekday()]
        case "holiday":
            return rng.choice(lexicon()["lists"]["holidays"])
        case "season":
            return rng.choice(lexicon()["lists"]["seasons"])
    raise ValueError(f"unknown date format {fmt!r}")


def fmt_phone(num: str, rng: random.Random, *, ext_p: float = 0.1) -> str:
    """Ten digits in one of several phone formats, sometimes with an extension."""
    a, b, c = num[:3], num[3:6], num[6:]
    s = rng.choice((f"{a}-{b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"{a} {b} {c}", f"{a}{b}{c}",
                    f"{b}-{c}", f"1-{a}-{b}-{c}", f"+1 {a} {b} {c}", f"{a}/{b}-{c}"))
    if rng.random() < ext_p:
        s += rng.choice((" x", " ext. ", " ext ", " X", "x")) + str(rng.randint(10, 99999))
    return s


def initials(p: Person) -> str:
    """A person's initials, with the middle one sometimes."""
    return p.first[0] + p.middle + p.last[0]


def name_form(p: Person, style: str, rng: random.Random) -> str:
    """A surface form of a person's name: last, first, full, fi_last, last_first, initials, ..."""
    match style:
        case "last":
            return p.last
        case "first":
            return p.first
        case "full" | "":
            return f"{p.first} {p.last}"
        case "fml":
            return f"{p.first} {p.middle}. {p.last}"
        case "fi_last":
            return f"{p.first[0]}. {p.last}"
        case "fi_last2":
            return f"{p.first[0]}{p.last}" if rng.random() < 0.3 else f"{p.first[0]} {p.last}"
        case "last_first":
            return f"{p.last}, {p.first}"
        case "first_i":
            return f"{p.first} {p.last[0]}"
        case "initials":
            return initials(p) if rng.random() < 0.5 else p.first[0] + p.last[0]
        case "i":
            return p.last[0]
    raise ValueError(f"unknown name style {style!r}")


def misspell(s: str, rng: random.Random) -> str:
    """One-letter misspelling: substitution, deletion, doubling or transposition inside the word."""
    idx = [i for i, c in enumerate(s) if c.isalpha()]
    if len(idx) < 4:
        return s
    i = rng.choice(idx[1:-1])
    op = rng.randrange(4)
    if op == 0:
        c = rng.choice(string.ascii_lowercase)
        return s[:i] + (c.upper() if s[i].isupper() else c) + s[i + 1:]
    if op == 1:
        return s[:i] + s[i + 1:]
    if op == 2:
        return s[:i] + s[i] + s[i:]
    if s[i + 1].isalpha():
        return s[:i] + s[i + 1] + s[i] + s[i + 2:]
    return s


def surface_variant(s: str, rng: random.Random) -> str:
    """A name as written by a hurried clinician: sometimes upper/lower case or misspelled."""
    r = rng.random()
    if r < P_UPPER:
        return s.upper()
    if r < P_UPPER + P_LOWER:
        return s.lower()
    if r < P_UPPER + P_LOWER + P_MISSPELL:
        return misspell(s, rng)
    return s


def age_on(dob: dt.date, day: dt.date) -> int:
    """Age in whole years on `day`."""
    return day.year - dob.year - ((day.month, day.day) < (dob.month, dob.day))


class NoteValues:
    """Resolves the slots of one note; PHI values are cached by (name, form, ref) within the note."""

    def __init__(self, rng: random.Random, patient: Patient, note_date: dt.date, note_index: int):
        self.rng = rng
        self.p = patient
        self.note_date = note_date
        self.note_index = note_index
        self.relative = rng.choice(patient.relatives)
        self.cache: dict[tuple[str, str, str], str] = {}
        self.dates: dict[str, dt.date] = {"note": note_date, "disch": note_date, "dob": patient.dob}

    def __call__(self, slot: Slot) -> str:
        """The surface text of `slot` in this note."""
        if not slot.phi:
            return FILLERS[slot.name](self)
        key = (slot.name, slot.form, slot.ref)
        v = self.cache.get(key)
        if v is None:
            v = PHI[slot.name](self, slot.form, slot.ref)
            self.cache[key] = v
        if slot.name in ("PATIENT", "DOCTOR"):
            return surface_variant(v, self.rng)
        return v

    # --- people -------------------------------------------------------------------------------
    def clinician(self, role: str) -> Clinician:
        """The care-team member of a role code (att, pcp, cons, cons2, res, rn, rn2)."""
        p = self.p
        return {"att": p.attending, "pcp": p.pcp, "cons": p.consultants[0], "cons2": p.consultants[1],
                "res": p.resident, "rn": p.nurses[0], "rn2": p.nurses[1]}[role]

    def date(self, ref: str) -> dt.date:
        """The date a reference names (note, admit, disch, dob, past, past2, recent, future, ...)."""
        d = self.dates.get(ref)
        if d is None:
            r = self.rng
            base = self.note_date
            if ref.startswith("admit"):
                d = base - dt.timedelta(days=r.randint(1, 12))
            elif ref.startswith("recent"):
                d = base - dt.timedelta(days=r.randint(1, 20))
            elif ref.startswith("future"):
                d = base + dt.timedelta(days=r.randint(3, 120))
            elif ref.startswith("old"):
                d = base - dt.timedelta(days=r.randint(400, 9000))
            else:
                d = base - dt.timedelta(days=r.randint(21, 1500))
            self.dates[ref] = d
        return d


def _split(form: str, default_role: str) -> tuple[str, str]:
    """'att_last' -> ('att', 'last'); 'last' -> (default_role, 'last')."""
    head, _, tail = form.partition("_")
    if head in ("pt", "rel", "att", "pcp", "cons", "cons2", "res", "rn", "rn2"):
        return head, tail
    return default_role, form


def _patient(v: NoteValues, form: str, ref: str) -> str:
    """The patient's or the note's relative's name (form [pt_|rel_]style)."""
    role, style = _split(form, "pt")
    person = v.relative.person if role == "rel" else v.p.person
    return name_form(person, style, v.rng)


def _doctor(v: NoteValues, form: str, ref: str) -> str:
    """A care-team member's name (form [att|pcp|cons|cons2|res|rn|rn2_]style)."""
    role, style = _split(form, "att")
    return name_form(v.clinician(role).person, style, v.rng)


def _username(v: NoteValues, form: str, ref: str) -> str:
    """A clinician's login (form role) or the patient's portal login (form pt)."""
    if form == "pt":
        p = v.p.person
        return "".join(c for c in (p.first[0] + p.last).lower() if c.isascii() and c.isalnum()) + str(v.p.dob.year % 100)
    u = v.clinician(form or "att").username
    return u.upper() if v.rng.random() < 0.2 else u


def _age(v: NoteValues, form: str, ref: str) -> str:
    """The patient's age on the note date, a relative's age (rel) or any age (any)."""
    if form == "rel":
        return str(v.relative.age)
    if form == "any":
        return str(v.rng.randint(2, 99))
    return str(age_on(v.p.dob, v.note_date))


def _date(v: NoteValues, form: str, ref: str) -> str:
    """The date named by ref, in format form."""
    return fmt_date(v.date(ref or "past"), form, v.rng)


def _phone(v: NoteValues, form: str, ref: str) -> str:
    """A phone number (home, cell, rel, hosp, other) or a clinician's pager (pager@role)."""
    p = v.p
    if form == "pager":
        return v.clinician(ref or "att").pager
    num = {"home": p.home_phone, "cell": p.cell_phone, "rel": v.relative.phone,
           "hosp": p.hospital.phone, "other": p.other_hospital.phone}.get(form or "home", p.home_phone)
    return fmt_phone(num, v.rng, ext_p=0.5 if form in ("hosp", "other") else 0.05)


def _hospital(v: NoteValues, form: str, ref: str) -> str:
    """The main or other hospital, by name or abbreviation."""
    h = v.p.other_hospital if form.startswith("other") else v.p.hospital
    return h.abbr if form.endswith("abbr") else h.name


def _org(v: NoteValues, form: str, ref: str) -> str:
    """The employer, insurer or the patient's community organization."""
    p = v.p
    return {"employer": p.employer, "insurer": p.insurer}.get(form, p.organization)


def _city(v: NoteValues, form: str, ref: str) -> str:
    """The patient's city, or a hospital's (hosp, other)."""
    return {"hosp": v.p.hospital.city, "other": v.p.other_hospital.city}.get(form, v.p.city)


def _license(v: NoteValues, form: str, ref: str) -> str:
    """The patient's driver's license or a clinician's license number."""
    return v.p.drivers_license if form in ("", "dl") else v.clinician(form).license


def _idnum(v: NoteValues, form: str, ref: str) -> str:
    """An accession, order, job or case number (one per form within a note)."""
    r = v.rng
    y = v.note_date.year % 100
    return r.choice((f"{y:02d}-{digits(r, 6)}", f"{r.choice('ABCDEFGHKLMS')}{y:02d}-{digits(r, 5)}",
                     digits(r, 8), f"{''.join(r.choices(string.ascii_uppercase, k=2))}{digits(r, 7)}"))


def _mrn(v: NoteValues, form: str, ref: str) -> str:
    """The medical record number, plain or dashed."""
    m = v.p.mrn
    if form == "dashed" and m.isdigit() and len(m) >= 7:
        return f"{m[:3]}-{m[3:5]}-{m[5:]}"
    return m


def _email(v: NoteValues, form: str, ref: str) -> str:
    """The patient's e-mail, or the attending's hospital e-mail (doc)."""
    if form == "doc":
        c = v.p.attending
        return f"{c.username}@{v.p.hospital.url.split('//')[-1].split('/')[0].removeprefix('www.')}"
    return v.p.email


PHI: dict[str, Callable[[NoteValues, str, str], str]] = {
    "PATIENT": _patient,
    "DOCTOR": _doctor,
    "USERNAME": _username,
    "PROFESSION": lambda v, f, r: v.relative.profession if f == "rel" else v.p.profession,
    "ROOM": lambda v, f, r: v.p.room,
    "DEPARTMENT": lambda v, f, r: v.p.hospital.department,
    "HOSPITAL": _hospital,
    "ORGANIZATION": _org,
    "STREET": lambda v, f, r: v.p.street,
    "CITY": _city,
    "STATE": lambda v, f, r: v.p.state[1] if f == "abbr" else v.p.state[0],
    "COUNTRY": lambda v, f, r: v.p.country,
    "ZIP": lambda v, f, r: v.p.zip,
    "LOCATION-OTHER": lambda v, f, r: v.p.place,
    "AGE": _age,
    "DATE": _date,
    "PHONE": _phone,
    "FAX": lambda v, f, r: fmt_phone(v.p.other_hospital.fax if f == "other" else v.p.hospital.fax, v.rng, ext_p=0.0),
    "EMAIL": _email,
    "URL": lambda v, f, r: v.p.hospital.url,
    "IPADDR": lambda v, f, r: v.p.ip,
    "SSN": lambda v, f, r: v.p.ssn.replace("-", "") if f == "plain" else v.p.ssn,
    "MEDICALRECORD": _mrn,
    "HEALTHPLAN": lambda v, f, r: v.p.member_id,
    "ACCOUNT": lambda v, f, r: v.p.account,
    "LICENSE": _license,
    "VEHICLE": lambda v, f, r: v.p.vin if f == "vin" else v.p.plate,
    "DEVICE": lambda v, f, r: v.p.device_serial,
    "BIOID": lambda v, f, r: v.p.bioid,
    "IDNUM": _idnum,
}


def _lst(name: str) -> tuple[str, ...]:
    """A word list of the lexicon."""
    return tuple(lexicon()["lists"][name])


def _dose(v: NoteValues) -> str:
    """A non-PHI medication dose ("metoprolol 25 mg po")."""
    r = v.rng
    return f"{r.choice(_lst('meds'))} {r.choice((5, 10, 12.5, 20, 25, 40, 50, 81, 100, 250, 500, 1000))} {r.choice(_lst('units_dose'))} {r.choice(_lst('routes'))}"


def _lab(v: NoteValues) -> str:
    """A non-PHI lab value ("K 4.1")."""
    r = v.rng
    return f"{r.choice(_lst('labs'))} {r.choice((r.randint(1, 140), round(r.uniform(0.5, 45), 1)))}"


def _relation(v: NoteValues) -> str:
    """The relation word of the note's relative."""
    return v.relative.relation


def _pron(male: str, female: str) -> Callable[[NoteValues], str]:
    """A filler giving the word for the patient's sex."""
    return lambda v: male if v.p.person.sex == "M" else female


FILLERS: dict[str, Callable[[NoteValues], str]] = {
    "bp": lambda v: f"{v.rng.randint(85, 185)}/{v.rng.randint(40, 105)}",
    "hr": lambda v: str(v.rng.randint(48, 135)),
    "rr": lambda v: str(v.rng.randint(10, 32)),
    "temp": lambda v: f"{v.rng.uniform(96.5, 103.2):.1f}",
    "sat": lambda v: f"{v.rng.randint(86, 100)}%",
    "dose": _dose,
    "med": lambda v: v.rng.choice(_lst("meds")),
    "dx": lambda v: v.rng.choice(_lst("diagnoses")),
    "proc": lambda v: v.rng.choice(_lst("procedures")),
    "symptom": lambda v: v.rng.choice(_lst("symptoms")),
    "finding": lambda v: v.rng.choice(_lst("rad_findings")),
    "lab": _lab,
    "labs": lambda v: ", ".join(_lab(v) for _ in range(v.rng.randint(2, 5))),
    "abg": lambda v: f"{v.rng.uniform(7.21, 7.52):.2f}/{v.rng.randint(28, 65)}/{v.rng.randint(55, 160)}",
    "strength": lambda v: f"{v.rng.randint(3, 5)}/5",
    "ratio": lambda v: v.rng.choice(("1:1", "1:2", "1:3", "2:1")),
    "time": lambda v: f"{v.rng.randint(0, 23):02d}{v.rng.choice(('00', '00', '15', '30', '45'))}",
    "times": lambda v: f"x{v.rng.randint(1, 4)}",
    "n": lambda v: str(v.rng.randint(2, 9)),
    "frac": lambda v: f"{v.rng.randint(1, 3)}/{v.rng.randint(4, 10)}",
    "vent": lambda v: f"{v.rng.choice((400, 450, 500, 550, 600, 700))}x{v.rng.randint(10, 20)}",
    "weight": lambda v: f"{v.rng.uniform(45, 140):.1f}",
    "amb": lambda v: v.rng.choice(lexicon()["ambiguous"]["phrases"]),
    "relation": _relation,
    "device_kind": lambda v: v.p.device_kind,
    "vehicle_kind": lambda v: v.rng.choice(_lst("vehicle_kinds")),
    "unit": lambda v: v.rng.choice(_lst("units")),
    "mr": lambda v: "Mr." if v.p.person.sex == "M" else v.rng.choice(("Ms.", "Mrs.")),
    "he": _pron("he", "she"),
    "He": _pron("He", "She"),
    "his": _pron("his", "her"),
    "His": _pron("His", "Her"),
    "him": _pron("him", "her"),
    "man": _pron("man", "woman"),
    "sex": _pron("M", "F"),
    "gender": _pron("male", "female"),
}
