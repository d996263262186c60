"""A tiny hand-made annotated corpus for CRF tests (templates + name lists, no real data)."""

from __future__ import annotations

import random

from deid_core.notes import Note
from deid_core.spans import Span

FIRST = ["Anna", "Boris", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas"]
LAST = ["Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinlan", "Rossi"]
HOSP = ["Mercy General", "Lakeside Clinic", "St Olaf Hospital"]
TEMPLATES = [
    "Pt seen by Dr. {last} this am. BP stable, HR 80s.\nPlan: cont lasix.",
    "Daughter {first} called at {phone}, updated on plan of care.",
    "Transferred from {hosp} on {date}. Vitals stable overnight.",
    "Neuro: alert and oriented. Dr. {last} aware of K 3.2, repleted.",
    "Resp: LS clear, sats 95% on 2L NC. Wife {first} {last} at bedside.",
]


def _fill(tpl: str, rng: random.Random) -> tuple[str, list[Span]]:
    values = {"first": (rng.choice(FIRST), "PATIENT"), "last": (rng.choice(LAST), "DOCTOR"),
              "hosp": (rng.choice(HOSP), "HOSPITAL"), "date": (f"{rng.randint(1, 12)}/{rng.randint(1, 28)}", "DATE"),
              "phone": (f"{rng.randint(200, 999)}-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}", "PHONE")}
    if "{first} {last}" in tpl:
        values["last"] = (values["last"][0], "PATIENT")
    out, spans, pos = [], [], 0
    import re

    for m in re.finditer(r"\{(\w+)\}", tpl):
        out.append(tpl[pos:m.start()])
        start = sum(map(len, out))
        val, label = values[m.group(1)]
        out.append(val)
        spans.append(Span(start, start + len(val), label, "gold"))
        pos = m.end()
    out.append(tpl[pos:])
    return "".join(out), spans


def tiny_corpus(n: int = 60, seed: int = 0, patients: int = 12) -> tuple[list[Note], dict[str, list[Span]]]:
    """n notes over `patients` patients, each note 2-3 template sentences."""
    rng = random.Random(seed)
    notes, gold = [], {}
    for i in range(n):
        parts, spans, off = [], [], 0
        for tpl in rng.sample(TEMPLATES, 3):
            text, sp = _fill(tpl, rng)
            spans.extend(Span(s.start + off, s.end + off, s.label, s.source) for s in sp)
            parts.append(text)
            off += len(text) + 1
        nid = f"p{i % patients}-{i}"
        notes.append(Note(nid, "\n".join(parts), patient_id=f"p{i % patients}"))
        gold[nid] = spans
    return notes, gold


def crf_conf(patch: dict | None = None):
    """conf/crf.toml with `patch` (tables) merged over it, checked: the tiny test models' settings."""
    from deid_core.config import conf_file, crf_from_tables, deep_merge

    return crf_from_tables(deep_merge(conf_file("crf.toml"), patch or {}), "test CRF settings")
