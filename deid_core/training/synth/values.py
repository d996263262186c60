"""Slot values of one note: PHI surface forms (names, dates, ids, contacts, places) and non-PHI filler.

A PHI slot is {LABEL:form@ref!case}. Person forms are [role_]style: roles pt, rel, rel2, rel3
(PATIENT) and att, pcp, cons, cons2, res, rn, rn2 (the patient's care team) or any of EXTRA_ROLES
(a staff member made for this note); styles are those of names.name_form.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from collections.abc import Callable

from deid_core.training.synth.dates import age_on, decade, fmt_date
from deid_core.training.synth.fillers import FILLERS
from deid_core.training.synth.formats import fmt_extension, fmt_idnum, fmt_mrn, fmt_phone, fmt_ssn
from deid_core.training.synth.identity import (
    Clinician,
    Patient,
    Relative,
    ascii_id,
    device_serial,
    digits,
    login_name,
    make_clinician,
    make_person,
)
from deid_core.training.synth.lexicon import Pools, words
from deid_core.training.synth.names import name_form, surface_variant, with_case
from deid_core.training.synth.places import (
    department,
    make_hospital,
    organization,
    phone_digits,
    room,
)
from deid_core.training.synth.template import Slot

# Staff made per note: transcriptionist, social worker, case manager, NP, PA, respiratory therapist,
# pharmacist, therapist, secretary, surgeon, anesthesiologist, radiologist, pathologist, referring
# doctor, fellow, interpreter, chaplain, dietitian, aide, on-call doctor, another doctor, another nurse.
EXTRA_ROLES = ("tx", "sw", "cm", "np", "pa", "rt", "pharm", "ther", "sec", "surg", "anes", "rad", "path",
               "ref", "fel", "interp", "chap", "diet", "aide", "oncall", "md", "md2", "rn3")
PATIENT_ROLES = ("pt", "rel", "rel2", "rel3")
# The patient's care team by role code.
_TEAM: dict[str, Callable[[Patient], Clinician]] = {
    "att": lambda p: p.attending, "pcp": lambda p: p.pcp, "cons": lambda p: p.consultants[0],
    "cons2": lambda p: p.consultants[1], "res": lambda p: p.resident, "rn": lambda p: p.nurses[0],
    "rn2": lambda p: p.nurses[1],
}
ROLES = frozenset(tuple(_TEAM) + EXTRA_ROLES + PATIENT_ROLES)


class NoteValues:
    """Resolves the slots of one note; PHI values are cached by (name, form, ref) within the note."""

    def __init__(self, rng: random.Random, patient: Patient, note_date: dt.date, note_index: int, pools: Pools):
        self.rng = rng
        self.p = patient
        self.pools = pools
        self.note_date = note_date
        self.note_index = note_index
        self.rel_offset = rng.randrange(len(patient.relatives))
        self.relative = patient.relatives[self.rel_offset]
        self.cache: dict[tuple[str, str, str], str] = {}
        self.staff: dict[str, Clinician] = {}
        self.dates: dict[str, dt.date] = {"note": note_date, "disch": note_date, "dob": patient.dob}

    def fork(self, rng: random.Random) -> NoteValues:
        """A copy that draws from `rng`: same values so far, and its new draws change neither this one nor `rng`'s."""
        out = copy.copy(self)
        out.rng = rng
        out.cache, out.staff, out.dates = dict(self.cache), dict(self.staff), dict(self.dates)
        return out

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
            v = surface_variant(v, self.rng)
        return with_case(v, slot.mod) if slot.mod else v

    def relative_n(self, k: int) -> Relative:
        """The note's k-th relative (1 is the note's relative; the others follow in turn)."""
        rels = self.p.relatives
        return rels[(self.rel_offset + k - 1) % len(rels)]

    def clinician(self, role: str) -> Clinician:
        """The care-team member of a role code, or a staff member made for this note (EXTRA_ROLES)."""
        team = _TEAM.get(role)
        if team is not None:
            return team(self.p)
        c = self.staff.get(role)
        if c is None:
            c = self.staff[role] = make_clinician(self.rng, self.pools, role)
        return c

    def date(self, ref: str) -> dt.date:
        """The date a reference names (note, admit, disch, dob, past, past2, recent, future, old, ...)."""
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
            elif ref.startswith("soon"):
                d = base + dt.timedelta(days=r.randint(1, 9))
            elif ref.startswith("old"):
                d = base - dt.timedelta(days=r.randint(400, 9000))
            else:
                d = base - dt.timedelta(days=r.randint(21, 1500))
            self.dates[ref] = d
        return d


