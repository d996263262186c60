"""BRAT standoff reader/writer: exact text, discontinuous spans, ignored lines, errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.io.brat import read_brat, write_brat
from deid_core.io.corpus import Corpus
from deid_core.notes import Note
from deid_core.spans import Span


def write(folder, name, text, ann=None):
    with open(folder / f"{name}.txt", "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    if ann is not None:
        (folder / f"{name}.ann").write_text(ann, encoding="utf-8")


def test_reads_entities_fragments_and_skips_other_lines(tmp_path):
    text = "Dr Lee\r\nsaw Ann Marie Kerr on 3/4."
    ann = ("T1\tDOCTOR 3 6\tLee\n"
           "T2\tPatient 12 15;22 26\tAnn Kerr\n"   # discontinuous, label in another case
           "A1\tNegated T1\n#1\tAnnotatorNotes T1\tnote\nR1\tRel Arg1:T1 Arg2:T2\n"
           "T3\tdate 30 33\t3/4\n")
    write(tmp_path, "n1", text, ann)
    write(tmp_path, "n2", "no phi")          # no .ann: no spans
    corpus = read_brat(tmp_path)
    assert [n.note_id for n in corpus.notes] == ["n1", "n2"]
    assert corpus.notes[0].text == text       # \r\n kept: offsets count it
    assert [(text[s.start:s.end], s.label) for s in corpus.gold["n1"]] == [
        ("Lee", "DOCTOR"), ("Ann", "PATIENT"), ("Kerr", "PATIENT"), ("3/4", "DATE")]
    assert "n2" not in corpus.gold


@pytest.mark.parametrize("line, message", [
    ("T1\tSPOUSE 0 2\tDr", "unknown PHI label"),
    ("T1\tDOCTOR 0 99\tDr", "outside text"),
    ("T1\tDOCTOR 0 x\tDr", "bad offsets"),
    ("T1\tDOCTOR\tDr", "expected"),
])
def test_bad_lines_name_file_and_line(tmp_path, line, message):
    write(tmp_path, "n", "Dr Lee", "T0\tDOCTOR 3 6\tLee\n" + line + "\n")
    with pytest.raises(ValueError, match=message) as exc:
        read_brat(tmp_path)
    assert "n.ann:2" in str(exc.value)


def test_round_trip_with_line_breaks_inside_spans(tmp_path):
    text = "Ann\r\nKerr\x85x\ttab\n"
    corpus = Corpus([Note("a", text, patient_id="p1")], {"a": [Span(0, 9, "PATIENT", "gold"), Span(10, 15, "CITY", "gold")]})
    write_brat(corpus, tmp_path)
    assert (tmp_path / "a.ann").read_text(encoding="utf-8").count("\n") == 2
    assert read_brat(tmp_path) == corpus


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1), st.data())
def test_round_trip_property(tmp_path_factory, text, data):
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    folder = tmp_path_factory.mktemp("brat")
    corpus = Corpus([Note("n", text)], {"n": [Span(a, b, "ZIP", "gold")]})
    write_brat(corpus, folder)
    assert read_brat(folder) == corpus
