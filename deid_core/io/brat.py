"""Reader and writer for BRAT standoff: <note_id>.txt (exact text) + <note_id>.ann entity lines.

    T1<TAB>LABEL START END<TAB>surface          one span
    T2<TAB>LABEL S1 E1;S2 E2<TAB>surface        discontinuous: one span per fragment

Offsets are str indices into the .txt read without newline translation. Other annotation
lines (relations, attributes, notes, comments) are ignored.
"""

from __future__ import annotations

from pathlib import Path

from deid_core.io.corpus import Corpus, apply_metadata, write_metadata
from deid_core.notes import Note
from deid_core.spans import Span, sort_spans
from deid_core.taxonomy import normalize_label

# Anything a line splitter might break on is written as a space in the (informational) surface.
_SURFACE_ESCAPES = str.maketrans(dict.fromkeys("\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029", " "))


def parse_ann(ann: str, text_length: int, where: str) -> list[Span]:
    """Spans of a .ann file's text-bound (T) lines; errors name `where` and the line number."""
    spans: list[Span] = []
    for line_no, line in enumerate(ann.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.startswith("T"):
            continue
        fields = line.split("\t")
        head = fields[1].split(" ", 1) if len(fields) >= 2 else []
        if len(head) != 2:
            raise ValueError(f"{where}:{line_no}: expected 'T<n>\\tLABEL START END\\tsurface'")
        try:
            label = normalize_label(head[0])
        except KeyError as exc:
            raise ValueError(f"{where}:{line_no}: {exc.args[0]}") from None
        for fragment in head[1].split(";"):
            try:
                start, end = (int(x) for x in fragment.split())
            except ValueError:
                raise ValueError(f"{where}:{line_no}: bad offsets {fragment!r}") from None
            if not 0 <= start < end <= text_length:
                raise ValueError(f"{where}:{line_no}: span [{start}, {end}) outside text of length {text_length}")
            spans.append(Span(start, end, label, "gold"))
    return sort_spans(spans)


def read_brat(folder: str | Path) -> Corpus:
    """Every <id>.txt of a folder (file-name order) with its <id>.ann (absent = no PHI) and metadata."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    files = sorted(folder.glob("*.txt"))
    if not files:
        raise ValueError(f"{folder}: no .txt files (expected BRAT standoff .txt + .ann)")
    notes, gold = [], {}
    for txt in files:
        with open(txt, encoding="utf-8", newline="") as fh:
            text = fh.read()
        ann_path = txt.with_suffix(".ann")
        if ann_path.is_file():
            with open(ann_path, encoding="utf-8", newline="") as fh:
                spans = parse_ann(fh.read(), len(text), str(ann_path))
            if spans:
                gold[txt.stem] = spans
        notes.append(Note(txt.stem, text))
    return Corpus(apply_metadata(notes, folder), gold)


def to_ann(text: str, spans: list[Span]) -> str:
    """The .ann lines of one note (surface tabs/line breaks written as spaces; offsets rule)."""
    return "".join(
        f"T{i}\t{s.label} {s.start} {s.end}\t{text[s.start:s.end].translate(_SURFACE_ESCAPES)}\n"
        for i, s in enumerate(sort_spans(spans), 1)
    )


def write_brat(corpus: Corpus, folder: str | Path) -> None:
    """Write <note_id>.txt and <note_id>.ann per note (plus the metadata sidecar when notes carry it)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for note in corpus.notes:
        if "/" in note.note_id or note.note_id in ("", ".", ".."):
            raise ValueError(f"note_id {note.note_id!r} cannot be a file name")
        with open(folder / f"{note.note_id}.txt", "w", encoding="utf-8", newline="") as fh:
            fh.write(note.text)
        with open(folder / f"{note.note_id}.ann", "w", encoding="utf-8", newline="") as fh:
            fh.write(to_ann(note.text, corpus.gold.get(note.note_id, [])))
    write_metadata(corpus.notes, folder)