def _split(form: str, default_role: str) -> tuple[str, str]:
    """'att_last' -> ('att', 'last'); 'last' -> (default_role, 'last')."""
    head, _, tail = form.partition("_")
    if head in ROLES:
        return head, tail
    return default_role, form


def _person(v: NoteValues, role: str):
    """The Person of a role code."""
    if role == "pt":
        return v.p.person
    if role.startswith("rel"):
        return v.relative_n(int(role[3:] or 1)).person
    return v.clinician(role).person


def _patient(v: NoteValues, form: str, ref: str) -> str:
    """The patient's or a relative's name (form [pt_|rel_|rel2_|rel3_]style)."""
    role, style = _split(form, "pt")
    return name_form(_person(v, role), style, v.rng)


def _doctor(v: NoteValues, form: str, ref: str) -> str:
    """A care-team or staff member's name (form [role_]style)."""
    role, style = _split(form, "att")
    return name_form(_person(v, role), style, v.rng)


def _username(v: NoteValues, form: str, ref: str) -> str:
    """A clinician's login (form role), the patient's portal login (pt) or a new one (new)."""
    if form == "pt":
        p = v.p.person
        return ascii_id(p.first[0] + p.last) + str(v.p.dob.year % 100)
    if form == "new":
        return login_name(v.rng, make_person(v.rng, v.pools))
    u = v.clinician(form or "att").username
    return u.upper() if v.rng.random() < 0.2 else u


def _age(v: NoteValues, form: str, ref: str) -> str:
    """An age: the patient's (default), a relative's (rel, rel2, rel3), any, old, child, offspring, parent, a decade ("60s")."""
    r = v.rng
    if form.startswith("rel"):
        base, _, dec = form.partition("_")
        a = v.relative_n(int(base[3:] or 1)).age
        return decade(a) if dec == "decade" else str(a)
    match form:
        case "any":
            return str(r.randint(2, 99))
        case "old":
            return str(r.randint(38, 101))
        case "child":
            return str(r.randint(1, 17))
        case "offspring":
            return str(max(1, age_on(v.p.dob, v.note_date) - r.randint(18, 40)))
        case "parent":
            return str(min(108, age_on(v.p.dob, v.note_date) + r.randint(18, 35)))
        case "decade":
            return decade(age_on(v.p.dob, v.note_date))
        case "any_decade":
            return f"{r.randint(2, 9)}0s"
    return str(age_on(v.p.dob, v.note_date))


def _date(v: NoteValues, form: str, ref: str) -> str:
    """The date named by ref, in format form."""
    return fmt_date(v.date(ref or "past"), form, v.rng)


def _phone(v: NoteValues, form: str, ref: str) -> str:
    """A phone number (home, cell, work, rel, rel2, hosp, other, fac, pharm, new), a pager or an extension."""
    p = v.p
    if form == "pager":
        return v.clinician(ref or "att").pager
    if form == "ext":
        return fmt_extension(p.hospital.phone, v.rng)
    if form.startswith("rel"):
        num = v.relative_n(int(form[3:] or 1)).phone
    else:
        num = {"home": p.home_phone, "cell": p.cell_phone, "work": p.work_phone, "hosp": p.hospital.phone,
               "other": p.other_hospital.phone, "fac": p.facility.phone}.get(form or "home")
        if num is None:
            num = phone_digits(v.rng)
    return fmt_phone(num, v.rng, ext_p=0.4 if form in ("hosp", "other", "fac", "work") else 0.05)


