"""bench job / bench worker --corpus: real notes are copied outside the repository, privately, and removed."""

from __future__ import annotations

import stat

import pyarrow.parquet as pq

from benchmarks.job import bench_input, corpus_input, drop_corpus_input
from deid_core.io.physionet import Corpus, write_physionet
from deid_core.notes import Note


def _corpus(folder):
    notes = ["Pt seen by Dr. Quillfeather today.", "Call Ms. Vantrobe at home."]  # invented
    write_physionet(Corpus([Note(f"7-{i}", t, patient_id="7") for i, t in enumerate(notes, 1)], {}), folder)
    (folder / "patients.tsv").write_text("patient_id\tfirst_name\tlast_name\n7\tOrla\tVantrobe\n", encoding="utf-8")
    return folder


def test_corpus_copy_is_private_and_dropped(tmp_path):
    work = tmp_path / "work"
    path = corpus_input(5, _corpus(tmp_path / "corpus"), work)
    assert pq.read_table(path).num_rows == 5
    assert stat.S_IMODE(work.stat().st_mode) == 0o700  # other users of the machine cannot read the notes
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
    drop_corpus_input(path)
    assert not path.exists() and list(work.iterdir()) == []


def test_template_input_is_not_dropped(tmp_path):
    inp, _, what = bench_input(3, None)
    drop_corpus_input(inp)  # only a --corpus copy is removed
    assert inp.exists() and what == "template notes"
