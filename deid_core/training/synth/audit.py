"""Unannotated PHI check: a note's identity strings and PHI-shaped text must not occur outside its gold spans.

A template bug (a name written in a literal, a filler that prints an address, a slot label
missing) leaves PHI in a note without a gold span, and a tagger trained on it learns to miss
it. `unannotated(note, patient)` looks, outside every gold span, for
- the names of the patient, the relatives and the care team, and the names in the note's own
  PATIENT/DOCTOR spans (word tokens of 3+ letters, except words the templates and non-PHI word
  lists use as ordinary words: "Will", "Foley", "Down");
- the patient's other identity strings: address, city, employer, hospitals, ids, e-mail, phone;
- PHI shapes: weekday and month names, numeric dates, ages ("45 yo"), e-mails, web and IP
  addresses, phone and social security numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from deid_core.text.calendar_words import calendar_words
from deid_core.training.synth.identity import Patient
from deid_core.training.synth.lexicon import lexicon, words
from deid_core.training.synth.notetypes import note_types
from deid_core.training.synth.template import Slot

# Word lists of the lexicon whose entries are non-PHI text (their words are ordinary words).
NONPHI_LISTS = ("lists.meds", "lists.units_dose", "lists.routes", "lists.diagnoses", "lists.procedures",
                "lists.symptoms", "lists.labs", "lists.rad_findings", "lists.device_kinds", "lists.vehicle_kinds",
                "lists.units", "lists.credentials", "lists.services", "lists.titles_male", "lists.titles_female",
                "lists.relations_male", "lists.relations_female", "ambiguous.phrases")
# Words the pronoun and sex fillers print.
FILLER_WORDS = ("he", "she", "his", "her", "him", "man", "woman", "male", "female", "mr", "ms", "mrs")
_WORD = re.compile(r"[^\W\d_]+")
MONTHS_CHECKED = tuple(m.lower() for m in calendar_words().months if m != "May")  # "may" is an ordinary word
SHAPES = {
    "weekday": r"(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
    "month": r"(?i)\b(?:" + "|".join(MONTHS_CHECKED) + r")\b",
    "date": r"(?<![\d./xX])\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})(?![\d/.%])|\b(?:19|20)\d\d-\d\d-\d\d\b",
    "age": r"(?i)\b\d{1,3}(?:-year-old|\s?y/?o\b|\s?y\.o\.|\s?yrs? old\b| years old\b)",
    "email": r"[\w.+-]+@[\w-]+\.[\w.]+",
    "url": r"(?i)\bhttps?://\S+|\bwww\.\S+",
    "ip": r"(?<![\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.])",
    "phone": r"(?<!\d)\(?\d{3}\)?[-. ]\d{3}[-. ]\d{4}(?!\d)",
    "ssn": r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)",
}
_SHAPES = {k: re.compile(v) for k, v in SHAPES.items()}


@dataclass(frozen=True, slots=True)
class Finding:
    """PHI-like text outside every gold span: where, why, what (synthetic text only)."""

    start: int
    end: int
    kind: str
    text: str


@lru_cache(maxsize=1)
def nonphi_vocabulary() -> frozenset[str]:
    """Lower-case words the templates (literals and snippets) and non-PHI lists use as ordinary words."""
    vocab: set[str] = set(FILLER_WORDS)
    for fam in note_types():
        templates = [t for alts in fam.parts.values() for t in alts]
        templates += [t for alts, _ in (fam.snippets or {}).values() for t in alts]
        for t in templates:
            for p in t:
                if p.__class__ is str:
                    vocab.update(w.lower() for w in _WORD.findall(p))
    for name in NONPHI_LISTS:
        for entry in words(name):
            vocab.update(w.lower() for w in _WORD.findall(entry))
    for table in ("lookalikes",):
        for entries in lexicon()[table].values():
            for entry in entries:
                vocab.update(w.lower() for w in _WORD.findall(entry))
    return frozenset(vocab)


def _people(p: Patient):
    """Every person of a patient's identity."""
    yield p.person
    yield from (r.person for r in p.relatives)
    for c in (p.attending, p.pcp, *p.consultants, p.resident, *p.nurses):
        yield c.person


def _name_tokens(names: list[str]) -> set[str]:
    """Lower-case word tokens of 3+ letters of names, except ordinary words of the templates."""
    vocab = nonphi_vocabulary()
    return {t for s in names for t in (w.lower() for w in _WORD.findall(s)) if len(t) >= 3 and t not in vocab}


