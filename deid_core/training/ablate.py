"""Ablations by configuration: `python -m deid_core.training.ablate --physionet DIR [--synthetic DIR] ...`.

Each variant is a patch of conf/crf.toml (drop feature families, change the scheme, the model
split, EasyAdapt, the source corpus); each runs patient-grouped K-fold CV on the target corpus
and is scored, through deid_core.training.evaluation, under every merge policy with rules + CRF, CRF
alone and rules alone. Results go to a JSON file (appended per variant) and a Markdown table.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import time
from dataclasses import replace
from pathlib import Path

from deid_core.config import Merge as MergeOptions
from deid_core.config import conf_file, crf_from_tables
from deid_core.engine.merge import Merger
from deid_core.training.corpora import pipeline_config, read_training_corpus
from deid_core.training.cv import brief, cv_stage_spans, merged_predictions, score
from deid_core.training.train import make_docs

log = logging.getLogger("deid.ablate")

# name -> (patch description, function(conf) -> None, uses synthetic source data, EasyAdapt)
VARIANTS: dict[str, tuple[str, object, bool, bool]] = {}


def variant(name: str, desc: str, synthetic: bool = False, easy: bool = False):
    """Register a variant."""

    def deco(fn):
        VARIANTS[name] = (desc, fn, synthetic, easy)
        return fn

    return deco


def _drop(conf: dict, families: list[str]) -> None:  # conf: conf/crf.toml's tables, patched before checking
    for m in conf["models"].values():
        m["features"] = [f for f in m["features"] if f not in families]


@variant("base", "token CRF (single model), all features, BIO")
def _base(conf):
    pass


@variant("split", "two-model split (quant + names)")
def _split(conf):
    conf["training"]["models"] = ["quant", "names"]


@variant("bioes", "BIOES scheme")
def _bioes(conf):
    conf["labels"]["scheme"] = "BIOES"


for _fam in ("gazetteer", "rule_hits", "cluster", "metadata", "attribute", "section"):
    variant(f"-{_fam}", f"without {_fam} features")(lambda conf, f=_fam: _drop(conf, [f]))
variant("-context", "without window/n-gram features")(
    lambda conf: _drop(conf, ["window_word", "window_shape", "word_bigram", "shape_ngram", "context_shape"]))
variant("+char", "token CRF + char CRF (seed 001)")(lambda conf: conf["training"].update(models=["single", "char"]))
variant("char", "char CRF alone (no token CRF)")(lambda conf: conf["training"].update(models=["char"]))
variant("+synth", "+ synthetic source notes, plain merge", synthetic=True)(lambda conf: None)
variant("+synth_ea", "+ synthetic source notes, EasyAdapt", synthetic=True, easy=True)(lambda conf: None)


def run_variant(name: str, notes, gold, extra, dconf: dict, folds: int, iters: int | None) -> dict:
    """CV one variant; headline numbers per stage set / merge policy."""
    desc, patch, synthetic, easy = VARIANTS[name]
    tables = copy.deepcopy(conf_file("crf.toml"))
    if iters:
        tables["training"]["max_iterations"] = iters
    patch(tables)
    conf = crf_from_tables(tables, f"ablation variant {name}")
    t0 = time.perf_counter()
    staged = cv_stage_spans(notes, gold, conf, dconf, k=folds, extra=extra if synthetic else (),
                            models=list(conf.training.models), easy=easy)
    out = {"variant": name, "description": desc, "folds": folds, "seconds": round(time.perf_counter() - t0)}
    opts = dconf.merge
    for pol in ("rules_win", "cascade", "union"):
        out[f"rules+crf/{pol}"] = brief(score(notes, gold, merged_predictions(notes, staged, Merger(pol, opts), ["rules", "crf"])))
    out["crf"] = brief(score(notes, gold, merged_predictions(notes, staged, Merger("rules_win", opts), ["crf"])))
    out["rules"] = brief(score(notes, gold, merged_predictions(notes, staged, Merger("rules_win", opts), ["rules"])))
    if any("crf_char" in v.spans for v in staged.values()):
        out.update(char_rows(notes, gold, staged, opts))
    return out


SEED001_PRIORITY = ("rules", "metadata", "crf_char", "crf")


def char_rows(notes, gold, staged, opts: MergeOptions) -> dict:
    """Rows with the char CRF's stage: alone, rules + char, rules + token + char under every policy."""
    seed001 = Merger("cascade", replace(opts, priority=SEED001_PRIORITY))
    rows = {"crf_char": Merger("rules_win", opts)}
    sets = {"rules+crf_char": ["rules", "crf_char"], "rules+crf+crf_char": ["rules", "crf", "crf_char"],
            "rules+crf": ["rules", "crf"]}
    out = {}
    for name in sets:
        for pol in ("rules_win", "cascade", "union"):
            if name != "rules+crf":
                rows[f"{name}/{pol}"] = Merger(pol, opts)
        rows[f"{name}/cascade_seed001"] = seed001
    for key, merger in rows.items():
        stages = sets.get(key.split("/")[0], ["crf_char"])
        out[key] = brief(score(notes, gold, merged_predictions(notes, staged, merger, stages)))
    return out


