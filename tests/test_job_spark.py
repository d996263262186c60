"""The Spark job: same rows as `deid tag`, any partitioning, tagged once, bad input defined."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from deid_core.app.options import run_options
from deid_core.app.policies import DuplicateNoteIdError
from deid_core.app.runner import load_key_and_bundle, run_local
from deid_core.config import ConfigError
from tests.helpers_job import (
    CHECKER,
    LITERAL_CONF,
    NAME_COLUMNS,
    SAMPLES,
    read_rows,
    write_edge_input,
)

pytestmark = pytest.mark.spark
SORT = {"notes": ("note_id",), "spans": ("note_id", "start"), "quarantine": ("note_id", "patient_id")}


def run(spark, inp, out, *extra: str) -> dict:
    from deid_spark.jobs.deidentify import build_parser, run_job

    args = build_parser().parse_args(["--input", str(inp), "--output", str(out), "--config", str(LITERAL_CONF),
                                      "--name-columns", NAME_COLUMNS, "--demo-key", *extra])
    options = run_options(args)
    key, bundle = load_key_and_bundle(options)
    return run_job(spark, args, options, key, bundle)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("job")
    inp = write_edge_input(base / "in.parquet", big_chars=1_000_000)
    one = run(spark, inp, base / "p1", "--partitions", "1", "--staging", "persist", "--batch-size", "5")
    eight = run(spark, inp, base / "p8", "--partitions", "8", "--staging", "parquet")
    import argparse

    from deid_core.app.commands.tag import add_arguments  # same options as the job, Spark-free

    p = argparse.ArgumentParser()
    add_arguments(p)
    targs = p.parse_args(["--input", str(inp), "--output", str(base / "local"), "--config", str(LITERAL_CONF),
                          "--name-columns", NAME_COLUMNS, "--demo-key"])
    local = run_local(inp, base / "local", run_options(targs))
    return inp, base, {"p1": one, "p8": eight, "local": local}


def test_same_rows_any_partitioning_and_as_deid_tag(runs):
    _, base, _ = runs
    for part, keys in SORT.items():
        local = read_rows(base / "local" / part, keys)
        assert local, part
        assert read_rows(base / "p1" / part, keys) == local, part
        assert read_rows(base / "p8" / part, keys) == local, part
    assert not list(base.glob("p8/staging-*"))


def test_tagged_once_per_note(runs):
    _, _, m = runs
    for name in ("p1", "p8"):
        c = m[name]["counts"]
        # read from the staged result: every note that reached the tagger, once each
        assert c["tagged"] == m["local"]["counts"]["tagged"] == c["input_rows"] - 3
        for k in ("notes", "quarantined", "spans", "spans_by_label", "quarantined_by_error_class"):
            assert c[k] == m["local"]["counts"][k], k


def test_contract_checker(runs):
    inp, base, _ = runs
    if not CHECKER.is_file():
        pytest.skip("shared checker absent")
    res = subprocess.run([sys.executable, str(CHECKER), str(inp), str(base / "p8"), "--name-columns", NAME_COLUMNS],
                         capture_output=True, text=True)
    # the checker accepts a duplicate id kept once in notes/ with its twins quarantined
    assert res.returncode == 0 and "FAIL" not in res.stdout, res.stdout
    m = json.loads((base / "p8" / "_manifest.json").read_text())
    assert m["runner"] == "spark" and m["partitions"] == 8 and m["counts"]["duplicate_rows"] == 2


def test_fault_note_only_in_quarantine(runs):
    _, base, _ = runs
    q = [r for r in read_rows(base / "p8" / "quarantine") if r["note_id"] == "E-FAULTME"]
    assert [(r["stage"], r["error_class"]) for r in q] == [("tag", "RuntimeError")]
    for part in ("notes", "spans"):
        assert not [r for r in read_rows(base / "p8" / part) if r["note_id"] == "E-FAULTME"]


def test_bad_input_stops_before_work(spark, tmp_path):
    pq.write_table(pq.read_table(SAMPLES).drop_columns(["text"]), tmp_path / "notext.parquet")
    with pytest.raises(ConfigError, match="missing required column 'text'"):
        run(spark, tmp_path / "notext.parquet", tmp_path / "o1")
    assert not (tmp_path / "o1").exists()
    with pytest.raises(DuplicateNoteIdError, match="2 duplicate note_id row"):
        run(spark, write_edge_input(tmp_path / "in.parquet"), tmp_path / "o2", "--on-duplicate", "fail")
    assert not (tmp_path / "o2").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="--input .*holds no Parquet files"):
        run(spark, tmp_path / "empty", tmp_path / "o3")


def test_zero_rows_give_empty_outputs(spark, tmp_path):
    pq.write_table(pq.read_table(SAMPLES).slice(0, 0), tmp_path / "zero.parquet")
    m = run(spark, tmp_path / "zero.parquet", tmp_path / "out")
    assert m["counts"]["input_rows"] == 0 and m["counts"]["notes"] == 0
    for part in ("notes", "spans", "quarantine"):
        assert (tmp_path / "out" / part).is_dir() and read_rows(tmp_path / "out" / part) == []


def test_catalog_tables_in_and_out(spark, tmp_path):
    from deid_spark.jobs.deidentify import build_parser, run_job

    spark.read.parquet(str(SAMPLES)).createOrReplaceTempView("deid_test_notes")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS deid_test LOCATION '{tmp_path / 'db'}'")
    argv = ["--input-table", "deid_test_notes", "--output-table-prefix", "deid_test.run_", "--config",
            str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key", "--partitions", "2"]
    with pytest.raises(ConfigError, match="needs --staging-dir"):
        args = build_parser().parse_args(argv)
        options = run_options(args)
        run_job(spark, args, options, *load_key_and_bundle(options))
    args = build_parser().parse_args([*argv, "--staging", "persist", "--mode", "surrogate"])
    options = run_options(args)
    m = run_job(spark, args, options, *load_key_and_bundle(options))
    assert spark.table("deid_test.run_notes").count() == 48 == m["counts"]["notes"]
    assert spark.table("deid_test.run_spans").count() == m["counts"]["spans"]
    assert spark.table("deid_test.run_quarantine").count() == 0
    assert "patient_first_name" not in spark.table("deid_test.run_notes").columns
    assert spark.table("deid_test.run_notes").filter("note_date is null").count() == 0  # shifted dates
    row = spark.table("deid_test.run_manifest").first()
    assert json.loads(row["manifest"])["counts"]["input_rows"] == 48
    spark.sql("DROP DATABASE deid_test CASCADE")


def test_invalid_utf8_quarantined_as_by_deid_tag(spark, tmp_path):
    from tests.helpers_job import INVALID_UTF8, write_invalid_utf8_input

    inp = write_invalid_utf8_input(tmp_path / "in.parquet")
    m = run(spark, inp, tmp_path / "job", "--partitions", "3")
    local = run_local(inp, tmp_path / "local", run_options(build_local_args(inp, tmp_path / "local")))
    for part, keys in SORT.items():
        assert read_rows(tmp_path / "job" / part, keys) == read_rows(tmp_path / "local" / part, keys), part
    q = {r["note_id"] for r in read_rows(tmp_path / "job" / "quarantine")}
    assert q == set(INVALID_UTF8)
    for k in ("tagged", "notes", "quarantined", "quarantined_by_error_class", "spans_by_label"):
        assert m["counts"][k] == local["counts"][k], k


def build_local_args(inp, out):
    import argparse

    from deid_core.app.commands.tag import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(["--input", str(inp), "--output", str(out), "--config", str(LITERAL_CONF),
                         "--name-columns", NAME_COLUMNS, "--demo-key"])


def test_usage_errors_one_line_exit_2(spark, tmp_path, capsys):
    import pyarrow as pa

    from deid_spark.jobs.deidentify import main

    table = pq.read_table(SAMPLES)
    pq.write_table(table.append_column("Text", pa.array(["x"] * table.num_rows)), tmp_path / "text.parquet")
    (tmp_path / "folder").mkdir()
    pq.write_table(table, tmp_path / "folder" / "part-0.parquet")
    (tmp_path / "folder" / "README.txt").write_text("exported notes\n")
    cases = [
        (["--input", str(tmp_path / "text.parquet"), "--output", str(tmp_path / "o")], "differ only by case"),
        (["--input", str(tmp_path / "folder"), "--output", str(tmp_path / "o")], "README.txt is not a readable"),
        (["--input", str(SAMPLES), "--output", str(SAMPLES.parent)], "overlap"),
        (["--input", str(tmp_path / "absent"), "--output", str(tmp_path / "o")], "no such file or folder"),
    ]
    for argv, message in cases:
        assert main([*argv, "--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_quality_ceiling_exits_3_with_the_same_quality_block(spark, tmp_path, capsys):
    from deid_spark.jobs.deidentify import main

    inp = write_edge_input(tmp_path / "in.parquet")
    strict = tmp_path / "strict.toml"
    strict.write_text(LITERAL_CONF.read_text().replace("max_quarantine_rate = 1.0", "max_quarantine_rate = 0.01"))
    argv = ["--input", str(inp), "--config", str(strict), "--name-columns", NAME_COLUMNS, "--demo-key"]
    assert main([*argv, "--output", str(tmp_path / "job")]) == 3
    err = capsys.readouterr().err
    assert "max_quarantine_rate" in err and err.count("\n") == 1
    from deid_core.app.cli import main as deid_main

    assert deid_main(["tag", *argv, "--output", str(tmp_path / "tag")]) == 3
    job = json.loads((tmp_path / "job" / "_manifest.json").read_text())
    tag = json.loads((tmp_path / "tag" / "_manifest.json").read_text())
    assert job["quality"] == tag["quality"] == {"quarantine_rate": round(1 / 54, 6), "max_quarantine_rate": 0.01,
                                                "passed": False}
    assert read_rows(tmp_path / "job" / "notes")  # outputs are still written


def test_staging_left_by_a_killed_run_is_removed_and_nothing_else(spark, tmp_path):
    from deid_core.app.run import Sink, staging_prefix

    out, user = tmp_path / "out", tmp_path / "scratch"
    (out / "staging-0badc0de").mkdir(parents=True)  # a killed run's staging under the output
    mine = user / f"{staging_prefix(Sink(str(out)))}dead"  # a killed run's, into the same output
    other = user / f"{staging_prefix(Sink(str(tmp_path / 'elsewhere')))}live"  # another run's
    for d in (mine, other, user / "keep-me"):
        d.mkdir(parents=True)
    run(spark, SAMPLES, out, "--staging-dir", str(user))
    assert not list(out.glob("staging-*")) and not mine.exists()
    assert sorted(p.name for p in user.iterdir()) == sorted([other.name, "keep-me"])


def test_hadoop_file_operations_for_non_local_outputs(spark, tmp_path):
    from deid_spark.udfs.plan import SparkBackend

    backend = SparkBackend(spark, partitions=1)
    (tmp_path / "staging-0badc0de").mkdir()
    (tmp_path / "keep").mkdir()
    uri = f"file://{tmp_path}"
    assert sorted(p.rsplit("/", 1)[-1] for p in backend.list_remote(uri)) == ["keep", "staging-0badc0de"]
    backend.remove_remote(f"{uri}/staging-0badc0de")
    backend.write_remote_text(f"{uri}/_manifest.json", '{"ok": true}\n')
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["_manifest.json", "keep"]
    assert backend.list_remote(f"{uri}/absent") == []