def identity_terms(p: Patient) -> tuple[set[str], set[str]]:
    """(name tokens, whole strings) of a patient's identity to look for outside gold spans."""
    vocab = nonphi_vocabulary()
    tokens = _name_tokens([part for person in _people(p) for part in (person.first, person.last, person.nick)])
    strings = {p.street, p.city, p.employer, p.pharmacy, p.school, p.email, p.ssn, p.member_id, p.account,
               p.drivers_license, p.plate, p.vin, p.device_serial, p.bioid, p.ip, p.zip,
               "".join(c for c in p.mrn if c.isdigit())}
    for h in (p.hospital, p.other_hospital, p.facility):
        strings.update((h.name, h.city, h.department))
        strings.update(x for x in (h.short, h.abbr) if len(x) >= 3 and x.lower() not in vocab)
    for c in (p.attending, p.pcp, *p.consultants, p.resident, *p.nurses):
        strings.update((c.username, c.license))
    strings = {s for s in strings if s and not (len(s.split()) == 1 and s.lower() in vocab)}
    return tokens, strings


def _phone_pattern(num: str) -> str:
    """A pattern matching the last seven digits of a phone number in any separator style."""
    return rf"(?<!\d){num[3:6]}[-. ]?{num[6:]}(?!\d)"


def _names_regex(tokens: set[str]) -> re.Pattern | None:
    """One case-insensitive whole-word pattern for name tokens."""
    if not tokens:
        return None
    alt = "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alt})(?![^\W_])", re.IGNORECASE)


class PatientAudit:
    """The unannotated-PHI check for the notes of one patient (identity patterns compiled once)."""

    def __init__(self, patient: Patient):
        tokens, strings = identity_terms(patient)
        self.tokens = tokens
        self.names = _names_regex(tokens)
        alt = "|".join(re.escape(s) for s in sorted(strings, key=len, reverse=True))
        self.strings = re.compile(rf"(?<![\w])(?:{alt})(?![\w])", re.IGNORECASE)
        phones = [patient.home_phone, patient.cell_phone, patient.work_phone, patient.hospital.phone,
                  patient.other_hospital.phone, patient.facility.phone, *(r.phone for r in patient.relatives)]
        self.phones = re.compile("|".join(_phone_pattern(n) for n in phones))

    def check(self, text: str, spans) -> list[Finding]:
        """PHI-like text of a note found outside all of its gold spans (empty when the note is clean)."""
        covered = sorted((s.start, s.end) for s in spans)
        found: list[Finding] = []

        def scan(kind: str, pattern: re.Pattern | None) -> None:
            if pattern is None:
                return
            for m in pattern.finditer(text):
                a, b = m.span()
                if not any(s < b and a < e for s, e in covered):
                    found.append(Finding(a, b, kind, m.group()))

        extra = _name_tokens([text[s.start:s.end] for s in spans if s.label in ("PATIENT", "DOCTOR")]) - self.tokens
        scan("name", self.names)
        scan("name", _names_regex(extra))
        scan("identity", self.strings)
        scan("phone", self.phones)
        for kind, pattern in _SHAPES.items():
            scan(kind, pattern)
        return sorted(found, key=lambda f: f.start)


def unannotated(text: str, spans, patient: Patient) -> list[Finding]:
    """PHI-like text of one note found outside all of its gold spans (see PatientAudit)."""
    return PatientAudit(patient).check(text, spans)


def audit_corpus(notes, seed: int) -> list[tuple[str, Finding]]:
    """(note_id, finding) for every unannotated PHI-like string of generated notes of a seed."""
    from deid_core.training.synth.generate import patient_identity

    audits: dict[str, PatientAudit] = {}
    out: list[tuple[str, Finding]] = []
    for n in notes:
        a = audits.get(n.patient_id)
        if a is None:
            a = audits[n.patient_id] = PatientAudit(patient_identity(seed, int(n.patient_id[1:]))[1])
        out.extend((n.note_id, f) for f in a.check(n.text, n.spans))
    return out


def slot_labels_used() -> frozenset[str]:
    """The PHI labels some template or snippet writes (for coverage checks)."""
    out: set[str] = set()
    for fam in note_types():
        for alts in list(fam.parts.values()) + [a for a, _ in (fam.snippets or {}).values()]:
            for t in alts:
                out.update(p.name for p in t if p.__class__ is Slot and p.phi)
    return frozenset(out)
