"""pyspark.ml: fit a bundle in a Pipeline, save, load, transform: the same rows as the job with that bundle."""

from __future__ import annotations

import pytest
from crf_fixtures import tiny_corpus

from deid_core.app.options import run_options
from deid_core.app.runner import load_key_and_bundle
from deid_core.bundle import load_bundle
from deid_core.keys import DEMO_KEY, key_id
from tests.helpers_job import NAME_COLUMNS, SAMPLES, read_rows

pytestmark = pytest.mark.spark
SORT = {"notes": ("note_id",), "spans": ("note_id", "start"), "quarantine": ("note_id", "patient_id")}


def frame_rows(df, keys):
    rows = [r.asDict(recursive=True) for r in df.collect()]
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in keys))


def annotated_frame(spark):
    """The tiny hand-made training corpus (tests/crf_fixtures.py) with a gold-span column, no known names."""
    notes, gold = tiny_corpus(60)
    rows = [{"note_id": n.note_id, "text": n.text, "patient_id": n.patient_id,
             "gold": [{"start": s.start, "end": s.end, "label": s.label} for s in gold[n.note_id]]} for n in notes]
    names = ", ".join(f"{c.partition(':')[0]} string" for c in NAME_COLUMNS.split(","))
    return spark.createDataFrame(rows, "note_id string, text string, patient_id string, "
                                       f"gold array<struct<start:int, end:int, label:string>>, {names}")


def test_fit_save_load_transform_same_rows_as_job(spark, tmp_path):
    from pyspark.ml import Pipeline, PipelineModel

    from deid_core import DeidBundleEstimator, DeidTransformer
    from deid_spark.jobs.deidentify import build_parser, run_job

    key_file = tmp_path / "deid.key"
    key_file.write_bytes(DEMO_KEY)
    bundle = tmp_path / "bundle"
    estimator = DeidBundleEstimator(bundlePath=str(bundle), keyFile=str(key_file), nameColumns=NAME_COLUMNS.split(","),
                                    partitions=2)
    model = Pipeline(stages=[estimator]).fit(annotated_frame(spark))
    assert isinstance(model.stages[0], DeidTransformer) and (bundle / "bundle.json").is_file()
    model.write().overwrite().save(str(tmp_path / "pipeline"))
    saved = b"".join(p.read_bytes() for p in (tmp_path / "pipeline").rglob("*") if p.is_file())
    assert str(key_file).encode() in saved and DEMO_KEY not in saved  # a reference to the key, never the key

    loaded = PipelineModel.load(str(tmp_path / "pipeline"))
    notes = spark.read.parquet(str(SAMPLES))
    transformed = loaded.transform(notes)
    result = loaded.stages[0].lastResult

    args = build_parser().parse_args(["--input", str(SAMPLES), "--output", str(tmp_path / "job"), "--bundle", str(bundle),
                                      "--key-file", str(key_file), "--name-columns", NAME_COLUMNS, "--partitions", "2"])
    options = run_options(args)
    manifest = run_job(spark, args, options, *load_key_and_bundle(options))
    assert manifest["bundle_id"] == result.manifest["bundle_id"] == load_bundle(bundle).id != load_bundle().id
    assert frame_rows(transformed, SORT["notes"]) == read_rows(tmp_path / "job" / "notes", SORT["notes"])
    for part in ("spans", "quarantine"):
        assert frame_rows(getattr(result, part), SORT[part]) == read_rows(tmp_path / "job" / part, SORT[part]), part
    assert result.counts["spans"] == manifest["counts"]["spans"] > 0
    result.close()


def test_transformer_key_from_environment_and_output_table(spark, monkeypatch):
    from deid_core import DeidTransformer
    from deid_core.keys import KeyError_

    notes = spark.read.parquet(str(SAMPLES)).limit(4)
    monkeypatch.delenv("DEID_TEST_KEY", raising=False)
    stage = DeidTransformer(keyEnv="DEID_TEST_KEY", nameColumns=NAME_COLUMNS.split(","), stages=["rules"],
                            outputTable="quarantine")
    with pytest.raises(KeyError_, match="DEID_TEST_KEY"):
        stage.transform(notes)
    monkeypatch.setenv("DEID_TEST_KEY", DEMO_KEY.decode())
    assert stage.transform(notes).count() == 0 and stage.lastResult.counts["notes"] == 4
    assert stage.lastResult.manifest["key_id"] == key_id(DEMO_KEY)
    stage.lastResult.close()
