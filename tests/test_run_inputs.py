"""Bad input that loses nothing (`deid tag`, no Spark): invalid UTF-8, reserved and case-variant column
names, unreadable files, outputs that would overwrite the input, orphan temp folders."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from deid_core.workdirs import LOCK_NAME, OwnedDir, sweep_orphans
from tests.helpers_job import (
    INVALID_UTF8,
    LITERAL_CONF,
    NAME_COLUMNS,
    SAMPLES,
    check_outputs,
    read_rows,
    write_invalid_utf8_input,
)


def tag(inp, out, *extra: str, name_columns: str = NAME_COLUMNS) -> int:
    return deid_main(["tag", "--input", str(inp), "--output", str(out), "--config", str(LITERAL_CONF),
                      "--name-columns", name_columns, "--demo-key", *extra])


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_invalid_utf8_quarantines_only_that_note(tmp_path):
    inp = write_invalid_utf8_input(tmp_path / "in.parquet")
    assert tag(inp, tmp_path / "out") == 0
    quarantine = {r["note_id"]: r for r in read_rows(tmp_path / "out" / "quarantine")}
    assert {k: (v["stage"], v["error_class"]) for k, v in quarantine.items()} == {
        "U-text": ("validate", "InvalidText"), "U-surrogate": ("validate", "InvalidText"),
        "U-pid": ("validate", "InvalidPatientId"), "U-name": ("validate", "InvalidNameColumn")}
    assert quarantine["U-pid"]["patient_id"] is None and quarantine["U-text"]["patient_id"] == "PU1"
    notes = read_rows(tmp_path / "out" / "notes")
    assert len(notes) == 48 and not [r for r in notes if r["note_id"].startswith("U-")]
    c = json.loads((tmp_path / "out" / "_manifest.json").read_text())["counts"]
    assert c["tagged"] == 48 and c["quarantined_by_stage"] == {"validate": 4} and c["input_rows"] == 52
    assert set(INVALID_UTF8) == set(quarantine)


def test_non_utf8_note_id_counts_as_null(tmp_path, capsys):
    inp = write_invalid_utf8_input(tmp_path / "in.parquet", bad_note_id=True)
    assert tag(inp, tmp_path / "out") == 2
    assert "1 input row(s) have a null or non-UTF-8 note_id" in one_error_line(capsys)
    assert not (tmp_path / "out").exists()
    drop = tmp_path / "drop.toml"
    drop.write_text(LITERAL_CONF.read_text() + '\non_null_note_id = "drop"\n')
    assert deid_main(["tag", "--input", str(inp), "--output", str(tmp_path / "out"), "--config", str(drop),
                      "--name-columns", NAME_COLUMNS, "--demo-key"]) == 0
    c = json.loads((tmp_path / "out" / "_manifest.json").read_text())["counts"]
    assert c["null_note_id_dropped"] == 1 and c["notes"] + c["quarantined"] == c["input_rows"] - 1


@pytest.mark.parametrize("column, named", [
    ("spans", "'spans' uses a name the run reserves"),
    ("Error_Class", "'Error_Class' uses a name the run reserves"),
    ("_deid_x", "'_deid_x' uses a name the run reserves"),
    ("Text", "'text' and 'Text' differ only by case"),
    ("Encounter_Type", "'encounter_type' and 'Encounter_Type' differ only by case"),
])
def test_colliding_column_names_refused_in_one_line(tmp_path, capsys, column, named):
    table = pq.read_table(SAMPLES)
    pq.write_table(table.append_column(column, pa.array(["x"] * table.num_rows)), tmp_path / "in.parquet")
    assert tag(tmp_path / "in.parquet", tmp_path / "out") == 2
    assert named in one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_case_variant_of_a_core_column_alone_is_refused(tmp_path, capsys):
    table = pq.read_table(SAMPLES)
    pq.write_table(table.rename_columns(["Note_ID" if c == "note_id" else c for c in table.column_names]),
                   tmp_path / "in.parquet")
    assert tag(tmp_path / "in.parquet", tmp_path / "out") == 2
    assert "'Note_ID' is a case variant of the core column 'note_id'" in one_error_line(capsys)


def test_output_like_column_names_pass_through(tmp_path):
    table = pq.read_table(SAMPLES)
    extra = ("stage", "replacement", "source", "label", "start")
    for c in extra:
        table = table.append_column(c, pa.array([f"{c}-{i}" for i in range(table.num_rows)]))
    pq.write_table(table, tmp_path / "in.parquet")
    assert tag(tmp_path / "in.parquet", tmp_path / "out") == 0
    notes = read_rows(tmp_path / "out" / "notes")
    src = {r["note_id"]: r for r in table.to_pylist()}
    assert all(r[c] == src[r["note_id"]][c] for r in notes for c in extra)
    check_outputs(tmp_path / "in.parquet", tmp_path / "out")


def test_name_columns_matched_case_insensitively(tmp_path):
    assert tag(SAMPLES, tmp_path / "a") == 0
    assert tag(SAMPLES, tmp_path / "b", name_columns="PATIENT_FIRST_NAME,Patient_Last_Name,ATTENDING_NAME:DOCTOR") == 0
    for part in ("notes", "spans"):
        assert read_rows(tmp_path / "a" / part) == read_rows(tmp_path / "b" / part)
    assert "patient_first_name" not in read_rows(tmp_path / "b" / "notes")[0]


def test_unreadable_input_files_named_in_one_line(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "part-0.parquet").write_bytes(SAMPLES.read_bytes())
    (folder / "_SUCCESS").write_text("")  # skipped, as Spark does
    (folder / "README.txt").write_text("notes exported on Monday\n")
    assert tag(folder, tmp_path / "out") == 2
    assert "README.txt is not a readable Parquet file" in one_error_line(capsys)
    (folder / "README.txt").unlink()
    (folder / "part-1.parquet").write_bytes(SAMPLES.read_bytes()[:5000])  # truncated
    assert tag(folder, tmp_path / "out") == 2
    assert "part-1.parquet is not a readable Parquet file" in one_error_line(capsys)
    assert tag(tmp_path / "absent", tmp_path / "out") == 2
    assert "absent: no such file or folder" in one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_output_overlapping_the_input_is_refused(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "part-0.parquet").write_bytes(SAMPLES.read_bytes())
    before = sorted(p.name for p in folder.rglob("*"))
    for out in (folder, folder / "out", tmp_path):
        assert tag(folder, out) == 2
        assert "overlap" in one_error_line(capsys)
    assert tag(folder / "part-0.parquet", folder / "part-0.parquet") == 2
    assert "overlap" in one_error_line(capsys)
    assert sorted(p.name for p in folder.rglob("*")) == before


def test_rerun_replaces_previous_outputs(tmp_path):
    out = tmp_path / "out"
    assert tag(SAMPLES, out) == 0
    first = (out / "_manifest.json").read_text()
    (out / "staging-0badc0de").mkdir()  # left by a killed job into this output
    assert tag(SAMPLES, out) == 0
    assert (out / "_manifest.json").read_text() != first and not list(out.glob("staging-*"))


def _hold_dir_then_sleep(parent) -> subprocess.Popen:
    code = ("import sys, time; from deid_core.workdirs import OwnedDir; d = OwnedDir('deid-test-', sys.argv[1]); "
            "print(d.path, flush=True); time.sleep(600)")
    return subprocess.Popen([sys.executable, "-c", code, str(parent)], stdout=subprocess.PIPE, text=True)


def test_owned_dirs_outlive_no_dead_process(tmp_path):
    with OwnedDir("deid-test-", tmp_path) as mine:
        assert (mine.path / LOCK_NAME).is_file()
    assert not mine.path.exists()
    live, dead = _hold_dir_then_sleep(tmp_path), _hold_dir_then_sleep(tmp_path)
    try:
        live_dir, dead_dir = live.stdout.readline().strip(), dead.stdout.readline().strip()
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait(timeout=30)
        assert sweep_orphans("deid-test-", tmp_path) == 1
        assert os.path.isdir(live_dir) and not os.path.exists(dead_dir)
    finally:
        live.kill()
        live.wait(timeout=30)
    legacy = tmp_path / "deid-test-legacy"  # no lock file: removed once old enough
    legacy.mkdir()
    assert sweep_orphans("deid-test-", tmp_path) == 1  # the live one, now dead
    old = time.time() - 7200
    os.utime(legacy, (old, old))
    assert sweep_orphans("deid-test-", tmp_path) == 1 and not legacy.exists()
