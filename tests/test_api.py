"""The library API: deidentify(df) and deidentify_table give the job's and `deid tag`'s rows; the README example runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from deid_core import DEMO_KEY, deidentify_table
from deid_core.app.options import run_options
from deid_core.app.runner import run_local
from deid_core.config import ConfigError
from deid_core.keys import KeyError_
from tests.helpers_job import (
    LITERAL_CONF,
    NAME_COLUMNS,
    ROOT,
    SAMPLES,
    check_outputs,
    read_rows,
    write_edge_input,
)

SORT = {"notes": ("note_id",), "spans": ("note_id", "start"), "quarantine": ("note_id", "patient_id")}
COUNTS = ("input_rows", "tagged", "notes", "quarantined", "spans", "spans_by_label", "quarantined_by_error_class")


def readme_block(name: str) -> str:
    """The fenced Python block of README.md between `<!-- NAME: ... -->` and `<!-- end of NAME -->`."""
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"<!-- {name}:.*?-->\s*```python\n(.*?)```\s*<!-- end of {name} -->", text, re.S)
    assert m, f"README.md has no '{name}' block"
    return m.group(1)


def sorted_rows(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in keys))


def frame_rows(df, keys: tuple[str, ...]) -> list[dict]:
    """A DataFrame's rows as dicts, in the order read_rows gives a written table."""
    return sorted_rows([r.asDict(recursive=True) for r in df.collect()], keys)


def tag_run(inp, out, config=LITERAL_CONF) -> dict:
    """`deid tag` on the input: the reference rows (no Spark)."""
    import argparse

    from deid_core.app.commands.tag import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    argv = ["--input", str(inp), "--output", str(out), "--name-columns", NAME_COLUMNS, "--demo-key"]
    args = p.parse_args(argv + (["--config", str(config)] if config else []))
    return run_local(inp, out, run_options(args))


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    """The edge-case input and `deid tag`'s outputs of it under the literal test config."""
    base = tmp_path_factory.mktemp("api")
    inp = write_edge_input(base / "in.parquet")
    return inp, base, tag_run(inp, base / "tag")


def test_import_deid_core_never_imports_pyspark():
    code = ("import sys, deid_core, deid_core.app.api; deid_core.deidentify_table; "
            "assert not [m for m in sys.modules if m.startswith(('pyspark', 'py4j', 'deid_spark'))]")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_table_api_same_rows_as_deid_tag(edge, tmp_path):
    inp, base, manifest = edge
    result = deidentify_table(pq.read_table(inp).to_pandas(), key=DEMO_KEY, name_columns=NAME_COLUMNS,
                              config=LITERAL_CONF, output=tmp_path / "out")
    for part, keys in SORT.items():
        reference = read_rows(base / "tag" / part, keys)
        assert sorted_rows(getattr(result, part).to_pylist(), keys) == reference, part
        assert read_rows(tmp_path / "out" / part, keys) == reference, part
    assert {k: result.counts[k] for k in COUNTS} == {k: manifest["counts"][k] for k in COUNTS}
    assert json.loads((tmp_path / "out" / "_manifest.json").read_text())["counts"] == result.counts


