"""Non-PHI filler slots ({bp}, {dose}, {score}, {epo}...): clinical text and look-alikes of PHI that are not PHI."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from deid_core.training.synth.lexicon import lexicon, words

if TYPE_CHECKING:
    from deid_core.training.synth.values import NoteValues

Filler = Callable[["NoteValues"], str]


def _dose(v: NoteValues) -> str:
    """A non-PHI medication dose ("metoprolol 25 mg po")."""
    r = v.rng
    return (f"{r.choice(words('lists.meds'))} {r.choice((5, 10, 12.5, 20, 25, 40, 50, 81, 100, 250, 500, 1000))} "
            f"{r.choice(words('lists.units_dose'))} {r.choice(words('lists.routes'))}")


def _lab(v: NoteValues) -> str:
    """A non-PHI lab value ("K 4.1")."""
    r = v.rng
    return f"{r.choice(words('lists.labs'))} {r.choice((r.randint(1, 140), round(r.uniform(0.5, 45), 1)))}"


def _relation(k: int) -> Filler:
    """The relation word of the note's k-th relative (1: the note's relative)."""
    return lambda v: v.relative_n(k).relation


def _pron(male: str, female: str) -> Filler:
    """A filler giving the word for the patient's sex."""
    return lambda v: male if v.p.person.sex == "M" else female


def _pick(list_name: str) -> Filler:
    """A filler drawing one entry of a lexicon list."""
    return lambda v: v.rng.choice(words(list_name))


def _lookalike(v: NoteValues) -> str:
    """Any non-PHI look-alike: an eponym, device model, score, code, duration or quantity."""
    kind = v.rng.choice(("eponyms", "device_models", "scores", "codes", "durations", "rx_qty", "exam_findings",
                         "lines", "anatomy", "body", "vent_settings", "cardiac"))
    return v.rng.choice(words(f"lookalikes.{kind}"))


FILLERS: dict[str, Filler] = {
    "bp": lambda v: f"{v.rng.randint(85, 185)}/{v.rng.randint(40, 105)}",
    "hr": lambda v: str(v.rng.randint(48, 135)),
    "rr": lambda v: str(v.rng.randint(10, 32)),
    "temp": lambda v: f"{v.rng.uniform(96.5, 103.2):.1f}",
    "sat": lambda v: f"{v.rng.randint(86, 100)}%",
    "dose": _dose,
    "med": _pick("lists.meds"),
    "dx": _pick("lists.diagnoses"),
    "proc": _pick("lists.procedures"),
    "symptom": _pick("lists.symptoms"),
    "finding": _pick("lists.rad_findings"),
    "lab": _lab,
    "labs": lambda v: ", ".join(_lab(v) for _ in range(v.rng.randint(2, 5))),
    "abg": lambda v: f"{v.rng.uniform(7.21, 7.52):.2f}/{v.rng.randint(28, 65)}/{v.rng.randint(55, 160)}",
    "strength": lambda v: f"{v.rng.randint(3, 5)}/5",
    "ratio": lambda v: v.rng.choice(("1:1", "1:2", "1:3", "2:1")),
    "time": lambda v: f"{v.rng.randint(0, 23):02d}{v.rng.choice(('00', '00', '15', '30', '45'))}",
    "clock": _pick("lookalikes.times"),
    "times": lambda v: f"x{v.rng.randint(1, 4)}",
    "n": lambda v: str(v.rng.randint(2, 9)),
    "frac": lambda v: f"{v.rng.randint(1, 3)}/{v.rng.randint(4, 10)}",
    "pain": lambda v: f"{v.rng.randint(0, 10)}/10",
    "vent": lambda v: f"{v.rng.choice((400, 450, 500, 550, 600, 700))}x{v.rng.randint(10, 20)}",
    "ps": lambda v: f"{v.rng.choice((5, 8, 10, 12, 15))}/{v.rng.choice((5, 5, 8, 10))}",
    "weight": lambda v: f"{v.rng.uniform(45, 140):.1f}",
    "amb": lambda v: v.rng.choice(lexicon()["ambiguous"]["phrases"]),
    "epo": _pick("lookalikes.eponyms"),
    "model": _pick("lookalikes.device_models"),
    "score": _pick("lookalikes.scores"),
    "code": _pick("lookalikes.codes"),
    "version": _pick("lookalikes.versions"),
    "dur": _pick("lookalikes.durations"),
    "rx": _pick("lookalikes.rx_qty"),
    "exam": _pick("lookalikes.exam_findings"),
    "line": _pick("lookalikes.lines"),
    "spine": _pick("lookalikes.anatomy"),
    "ob": _pick("lookalikes.ob"),
    "body": _pick("lookalikes.body"),
    "ventset": _pick("lookalikes.vent_settings"),
    "vision": _pick("lookalikes.vision"),
    "intake": _pick("lookalikes.intake"),
    "cardiac": _pick("lookalikes.cardiac"),
    "shift": _pick("lookalikes.shifts"),
    "look": _lookalike,
    "relation": _relation(1),
    "relation2": _relation(2),
    "relation3": _relation(3),
    "device_kind": lambda v: v.p.device_kind,
    "vehicle_kind": _pick("lists.vehicle_kinds"),
    "unit": _pick("lists.units"),
    "cred": _pick("lists.credentials"),
    "svc": _pick("lists.services"),
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
