"""The generalization benchmark (issue 14; `./build.sh bench generalization`, docs/evaluation.md).

Parts, each scored with the full default pipeline (rules + CRF, surrogate mode, patients.tsv or
synthetic metadata names as known PHI), recall first:
1. blind  — the default recipe trained on PhysioNet `tune` patients (+ synthetic training types),
            scored on the `blind` patients (aggregate figures only: training.blind.BlindCorpus);
2. layouts — the same bundle on synthetic notes of held-out note types, from an unseen seed;
3. reinsert — PhysioNet notes with every gold PHI replaced by new strings (training.reinsert):
            patient-grouped CV over tune patients, and the tune bundle on the re-inserted blind part;
4. readable — gold person names still standing in the surrogate output of parts 1-3.
One bundle (tune + synthetic training types) serves parts 1, 2, 4 and the blind re-insertion;
bundles are cached by their inputs' digest (training.bundle_cache).
"""

from __future__ import annotations

import copy
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deid_core.bundle import Bundle
from deid_core.config import ConfigError, conf_file, deep_merge, load_toml
from deid_core.engine.crf.tagger import rule_source
from deid_core.engine.pipeline import build_deidentifier
from deid_core.io.physionet import read_physionet
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.blind import SPLIT_FILE, read_tsv_split, split_corpus
from deid_core.training.bundle_cache import cached_bundle
from deid_core.training.corpora import pipeline_config
from deid_core.training.corpus_eval import (
    aggregate,
    coarse_locations,
    convention_view,
    misses,
    run_pipeline,
)
from deid_core.training.reinsert import reinsert
from deid_core.training.synth import SynthNote, generate
from deid_core.training.synth.catalog import type_names
from deid_core.training.synth.output import to_corpus
from deid_core.training.train import TrainDoc, crf_config, make_docs, patient_folds

log = logging.getLogger("deid.generalization")

PARTS = ("blind", "layouts", "reinsert", "readable")
CONF = "evaluation/generalization.toml"
NOTES_PER_TEST_PATIENT = 5  # the scored synthetic corpora: about 5 notes per patient
EVAL_KEY = DEMO_KEY  # the pipeline's key: public, like the demo's (no real data is ever output)


def settings(quick: bool = False, path: str | None = None) -> dict:
    """conf/evaluation/generalization.toml, with the [quick] sizes applied when asked."""
    cfg = copy.deepcopy(load_toml(path) if path else conf_file(CONF))
    if quick:
        q = cfg.get("quick", {})
        cfg["recipe"].update({k: q[k] for k in ("synth_notes", "synth_patients") if k in q})
        cfg["layouts"].update({k: q[k] for k in ("held_out_notes", "seen_notes") if k in q})
        cfg["reinsert"]["folds"] = q.get("folds", cfg["reinsert"]["folds"])
    cfg["quick"] = cfg.get("quick", {}) if quick else {}
    if cfg["layouts"]["test_seed"] == cfg["recipe"]["synth_seed"]:
        raise ConfigError(f"{CONF}: [layouts] test_seed must differ from the recipe's synth_seed")
    return cfg


def synth_types(cfg: dict) -> tuple[list[str], list[str]]:
    """(training types, held-out types) of the synthetic note-type split; every type must be placed."""
    split = read_tsv_split(cfg["layouts"]["split"], "note_type", ("train", "held_out"))
    missing, unknown = sorted(set(type_names()) - set(split)), sorted(set(split) - set(type_names()))
    if missing or unknown:
        raise ConfigError(f"{cfg['layouts']['split']}: note types not placed {missing}, unknown {unknown}; "
                          "every type of `deid synth --list-types` must be 'train' or 'held_out'")
    return sorted(t for t, p in split.items() if p == "train"), sorted(t for t, p in split.items() if p == "held_out")


def synthetic_training(cfg: dict, held_out: Sequence[str]) -> tuple[list[TrainDoc], Counter]:
    """The recipe's synthetic corpus without the held-out types (the generator's own exclusion):
    (source-domain docs, note types of those docs)."""
    r = cfg["recipe"]
    notes = generate(r["synth_notes"], r["synth_seed"], r["synth_patients"], exclude=tuple(held_out))
    corpus = to_corpus(notes)
    return make_docs(corpus.notes, corpus.gold, domain="S"), Counter(s.note_type for s in notes)


