"""Reader and writer for the 2014 i2b2 / 2016 N-GRID de-identification XML (one file per note).

    <deIdi2b2><TEXT><![CDATA[...]]></TEXT><TAGS>
    <NAME id="P0" start="16" end="26" text="..." TYPE="PATIENT" comment=""/>...</TAGS></deIdi2b2>

Offsets index the TEXT content. Tag names are main categories, TYPE the subtype (the label).
The writer keeps the text exact through any XML parser: "]]>" is split across CDATA sections
and "\\r" (which parsers would turn into "\\n") is written as the character reference &#13;.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import regex

from deid_core.io.corpus import Corpus, apply_metadata, write_metadata
from deid_core.notes import Note
from deid_core.spans import Span, sort_spans
from deid_core.taxonomy import category_of, normalize_label

# Characters XML 1.0 cannot carry at all, not even as character references.
_NOT_XML_RE = regex.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                               "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"})


def read_i2b2_file(path: str | Path) -> tuple[Note, list[Span]]:
    """One note (note_id = file stem) and its gold spans; errors name the file and tag."""
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"{path}: not well-formed XML ({exc})") from None
    text_el = root.find("TEXT")
    if text_el is None:
        raise ValueError(f"{path}: no <TEXT> element (expected i2b2 deIdi2b2 XML)")
    text = text_el.text or ""
    spans: list[Span] = []
    tags = root.find("TAGS")
    for tag in tags if tags is not None else ():
        where = f"{path}: <{tag.tag} id={tag.get('id')!r}>"
        try:
            start, end = int(tag.get("start", "")), int(tag.get("end", ""))
        except ValueError:
            raise ValueError(f"{where}: start/end must be integers") from None
        try:
            label = normalize_label(tag.get("TYPE") or tag.tag)
        except KeyError as exc:
            raise ValueError(f"{where}: {exc.args[0]}") from None
        if not 0 <= start < end <= len(text):
            raise ValueError(f"{where}: span [{start}, {end}) outside text of length {len(text)}")
        spans.append(Span(start, end, label, "gold"))
    return Note(path.stem, text), sort_spans(spans)


def read_i2b2(folder: str | Path) -> Corpus:
    """All *.xml notes of a folder (or one .xml file), in file-name order, plus the metadata sidecar."""
    folder = Path(folder)
    if folder.is_file():
        files, folder = [folder], folder.parent
    elif folder.is_dir():
        files = sorted(folder.glob("*.xml"))
    else:
        raise FileNotFoundError(f"{folder}: no such file or folder")
    if not files:
        raise ValueError(f"{folder}: no .xml files (expected i2b2 deIdi2b2 XML)")
    notes, gold = [], {}
    for f in files:
        note, spans = read_i2b2_file(f)
        notes.append(note)
        if spans:
            gold[note.note_id] = spans
    return Corpus(apply_metadata(notes, folder), gold)


def cdata(text: str) -> str:
    """`text` as CDATA sections that any XML parser reads back exactly."""
    parts = []
    for i, chunk in enumerate(text.split("\r")):
        if i:
            parts.append("&#13;")
        if chunk:
            parts.append("<![CDATA[" + chunk.replace("]]>", "]]]]><![CDATA[>") + "]]>")
    return "".join(parts)


def to_xml(note: Note, spans: list[Span]) -> str:
    """The deIdi2b2 document of one note; ValueError (no text) if XML cannot carry the text."""
    bad = _NOT_XML_RE.search(note.text)
    if bad:
        raise ValueError(f"note {note.note_id}: character U+{ord(bad.group()):04X} at {bad.start()} "
                         "cannot be written in XML 1.0")
    tags = []
    for i, s in enumerate(sort_spans(spans)):
        surface = note.text[s.start:s.end].translate(_ATTR_ESCAPES)
        tags.append(f'<{category_of(s.label)} id="P{i}" start="{s.start}" end="{s.end}" '
                    f'text="{surface}" TYPE="{s.label}" comment="" />')
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT>' + cdata(note.text)
            + "</TEXT>\n<TAGS>\n" + "".join(t + "\n" for t in tags) + "</TAGS>\n</deIdi2b2>\n")


def write_i2b2(corpus: Corpus, folder: str | Path) -> None:
    """Write one <note_id>.xml per note (plus the metadata sidecar when notes carry metadata)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for note in corpus.notes:
        if "/" in note.note_id or note.note_id in ("", ".", ".."):
            raise ValueError(f"note_id {note.note_id!r} cannot be a file name")
        xml = to_xml(note, corpus.gold.get(note.note_id, []))
        with open(folder / f"{note.note_id}.xml", "w", encoding="utf-8", newline="") as fh:
            fh.write(xml)
    write_metadata(corpus.notes, folder)
