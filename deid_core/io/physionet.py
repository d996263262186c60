"""Reader and writer for the PhysioNet deid format: id.text records + id-phi.phrase gold lines."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import regex

from deid_core.config import conf_file
from deid_core.io.corpus import Corpus
from deid_core.notes import Note
from deid_core.spans import Span, sort_spans, validate_spans

# Record markers of id.text (kept as names so the repository holds no literal record header).
RECORD_START, RECORD_END, FIELD_SEP = "START_OF_RECORD", "END_OF_RECORD", "||||"
_RECORD_RE = regex.compile(
    rf"{RECORD_START}=([^|]+)\|{{4}}([^|]+)\|{{4}}\n(.*?)\|{{4}}{RECORD_END}", regex.S
)

__all__ = ["Corpus", "category_map", "note_id", "read_patients", "read_physionet", "write_physionet"]


def note_id(patient: str, note: str) -> str:
    """The project's note_id for a PhysioNet (patient, note) pair."""
    return f"{patient}-{note}"


def category_map() -> dict[str, str]:
    """PhysioNet category -> taxonomy label (conf/physionet_labels.toml [read])."""
    return dict(conf_file("physionet_labels.toml")["read"])


def label_categories() -> tuple[dict[str, str], str]:
    """Taxonomy label -> PhysioNet category for writing, and the category of labels not listed."""
    data = conf_file("physionet_labels.toml")
    return dict(data["write"]), str(data["write_other"])


def read_patients(path: Path) -> dict[str, tuple[tuple[str, str], ...]]:
    """patients.tsv -> patient_id -> known PHI pairs ((first, PATIENT), (last, PATIENT))."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    if not path.is_file():
        return out
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            names = [row.get("first_name") or "", row.get("last_name") or ""]
            out[row["patient_id"]] = tuple((n, "PATIENT") for n in names if n.strip())
    return out


def read_physionet(folder: str | Path, *, with_metadata: bool = True) -> Corpus:
    """Read id.text, id-phi.phrase and (optionally) patients.tsv from `folder`."""
    folder = Path(folder)
    text_path = folder / "id.text"
    if not text_path.is_file():
        raise FileNotFoundError(f"{folder}: no id.text (expected the PhysioNet deid format)")
    raw = text_path.read_text(encoding="utf-8")
    meta = read_patients(folder / "patients.tsv") if with_metadata else {}
    notes = [
        Note(note_id(p, n), text, patient_id=p, known_phi=meta.get(p, ()))
        for p, n, text in _RECORD_RE.findall(raw)
    ]
    gold: dict[str, list[Span]] = defaultdict(list)
    cmap = category_map()
    phrase = folder / "id-phi.phrase"
    if phrase.is_file():
        for line_no, line in enumerate(phrase.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split(" ", 5)
            if len(parts) < 5 or parts[4] not in cmap:
                raise ValueError(f"{phrase}:{line_no}: expected '<patient> <note> <start> <end> <Category> <text>'")
            gold[note_id(parts[0], parts[1])].append(Span(int(parts[2]), int(parts[3]), cmap[parts[4]], "gold"))
    lengths = {n.note_id: len(n.text) for n in notes}
    for nid, spans in gold.items():
        try:
            validate_spans(spans, lengths.get(nid, 0), allow_overlap=True)
        except ValueError as exc:
            raise ValueError(f"{phrase}: note {nid}: {exc}") from None
    return Corpus(notes, {k: sort_spans(v) for k, v in gold.items()})


def write_physionet(corpus: Corpus, folder: str | Path, category_of_label: dict[str, str] | None = None) -> None:
    """Write notes and gold spans in the PhysioNet format (labels mapped back to its categories)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    back = category_of_label or {}
    default_back, other = label_categories()
    with open(folder / "id.text", "w", encoding="utf-8") as fh:
        for n in corpus.notes:
            p, _, k = n.note_id.partition("-")
            fh.write(f"{RECORD_START}={p}{FIELD_SEP}{k}{FIELD_SEP}\n{n.text}{FIELD_SEP}{RECORD_END}\n")
    with open(folder / "id-phi.phrase", "w", encoding="utf-8") as fh:
        by_id = {n.note_id: n for n in corpus.notes}
        for nid, spans in corpus.gold.items():
            p, _, k = nid.partition("-")
            text = by_id[nid].text
            for s in spans:
                cat = back.get(s.label) or default_back.get(s.label, other)
                fh.write(f"{p} {k} {s.start} {s.end} {cat} {text[s.start:s.end]}\n")
