"""The worker side of the job without Spark: one Deidentifier per worker, per-note quarantine."""

from __future__ import annotations

import gc
import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.commands.summary import main as summary_main
from deid_core.app.options import effective_config, parse_name_columns
from deid_core.app.schema import validate_input_schema
from deid_core.bundle import bundle_bytes, load_bundle
from deid_core.keys import DEMO_KEY, KeyError_, key_id
from deid_spark.udfs import deidentify as worker
from deid_spark.udfs.shipping import KeyRef, read_key
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES, write_edge_input


@pytest.fixture(scope="module")
def demo_key_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("key") / "demo.key"
    path.write_bytes(DEMO_KEY)
    return str(path)


@pytest.fixture(autouse=True)
def _gc_restored():
    """The tagging function settles a worker's heap (gc.freeze, thresholds): undone after each test here."""
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def payload(key_file, config=None):
    table = pq.read_table(SAMPLES)
    spec = validate_input_schema(table.schema, parse_name_columns(NAME_COLUMNS), "test")
    bundle = load_bundle()
    ref = KeyRef("not-shipped.bin", key_id(DEMO_KEY), key_file)
    return worker.WorkerPayload(bundle.id, bundle_bytes(bundle), config or effective_config(str(LITERAL_CONF)),
                                ref, spec)


def test_payload_never_holds_the_key(demo_key_file):
    blob = pickle.dumps(payload(demo_key_file))
    assert DEMO_KEY not in blob and DEMO_KEY.hex().encode() not in blob


def test_shipped_key_fingerprint_is_checked(tmp_path):
    wrong = tmp_path / "wrong.key"
    wrong.write_bytes(b"another-key-of-enough-length")
    with pytest.raises(KeyError_, match="fingerprint mismatch"):
        read_key(KeyRef("x.bin", key_id(DEMO_KEY), str(wrong)))
    with pytest.raises(KeyError_, match="not available"):
        read_key(KeyRef("x.bin", key_id(DEMO_KEY), str(tmp_path / "absent.key")))


def test_deidentifier_built_once_per_worker_and_payload(demo_key_file):
    p = payload(demo_key_file)
    p2 = pickle.loads(pickle.dumps(p))  # what an executor receives
    before = worker.BUILDS["count"]
    first = worker.worker_deidentifier(p2)
    assert worker.worker_deidentifier(p2) is first and worker.worker_deidentifier(p) is first
    assert worker.BUILDS["count"] == before + 1
    other = payload(demo_key_file, effective_config(str(LITERAL_CONF), {"pipeline": {"mode": "mask", "merge": "longest"},
                                                          "job": {"batch_size": 3}}))
    assert worker.worker_deidentifier(other) is not first  # another config digest, another build


def test_one_failing_note_does_not_stop_the_batch(tmp_path, demo_key_file):
    table = pq.read_table(write_edge_input(tmp_path / "in.parquet"))
    table = table.append_column("_deid_duplicate", pa.array([False] * table.num_rows))
    run = worker.tag_batches(payload(demo_key_file))
    out = pa.Table.from_batches(list(run(iter(table.to_batches(10)))))
    assert out.num_rows == table.num_rows
    by_id = {}
    for r in out.to_pylist():
        by_id.setdefault(r["note_id"], r)
    assert by_id["E-FAULTME"]["error_class"] == "RuntimeError" and by_id["E-FAULTME"]["text"] is None
    assert by_id["E-ctrl"]["error_stage"] is None and by_id["E-ctrl"]["spans"]
    assert "patient_first_name" not in out.column_names and "encounter_type" in out.column_names


def test_summary_prints_counts_not_text(tmp_path, capsys):
    from deid_core.app.cli import main as deid_main

    assert deid_main(["tag", "--input", str(SAMPLES), "--output", str(tmp_path / "o"), "--config",
                      str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key"]) == 0
    capsys.readouterr()
    assert summary_main([str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "notes in: 48" in text and "spans by label:" in text and "quarantine" in text
    names = set(pq.read_table(SAMPLES, columns=["patient_last_name"]).column(0).to_pylist())
    assert not any(n in text for n in names)
    assert summary_main([str(tmp_path / "missing")]) == 2


def test_unpacked_bundle_removed_once_built(tmp_path, monkeypatch, demo_key_file):
    import os
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    orphan = tmp_path / "deid-bundle-0123456789ab-orphan"  # left by a worker killed mid-build (no lock)
    orphan.mkdir()
    os.utime(orphan, (1_000_000_000, 1_000_000_000))
    before = worker.BUILDS["count"]
    p = payload(demo_key_file, effective_config(str(LITERAL_CONF), {"job": {"batch_size": 77}}))
    deid = worker.worker_deidentifier(p)
    assert worker.BUILDS["count"] == before + 1
    assert not list(tmp_path.glob("deid-bundle-*"))  # ours removed after the build, the orphan swept
    assert deid.process_many([]) == []


def test_worker_heap_settled_once_after_the_build(demo_key_file):
    from pyspark import cloudpickle

    table = pq.read_table(SAMPLES)
    table = table.append_column("_deid_duplicate", pa.array([False] * table.num_rows))
    p = payload(demo_key_file, effective_config(str(LITERAL_CONF), {"job": {"batch_size": 5}}))

    def shipped():  # the tagging function as a Spark worker gets it: pickled by value
        return cloudpickle.loads(cloudpickle.dumps(worker.tag_batches(p)))

    gc.set_threshold(700, 10, 10)
    first = pa.Table.from_batches(list(shipped()(iter(table.to_batches(16)))))
    assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] == p.config.job.gc.young_threshold
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    again = pa.Table.from_batches(list(shipped()(iter(table.to_batches(16)))))
    assert gc.get_freeze_count() == 0 and gc.get_threshold()[0] == 700  # built before: not settled again
    assert again.equals(first)  # the collector's settings change no output
