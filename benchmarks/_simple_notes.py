"""A small stand-in note generator (gold spans exact) for the surrogate benchmarks.

Used when deid_core.synth (the project's generator) is not importable; it covers every label
family the surrogates handle, in several surface forms and cases.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from faker import Faker

from deid_core.spans import Span

DATE_FORMATS = ["%m/%d/%Y", "%m/%d/%y", "%Y-%m-%d", "%B %d, %Y", "%b %d, %Y", "%d %B %Y",
                "%A, %B %d, %Y", "%m-%d-%Y", "%b. %d, %Y", "md", "month", "mon_year", "yy"]


@dataclass(frozen=True)
class SimpleNote:
    """A generated note: text, gold spans, metadata names."""

    note_id: str
    patient_id: str
    note_date: dt.date
    text: str
    spans: tuple[Span, ...]
    patient_first_name: str | None
    patient_last_name: str | None
    attending_name: str | None


def _date(rng: random.Random, d: dt.date) -> str:
    fmt = rng.choice(DATE_FORMATS)
    if fmt == "md":
        return f"{d.month}/{d.day}"
    if fmt == "month":
        return f"{d:%B}"
    if fmt == "mon_year":
        return f"{d:%b} {d.year}"
    if fmt == "yy":
        return f"'{d:%y}"
    return d.strftime(fmt)


class _Builder:
    def __init__(self) -> None:
        self.text = ""
        self.spans: list[Span] = []

    def add(self, s: str) -> None:
        self.text += s

    def phi(self, s: str, label: str) -> None:
        self.spans.append(Span(len(self.text), len(self.text) + len(s), label, "gold"))
        self.text += s


def patient_notes(fk: Faker, rng: random.Random, index: int, n: int) -> list[SimpleNote]:
    """n notes of one generated patient."""
    male = rng.random() < 0.5
    first = fk.first_name_male() if male else fk.first_name_female()
    last = fk.last_name()
    doc_first, doc_last = fk.first_name(), fk.last_name()
    hospital = f"{fk.city()} General Hospital"
    city, state, zipc = fk.city(), fk.state_abbr(), fk.zipcode()
    phone, mrn, ssn = fk.numerify("(###) ###-####"), fk.bothify("??#######").upper(), fk.ssn()
    email = f"{first.lower()}.{last.lower()}@{fk.free_email_domain()}"
    age = rng.choice([rng.randint(20, 89), rng.randint(90, 104)])
    day = dt.date(rng.randint(1995, 2024), rng.randint(1, 12), rng.randint(1, 28))
    pid = f"S{index:07d}"
    notes = []
    for k in range(n):
        day = day + dt.timedelta(days=rng.choice((0, 1, 2, 7, 30, 90)))
        b = _Builder()
        case = rng.choice((str, str, str.upper))
        b.add("Patient: ")
        b.phi(case(f"{first} {last}"), "PATIENT")
        b.add("  MRN: ")
        b.phi(mrn, "MEDICALRECORD")
        b.add("\nDate of service: ")
        b.phi(_date(rng, day), "DATE")
        b.add("\n\nHPI: ")
        b.add("Mr. " if male else "Ms. ")
        b.phi(case(last), "PATIENT")
        b.add(" is a ")
        b.phi(str(age), "AGE")
        b.add(" year old seen at ")
        b.phi(hospital, "HOSPITAL")
        b.add(" by Dr. ")
        b.phi(rng.choice([f"{doc_first} {doc_last}", doc_last, f"{doc_first[0]}. {doc_last}", doc_last.upper()]), "DOCTOR")
        b.add(" on ")
        b.phi(_date(rng, day - dt.timedelta(days=rng.randint(1, 400))), "DATE")
        b.add(". Lives in ")
        b.phi(city, "CITY")
        b.add(", ")
        b.phi(state, "STATE")
        b.add(" ")
        b.phi(zipc, "ZIP")
        b.add(". Call ")
        b.phi(phone, "PHONE")
        b.add(" or ")
        b.phi(email, "EMAIL")
        b.add(". SSN ")
        b.phi(ssn, "SSN")
        b.add(f".\nInitials {first[0]}{last[0]} confirmed; ")
        b.spans.append(Span(len(b.text) - len(f"{first[0]}{last[0]} confirmed; "),
                            len(b.text) - len(" confirmed; "), "PATIENT", "gold"))
        b.add("wife ")
        b.phi(fk.first_name_female(), "PATIENT")
        b.add(" at bedside.\n")
        notes.append(SimpleNote(f"{pid}-{k:03d}", pid, day, b.text, tuple(b.spans), first, last,
                                f"{doc_first} {doc_last}"))
    return notes


def generate(n_notes: int, seed: int = 0) -> list[SimpleNote]:
    """About n_notes notes (8 per patient), reproducible from the seed."""
    fk = Faker("en_US")
    out: list[SimpleNote] = []
    i = 0
    while len(out) < n_notes:
        fk.seed_instance(seed * 1_000_003 + i)
        rng = random.Random(seed * 1_000_003 + i)
        out.extend(patient_notes(fk, rng, i, min(8, n_notes - len(out))))
        i += 1
    return out