def _hospital_of(v: NoteValues, form: str):
    """The hospital a form names: main (default), other, fac, new (a hospital made for this note)."""
    head = form.split("_")[0]
    if head == "other":
        return v.p.other_hospital
    if head == "fac":
        return v.p.facility
    if head == "new":
        h = v.cache.get(("_hospital", "new", ""))
        if h is None:
            h = v.cache[("_hospital", "new", "")] = make_hospital(v.rng, v.pools, v.rng.choice(v.pools.states)[0])
        return h
    return v.p.hospital


def _hospital(v: NoteValues, form: str, ref: str) -> str:
    """A hospital's name, acronym (…_abbr / abbr) or short name (…_short / short)."""
    h = _hospital_of(v, form)
    if form.endswith("abbr"):
        return h.abbr
    if form.endswith("short"):
        return h.short
    return h.name


ORG_KINDS = frozenset({"lab", "ambulance", "funeral", "organ", "dme"})


def _org(v: NoteValues, form: str, ref: str) -> str:
    """The employer, insurer, pharmacy, school, community organization, a new one, or one of a kind (ORG_KINDS)."""
    p = v.p
    if form in ORG_KINDS:
        return organization(v.rng, v.pools, f"org_{form}", p.state[0], p.city)
    if form in ("new_employer", "pharm_new", "school_new"):
        kind = {"new_employer": "employer", "pharm_new": "pharmacies", "school_new": "schools"}[form]
        return organization(v.rng, v.pools, kind, p.state[0], p.city)
    return {"employer": p.employer, "insurer": p.insurer, "pharm": p.pharmacy, "school": p.school}.get(form, p.organization)


def _city(v: NoteValues, form: str, ref: str) -> str:
    """The patient's city, a hospital's (hosp, other, fac) or another city (new)."""
    p = v.p
    if form == "new":
        return v.rng.choice(v.pools.city)
    return {"hosp": p.hospital.city, "other": p.other_hospital.city, "fac": p.facility.city}.get(form, p.city)


def _state(v: NoteValues, form: str, ref: str) -> str:
    """The patient's state, full (default) or abbreviated (abbr); new/new_abbr: another state."""
    st = v.rng.choice(v.pools.states) if form.startswith("new") else v.p.state
    return st[1] if form.endswith("abbr") else st[0]


def _street(v: NoteValues, form: str, ref: str) -> str:
    """The patient's street address, with the apartment (apt), or another address (new)."""
    if form == "new":
        return v.rng.choice(v.pools.street)
    s = v.p.street
    return f"{s} {v.p.apt}" if form == "apt" and v.p.apt else s


def _license(v: NoteValues, form: str, ref: str) -> str:
    """The patient's driver's license, a DEA number (dea) or a clinician's license number (role)."""
    if form in ("", "dl"):
        return v.p.drivers_license
    if form == "dea":
        return f"{v.rng.choice('ABFM')}{v.rng.choice('ABCDEFGHJKLMNPRSTW')}{digits(v.rng, 7)}"
    return v.clinician(form).license


def _email(v: NoteValues, form: str, ref: str) -> str:
    """The patient's e-mail, a clinician's hospital e-mail (doc or a role), a relative's, a department's."""
    host = v.p.hospital.url.split("//")[-1].split("/")[0].removeprefix("www.").removeprefix("mychart.")
    host = host.removeprefix("portal.")
    if form == "rel":
        p = v.relative.person
        return f"{ascii_id(p.first)}{ascii_id(p.last)[:1]}{v.rng.randint(1, 99)}@{v.rng.choice(words('lists.email_domains'))}"
    if form == "dept":
        return f"{v.rng.choice(('scheduling', 'referrals', 'him.requests', 'cardiology', 'help', 'records'))}@{host}"
    if form in ("doc",) or form in ROLES:
        c = v.clinician("att" if form == "doc" else form)
        return f"{c.username.lower()}@{host}"
    return v.p.email


