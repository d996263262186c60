"""`deid train`: train the CRF taggers on annotated corpora and write a model bundle.

Target-domain data: a PhysioNet-format folder (id.text, id-phi.phrase, patients.tsv).
Source-domain data (optional, e.g. synthetic notes): a PhysioNet-format folder or a folder
with notes.parquet + gold.parquet (or notes/ + gold/ sub-folders). With --cv K, patient-grouped
K-fold CV of the full hybrid (rules + CRF + merge) is run first and its metrics recorded in
bundle.json; with --tune, c1/c2 are chosen on it from the grid of conf/crf.toml (best overlap F2:
recall first).
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import time
from pathlib import Path

from deid_core.crf.train import TrainDoc, crf_config, make_docs, set_bundle_metadata, train_bundle

log = logging.getLogger("deid.train")
# Known-PHI metadata columns used when a Parquet training corpus has them (EHR features).
NAME_COLUMNS = {"patient_first_name": "PATIENT", "patient_last_name": "PATIENT", "attending_name": "DOCTOR"}


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


def read_corpus(path: str):
    """(notes, gold) of a PhysioNet-format folder or a notes/gold Parquet folder."""
    from deid_core.io.physionet import read_physionet

    folder = Path(path)
    if (folder / "id.text").is_file():
        c = read_physionet(folder)
        return c.notes, c.gold
    from deid_core.io.tables import read_notes, read_spans, read_table

    for notes_name, gold_name in (("notes.parquet", "gold.parquet"), ("notes", "gold"), ("notes", "spans")):
        if (folder / notes_name).exists() and (folder / gold_name).exists():
            present = set(read_table(folder / notes_name).column_names)
            names = {c: lab for c, lab in NAME_COLUMNS.items() if c in present}
            return read_notes(folder / notes_name, names), read_spans(folder / gold_name)
    raise FileNotFoundError(f"{folder}: neither id.text nor notes(.parquet) + gold(.parquet) found")


def pipeline_config(path: str | None) -> dict:
    """conf/deidentify.toml with an optional override file merged over it."""
    from deid_core.config import conf_file, deep_merge, load_toml

    base = conf_file("deidentify.toml")
    return deep_merge(base, load_toml(path)) if path else copy.deepcopy(base)


def run_cv(notes, gold, conf, dconf, k, *, extra, c1=None, c2=None, use_rules=True, models=None, easy=None) -> dict:
    """CV report of the full hybrid under the configured merge policy."""
    from deid_core.crf.cv import cv_stage_spans, merged_predictions, score
    from deid_core.pipeline import _resolve

    staged = cv_stage_spans(notes, gold, conf, dconf, k=k, c1=c1, c2=c2, extra=extra,
                            use_rules=use_rules, models=models, easy=easy)
    merge_name = dconf.get("pipeline", {}).get("merge", "rules_win")
    merger = _resolve(dconf["registry"]["merge"][merge_name])(dconf)
    stages = ["rules", "crf"] if use_rules else ["crf"]
    if "crf_char" in dconf.get("pipeline", {}).get("stages", []) and any("crf_char" in v for v in staged.values()):
        stages.append("crf_char")  # the char CRF is scored when the configured pipeline runs it
    report = score(notes, gold, merged_predictions(notes, staged, merger, stages))
    report["crf_only"] = score(notes, gold, merged_predictions(notes, staged, merger, ["crf"]))
    report["setup"] = {"folds": k, "merge": merge_name, "grouped_by": "patient", "notes": len(notes),
                       "source_notes": len(extra), "c1": c1, "c2": c2}
    return report


def f_beta(precision: float, recall: float, beta: float) -> float:
    """F-beta (beta 2: recall weighs four times precision): the recall-first tuning objective."""
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall) if precision + recall else 0.0


def run(args: argparse.Namespace) -> int:
    """Train (optionally CV/tune first) and write the bundle."""
    from deid_core.crf.tagger import rule_source

    conf = copy.deepcopy(crf_config(args.crf_config))
    dconf = pipeline_config(args.config)
    models = args.models.split(",") if args.models else None
    easy = None if args.easyadapt is None else args.easyadapt == "on"
    notes, gold = read_corpus(args.physionet)
    extra: list[TrainDoc] = []
    for path in args.synthetic:
        s_notes, s_gold = read_corpus(path)
        extra.extend(make_docs(s_notes, s_gold, domain="S"))
    use_rules = not args.no_rules
    t0 = time.perf_counter()
    tconf = conf.setdefault("training", {})
    cv_report = None
    if args.tune:
        k = args.cv or int(tconf.get("folds", 5))
        best = None
        for c1 in tconf.get("grid_c1", [tconf.get("c1", 0.05)]):
            for c2 in tconf.get("grid_c2", [tconf.get("c2", 0.01)]):
                rep = run_cv(notes, gold, conf, dconf, k, extra=extra, c1=c1, c2=c2, use_rules=use_rules,
                             models=models, easy=easy)
                key = (f_beta(rep["overlap"]["precision"], rep["overlap"]["recall"], 2.0), rep["binary_token"]["f1"])
                log.info("c1=%s c2=%s: overlap recall %.4f ppv %.4f", c1, c2, rep["overlap"]["recall"], rep["overlap"]["precision"])
                if best is None or key > best[0]:
                    best = (key, c1, c2, rep)
        _, tconf["c1"], tconf["c2"], cv_report = best
    elif args.cv:
        cv_report = run_cv(notes, gold, conf, dconf, args.cv, extra=extra, use_rules=use_rules,
                           models=models, easy=easy)
    docs = make_docs(notes, gold) + extra
    rules = rule_source(dconf, None) if use_rules else None
    bundle = train_bundle(docs, conf, Path(args.output), rules=rules, models=models, easy=easy,
                          extra={"target_corpus": Path(args.physionet).name,
                                 "source_corpora": [Path(p).name for p in args.synthetic]})
    if cv_report is not None:
        set_bundle_metadata(bundle.path, "cv", cv_report)
        if args.report:
            Path(args.report).write_text(json.dumps(cv_report, indent=2) + "\n")
        log.info("CV overlap recall %.4f ppv %.4f, binary token F1 %.4f", cv_report["overlap"]["recall"],
                 cv_report["overlap"]["precision"], cv_report["binary_token"]["f1"])
    log.info("bundle %s written to %s in %.0fs", bundle.id[:12], bundle.path, time.perf_counter() - t0)
    return 0