@dataclass
class Bench:
    """Inputs shared by the parts: configurations, the split corpus, synthetic training docs, bundles."""

    cfg: dict
    data: Path
    cache: Path
    show_misses: int = 0
    results: dict = field(default_factory=dict)
    _memo: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        r = self.cfg["recipe"]
        self.crf = deep_merge(crf_config(r["crf_config"]), self.cfg["quick"].get("crf", {}))
        self.pipe = pipeline_config(r.get("pipeline_config") or None)
        self.rules = rule_source(self.pipe, None)
        split = read_tsv_split(self.cfg["blind"].get("split", SPLIT_FILE), "patient_id", ("tune", "blind"))
        self.tune, self.tune_gold, self.blind = split_corpus(read_physionet(self.data), split)
        if self.cfg["quick"]:
            keep = set(sorted({n.patient_id for n in self.tune}, key=lambda p: int(p))[: self.cfg["quick"]["tune_patients"]])
            self.tune = [n for n in self.tune if n.patient_id in keep]
            self.blind = self.blind.first_patients(int(self.cfg["quick"]["blind_patients"]))
        self.train_types, self.held_out_types = synth_types(self.cfg)
        self.synth_docs, self.synth_type_counts = synthetic_training(self.cfg, self.held_out_types)
        self.key = str(self.cfg["reinsert"]["key"]).encode()

    def bundle(self, name: str, notes: Sequence[Note]) -> Bundle:
        """The recipe trained on these PhysioNet notes + the synthetic training types (cached)."""
        docs = make_docs(notes, self.tune_gold) + self.synth_docs
        extra = {"benchmark": "generalization", "physionet_notes": len(notes),
                 "synthetic_note_types": dict(sorted(self.synth_type_counts.items()))}
        t0 = time.process_time()
        bundle, trained = cached_bundle(docs, self.crf, self.pipe, self.cache, name, rules=self.rules, extra=extra)
        self.results.setdefault("setup", {}).setdefault("bundles", {})[name] = {
            "id": bundle.id[:12], "path": str(bundle.path), "trained_now": trained,
            "train_cpu_s": round(time.process_time() - t0) if trained else 0,
            "notes": bundle.manifest["training"]["notes"],
            "synthetic_note_types": bundle.manifest["training"].get("synthetic_note_types")}
        return bundle

    def deid(self, bundle: Bundle, profile: str | None = None):
        """The default pipeline (optionally with a profile merged over it) on a bundle, evaluation key."""
        config = deep_merge(self.pipe, load_toml(profile)) if profile else self.pipe
        return build_deidentifier(config, bundle, EVAL_KEY)

    def main_bundle(self) -> Bundle:
        """Tune patients + synthetic training types: parts 1, 2, 4 and the blind re-insertion."""
        if "main" not in self._memo:
            self._memo["main"] = self.bundle("tune+synth_train", self.tune)
        return self._memo["main"]

    def once(self, key: str, compute: Callable[[], dict]) -> dict:
        """An evaluation computed once per run (parts share them)."""
        if key not in self._memo:
            t0 = time.process_time()
            self._memo[key] = compute()
            log.info("%s: %.0f s CPU", key, time.process_time() - t0)
        return self._memo[key]

    @property
    def readable_opts(self) -> dict:
        """Options of evaluation.readable.readable_names from the configuration."""
        r = self.cfg.get("readable", {})
        return {"labels": tuple(r.get("labels", ("PATIENT", "DOCTOR"))), "min_letters": int(r.get("min_letters", 4))}

    def physionet_conventions(self):
        """The PhysioNet conventions view ([physionet] of the configuration)."""
        p = self.cfg.get("physionet", {})
        return convention_view(p.get("drop_labels", ()), int(p.get("min_age", 0)))

    # -- evaluations shared by the parts --------------------------------------------------------
    def blind_default(self) -> dict:
        """Blind part, default configuration (PhysioNet locations compared coarsely)."""
        return self.once("blind/default", lambda: self.blind.evaluate(
            self.deid(self.main_bundle()), view=coarse_locations, readable=self.readable_opts))

    def blind_profile(self) -> dict:
        """Blind part, the comparability profile, scored on PhysioNet's conventions."""
        profile = self.cfg["blind"].get("profile")
        return self.once("blind/physionet_profile", lambda: self.blind.evaluate(
            self.deid(self.main_bundle(), profile), view=self.physionet_conventions(), readable=self.readable_opts))

    def layouts(self) -> dict:
        """Held-out synthetic types (and the training types of the same unseen seed, for reference)."""
        def compute() -> dict:
            lc, held = self.cfg["layouts"], tuple(self.held_out_types)
            deid = self.deid(self.main_bundle())
            out = {}
            for name, select in (("held_out_types", {"include": held}), ("seen_types", {"exclude": held})):
                size = lc["held_out_notes" if name == "held_out_types" else "seen_notes"]
                test = generate(size, lc["test_seed"], max(1, size // NOTES_PER_TEST_PATIENT), **select)
                out[name] = _synthetic_eval(deid, test, self.readable_opts)
                out[name]["note_types"] = dict(sorted(Counter(s.note_type for s in test).items()))
            return out
        return self.once("layouts", compute)

    def blind_reinserted(self, kind: str) -> dict:
        """The tune bundle on the blind notes re-inserted with `kind` (aggregate only)."""
        return self.once(f"reinsert/blind/{kind}", lambda: self.blind.reinserted(kind, self.key).evaluate(
            self.deid(self.main_bundle()), view=coarse_locations, readable=self.readable_opts))

    def tune_cv(self) -> dict:
        """Patient-grouped CV over tune patients: each fold's bundle tags its held-out patients'
        original notes and every re-inserted variant of them (the development set)."""
        def compute() -> dict:
            kinds = ["original"] + list(self.cfg["reinsert"]["kinds"])
            variants = {"original": (self.tune, self.tune_gold)}
            for kind in kinds[1:]:
                variants[kind] = reinsert(self.tune, self.tune_gold, kind, self.key)
            folds = patient_folds(self.tune, int(self.cfg["reinsert"]["folds"]))
            pred: dict[str, dict[str, list[Span]]] = {k: {} for k in kinds}
            outs: dict[str, dict[str, str | None]] = {k: {} for k in kinds}
            for i, held in enumerate(folds):
                train = [n for n in self.tune if n.patient_id not in held]
                deid = self.deid(self.bundle(f"cv{len(folds)}-fold{i + 1}", train))
                for kind in kinds:
                    p, o = run_pipeline(deid, [n for n in variants[kind][0] if n.patient_id in held])
                    pred[kind].update(p)
                    outs[kind].update(o)
            out = {}
            for kind in kinds:
                notes, gold = variants[kind]
                out[kind] = aggregate(notes, gold, pred[kind], outs[kind], view=coarse_locations,
                                      readable=self.readable_opts)
                if self.show_misses:
                    out[kind]["misses_shown"] = len(_print_misses(kind, notes, gold, pred[kind], self.show_misses))
            return out
        return self.once("reinsert/tune_cv", compute)


def _synthetic_eval(deid, notes: Sequence[SynthNote], readable: dict) -> dict:
    corpus = to_corpus(notes)
    pred, outs = run_pipeline(deid, corpus.notes)
    return aggregate(corpus.notes, corpus.gold, pred, outs, readable=readable)


def _print_misses(kind: str, notes, gold, pred, limit: int) -> list[str]:
    """Tune-part misses to the terminal (development set only; never written to a file)."""
    lines = misses(notes, gold, pred, limit)
    print(f"-- tune CV misses, {kind} (first {len(lines)}; development set, terminal only)")
    for line in lines:
        print("  " + line)
    return lines


def run(bench: Bench, parts: Sequence[str]) -> dict:
    """Compute the asked parts into bench.results (aggregate figures and setup)."""
    res = bench.results
    t0 = time.process_time()
    res.setdefault("setup", {}).update({
        "recipe": bench.cfg["recipe"], "quick": bool(bench.cfg["quick"]), "blind": bench.blind.size(),
        "tune": {"notes": len(bench.tune), "patients": len({n.patient_id for n in bench.tune})},
        "synthetic_training_types": bench.train_types, "held_out_types": bench.held_out_types,
        "max_iterations": bench.crf.get("training", {}).get("max_iterations")})
    kinds = list(bench.cfg["reinsert"]["kinds"])
    if "blind" in parts:
        res["blind"] = {"default": bench.blind_default(), "physionet_profile": bench.blind_profile()}
    if "layouts" in parts:
        res["layouts"] = bench.layouts()
    if "reinsert" in parts:
        res["reinsert"] = {"tune_cv": bench.tune_cv(),
                           "blind": {"original": bench.blind_default(), **{k: bench.blind_reinserted(k) for k in kinds}}}
    if "readable" in parts:
        rows = {"blind": bench.blind_default(), "layouts/held_out_types": bench.layouts()["held_out_types"]}
        rows.update({f"reinsert/blind/{k}": bench.blind_reinserted(k) for k in kinds})
        if "reinsert" in parts:
            rows.update({f"reinsert/tune_cv/{k}": v for k, v in bench.tune_cv().items() if k != "original"})
        res["readable"] = {k: {**v["readable"], "notes": v["notes"], "quarantined": v["quarantined"]}
                           for k, v in rows.items()}
    res["setup"]["cpu_s"] = round(time.process_time() - t0)
    return res
