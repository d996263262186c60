"""Synthetic corpus outputs: `deid synth` Parquet tables, Corpus conversion, the Spark job's partition independence."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main
from deid_core.io.tables import read_notes, read_spans
from deid_core.spans import trim_span
from deid_core.training.synth import generate
from deid_core.training.synth.output import NAME_COLUMNS, NOTES_SCHEMA, to_corpus

ROOT = Path(__file__).resolve().parent.parent


def test_cli_writes_parquet_contract(tmp_path):
    out = tmp_path / "corpus"
    assert main(["synth", "--notes", "300", "--seed", "4", "--out", str(out), "--patients", "20"]) == 0
    table = pq.read_table(out / "notes")
    assert table.schema.names == NOTES_SCHEMA.names and table.num_rows == 300
    assert len(set(table.column("patient_id").to_pylist())) <= 20
    cols = dict(c.split(":") if ":" in c else (c, "PATIENT") for c in NAME_COLUMNS.split(","))
    notes = {n.note_id: n for n in read_notes(out / "notes", cols)}
    gold = read_spans(out / "gold")
    assert len(notes) == 300 and gold
    for nid, spans in gold.items():
        text = notes[nid].text
        assert all(trim_span(s, text) == s for s in spans)
    assert any(lab == "DOCTOR" for n in notes.values() for _, lab in n.known_phi)


def test_cli_rejects_negative_counts(tmp_path, capsys):
    assert main(["synth", "--notes", "-1", "--out", str(tmp_path)]) == 2
    assert "--notes" in capsys.readouterr().err


def test_to_corpus_keeps_gold_and_metadata():
    notes = generate(50, seed=9)
    corpus = to_corpus(notes)
    assert [n.note_id for n in corpus.notes] == [n.note_id for n in notes]
    assert sum(len(v) for v in corpus.gold.values()) == sum(len(n.spans) for n in notes)
    assert all(v for n in corpus.notes for v, _ in n.known_phi)


@pytest.mark.spark
def test_job_output_independent_of_partitions(spark, tmp_path):
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    import sys

    sys.path.insert(0, str(ROOT))
    from deid_spark.jobs.synthesize import build, write

    outs = []
    for k in (1, 4):
        df, plan = build(spark, 400, 21, 200, k, exclude=("radiology", "progress.soap"))
        assert df.rdd.getNumPartitions() == k
        out = tmp_path / f"k{k}"
        write(df, str(out))
        outs.append(out)
    n1 = pq.read_table(outs[0] / "notes").sort_by("note_id")
    n4 = pq.read_table(outs[1] / "notes").sort_by("note_id")
    assert n1.num_rows == 400 and n1.equals(n4)
    g1 = pq.read_table(outs[0] / "gold").sort_by([("note_id", "ascending"), ("start", "ascending")])
    g4 = pq.read_table(outs[1] / "gold").sort_by([("note_id", "ascending"), ("start", "ascending")])
    assert g1.num_rows > 1000 and g1.equals(g4)
    assert not {"radiology"} & set(n1.column("note_type").to_pylist())
    assert "progress.soap" not in set(n1.column("family").to_pylist())
    # the Spark output equals the local generator's, so workers imported this tree
    local = generate(400, seed=21, n_patients=200, exclude=("radiology", "progress.soap"))
    assert n1.column("text").to_pylist() == [n.text for n in sorted(local, key=lambda n: n.note_id)]


@pytest.mark.parametrize("fmt", ["i2b2", "brat"])
def test_cli_writes_i2b2_and_brat_that_read_back_exactly(tmp_path, fmt):
    from deid_core.io.brat import read_brat
    from deid_core.io.i2b2 import read_i2b2

    out = tmp_path / fmt
    assert main(["synth", "--notes", "60", "--seed", "8", "--out", str(out), "--format", fmt]) == 0
    back = (read_i2b2 if fmt == "i2b2" else read_brat)(out)
    want = {n.note_id: n for n in generate(60, seed=8)}
    assert {n.note_id for n in back.notes} == set(want)
    for note in back.notes:
        assert note.text == want[note.note_id].text
        got = [(s.start, s.end, s.label) for s in back.gold.get(note.note_id, [])]
        assert got == [(s.start, s.end, s.label) for s in want[note.note_id].spans]


def test_job_options_select_families_and_reject_unknown_names(capsys):
    import sys

    sys.path.insert(0, str(ROOT))
    from deid_spark.jobs.synthesize import parse_args

    args = parse_args(["--notes", "5", "--out", "x", "--types", "radiology, portal", "--exclude-types", "radiology.base"])
    assert args.include == ("radiology", "portal") and args.exclude == ("radiology.base",)
    with pytest.raises(SystemExit) as exc:
        parse_args(["--notes", "5", "--out", "x", "--exclude-types", "nonexistent"])
    assert exc.value.code == 2 and "nonexistent" in capsys.readouterr().err
