"""`deid eval` end to end: JSON contract, table, errors, --compare, and the PhysioNet dev split."""

import json
import re

import pyarrow as pa
import pytest

from deid_core.app.cli import main
from deid_core.io.tables import notes_table, spans_table, write_table
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.evaluation import score_corpus, summary

KEYS = {"strict", "relaxed", "token", "binary_token", "binary_strict", "overlap", "per_label"}
NOTES = [Note("a", "Dr Lee saw Ann on 3/4."), Note("b", "Call 555-1234.")]
GOLD = {"a": [Span(3, 6, "DOCTOR"), Span(11, 14, "PATIENT"), Span(18, 21, "DATE")], "b": [Span(5, 13, "PHONE")]}


@pytest.fixture
def files(tmp_path):
    write_table(notes_table(NOTES), tmp_path / "notes.parquet")
    write_table(spans_table(GOLD), tmp_path / "gold.parquet")
    # pred: only note a, the doctor missed; note b absent = predicts nothing
    write_table(spans_table({"a": [Span(11, 14, "PATIENT"), Span(18, 21, "DATE")]}), tmp_path / "pred.parquet")
    return tmp_path


def run(*argv):
    return main(["eval", *map(str, argv)])


def test_json_contract_and_numbers(files, capsys):
    rc = run("--notes", files / "notes.parquet", "--gold", files / "gold.parquet", "--pred", files / "pred.parquet",
             "--json", files / "r.json")
    assert rc == 0
    r = json.loads((files / "r.json").read_text())
    assert set(r) == KEYS
    for m in KEYS - {"per_label"}:
        assert set(r[m]) == {"precision", "recall", "f1", "tp", "fp", "fn"}
    assert (r["strict"]["tp"], r["strict"]["fp"], r["strict"]["fn"]) == (2, 0, 2)
    assert r["strict"]["recall"] == 0.5 and r["strict"]["precision"] == 1.0
    assert (r["token"]["tp"], r["token"]["fn"]) == (3, 3)   # Ann 3 4 | Lee 555 1234 missed
    assert r["per_label"]["strict"]["DOCTOR"]["recall"] == 0.0
    out = capsys.readouterr().out
    assert out.index("recall") < out.index("prec")


def test_hipaa_and_by_category(files):
    run("--notes", files / "notes.parquet", "--gold", files / "gold.parquet", "--pred", files / "pred.parquet",
        "--labels", "hipaa", "--by-category", "--json", files / "h.json")
    r = json.loads((files / "h.json").read_text())
    assert (r["strict"]["tp"], r["strict"]["fn"]) == (2, 1)   # DOCTOR leaves the gold
    assert set(r["per_category"]["strict"]) == {"NAME", "DATE", "CONTACT"}
    assert r["per_category"]["strict"]["CONTACT"]["recall"] == 0.0


def test_compare_adds_p_values(files):
    run("--notes", files / "notes.parquet", "--gold", files / "gold.parquet", "--pred", files / "pred.parquet",
        "--compare", files / "gold.parquet", "--rounds", "99", "--json", files / "c.json")
    r = json.loads((files / "c.json").read_text())
    assert r["compare"]["pred2"]["strict"]["f1"] == 1.0
    assert 0 < r["compare"]["p_values"]["strict"] <= 1


@pytest.mark.parametrize("mutate, message", [
    (lambda p: write_table(pa.table({"note_id": ["a"], "start": [0]}), p / "pred.parquet"), "--pred .*missing column"),
    (lambda p: write_table(spans_table({"zz": [Span(0, 1, "DATE")]}), p / "pred.parquet"), "not among the notes"),
    (lambda p: write_table(spans_table({"b": [Span(0, 99, "DATE")]}), p / "pred.parquet"), "outside text"),
    (lambda p: (p / "pred.parquet").unlink(), "--pred .*no such file"),
    (lambda p: write_table(notes_table(NOTES + NOTES), p / "notes.parquet"), "duplicate note_id"),
])
def test_bad_input_is_a_clear_error(files, capsys, mutate, message):
    mutate(files)
    rc = run("--notes", files / "notes.parquet", "--gold", files / "gold.parquet", "--pred", files / "pred.parquet")
    assert rc == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "Lee" not in err and "Ann" not in err


