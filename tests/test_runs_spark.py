"""Scheduled runs on the Spark executor (folders; tables are in test_runs_hive.py): same rows as `deid tag`."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from deid_core.app.options import run_options
from deid_core.app.reader import committed_runs, read_committed
from deid_core.app.runner import load_key_and_bundle
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES
from tests.helpers_runs import SORT, assert_committed_equal, committed_ids, rows, write_days

pytestmark = pytest.mark.spark
OPTS = ["--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key", "--mode", "surrogate"]


def job(spark, inp, out, *extra: str) -> dict:
    from deid_spark.jobs.deidentify import build_parser, run_job

    args = build_parser().parse_args(["--input", str(inp), "--output", str(out), *OPTS, "--partitions", "2", *extra])
    options = run_options(args)
    return run_job(spark, args, options, *load_key_and_bundle(options))


@pytest.fixture(scope="module")
def two_days(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("spark-runs")
    days = write_days(base / "in")
    job(spark, days["day1"], base / "out", "--run-id", "2024-06-01")
    job(spark, days["both"], base / "out", "--incremental", "--run-id", "2024-06-02", "--staging", "persist")
    assert deid_main(["tag", "--input", str(days["both"]), "--output", str(base / "ref"), *OPTS]) == 0
    return base, days


def test_incremental_union_equals_one_run(two_days):
    base, _ = two_days
    assert committed_ids(base / "out") == ["2024-06-01", "2024-06-02"]
    assert_committed_equal(base / "out", base / "ref")
    sel = committed_runs(base / "out")[1]["selection"]
    assert sel["rows"] == {"new": 24, "already_committed": 32, "retried": 1}


def test_spark_reader_reads_what_the_arrow_reader_reads(spark, two_days):
    from deid_spark.udfs.runs import committed_runs as spark_runs
    from deid_spark.udfs.runs import read_committed as spark_read

    out = str(two_days[0] / "out")
    assert [m["run_id"] for m in spark_runs(spark, out=out)] == committed_ids(two_days[0] / "out")
    for part in SORT:
        for latest in (True, False):
            got = spark_read(spark, part, out=out, latest=latest)
            assert dict(got.dtypes)["run_id"] == "string"
            assert rows(got.toArrow(), part, drop_run_id=False) == rows(
                read_committed(out, part, latest=latest), part, drop_run_id=False), (part, latest)


def test_job_summary_of_a_folder_of_runs(spark, two_days, capsys):
    from deid_spark.jobs.summary import main

    assert main(["--output", f"file://{two_days[0] / 'out'}"]) == 0
    out = capsys.readouterr().out
    assert "committed runs: 2" in out and "run 2024-06-02" in out and "last committed run 2024-06-02" in out, out


def test_retried_run_id_replaces_its_rows_only(spark, two_days, tmp_path):
    base, days = two_days
    out = tmp_path / "out"
    job(spark, days["day1"], out, "--run-id", "d1")
    job(spark, days["day2"], out, "--run-id", "d2")
    d1 = {p: p.read_bytes() for p in out.rglob("run_id=d1/*.parquet")}
    smaller = tmp_path / "d2-part.parquet"
    pq.write_table(pq.read_table(days["day2"]).slice(0, 5), smaller)
    m = job(spark, smaller, out, "--run-id", "d2")
    d2 = [r["note_id"] for r in read_committed(out, "notes", latest=False).to_pylist() if r["run_id"] == "d2"]
    assert sorted(d2) == sorted(pq.read_table(smaller)["note_id"].to_pylist()) and m["counts"]["notes"] == 5
    assert {p: p.read_bytes() for p in out.rglob("run_id=d1/*.parquet")} == d1
    assert committed_ids(out) == ["d1", "d2"]


def test_since_column_across_executors(spark, two_days, tmp_path):
    base, days = two_days
    out = tmp_path / "out"
    assert deid_main(["tag", "--input", str(days["day1"]), "--output", str(out), *OPTS, "--since-column",
                      "loaded_at", "--run-id", "d1"]) == 0  # marks written by one executor, read by the other
    m = job(spark, days["both"], out, "--since-column", "loaded_at", "--run-id", "d2")
    sel = m["selection"]
    assert sel["after"] == "2024-06-01T02:00:00+00:00" and sel["rows"] == {"new": 24, "at_or_before_mark": 32,
                                                                          "retried": 1}
    assert m["selection"]["high_water_mark"].startswith("2024-06-02T02:00:00")
    assert_committed_equal(out, base / "ref")


def test_non_parquet_input_and_missing_database_one_line_before_any_spark_job(spark, tmp_path, capsys):
    from deid_spark.jobs.deidentify import main

    (tmp_path / "notes.csv").write_text("note_id,text\n1,hello\n")
    codes = [main(["--input", inp, "--output", str(tmp_path / "out"), *OPTS])
             for inp in (str(tmp_path / "notes.csv"), f"file://{tmp_path}/notes.csv")]
    csv_errors = capsys.readouterr().err
    spark.sparkContext.setJobGroup("refused", "no Spark job may run")
    try:
        codes.append(main(["--input", str(SAMPLES), "--output-table-prefix", "no_such_db.nightly_", "--run-id", "d1",
                           "--staging", "persist", *OPTS]))
    finally:
        spark.sparkContext.setJobGroup(None, None)
    assert codes == [2, 2, 2]
    lines = csv_errors.splitlines()
    assert len(lines) == 2 and all(line.startswith("deidentify: error: --input ") and "notes.csv" in line
                                   for line in lines), csv_errors
    assert "Parquet" in lines[1], lines[1]
    msg = capsys.readouterr().err
    assert "database 'no_such_db' does not exist" in msg and msg.count("\n") == 1, msg
    assert list(spark.sparkContext.statusTracker().getJobIdsForGroup("refused")) == []
    assert not (tmp_path / "out").exists()
