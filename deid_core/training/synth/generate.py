"""Corpus generation by blocks of patients: patient i comes from (seed, i) alone, whatever the partitioning.

The notes are split over blocks of BLOCK_SIZE patients; block b gets a fixed share of the notes
(computable from b alone) spread over its patients by per-patient weights, so a partition is
just a range of block ids and the corpus is identical for any number of partitions.

A breadth overlay's part is drawn from its own RNG (breadth_rng: seed, note id, overlay), after the note
is rendered: with overlays, a note is the note without them, then for each overlay whose part it gets,
`sep` and that part (rendered from the note's values so far), in the recipe's order. So adding or removing
an overlay changes no other text, span, note or metadata of the corpus.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace

from deid_core.spans import Span
from deid_core.training.synth.catalog import pick_type, resolve
from deid_core.training.synth.identity import Patient, make_patient
from deid_core.training.synth.lexicon import pools
from deid_core.training.synth.notetypes import NoteType
from deid_core.training.synth.template import render
from deid_core.training.synth.values import NoteValues

BLOCK_SIZE = 32
NOTES_PER_PATIENT = 8


@dataclass(frozen=True, slots=True)
class SynthNote:
    """A generated note with its gold spans and EHR metadata columns (which may be None)."""

    note_id: str
    patient_id: str
    note_date: dt.date
    note_type: str
    text: str
    spans: tuple[Span, ...]
    patient_first_name: str | None
    patient_last_name: str | None
    attending_name: str | None
    family: str = ""


@dataclass(frozen=True)
class Plan:
    """How many notes and patients, the seed, the block layout and the selected template families.

    `include` / `exclude` name note types or families (catalog.resolve); the default is all.
    `breadth` names overlays (conf/synth/breadth/NAME.toml: notetypes.breadth_overlay); default none.
    """

    n_notes: int
    seed: int
    n_patients: int = 0
    block_size: int = BLOCK_SIZE
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    breadth: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.n_notes < 0:
            raise ValueError("the number of notes must be >= 0")
        if self.n_patients <= 0:
            object.__setattr__(self, "n_patients", max(1, math.ceil(self.n_notes / NOTES_PER_PATIENT)))
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))
        object.__setattr__(self, "breadth", tuple(self.breadth))

    @property
    def families(self) -> tuple[str, ...]:
        """The family ids notes are drawn from."""
        return resolve(self.include, self.exclude)

    @property
    def n_blocks(self) -> int:
        """Number of blocks of patients."""
        return max(1, math.ceil(self.n_patients / self.block_size))

    def block_notes(self, b: int) -> int:
        """Notes of block b: an even share of n_notes (the first blocks may get one more)."""
        nb = self.n_blocks
        return (b + 1) * self.n_notes // nb - b * self.n_notes // nb

    def block_patients(self, b: int) -> range:
        """Patient indices of block b."""
        return range(b * self.block_size, min((b + 1) * self.block_size, self.n_patients))


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any parts (stable across processes and Python hash seeds)."""
    return int.from_bytes(hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest(), "big")


def patient_rng(seed: int, index: int) -> random.Random:
    """The RNG of patient `index` (identity and all its notes)."""
    return random.Random(derive_seed(seed, "patient", index))


def breadth_rng(seed: int, note_id: str, key: str) -> random.Random:
    """The RNG of overlay part `key` ("breadth.NAME") in note `note_id`: independent of the note's own draws."""
    return random.Random(derive_seed(seed, key, note_id))


def note_counts(plan: Plan, b: int) -> list[int]:
    """Notes per patient of block b: the block's notes apportioned by per-patient weights."""
    idx = plan.block_patients(b)
    total = plan.block_notes(b)
    weights = [random.Random(derive_seed(plan.seed, "weight", i)).lognormvariate(0.0, 0.8) for i in idx]
    wsum = math.fsum(weights)
    quotas = [total * w / wsum for w in weights]
    counts = [int(q) for q in quotas]
    rest = total - sum(counts)
    order = sorted(range(len(idx)), key=lambda k: (-(quotas[k] - counts[k]), k))
    for k in order[:rest]:
        counts[k] += 1
    return counts