def markdown(results: list[dict], key: str = "rules+crf/union") -> str:
    """One row per variant: overlap recall/PPV and binary token F1 of `key`, and CRF alone."""
    lines = [f"| variant | {key} recall | PPV | bin-tok F1 | CRF-only recall | PPV | F1 |", "|---|---|---|---|---|---|---|"]
    for r in results:
        a, c = r[key], r["crf"]
        lines.append(f"| {r['description']} | {a['overlap_recall']:.3f} | {a['overlap_ppv']:.3f} | {a['binary_token_f1']:.3f} "
                     f"| {c['overlap_recall']:.3f} | {c['overlap_ppv']:.3f} | {c['binary_token_f1']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen variants and write JSON + Markdown."""
    ap = argparse.ArgumentParser(prog="python -m deid_core.training.ablate", description=__doc__.splitlines()[0])
    ap.add_argument("--physionet", required=True, help="target corpus (PhysioNet format or Parquet notes+gold)")
    ap.add_argument("--synthetic", default=None, help="source corpus for the +synth variants")
    ap.add_argument("--variants", default="base", help=f"comma-separated, from: {', '.join(VARIANTS)}")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=0, help="override max_iterations (0: config)")
    ap.add_argument("--out", required=True, help="JSON results file (appended)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    notes, gold = read_training_corpus(args.physionet)
    extra = []
    if args.synthetic:
        s_notes, s_gold = read_training_corpus(args.synthetic)
        extra = make_docs(s_notes, s_gold, "S")
    dconf = pipeline_config(None)
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.is_file() else []
    for name in args.variants.split(","):
        r = run_variant(name, notes, gold, extra, dconf, args.folds, args.iterations or None)
        results = [x for x in results if x["variant"] != name] + [r]
        out.write_text(json.dumps(results, indent=1) + "\n")
        log.info("%s: %s", name, json.dumps(r["rules+crf/union"]))
    out.with_suffix(".md").write_text(markdown(results) + "\n")
    return 0




def holdout_main(argv: list[str] | None = None) -> int:
    """`python -m deid_core.training.ablate holdout --bundle B --corpus C`: score a bundle on a held-out corpus."""
    ap = argparse.ArgumentParser(prog="python -m deid_core.training.ablate holdout")
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--stages", default="rules,crf")
    ap.add_argument("--merge", default=None)
    ap.add_argument("--json", default=None, help="write the full report here")
    args = ap.parse_args(argv)
    from deid_core.training.cv import evaluate_bundle

    notes, gold = read_training_corpus(args.corpus)
    rep = evaluate_bundle(args.bundle, notes, gold, pipeline_config(None), args.stages.split(","), args.merge)
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    print(json.dumps({**brief(rep), "binary_token_recall": round(rep["binary_token"]["recall"], 4),
                      "strict_recall": round(rep["strict"]["recall"], 4),
                      "strict_precision": round(rep["strict"]["precision"], 4)}))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(holdout_main(sys.argv[2:]) if sys.argv[1:2] == ["holdout"] else main())
