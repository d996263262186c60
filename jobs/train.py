"""spark-submit entry point: train the CRF taggers into a model bundle.

Same options as `deid train`. Rule tagging and CRF feature extraction run on the executors
(mapPartitions over the training notes); the feature sequences stream back to the driver
(toLocalIterator), where crfsuite trains (it is single-threaded and needs all sequences in
one process). Word clusters and the optional patient-grouped CV run on the driver. Also runs
as `python jobs/train.py ...` in local mode.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the checkout importable here and in workers
    _ROOT = str(Path(__file__).resolve().parent.parent)
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)

from deid_core.app.commands import train as train_cmd  # noqa: E402
from deid_core.config import Config, CrfSettings  # noqa: E402
from deid_core.training.corpora import pipeline_config, read_training_corpus  # noqa: E402
from deid_core.training.cv import run_cv  # noqa: E402

log = logging.getLogger("deid.train_job")


def _partition_sequences(conf: CrfSettings, dconf: Config, model: str, clusters, easy: bool, use_rules: bool):
    """mapPartitions function: (note, gold, domain) records -> (features, tags) pairs."""

    def run(records):
        from deid_core.doc import Doc
        from deid_core.engine.pipeline import build_stage
        from deid_core.training.train import TrainDoc, model_sequences

        rules = build_stage(dconf, "rules", None).feature_spans if use_rules else None
        docs = [TrainDoc(Doc(n), g, d) for n, g, d in records]
        spans = [rules(d.doc) if rules else () for d in docs]
        yield from model_sequences(docs, conf, model, clusters=clusters, rule_spans=spans, easy=easy)

    return run


def main(argv: list[str] | None = None) -> int:
    """Parse options, extract features on Spark, train on the driver, write the bundle."""
    parser = argparse.ArgumentParser(prog="jobs/train.py", description=__doc__.splitlines()[0])
    train_cmd.add_arguments(parser)
    parser.add_argument("--partitions", type=int, default=0, help="feature-extraction partitions (0: Spark default)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    from pyspark.sql import SparkSession

    from deid_core.engine.pipeline import build_stage
    from deid_core.training.train import crf_config, make_docs, set_bundle_metadata, train_bundle

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local mode: workers run this interpreter
    builder = SparkSession.builder.appName("deid-train")
    if os.environ.get("DEID_SPARK_MASTER") or "SPARK_HOME" not in os.environ:
        builder = builder.master(os.environ.get("DEID_SPARK_MASTER", "local[*]"))
    spark = builder.getOrCreate()
    try:
        conf = crf_config(args.crf_config)
        dconf = pipeline_config(args.config)
        models = args.models.split(",") if args.models else None
        easy = None if args.easyadapt is None else args.easyadapt == "on"
        use_rules = not args.no_rules
        notes, gold = read_training_corpus(args.physionet)
        records = [(n, gold.get(n.note_id, []), "T") for n in notes]
        extra = []
        for path in args.synthetic:
            s_notes, s_gold = read_training_corpus(path)
            records += [(n, s_gold.get(n.note_id, []), "S") for n in s_notes]
            extra += make_docs(s_notes, s_gold, "S")
        cv_report = None
        if args.cv:
            cv_report = run_cv(notes, gold, conf, dconf, args.cv, extra=extra, use_rules=use_rules,
                                         models=models, easy=easy)
        rdd = spark.sparkContext.parallelize(records, args.partitions or None)

        def provider(model: str, clusters, easy_on: bool):
            return rdd.mapPartitions(_partition_sequences(conf, dconf, model, clusters, easy_on, use_rules)).toLocalIterator()

        docs = make_docs(notes, gold) + extra
        bundle = train_bundle(docs, conf, Path(args.output), rules=build_stage(dconf, "rules", None).feature_spans if use_rules else None,
                              models=models, easy=easy, sequence_provider=provider,
                              extra={"target_corpus": Path(args.physionet).name,
                                     "source_corpora": [Path(p).name for p in args.synthetic], "spark": True})
        if cv_report is not None:
            set_bundle_metadata(bundle.path, "cv", cv_report)
        log.info("bundle %s written to %s", bundle.id[:12], bundle.path)
        return 0
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
