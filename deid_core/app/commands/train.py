"""`deid train`: train the CRF taggers on annotated corpora and write a model bundle.

Target-domain data: a PhysioNet-format folder (id.text, id-phi.phrase, patients.tsv), its gold
harmonized ([training] harmonize). Source-domain data (optional, e.g. synthetic notes): a
PhysioNet-format folder or a folder with notes.parquet + gold.parquet (or notes/ + gold/
sub-folders). With --recipe NAME (conf/recipes/NAME.toml), re-inserted copies of the target notes
and generated synthetic notes are pooled too (training.recipe; the default bundle's recipe). With --cv K, patient-grouped
K-fold CV of the full hybrid (rules + CRF + merge) is run first and its metrics recorded in
bundle.json; with --tune, c1/c2 are chosen on it from the grid of conf/crf.toml (best overlap F2:
recall first).

Each shipped bundle is retrained with the recipe its configuration names ([model] recipe) and, for a
profile, the profile's [crf.training] (models/<bundle>/README.md has the whole command):
  models/default    deid train --physionet DIR --recipe breadth12b --output models/default
  models/physionet  deid train --physionet DIR --recipe physionet --easyadapt on --output models/physionet
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import asdict, replace
from pathlib import Path

from deid_core.config import recipe_settings
from deid_core.training.corpora import pipeline_config, read_training_corpus
from deid_core.training.cv import f_beta, run_cv
from deid_core.training.recipe import (
    reinserted_docs,
    synthetic_docs,
    synthetic_provenance,
    target_docs,
)
from deid_core.training.train import (
    TrainDoc,
    crf_config,
    make_docs,
    set_bundle_metadata,
    train_bundle,
)

log = logging.getLogger("deid.train")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of `deid train`."""
    p.add_argument("--physionet", required=True, help="PhysioNet-format folder (target domain)")
    p.add_argument("--synthetic", action="append", default=[], help="source-domain corpus folder (repeatable)")
    p.add_argument("--output", required=True, help="bundle directory to write")
    p.add_argument("--crf-config", default=None, help="CRF config TOML (default conf/crf.toml)")
    p.add_argument("--config", default=None, help="pipeline config TOML merged over conf/deidentify.toml")
    p.add_argument("--models", default=None, help="comma-separated [models.*] names (default from config)")
    p.add_argument("--cv", type=int, default=0, help="run patient-grouped K-fold CV first (0: skip)")
    p.add_argument("--tune", action="store_true", help="choose c1/c2 by CV over the config grid")
    p.add_argument("--no-rules", action="store_true", help="train without rule-hit features")
    p.add_argument("--easyadapt", choices=["on", "off"], default=None, help="override [training] easyadapt")
    p.add_argument("--report", default=None, help="write the CV report JSON here too")
    p.add_argument("--recipe", default=None,
                   help="training recipe: conf/recipes/NAME.toml or a .toml file (re-inserted copies of the "
                        "--physionet notes + generated synthetic notes, pooled); a configuration's [model] recipe "
                        "names the one its bundle is trained with (models/default: 'previous'; models/physionet: "
                        "'physionet' with --easyadapt on)")


def run(args: argparse.Namespace) -> int:
    """Train (optionally CV/tune first) and write the bundle."""
    from deid_core.engine.pipeline import build_stage

    conf = crf_config(args.crf_config)
    dconf = pipeline_config(args.config)
    recipe = recipe_settings(args.recipe) if args.recipe else None  # checked before any work
    models = args.models.split(",") if args.models else None
    easy = None if args.easyadapt is None else args.easyadapt == "on"
    notes, gold = read_training_corpus(args.physionet)
    extra: list[TrainDoc] = []
    for path in args.synthetic:
        s_notes, s_gold = read_training_corpus(path)
        extra.extend(make_docs(s_notes, s_gold, domain="S"))
    augment = None
    if recipe is not None:
        extra.extend(synthetic_docs(recipe)[0])

        def augment(ns, g):  # a fold's (or the whole corpus's) re-inserted copies
            return reinserted_docs(ns, g, recipe)
    use_rules = not args.no_rules
    t0 = time.perf_counter()
    tconf = conf.training
    cv_report = None
    if args.tune:
        k = args.cv or tconf.folds
        best = None
        for c1 in tconf.grid_c1:
            for c2 in tconf.grid_c2:
                rep = run_cv(notes, gold, conf, dconf, k, extra=extra, c1=c1, c2=c2, use_rules=use_rules,
                             models=models, easy=easy, augment=augment)
                key = (f_beta(rep["overlap"]["precision"], rep["overlap"]["recall"], 2.0), rep["binary_token"]["f1"])
                log.info("c1=%s c2=%s: overlap recall %.4f ppv %.4f", c1, c2, rep["overlap"]["recall"], rep["overlap"]["precision"])
                if best is None or key > best[0]:
                    best = (key, c1, c2, rep)
        _, c1, c2, cv_report = best
        conf = replace(conf, training=replace(tconf, c1=c1, c2=c2))
    elif args.cv:
        cv_report = run_cv(notes, gold, conf, dconf, args.cv, extra=extra, use_rules=use_rules,
                           models=models, easy=easy, augment=augment)
    docs = target_docs(notes, gold, conf, recipe) + extra
    rules = build_stage(dconf, "rules", None).feature_spans if use_rules else None  # the rule_hits features' spans
    bundle = train_bundle(docs, conf, Path(args.output), rules=rules, models=models, easy=easy,
                          extra={"target_corpus": Path(args.physionet).name,
                                 "source_corpora": [Path(p).name for p in args.synthetic],
                                 "harmonized": conf.training.harmonize,
                                 **({"recipe": asdict(recipe), "recipe_name": args.recipe,
                                     **synthetic_provenance(recipe)} if recipe else {})})
    if cv_report is not None:
        set_bundle_metadata(bundle.path, "cv", cv_report)
        if args.report:
            Path(args.report).write_text(json.dumps(cv_report, indent=2) + "\n")
        log.info("CV overlap recall %.4f ppv %.4f, binary token F1 %.4f", cv_report["overlap"]["recall"],
                 cv_report["overlap"]["precision"], cv_report["binary_token"]["f1"])
    log.info("bundle %s written to %s in %.0fs", bundle.id[:12], bundle.path, time.perf_counter() - t0)
    return 0
