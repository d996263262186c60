"""Detect a corpus format from a path and load notes and spans from any format the project reads.

Formats: `parquet` (a notes table, a spans table, or a folder with notes/ and spans/ subfolders
such as a de-identification job's output), `i2b2` (folder of *.xml), `brat` (folder of
*.txt + *.ann), `physionet` (folder with id.text, id-phi.phrase).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq

from deid_core.io.brat import read_brat, write_brat
from deid_core.io.corpus import Corpus
from deid_core.io.i2b2 import read_i2b2, write_i2b2
from deid_core.io.physionet import read_physionet, write_physionet
from deid_core.io.tables import notes_table, read_notes, read_spans, spans_table, write_table
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.taxonomy import normalize_label

FORMATS = ("parquet", "i2b2", "brat", "physionet")
_SPAN_COLUMNS = ("note_id", "start", "end", "label")


def detect_format(path: str | Path) -> str:
    """The format of a file or folder, from its extension or the files it holds."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.is_file():
        if p.suffix == ".parquet":
            return "parquet"
        if p.suffix == ".xml":
            return "i2b2"
        if p.name in ("id.text", "id-phi.phrase"):
            return "physionet"
        raise ValueError(f"{p}: cannot tell the format of this file; give a .parquet or .xml file "
                         f"or a corpus folder ({', '.join(FORMATS)})")
    if (p / "id.text").is_file():
        return "physionet"
    if any(p.rglob("*.parquet")):
        return "parquet"
    if any(p.glob("*.xml")):
        return "i2b2"
    if any(p.glob("*.txt")):
        return "brat"
    raise ValueError(f"{p}: folder holds no corpus this project reads ({', '.join(FORMATS)}: "
                     "*.parquet, *.xml, *.txt + *.ann, or id.text)")


def _folder(path: Path) -> Path:
    """The PhysioNet folder of a path to it or to one of its files."""
    return path.parent if path.is_file() and path.name in ("id.text", "id-phi.phrase") else path


def _parquet_part(path: Path, part: str) -> Path:
    """The notes/ or spans/ (or a synthetic corpus's gold/) subfolder of a Parquet folder, else the path."""
    for name in (part, "gold") if part == "spans" else (part,):
        sub = path / name
        if path.is_dir() and sub.is_dir() and any(sub.rglob("*.parquet")):
            return sub
    return path


def _columns(path: Path) -> list[str]:
    """Column names of a Parquet file or folder, without reading its data."""
    if path.is_file():
        return list(pq.read_schema(path).names)
    if not any(path.rglob("*.parquet")):
        raise ValueError(f"{path}: folder holds no .parquet files")
    return list(ds.dataset(str(path), format="parquet").schema.names)


def _parquet_spans(path: Path) -> dict[str, list[Span]]:
    """Spans of a spans table (or a folder's spans/ part); errors name the missing columns."""
    part = _parquet_part(path, "spans")
    cols = _columns(part)
    missing = [c for c in _SPAN_COLUMNS if c not in cols]
    if missing:
        raise ValueError(f"{part}: not a spans table: missing column(s) {', '.join(missing)} "
                         f"(a spans table has {', '.join(_SPAN_COLUMNS)}); found {', '.join(cols)}")
    return read_spans(part)


def _parquet_notes(path: Path) -> list[Note]:
    """Notes of a notes table (or a folder's notes/ part), refusing a job output's de-identified notes."""
    part = _parquet_part(path, "notes")
    if (path / "_manifest.json").is_file() and part != path:
        raise ValueError(f"{path}: a de-identification job's output; its notes/ hold de-identified "
                         "text that the spans' offsets do not index: give the input notes instead")
    return read_notes(part)


def normalize_spans(spans: dict[str, list[Span]], where: str) -> dict[str, list[Span]]:
    """Spans with labels mapped onto the taxonomy; ValueError names `where` and the unknown label."""
    out: dict[str, list[Span]] = {}
    for nid, ss in spans.items():
        fixed = []
        for s in ss:
            try:
                label = normalize_label(s.label or "")
            except KeyError as exc:
                raise ValueError(f"{where}: note {nid}: {exc.args[0]}") from None
            fixed.append(s if label == s.label else s.with_label(label))
        out[nid] = fixed
    return out


def read_corpus(path: str | Path, fmt: str | None = None) -> Corpus:
    """Notes and gold spans from any supported format (Parquet: the notes/ and spans/ parts present)."""
    p = Path(path)
    fmt = fmt or detect_format(p)
    if fmt == "parquet":
        has_notes = "text" in _columns(_parquet_part(p, "notes"))
        has_spans = all(c in _columns(_parquet_part(p, "spans")) for c in _SPAN_COLUMNS)
        return Corpus(_parquet_notes(p) if has_notes else [],
                      normalize_spans(_parquet_spans(p), str(p)) if has_spans else {})
    readers: dict[str, Callable[[Path], Corpus]] = {
        "i2b2": read_i2b2, "brat": read_brat, "physionet": lambda f: read_physionet(_folder(f))}
    if fmt not in readers:
        raise ValueError(f"unknown corpus format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return readers[fmt](p)


def load_spans(path: str | Path) -> dict[str, list[Span]]:
    """Gold or predicted spans by note_id from any format, labels mapped onto the taxonomy."""
    p = Path(path)
    if detect_format(p) == "parquet":
        return normalize_spans(_parquet_spans(p), str(p))
    return read_corpus(p).gold


def load_notes(path: str | Path) -> list[Note]:
    """Notes (with text) from a notes Parquet or any corpus folder that holds the text."""
    p = Path(path)
    if detect_format(p) == "parquet":
        return _parquet_notes(p)
    return read_corpus(p).notes


def write_corpus(corpus: Corpus, path: str | Path, fmt: str) -> None:
    """Write a corpus in a format: parquet writes notes/part-0.parquet and spans/part-0.parquet."""
    p = Path(path)
    if fmt == "parquet":
        write_table(notes_table(corpus.notes), p / "notes" / "part-0.parquet")
        write_table(spans_table(corpus.gold), p / "spans" / "part-0.parquet")
        return
    writers: dict[str, Callable[[Corpus, Path], None]] = {
        "i2b2": write_i2b2, "brat": write_brat, "physionet": write_physionet}
    if fmt not in writers:
        raise ValueError(f"unknown corpus format {fmt!r}; expected one of {', '.join(FORMATS)}")
    writers[fmt](corpus, p)