def test_key_and_option_errors_before_any_work(tmp_path):
    table = pq.read_table(SAMPLES)
    with pytest.raises(KeyError_, match="at least 16 bytes"):
        deidentify_table(table, key=b"short", name_columns=NAME_COLUMNS)
    secret_looking = "this-string-is-not-a-file-but-maybe-a-key"
    with pytest.raises(KeyError_, match="no such key file") as info:
        deidentify_table(table, key=secret_looking, name_columns=NAME_COLUMNS)
    assert secret_looking not in str(info.value)  # a str given by mistake may be the key itself
    key_file = tmp_path / "k.key"
    key_file.write_bytes(DEMO_KEY)
    with pytest.raises(ConfigError, match="unknown label 'NOPE'"):
        deidentify_table(table, key=key_file, name_columns={"attending_name": "NOPE"})
    with pytest.raises(ConfigError, match="not a column of the input"):
        deidentify_table(table, key=str(key_file), name_columns=["no_such_column"], output=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.spark
def test_readme_notebook_example(spark, monkeypatch):
    """Both README examples run as written and give the golden output (default pipeline, demo key)."""
    from tests.golden_outputs import golden_records, load_golden

    monkeypatch.chdir(ROOT)
    golden = load_golden()
    persistent = len(spark.sparkContext._jsc.getPersistentRDDs())
    namespace = {"spark": spark}
    exec(compile(readme_block("api example"), "README.md", "exec"), namespace)  # noqa: S102 - the README's code
    counts = namespace["result"].counts
    assert counts["tagged"] == len(golden) and counts["quarantined"] == sum("quarantined" in r for r in golden)
    assert counts["spans"] == sum(len(r.get("spans", ())) for r in golden) > 0
    assert len(spark.sparkContext._jsc.getPersistentRDDs()) == persistent  # close() freed the cached result
    table = {}
    exec(compile(readme_block("table example"), "README.md", "exec"), table)  # noqa: S102
    out = table["out"]
    assert golden_records(out.notes.to_pylist(), out.spans.to_pylist(), out.quarantine.to_pylist()) == golden


@pytest.mark.spark
def test_dataframe_api_same_rows_as_deid_tag_and_job_outputs(spark, edge, tmp_path):
    from deid_core import deidentify

    inp, base, manifest = edge
    df = spark.read.parquet(str(inp))
    with deidentify(df, key=DEMO_KEY, name_columns=NAME_COLUMNS, config=LITERAL_CONF, partitions=3) as result:
        for part, keys in SORT.items():
            assert frame_rows(getattr(result, part), keys) == read_rows(base / "tag" / part, keys), part
        assert {k: result.counts[k] for k in COUNTS} == {k: manifest["counts"][k] for k in COUNTS}
        assert "_manifest.json" not in {p.name for p in tmp_path.iterdir()}
    written = deidentify(df, key=DEMO_KEY, name_columns=NAME_COLUMNS.split(","), config=LITERAL_CONF,
                         output=str(tmp_path / "out"))
    for part, keys in SORT.items():
        assert read_rows(tmp_path / "out" / part, keys) == read_rows(base / "tag" / part, keys), part
        assert frame_rows(getattr(written, part), keys) == read_rows(base / "tag" / part, keys), part
    assert json.loads((tmp_path / "out" / "_manifest.json").read_text())["counts"] == written.counts
    check_outputs(inp, tmp_path / "out")


@pytest.mark.spark
def test_dataframe_api_refuses_before_any_work(spark, tmp_path):
    from deid_core import deidentify

    df = spark.read.parquet(str(SAMPLES))
    with pytest.raises(ConfigError, match="exclude each other"):
        deidentify(df, key=DEMO_KEY, output=str(tmp_path / "a"), output_table_prefix="x.")
    with pytest.raises(ConfigError, match="missing required column 'text'"):
        deidentify(df.drop("text"), key=DEMO_KEY, name_columns=NAME_COLUMNS, output=str(tmp_path / "b"))
    with pytest.raises(ConfigError, match=r"\[job\] batch_size = 0"):
        deidentify(df, key=DEMO_KEY, batch_size=0)
    assert not list(tmp_path.iterdir())


def test_progress_line_estimates_notes_rate_and_eta():
    from deid_spark.udfs.progress import TagProgress

    progress = TagProgress(None, total=1000, partitions=4, interval=10)
    t0 = progress.started
    assert progress.update([(3, 4, 1)], now=t0 + 5) is None  # not yet: one line per interval
    stages = [(1, 200, 200), (3, 4, 1), (2, 4, 0)]  # the tagging stage: the latest with one task per partition
    assert progress.update(stages, now=t0 + 10) == ("tagging: ~250 of 1,000 notes (1/4 tasks), 25 notes/s, "
                                                    "0 min 10 s elapsed, ETA 0 min 30 s")
    assert progress.update([(3, 4, 2)], now=t0 + 15) is None
    assert TagProgress(None, total=10, partitions=4, interval=0).update(stages, now=t0 + 99) is None


def test_classic_poller_reads_the_tracker_when_a_line_is_due(spark):
    """The classic poller waits for the next line, not POLL_S, once lines are due every `interval` s (it read the
    status tracker over py4j every second although it logged every 30 s)."""
    import time

    from deid_spark.udfs.progress import POLL_S, TagProgress

    parts = 2
    interval = 2 * POLL_S
    progress = TagProgress(spark, total=4, partitions=parts, interval=interval)

    def slow(rows):
        time.sleep(4 * interval)
        yield from rows

    with progress:
        spark.sparkContext.parallelize(range(4), parts).mapPartitions(slow).count()
    elapsed = time.monotonic() - progress.started
    # once the tagging stage shows, one read per line; before it (the job's first second), one per POLL_S
    assert 1 <= progress.polls <= elapsed / interval + 2 / POLL_S + 1, (progress.polls, elapsed)
