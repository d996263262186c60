"""Scheduled runs with `deid tag` (Arrow executor): run ids, commit last, incremental selection, readers."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from deid_core.app.reader import committed_runs, read_committed
from tests.helpers_job import CHECKER, LITERAL_CONF, NAME_COLUMNS, read_rows
from tests.helpers_runs import (
    SORT,
    assert_committed_equal,
    committed_ids,
    reference_rows,
    rows,
    write_days,
)

OPTS = ["--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key", "--mode", "surrogate"]


def tag(inp, out, *extra: str) -> int:
    return deid_main(["tag", "--input", str(inp), "--output", str(out), *OPTS, *extra])


@pytest.fixture(scope="module")
def two_days(tmp_path_factory):
    """Day 1, then day 2 with --incremental over the grown input, and one run over both days."""
    base = tmp_path_factory.mktemp("runs")
    days = write_days(base / "in")
    assert tag(days["day1"], base / "out", "--run-id", "2024-06-01") == 0
    assert tag(days["both"], base / "out", "--incremental", "--run-id", "2024-06-02") == 0
    assert tag(days["both"], base / "ref") == 0
    return base, days


def test_incremental_union_equals_one_run(two_days):
    base, _ = two_days
    out = base / "out"
    assert committed_ids(out) == ["2024-06-01", "2024-06-02"]
    assert_committed_equal(out, base / "ref")
    # notes and spans are never repeated across runs: the raw history equals the one run too
    for part in ("notes", "spans"):
        assert rows(read_committed(out, part, latest=False), part) == reference_rows(base / "ref", part)
    sel = committed_runs(out)[1]["selection"]
    assert sel["mode"] == "new" and sel["read_rows"] == 57
    # day-1 rows are committed (the 3 copies of a duplicate id included); the note that failed in the
    # tag stage is retried ([job] retry_quarantined), the null-text one (validate) is not
    assert sel["rows"] == {"new": 24, "already_committed": 32, "retried": 1}
    history = rows(read_committed(out, "quarantine", latest=False), "quarantine", drop_run_id=False)
    assert [r["run_id"] for r in history if r["note_id"] == "E-FAULTME"] == ["2024-06-01", "2024-06-02"]


def test_layout_and_reader_contract(two_days):
    base, days = two_days
    out = base / "out"
    for part in SORT:
        assert sorted(p.name for p in (out / part).iterdir()) == ["run_id=2024-06-01", "run_id=2024-06-02"]
    latest = json.loads((out / "_manifest.json").read_text())
    assert latest["run_id"] == "2024-06-02" and latest["layout"] == "runs" and latest["committed_at"]
    assert "run_id" in read_committed(out, "notes").column_names
    res = subprocess.run([sys.executable, "-m", "deid_core.app.commands.summary", str(out)], capture_output=True,
                         text=True)
    assert res.returncode == 0 and "committed runs: 2" in res.stdout and "run 2024-06-02" in res.stdout, res.stdout
    single = json.loads((base / "ref" / "_manifest.json").read_text())
    assert single["layout"] == "single" and "selection" not in single and not (base / "ref" / "_runs").exists()


def test_checker_passes_on_a_single_scheduled_run(tmp_path):
    if not CHECKER.is_file():
        pytest.skip("shared checker absent")
    days = write_days(tmp_path / "in")
    assert tag(days["day1"], tmp_path / "out", "--run-id", "d1") == 0
    res = subprocess.run([sys.executable, str(CHECKER), str(days["day1"]), str(tmp_path / "out"), "--name-columns",
                          NAME_COLUMNS], capture_output=True, text=True)
    assert res.returncode == 0 and "FAIL" not in res.stdout, res.stdout


def test_rerun_of_a_run_id_replaces_only_its_rows(tmp_path):
    days = write_days(tmp_path / "in")
    out = tmp_path / "out"
    assert tag(days["day1"], out, "--run-id", "d1") == 0
    assert tag(days["day2"], out, "--run-id", "d2") == 0
    d1_files = {p: p.read_bytes() for p in out.rglob("run_id=d1/*.parquet")}
    before = {part: rows(read_committed(out, part), part) for part in SORT}
    assert tag(days["day2"], out, "--run-id", "d2") == 0  # a scheduler's retry: same rows, none twice
    assert {part: rows(read_committed(out, part), part) for part in SORT} == before
    smaller = tmp_path / "in" / "day2-part.parquet"
    pq.write_table(pq.read_table(days["day2"]).slice(0, 5), smaller)
    assert tag(smaller, out, "--run-id", "d2") == 0  # d2 redone over other rows: exactly those now
    assert tag(smaller, tmp_path / "alone") == 0
    d2 = [r for r in read_committed(out, "notes", latest=False).to_pylist() if r["run_id"] == "d2"]
    assert sorted(r["note_id"] for r in d2) == sorted(r["note_id"] for r in read_rows(tmp_path / "alone" / "notes"))
    assert {p: p.read_bytes() for p in out.rglob("run_id=d1/*.parquet")} == d1_files  # other runs untouched
    assert committed_ids(out) == ["d1", "d2"]


def test_since_column_selects_past_the_high_water_mark(tmp_path):
    days = write_days(tmp_path / "in")
    out = tmp_path / "out"
    assert tag(days["day1"], out, "--since-column", "loaded_at", "--run-id", "d1") == 0
    first = committed_runs(out)[0]["selection"]
    assert first["mode"] == "since" and first["after"] is None
    assert first["high_water_mark"] == "2024-06-01T02:00:00+00:00"
    grown = pq.read_table(days["both"])
    late = grown.slice(0, 1).to_pylist()[0] | {"note_id": "LATE-1", "loaded_at": None}
    pq.write_table(pa.concat_tables([grown, pa.Table.from_pylist([late], schema=grown.schema)]), tmp_path / "g.parquet")
    assert tag(tmp_path / "g.parquet", out, "--since-column", "loaded_at", "--run-id", "d2") == 0
    sel = committed_runs(out)[1]["selection"]
    assert sel["after"] == "2024-06-01T02:00:00+00:00" and sel["high_water_mark"] == "2024-06-02T02:00:00+00:00"
    assert sel["rows"] == {"new": 24, "at_or_before_mark": 32, "retried": 1, "null_mark_column": 1}
    assert tag(days["both"], tmp_path / "ref") == 0
    assert_committed_equal(out, tmp_path / "ref")


@pytest.mark.parametrize("column, message", [("note_date", "holds PHI"), ("patient_first_name", "holds PHI"),
                                             ("absent", "not a column of the input")])
def test_since_column_refused_before_work(tmp_path, capsys, column, message):
    days = write_days(tmp_path / "in")
    assert tag(days["day1"], tmp_path / "out", "--since-column", column) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_layouts_are_not_mixed_and_bad_run_ids_refused(tmp_path, capsys):
    days = write_days(tmp_path / "in")
    assert tag(days["day1"], tmp_path / "single") == 0
    assert tag(days["day1"], tmp_path / "runs", "--run-id", "d1") == 0
    cases = [((tmp_path / "single", "--run-id", "d2"), "holds a single-run output"),
             ((tmp_path / "single", "--incremental"), "holds a single-run output"),
             ((tmp_path / "runs",), "holds scheduled runs"),
             ((tmp_path / "new", "--run-id", "../x"), "--run-id '../x'"),
             ((tmp_path / "new", "--run-id", "a b"), "--run-id 'a b'")]
    for (out, *extra), message in cases:
        assert tag(days["day1"], out, *extra) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "new").exists()


def test_a_new_input_schema_is_refused_before_tagging(tmp_path, capsys):
    days = write_days(tmp_path / "in")
    assert tag(days["day1"], tmp_path / "out", "--run-id", "d1") == 0
    wider = pq.read_table(days["day2"])
    pq.write_table(wider.append_column("ward", pa.array(["x"] * wider.num_rows)), tmp_path / "wider.parquet")
    assert tag(tmp_path / "wider.parquet", tmp_path / "out", "--run-id", "d2") == 2
    assert "differ from those of committed run d1" in capsys.readouterr().err
    assert committed_ids(tmp_path / "out") == ["d1"] and not list((tmp_path / "out").rglob("run_id=d2"))


def test_uncommitted_rows_are_never_read_and_swept_by_the_next_run(tmp_path):
    days = write_days(tmp_path / "in")
    out = tmp_path / "out"
    assert tag(days["day1"], out, "--run-id", "d1") == 0
    ghost = out / "notes" / "run_id=killed"  # what a killed run leaves: rows, no manifest
    ghost.mkdir()
    pq.write_table(pq.read_table(out / "notes" / "run_id=d1"), ghost / "part-00000.parquet")
    (out / "_runs" / ".killed.json.tmp").write_text('{"run_id": "kil')
    assert committed_ids(out) == ["d1"]
    assert rows(read_committed(out, "notes", latest=False), "notes") == rows(pq.read_table(out / "notes" / "run_id=d1"), "notes")
    assert tag(days["day2"], out, "--run-id", "d2", "--incremental") == 0
    assert not ghost.exists() and not (out / "_runs" / ".killed.json.tmp").exists()
    assert committed_ids(out) == ["d1", "d2"]


def test_one_writer_at_a_time_on_a_local_folder(tmp_path, capsys):
    import fcntl
    import os

    days = write_days(tmp_path / "in")
    out = tmp_path / "out"
    assert tag(days["day1"], out, "--run-id", "d1") == 0
    fd = os.open(out / ".deid-writer.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a live run holds it
        assert tag(days["day2"], out, "--run-id", "d2") == 2
        assert "another run is writing it" in capsys.readouterr().err
    finally:
        os.close(fd)
    assert committed_ids(out) == ["d1"] and not list(out.rglob("run_id=d2"))
