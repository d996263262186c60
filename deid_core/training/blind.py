"""The PhysioNet split by patient (conf/evaluation/physionet_split.tsv): `tune` patients for
development, `blind` patients scored only.

The blind part lives in a BlindCorpus, whose only results are corpus totals: it has no method
that returns a note, a span, a per-note score or a miss, and its repr shows counts only. That is
the structural guarantee that nobody reads (or tunes on) blind notes through this code.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from deid_core.config import Config, ConfigError, conf_path
from deid_core.engine.pipeline import Deidentifier
from deid_core.io.corpus import Corpus
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.corpus_eval import View, aggregate, run_pipeline
from deid_core.training.evaluation.readable import Readable

PARTS = ("tune", "blind")
SPLIT_FILE = "evaluation/physionet_split.tsv"


def read_tsv_split(path: str | Path, key: str, parts: Sequence[str]) -> dict[str, str]:
    """A two-column split file (`key`, `part`; '#' comments) as {key: part}; errors name the file and line."""
    p = conf_path(path)
    if not p.is_file():
        raise ConfigError(f"split file not found: {p}")
    rows = [line for line in p.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]
    out: dict[str, str] = {}
    for i, row in enumerate(csv.DictReader(rows, delimiter="\t"), 2):
        if row.get(key) is None or row.get("part") not in parts:
            raise ConfigError(f"{p}: row {i}: expected '{key}<TAB>part' with part one of {', '.join(parts)}")
        out[row[key]] = row["part"]
    return out


def split_corpus(corpus: Corpus, split: Mapping[str, str]) -> tuple[list[Note], dict[str, list[Span]], BlindCorpus]:
    """(tune notes, tune gold, blind part) of a corpus; every patient must be in the split."""
    missing = sorted({n.patient_id or "" for n in corpus.notes} - set(split))
    if missing:
        raise ConfigError(f"{len(missing)} patient(s) of the corpus are not in the split file, e.g. {missing[0]!r}")
    tune = [n for n in corpus.notes if split[n.patient_id or ""] == "tune"]
    blind = [n for n in corpus.notes if split[n.patient_id or ""] == "blind"]
    tune_gold = {n.note_id: list(corpus.gold.get(n.note_id, [])) for n in tune}
    return tune, tune_gold, BlindCorpus(blind, {n.note_id: list(corpus.gold.get(n.note_id, [])) for n in blind})


class BlindCorpus:
    """Blind notes and their gold: evaluated as a whole, never shown (see the module docstring)."""

    __slots__ = ("_notes", "_gold")

    def __init__(self, notes: Sequence[Note], gold: Mapping[str, list[Span]]) -> None:
        self._notes = list(notes)
        self._gold = dict(gold)

    def __repr__(self) -> str:
        return f"BlindCorpus({len(self._notes)} notes)"

    def size(self) -> dict[str, int]:
        """Notes, patients and gold spans (counts only)."""
        return {"notes": len(self._notes), "patients": len({n.patient_id for n in self._notes}),
                "gold_spans": sum(len(v) for v in self._gold.values())}

    def evaluate(self, deid: Deidentifier, readable: Readable, *, view: View | None = None) -> dict:
        """The full pipeline over the blind notes, reduced to corpus totals (corpus_eval.aggregate)."""
        pred, outputs = run_pipeline(deid, self._notes)
        return aggregate(self._notes, self._gold, pred, outputs, readable, view=view)

    def reinserted(self, kind: str, key: bytes, config: Config) -> BlindCorpus:
        """The blind notes with new PHI strings of `kind` (training.reinsert, drawn with `config`), still blind."""
        from deid_core.training.reinsert import reinsert

        notes, gold = reinsert(self._notes, self._gold, kind, key, config)
        return BlindCorpus(notes, gold)

    def first_patients(self, n: int) -> BlindCorpus:
        """The notes of the first `n` blind patients by id (the quick mode's tiny blind part)."""
        keep = set(sorted({p.patient_id for p in self._notes}, key=_id_order)[:n])
        notes = [p for p in self._notes if p.patient_id in keep]
        return BlindCorpus(notes, {p.note_id: self._gold.get(p.note_id, []) for p in notes})


def _id_order(pid: str | None) -> tuple:
    s = pid or ""
    return (0, int(s), s) if s.isdigit() else (1, 0, s)