def corrupt(gold):
    """Deterministic corruption of the sorted gold list: i%10 == 0 drop, 3 relabel, 5 shift +1, 7 end +1."""
    flat = [(nid, s) for nid in sorted(gold) for s in gold[nid]]
    out = {}
    for i, (nid, s) in enumerate(flat):
        if i % 10 == 0:
            continue
        if i % 10 == 3:
            s = s.with_label("DOCTOR" if s.label != "DOCTOR" else "PATIENT")
        elif i % 10 == 5:
            s = Span(s.start + 1, s.end + 1, s.label)
        elif i % 10 == 7:
            s = Span(s.start, s.end + 1, s.label)
        out.setdefault(nid, []).append(s)
    return out


def test_physionet_gold_as_prediction_is_perfect(physionet, physionet_dir, tmp_path):
    write_table(spans_table(physionet.gold), tmp_path / "pred.parquet")
    assert run("--gold", physionet_dir, "--pred", tmp_path / "pred.parquet", "--json", tmp_path / "r.json") == 0
    r = json.loads((tmp_path / "r.json").read_text())
    for m in KEYS - {"per_label"}:
        assert (r[m]["precision"], r[m]["recall"], r[m]["f1"], r[m]["fp"], r[m]["fn"]) == (1.0, 1.0, 1.0, 0, 0)
    assert r["strict"]["tp"] == 951
    assert all(v["f1"] == 1.0 for per in r["per_label"].values() for v in per.values())


def test_physionet_corrupted_copy_exact_numbers(physionet):
    texts = {n.note_id: n.text for n in physionet.notes}
    r = summary(score_corpus(texts, physionet.gold, corrupt(physionet.gold)))
    got = {m: (r[m]["tp"], r[m]["fp"], r[m]["fn"]) for m in KEYS - {"per_label"}}
    # 951 gold: 96 dropped, 95 relabelled, 95 shifted, 95 extended, 570 untouched
    assert got["strict"] == (570, 285, 381)
    assert got["relaxed"] == (570 + 95, 190, 96 + 190)
    assert got["binary_strict"] == (570 + 95, 190, 96 + 190)
    # overlap: the 96 dropped golds are missed, and so are 4 one-character golds whose +1 shift
    # leaves them (those 4 predictions overlap nothing)
    assert got["overlap"] == (855 - 4, 4, 96 + 4)
    assert r["overlap"]["precision"] == 851 / 855
    # token counts depend on the text; the metric itself is checked against a naive version
    # in test_evaluation_metrics.py
    assert got["token"] == (990, 125, 283)
    assert got["binary_token"] == (1115, 0, 158)


def test_corpus_gold_supplies_the_notes_and_job_output_as_pred(tmp_path, capsys):
    from deid_core.io.corpus import Corpus
    from deid_core.io.i2b2 import write_i2b2
    from deid_core.io.tables import AUDIT_SCHEMA

    write_i2b2(Corpus(NOTES, GOLD), tmp_path / "gold")
    rows = [{"note_id": "b", "patient_id": None, "start": 5, "end": 13, "label": "PHONE", "category": "CONTACT",
             "source": "rules", "confidence": 1.0, "out_start": 5, "out_end": 12, "replacement": "[PHONE]",
             "original_digest": "x"}]
    write_table(pa.Table.from_pylist(rows, schema=AUDIT_SCHEMA), tmp_path / "out" / "spans" / "part-0.parquet")
    assert run("--gold", tmp_path / "gold", "--pred", tmp_path / "out", "--json", tmp_path / "r.json") == 0
    r = json.loads((tmp_path / "r.json").read_text())
    assert (r["strict"]["tp"], r["strict"]["fp"], r["strict"]["fn"]) == (1, 0, 3)
    assert r["per_label"]["strict"]["PHONE"]["f1"] == 1.0


def test_notes_default_to_gold_and_say_so(files, capsys):
    assert run("--gold", files / "gold.parquet", "--pred", files / "pred.parquet") == 2
    err = capsys.readouterr().err
    assert "text" in err and "no --notes given" in err