def _url(v: NoteValues, form: str, ref: str) -> str:
    """The hospital's web address, another hospital's (other, fac), or a telehealth link (tele)."""
    if form == "tele":
        return v.rng.choice((f"https://zoom.us/j/{digits(v.rng, 10)}", f"https://meet.{_slug(v)}.org/{digits(v.rng, 8)}",
                             f"https://telehealth.{_slug(v)}.org/visit/{digits(v.rng, 6)}"))
    return _hospital_of(v, form).url


def _slug(v: NoteValues) -> str:
    """A short lower-case name of the main hospital for web addresses."""
    return v.p.hospital.abbr.lower() or "hospital"


def _ip(v: NoteValues, form: str, ref: str) -> str:
    """The patient's IP address or another one (new)."""
    if form == "new":
        r = v.rng
        return f"{r.choice((10, 172, 192, r.randint(11, 223)))}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
    return v.p.ip


def _device(v: NoteValues, form: str, ref: str) -> str:
    """The patient's implant serial, another device's serial (new) or a workstation id (ws)."""
    if form == "ws":
        r = v.rng
        return r.choice((f"WS-{r.randint(1, 9)}{r.choice('NSEW')}-{digits(r, 4)}", f"PC{digits(r, 6)}",
                         f"{_slug(v).upper()}-{digits(r, 5)}"))
    return device_serial(v.rng) if form == "new" else v.p.device_serial


PHI: dict[str, Callable[[NoteValues, str, str], str]] = {
    "PATIENT": _patient,
    "DOCTOR": _doctor,
    "USERNAME": _username,
    "PROFESSION": lambda v, f, r: (v.relative_n(int(f[3:] or 1)).profession if f.startswith("rel")
                                   else v.rng.choice(v.pools.job) if f == "any" else v.p.profession),
    "ROOM": lambda v, f, r: room(v.rng) if f != "pt" else v.p.room,
    "DEPARTMENT": lambda v, f, r: (department(v.rng, v.pools) if f == "new" else
                                   v.p.other_hospital.department if f == "other" else v.p.hospital.department),
    "HOSPITAL": _hospital,
    "ORGANIZATION": _org,
    "STREET": _street,
    "CITY": _city,
    "STATE": _state,
    "COUNTRY": lambda v, f, r: v.rng.choice(v.pools.country) if f == "new" else v.p.country,
    "ZIP": lambda v, f, r: f"{v.p.zip}-{v.p.zip4}" if f == "plus4" else v.p.zip,
    "LOCATION-OTHER": lambda v, f, r: v.rng.choice(words("lists.location_other")) if f == "new" else v.p.place,
    "AGE": _age,
    "DATE": _date,
    "PHONE": _phone,
    "FAX": lambda v, f, r: fmt_phone(_hospital_of(v, f).fax, v.rng, ext_p=0.0),
    "EMAIL": _email,
    "URL": _url,
    "IPADDR": _ip,
    "SSN": lambda v, f, r: fmt_ssn(v.p.ssn, f, v.rng),
    "MEDICALRECORD": lambda v, f, r: fmt_mrn(v.p.mrn, f, v.rng),
    "HEALTHPLAN": lambda v, f, r: f"{v.rng.choice(('GRP', 'G', ''))}{digits(v.rng, 6)}" if f == "group" else v.p.member_id,
    "ACCOUNT": lambda v, f, r: v.p.account,
    "LICENSE": _license,
    "VEHICLE": lambda v, f, r: v.p.vin if f == "vin" else v.p.plate,
    "DEVICE": _device,
    "BIOID": lambda v, f, r: v.p.bioid if f != "new" else f"{v.rng.choice(('SPC', 'BB', 'DNA'))}-{digits(v.rng, 7)}",
    "IDNUM": lambda v, f, r: fmt_idnum(f, v.note_date.year, v.rng),
}
