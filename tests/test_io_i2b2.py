"""i2b2 XML reader/writer: exact text round trip (CDATA, "]]>", \\r), labels, errors."""

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.io.corpus import METADATA_FILE, Corpus
from deid_core.io.i2b2 import read_i2b2, write_i2b2
from deid_core.notes import Note
from deid_core.spans import Span

SAMPLE = """<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[
Record date: 2090-01-02

Mr. Oakes, 67, seen at Fernwood & Co.
]]></TEXT>
<TAGS>
<DATE id="P0" start="14" end="24" text="2090-01-02" TYPE="DATE" comment="" />
<NAME id="P1" start="30" end="35" text="Oakes" TYPE="PATIENT" comment="" />
<AGE id="P2" start="37" end="39" text="67" TYPE="AGE" comment="" />
<LOCATION id="P3" start="49" end="62" text="Fernwood &amp; Co" TYPE="ORGANIZATION" comment="" />
</TAGS>
</deIdi2b2>
"""


def test_reads_the_i2b2_layout(tmp_path):
    (tmp_path / "110-01.xml").write_text(SAMPLE, encoding="utf-8")
    corpus = read_i2b2(tmp_path)
    [note] = corpus.notes
    assert note.note_id == "110-01" and note.text.startswith("\nRecord date")
    got = [(note.text[s.start:s.end], s.label) for s in corpus.gold["110-01"]]
    assert got == [("2090-01-02", "DATE"), ("Oakes", "PATIENT"), ("67", "AGE"), ("Fernwood & Co", "ORGANIZATION")]
    assert read_i2b2(tmp_path / "110-01.xml").gold == corpus.gold


def test_round_trip_tricky_text_and_metadata(tmp_path):
    text = "Pt ]]> Lee\r\nline2\rcr <b>&amp; \"q\" ]]]]> ]]\r\n"
    note = Note("7-1", text, patient_id="7", note_date=dt.date(2020, 3, 4), known_phi=(("LEE", "PATIENT"),))
    corpus = Corpus([note, Note("7-2", "")], {"7-1": [Span(7, 10, "PATIENT"), Span(23, 28, "HOSPITAL")]})
    write_i2b2(corpus, tmp_path)
    assert "&#13;" in (tmp_path / "7-1.xml").read_text(encoding="utf-8")
    back = read_i2b2(tmp_path)
    assert back.notes == corpus.notes
    assert {k: [(s.start, s.end, s.label) for s in v] for k, v in back.gold.items()} == \
        {"7-1": [(7, 10, "PATIENT"), (23, 28, "HOSPITAL")]}


def test_no_sidecar_without_metadata(tmp_path):
    write_i2b2(Corpus([Note("a", "x")], {}), tmp_path)
    assert not (tmp_path / METADATA_FILE).exists()
    assert read_i2b2(tmp_path).notes == [Note("a", "x")]


@pytest.mark.parametrize("tag, message", [
    ('<NAME id="P0" start="0" end="3" text="" TYPE="SPOUSE" comment="" />', "unknown PHI label"),
    ('<NAME id="P0" start="0" end="99" text="" TYPE="PATIENT" comment="" />', "outside text"),
    ('<NAME id="P0" start="x" end="3" text="" TYPE="PATIENT" comment="" />', "integers"),
])
def test_bad_tags_name_file_and_tag(tmp_path, tag, message):
    (tmp_path / "n.xml").write_text(f"<deIdi2b2><TEXT><![CDATA[Lee]]></TEXT><TAGS>{tag}</TAGS></deIdi2b2>")
    with pytest.raises(ValueError, match=message) as exc:
        read_i2b2(tmp_path)
    assert "n.xml" in str(exc.value) and "P0" in str(exc.value)


def test_unwritable_characters_and_bad_xml(tmp_path):
    with pytest.raises(ValueError, match="U\\+0000"):
        write_i2b2(Corpus([Note("a", "x\x00y")], {}), tmp_path / "out")
    (tmp_path / "bad.xml").write_text("<deIdi2b2><TEXT>")
    with pytest.raises(ValueError, match="bad.xml"):
        read_i2b2(tmp_path)


XML_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\ufffe\uffff",
                          max_codepoint=0x10FFFF).filter(lambda c: c in "\t\n\r" or ord(c) >= 0x20)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(XML_CHARS, st.sampled_from(["]]>", "\r", "\r\n", "]", "&#13;"])), min_size=1)
       .map("".join), st.data())
def test_round_trip_property(tmp_path_factory, text, data):
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    folder = tmp_path_factory.mktemp("i2b2")
    write_i2b2(Corpus([Note("n", text)], {"n": [Span(a, b, "CITY", "gold")]}), folder)
    back = read_i2b2(folder)
    assert back.notes[0].text == text
    assert back.gold == {"n": [Span(a, b, "CITY", "gold")]}