def _metadata(p: Patient) -> tuple[str | None, str | None, str | None]:
    """EHR metadata columns: canonical names, sometimes upper case or missing."""
    a, b, c = p.metadata_style
    first, last = p.person.first, p.person.last
    if a < 30:
        first, last = first.upper(), last.upper()
    doc = p.attending.person
    att = None if c < 12 else (f"{doc.last}, {doc.first}" if c < 50 else
                               f"{doc.first} {doc.last}" if c < 85 else f"{doc.first} {doc.last}".upper())
    return (None if b < 8 else first), (None if 8 <= b < 14 else last), att


def patient_identity(seed: int, index: int) -> tuple[random.Random, Patient]:
    """Patient `index` of a seed and the RNG positioned after drawing it (its notes continue from there)."""
    rng = patient_rng(seed, index)
    return rng, make_patient(rng, pools(seed), index)


def patient_notes(seed: int, index: int, n_notes: int, surfaces: list[list[str]] | None = None,
                  families: tuple[str, ...] | None = None, breadth: tuple[str, ...] = ()) -> Iterator[SynthNote]:
    """The notes of patient `index`, generated from (seed, index) alone, from the given families (default all)
    with the named breadth overlays.

    With a `surfaces` list, each note's recorded span surfaces are appended to it (for tests).
    """
    if n_notes <= 0:
        return
    rng, patient = patient_identity(seed, index)
    pool = pools(seed)
    pid = f"P{index:07d}"
    first, last, att = _metadata(patient)
    day = patient.first_date
    for k in range(n_notes):
        if k:
            day = day + dt.timedelta(days=rng.choice((0, 0, 1, 1, 2, 3, 7, 14, 30, 90, 180)))
        ntype = pick_type(rng, families, breadth)
        pieces = ntype.compose(rng)
        values = NoteValues(rng, patient, day, k, pool)
        case = ntype.case(rng)
        rec: list[str] | None = [] if surfaces is not None else None
        text, spans = render(pieces, values, rng, case=case, glue_p=ntype.glue, sep=ntype.sep, surfaces=rec)
        note_id = f"{pid}-{k:03d}"
        for key in ntype.breadth:
            text, spans = _append_breadth(ntype, key, breadth_rng(seed, note_id, key), values, case, text, spans, rec)
        if surfaces is not None:
            surfaces.append(rec)
        yield SynthNote(note_id, pid, day, ntype.name, text, tuple(spans), first, last, att, ntype.family)


def _append_breadth(ntype: NoteType, key: str, orng: random.Random, values: NoteValues, case: str, text: str,
                    spans: list[Span], rec: list[str] | None) -> tuple[str, list[Span]]:
    """The note with overlay part `key` appended (after `sep`) when its own draw includes it, else unchanged."""
    pieces = ntype.compose_breadth(key, orng)
    if not pieces:
        return text, spans
    part, part_spans = render(pieces, values.fork(orng), orng, case=case, glue_p=ntype.glue, sep=ntype.sep,
                              surfaces=rec)
    head = text + ntype.sep if text else ""
    off = len(head)
    return head + part, [*spans, *(replace(s, start=s.start + off, end=s.end + off) for s in part_spans)]


def block_notes(plan: Plan, b: int, surfaces: list[list[str]] | None = None) -> Iterator[SynthNote]:
    """All notes of block b, patients in index order."""
    fams = plan.families
    for i, n in zip(plan.block_patients(b), note_counts(plan, b), strict=True):
        yield from patient_notes(plan.seed, i, n, surfaces, fams, plan.breadth)


def generate(n_notes: int, seed: int = 0, n_patients: int = 0, surfaces: list[list[str]] | None = None,
             include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
             breadth: tuple[str, ...] = ()) -> list[SynthNote]:
    """A whole corpus in memory (local use; Spark jobs call block_notes per block)."""
    plan = Plan(n_notes, seed, n_patients, include=include, exclude=exclude, breadth=breadth)
    return [n for b in range(plan.n_blocks) for n in block_notes(plan, b, surfaces)]
