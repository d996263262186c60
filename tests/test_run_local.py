"""`deid tag` / run_local: outputs, bad inputs, options, quarantine, manifest (no Spark)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from deid_core.app.options import effective_config, parse_name_columns
from deid_core.app.policies import DuplicateNoteIdError, NullNoteIdError
from deid_core.config import ConfigError
from tests.helpers_job import (
    FAULT_MARKER,
    LITERAL_CONF,
    NAME_COLUMNS,
    SAMPLES,
    check_outputs,
    read_rows,
    write_edge_input,
)


def tag(inp, out, *extra: str) -> int:
    return deid_main(["tag", "--input", str(inp), "--output", str(out), "--config", str(LITERAL_CONF),
                      "--name-columns", NAME_COLUMNS, "--demo-key", *extra])


@pytest.fixture(scope="module")
def edge_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("edge")
    inp = write_edge_input(base / "in.parquet", big_chars=10_000_000)
    assert tag(inp, base / "out") == 0
    return inp, base / "out"


def test_edge_outputs_keep_every_note_once(edge_run):
    # (the shared checker expects unique input ids; here each copy of E-dup is accounted for)
    _, out = edge_run
    notes, quarantine = read_rows(out / "notes"), read_rows(out / "quarantine")
    assert len(notes) + len(quarantine) == 58
    assert len({r["note_id"] for r in notes}) == len(notes)
    assert not {r["note_id"] for r in notes} & {r["note_id"] for r in quarantine} - {"E-dup"}


def test_bad_rows_defined(edge_run):
    _, out = edge_run
    notes = {r["note_id"]: r for r in read_rows(out / "notes")}
    quarantine = {(r["note_id"], r["patient_id"]): r for r in read_rows(out / "quarantine")}
    assert quarantine[("E-null", "PE1")]["stage"] == "validate"
    assert quarantine[("E-null", "PE1")]["error_class"] == "NullText"
    assert notes["E-empty"]["text"] == "" and notes["E-space"]["text"] == "  \n\t "
    assert notes["E-ctrl"]["text"] == "[**PATIENT**]\x00 seen\x07 on [**DATE**]\x1b[0m ok\r\n"
    # duplicates: the first in (patient_id, note_date, text) order is kept, the others quarantined
    assert notes["E-dup"]["text"].startswith("first copy")
    dups = [r for r in read_rows(out / "quarantine") if r["note_id"] == "E-dup"]
    assert {(r["patient_id"], r["error_class"]) for r in dups} == {("PE2", "DuplicateNoteId"),
                                                                   ("PE3", "DuplicateNoteId")}
    # the injected fault quarantines that note only, at the tag stage, and it is nowhere else
    fault = quarantine[(f"E-{FAULT_MARKER}", "PE3")]
    assert (fault["stage"], fault["error_class"]) == ("tag", "RuntimeError")
    assert f"E-{FAULT_MARKER}" not in notes
    assert not [r for r in read_rows(out / "spans") if r["note_id"] == f"E-{FAULT_MARKER}"]
    big = notes["E-big"]["text"]
    # the name's two pieces are one PATIENT span (round 12's name pieces), at both ends of the 10 MB note
    assert big.startswith("[**PATIENT**] was seen on [**DATE**] for follow up. \x0c\n")
    assert big.endswith("[**PATIENT**] was seen on [**DATE**] for follow up. \x0c\n")
    assert "Quackenbush" not in big and "2/3/2024" not in big and len(big) > 9_999_000
    assert set(read_rows(out / "quarantine")[0]) == {"note_id", "patient_id", "stage", "error_class"}


def test_manifest_counts(edge_run):
    _, out = edge_run
    m = json.loads((out / "_manifest.json").read_text())
    c = m["counts"]
    n_in = 48 + 10
    assert c["input_rows"] == n_in
    assert c["notes"] + c["quarantined"] == n_in
    assert c["quarantined_by_error_class"] == {"DuplicateNoteId": 2, "NullText": 1, "RuntimeError": 1}
    assert c["duplicate_rows"] == 2 and c["tagged"] == n_in - 3
    assert c["spans"] == sum(c["spans_by_label"].values()) == len(read_rows(out / "spans"))
    for k in ("bundle_id", "rules_version", "config_digest", "key_id", "mode", "timings_s", "engine_version"):
        assert m[k] is not None
    assert m["mode"] == "mask"


def test_name_columns_never_in_outputs(edge_run):
    _, out = edge_run
    cols = set(pq.read_schema(next((out / "notes").glob("*.parquet"))).names)
    assert cols == {"note_id", "patient_id", "text", "encounter_type"}


def test_duplicate_fail_policy_names_count(tmp_path):
    inp = write_edge_input(tmp_path / "in.parquet")
    with pytest.raises(DuplicateNoteIdError, match="2 duplicate note_id row"):
        from deid_core.app.options import RunOptions
        from deid_core.app.runner import run_local

        cfg = effective_config(str(LITERAL_CONF), {"job": {"on_duplicate": "fail"}})
        run_local(inp, tmp_path / "out", RunOptions(cfg, parse_name_columns(NAME_COLUMNS), demo_key=True))
    assert not (tmp_path / "out").exists()


def test_null_note_id_fail_or_drop(tmp_path):
    from deid_core.app.options import RunOptions
    from deid_core.app.runner import run_local

    table = pq.read_table(SAMPLES)
    ids = table["note_id"].to_pylist()
    ids[3] = None
    pq.write_table(table.set_column(0, "note_id", pa.array(ids, pa.string())), tmp_path / "in.parquet")
    opts = RunOptions(effective_config(str(LITERAL_CONF)), parse_name_columns(NAME_COLUMNS), demo_key=True)
    with pytest.raises(NullNoteIdError, match="1 input row"):
        run_local(tmp_path / "in.parquet", tmp_path / "out", opts)
    assert not (tmp_path / "out").exists()
    opts = RunOptions(effective_config(str(LITERAL_CONF), {"job": {"on_null_note_id": "drop"}}),
                      parse_name_columns(NAME_COLUMNS), demo_key=True)
    m = run_local(tmp_path / "in.parquet", tmp_path / "out", opts)
    assert m["counts"]["null_note_id_dropped"] == 1 and m["counts"]["notes"] == 47


@pytest.mark.parametrize("change, message", [
    (lambda t: t.drop_columns(["text"]), "missing required column 'text'"),
    (lambda t: t.set_column(0, "note_id", pa.array(range(t.num_rows))), "'note_id' must be a string"),
    (lambda t: t.drop_columns(["attending_name"]), "'attending_name', not a column"),
])
def test_bad_schema_named_before_work(tmp_path, capsys, change, message):
    pq.write_table(change(pq.read_table(SAMPLES)), tmp_path / "in.parquet")
    assert tag(tmp_path / "in.parquet", tmp_path / "out") == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_empty_inputs(tmp_path, capsys):
    (tmp_path / "nothing").mkdir()
    assert tag(tmp_path / "nothing", tmp_path / "out") == 2
    assert "holds no Parquet files" in capsys.readouterr().err
    pq.write_table(pq.read_table(SAMPLES).slice(0, 0), tmp_path / "zero.parquet")
    assert tag(tmp_path / "zero.parquet", tmp_path / "out") == 0
    assert read_rows(tmp_path / "out" / "notes") == [] and read_rows(tmp_path / "out" / "spans") == []
    assert json.loads((tmp_path / "out" / "_manifest.json").read_text())["counts"]["input_rows"] == 0


def test_refuses_without_key(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DEID_KEY", raising=False)
    rc = deid_main(["tag", "--input", str(SAMPLES), "--output", str(tmp_path / "o"), "--config", str(LITERAL_CONF)])
    assert rc == 2 and "no secret key" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    monkeypatch.setenv("DEID_KEY", "k" * 32)
    rc = deid_main(["tag", "--input", str(SAMPLES), "--output", str(tmp_path / "o"), "--config", str(LITERAL_CONF)])
    assert rc == 0


def test_key_changes_digests_only(tmp_path, monkeypatch):
    monkeypatch.setenv("DEID_KEY", "another-secret-key-0123456789")
    deid_main(["tag", "--input", str(SAMPLES), "--output", str(tmp_path / "a"), "--config", str(LITERAL_CONF),
               "--name-columns", NAME_COLUMNS])
    assert tag(SAMPLES, tmp_path / "b") == 0
    a, b = read_rows(tmp_path / "a" / "spans", ("note_id", "start")), read_rows(tmp_path / "b" / "spans", ("note_id", "start"))
    assert [r["start"] for r in a] == [r["start"] for r in b]
    assert all(x["original_digest"] != y["original_digest"] for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("override, message", [
    ({"pipeline": {"mode": "scramble"}}, "[pipeline] mode = 'scramble' is not accepted; expected one of hash, mask, "),
    ({"pipeline": {"stages": ["nope"]}}, "[pipeline] stages[0] = 'nope' is not accepted; expected a stage of "
                                         "[registry.stages] (crf, crf_char, literal, names, rules)"),
    ({"job": {"batch_size": 0}}, "[job] batch_size = 0 is not accepted; expected an integer >= 1"),
    ({"job": {"on_duplicate": "keep"}}, "[job] on_duplicate = 'keep' is not accepted; expected one of fail, quarantine"),
    ({"job": {"colour": 1}}, "[job] unknown key 'colour'; accepted: batch_size, "),
])
def test_bad_options_list_what_is_accepted(override, message):
    with pytest.raises(ConfigError) as exc:
        effective_config(str(LITERAL_CONF), override)
    assert message in str(exc.value)


def test_name_column_labels():
    assert parse_name_columns("a, b:doctor") == {"a": "PATIENT", "b": "DOCTOR"}
    with pytest.raises(ConfigError, match="unknown label 'NURSE'"):
        parse_name_columns("a:NURSE")


def test_rerun_is_identical(tmp_path):
    assert tag(SAMPLES, tmp_path / "a") == 0 and tag(SAMPLES, tmp_path / "b", "--batch-size", "7") == 0
    for part in ("notes", "spans", "quarantine"):
        assert read_rows(tmp_path / "a" / part, ("note_id",)) == read_rows(tmp_path / "b" / part, ("note_id",))
    check_outputs(SAMPLES, tmp_path / "a")


def test_surrogate_mode_shifts_note_date_mask_mode_drops_it(tmp_path):
    assert tag(SAMPLES, tmp_path / "s", "--mode", "surrogate") == 0
    check_outputs(SAMPLES, tmp_path / "s")
    src = {r["note_id"]: r for r in pq.read_table(SAMPLES).to_pylist()}
    notes = read_rows(tmp_path / "s" / "notes")
    assert all(r["note_date"] is not None for r in notes)
    moved = [r for r in notes if r["note_date"] != src[r["note_id"]]["note_date"]]
    assert len(moved) > len(notes) // 2
    by_patient = {}
    for r in notes:  # one shift per patient
        by_patient.setdefault(r["patient_id"], set()).add(r["note_date"] - src[r["note_id"]]["note_date"])
    assert all(len(v) == 1 for v in by_patient.values())
    assert tag(SAMPLES, tmp_path / "m") == 0  # literal.toml: mask
    assert "note_date" not in read_rows(tmp_path / "m" / "notes")[0]


def test_quarantine_rate_ceiling_fails_the_run(tmp_path, capsys):
    inp = write_edge_input(tmp_path / "in.parquet")
    strict = tmp_path / "strict.toml"
    strict.write_text(LITERAL_CONF.read_text().replace("max_quarantine_rate = 1.0", "max_quarantine_rate = 0.01"))
    rc = deid_main(["tag", "--input", str(inp), "--output", str(tmp_path / "o"), "--config", str(strict),
                    "--name-columns", NAME_COLUMNS, "--demo-key"])
    err = capsys.readouterr().err
    assert rc == 3 and "max_quarantine_rate" in err and err.count("\n") == 1
    quality = json.loads((tmp_path / "o" / "_manifest.json").read_text())["quality"]
    # 1 faulty note of 54 tagged; null text and duplicate ids are input problems and do not count
    assert quality == {"quarantine_rate": round(1 / 54, 6), "max_quarantine_rate": 0.01, "passed": False}
    assert read_rows(tmp_path / "o" / "notes")  # outputs are still written


def test_testing_hooks_refused_outside_the_test_suite(monkeypatch):
    monkeypatch.delenv("DEID_TEST_HOOKS")
    with pytest.raises(ConfigError, match=r"\[testing\].*DEID_TEST_HOOKS"):
        effective_config(str(LITERAL_CONF))


def test_one_deidentifier_build_per_run(tmp_path, monkeypatch):
    # the check build of checked_inputs is the one that tags: `deid tag` does not build it twice
    from deid_core.app import runner

    builds = []
    real = runner.make_deidentifier
    monkeypatch.setattr(runner, "make_deidentifier", lambda *a: builds.append(1) or real(*a))
    assert tag(SAMPLES, tmp_path / "out") == 0
    assert len(builds) == 1


def test_tag_imports_only_its_own_subcommand():
    # `deid tag` builds its parser without importing the training commands' modules (or Faker)
    import subprocess
    import sys

    code = ("import sys; from deid_core.app.cli import build_parser; p = build_parser('tag'); "
            "p.parse_args(['tag', '--input', 'a', '--output', 'b']); "
            "print(sorted(m for m in ('deid_core.training.cv', 'deid_core.training.recipe', 'faker') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    from deid_core.app.cli import _subcommand, build_parser

    assert _subcommand(["-v", "tag", "--input", "x"]) == "tag" and _subcommand(["--version"]) is None
    assert _subcommand(["nope"]) is None
    assert "train" in build_parser("tag").format_help()  # the others still listed
