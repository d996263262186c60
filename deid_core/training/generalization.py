"""The generalization benchmark (issue 14; `./build.sh bench generalization`, docs/evaluation.md).

Parts, each scored with the full default pipeline (rules + CRF, surrogate mode, patients.tsv or
synthetic metadata names as known PHI), recall first:
1. blind  — the default recipe trained on PhysioNet `tune` patients (+ synthetic training types),
            scored on the `blind` patients (aggregate figures only: training.blind.BlindCorpus);
2. layouts — the same bundle on synthetic notes of held-out note types, from an unseen seed;
3. reinsert — PhysioNet notes with every gold PHI replaced by new strings (training.reinsert):
            patient-grouped CV over tune patients, and the tune bundle on the re-inserted blind part;
   (tune — part 3's tune CV alone: the development set recipes, rules and thresholds are chosen on;
            no blind note is tagged and no tune+synthetic bundle is trained);
4. readable — gold person names still standing in the surrogate output of parts 1-3.
One bundle (tune + synthetic training types) serves parts 1, 2, 4 and the blind re-insertion;
bundles are cached by their inputs' digest (training.bundle_cache). The physionet-profile rows
(blind part, tune CV `original_physionet`) are scored with the bundle the profile runs with: the
same patients and training types, with the profile's own recipe ([model] recipe) and [crf.training]
(conf/profiles/physionet.toml: recipe `physionet`, EasyAdapt, like models/physionet), so those rows
train their own bundles (the same ones when recipe and settings agree) and a default recipe under
measurement (`--recipe R`) never reaches them.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deid_core.bundle import Bundle
from deid_core.config import Config, ConfigError, load_config
from deid_core.config import Recipe as TrainingRecipe
from deid_core.config.recipe import breadth_file
from deid_core.engine.pipeline import build_deidentifier, build_stage
from deid_core.io.physionet import read_physionet
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.blind import read_tsv_split, split_corpus
from deid_core.training.bundle_cache import cached_bundle
from deid_core.training.corpus_eval import (
    aggregate,
    coarse_locations,
    convention_view,
    false_positives,
    misses,
    run_pipeline,
)
from deid_core.training.evaluation.readable import Readable
from deid_core.training.generalization_config import Generalization, training_recipe
from deid_core.training.recipe import synthetic_docs, synthetic_provenance, target_docs
from deid_core.training.reinsert import reinsert
from deid_core.training.synth import SynthNote, generate
from deid_core.training.synth.catalog import type_names
from deid_core.training.synth.notetypes import breadth_overlay
from deid_core.training.synth.output import to_corpus
from deid_core.training.train import TrainDoc, patient_folds

log = logging.getLogger("deid.generalization")

PARTS = ("blind", "layouts", "reinsert", "readable")  # the full benchmark
TUNE = "tune"  # --part tune: the development set alone
NOTES_PER_TEST_PATIENT = 5  # the scored synthetic corpora: about 5 notes per patient
PROFILED = "original_physionet"  # tune CV: original notes, comparability profile, PhysioNet conventions
EVAL_KEY = DEMO_KEY  # the pipeline's key: public, like the demo's (no real data is ever output)


def recipe_config(cfg: Generalization, quick: bool, easyadapt: bool | None = None) -> Config:
    """The recipe's configuration: conf/ with its CRF file and override file (and, quick, the
    [quick] override file) merged like --config FILE; `easyadapt` (--easyadapt on|off, like
    `deid train --easyadapt`) overrides its [crf.training] easyadapt."""
    config = load_config(crf_file=cfg.recipe.crf_config)
    if cfg.recipe.pipeline_config:
        config = config.with_file(cfg.recipe.pipeline_config)
    if quick:
        config = config.with_file(cfg.quick.config)
    if easyadapt is not None and easyadapt != config.crf.training.easyadapt:  # (as is: the same cached bundles)
        config = config.override({"crf": {"training": {"easyadapt": easyadapt}}})
    return config


def profile_training(cfg: Generalization, quick: bool, config: Config, profile: Config) -> Config:
    """What the profile rows' bundles are trained with: the recipe's configuration with the profile's
    [crf.training] easyadapt (`config` itself when they agree: the same cached bundles). Other
    [crf.training] keys in the profile are refused (the bench would not train with them)."""
    out = config if profile.crf.training.easyadapt == config.crf.training.easyadapt else recipe_config(
        cfg, quick, profile.crf.training.easyadapt)
    want, got = asdict(profile.crf.training), asdict(out.crf.training)
    other = sorted(k for k in want if want[k] != got[k])
    if other:
        raise ConfigError(f"{cfg.blind.profile}: [crf.training] {', '.join(other)}: the generalization bench trains "
                          "the profile's bundles with the recipe and the profile's easyadapt only")
    return out


def synth_types(cfg: Generalization) -> tuple[list[str], list[str]]:
    """(training types, held-out types) of the synthetic note-type split; every type must be placed."""
    split = read_tsv_split(cfg.layouts.split, "note_type", ("train", "held_out"))
    missing, unknown = sorted(set(type_names()) - set(split)), sorted(set(split) - set(type_names()))
    if missing or unknown:
        raise ConfigError(f"{cfg.layouts.split}: note types not placed {missing}, unknown {unknown}; "
                          "every type of `deid synth --list-types` must be 'train' or 'held_out'")
    return sorted(t for t, p in split.items() if p == "train"), sorted(t for t, p in split.items() if p == "held_out")


def synthetic_training(recipe: TrainingRecipe, held_out: Sequence[str]) -> tuple[list[TrainDoc], Counter]:
    """The recipe's synthetic corpus without the held-out types (the generator's own exclusion):
    (source-domain docs, note types of those docs). A breadth overlay that names a held-out type is
    refused (held-out types are never trained on, not even through an overlay)."""
    for name in recipe.synthetic.breadth:
        reached = sorted(set(breadth_overlay(name).types) & set(held_out))
        if reached:
            raise ConfigError(f"{breadth_file(name)}: types {reached} are held out "
                              "(conf/evaluation/synth_type_split.tsv): a breadth overlay may name training types only")
    return synthetic_docs(recipe, held_out)


@dataclass
class Bench:
    """Inputs shared by the parts: configurations, the split corpus, synthetic training docs, bundles."""

    cfg: Generalization  # settings(quick) gives the quick sizes; `quick` also picks the quick corpora
    data: Path
    cache: Path
    quick: bool
    show_misses: int = 0
    results: dict = field(default_factory=dict)
    show_fps: int = 0
    easyadapt: bool | None = None  # None: the recipe's [crf.training] easyadapt
    domain: str | None = None  # the default rows' [crf.tagging] domain (None: the recipe's); not the profile's
    _memo: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.config = recipe_config(self.cfg, self.quick, self.easyadapt)  # what the bundles are trained with
        # what the default rows tag with: the EasyAdapt copy is a tagging choice, so no bundle is retrained for it
        self.tagging = self.config if self.domain is None else self.config.override(
            {"crf": {"tagging": {"domain": self.domain}}})
        self.recipe = training_recipe(self.cfg, self.quick)
        self.insert_config = load_config().with_file(self.cfg.reinsert.config)
        self.profile = self.config.with_file(self.cfg.blind.profile)  # checked now, before any work
        self.profile_training = profile_training(self.cfg, self.quick, self.config, self.profile)
        self.profile_recipe = training_recipe(self.cfg, self.quick, self.profile.model.recipe)
        self.rules = build_stage(self.config, "rules", None)
        split = read_tsv_split(self.cfg.blind.split, "patient_id", ("tune", "blind"))
        self.tune, self.tune_gold, self.blind = split_corpus(read_physionet(self.data), split)
        if self.quick:
            q = self.cfg.quick
            keep = set(sorted({n.patient_id for n in self.tune}, key=lambda p: int(p))[: q.tune_patients])
            self.tune = [n for n in self.tune if n.patient_id in keep]
            self.blind = self.blind.first_patients(q.blind_patients)
        self.train_types, self.held_out_types = synth_types(self.cfg)
        self.synth = {self.recipe: synthetic_training(self.recipe, self.held_out_types)}
        if self.profile_recipe not in self.synth:
            self.synth[self.profile_recipe] = synthetic_training(self.profile_recipe, self.held_out_types)
        self.key = self.cfg.reinsert.key.encode()

    def bundle(self, name: str, notes: Sequence[Note], profile: bool = False) -> Bundle:
        """The recipe trained on these PhysioNet notes (gold harmonized, re-inserted copies) + the
        synthetic training types (cached); `profile`: the profile's recipe and training settings
        instead (named with an '-easyadapt' suffix when EasyAdapt is on)."""
        config = self.profile_training if profile else self.config
        recipe = self.profile_recipe if profile else self.recipe
        if config.crf.training.easyadapt:
            name += "-easyadapt"
        memo = ("bundle", name, id(config), recipe)  # the profile rows trained like the default rows: the same bundle
        if memo not in self._memo:
            self._memo[memo] = self._train(name, notes, config, recipe,
                                           self.profile.model.recipe if profile else self.cfg.recipe.name)
        return self._memo[memo]

    def _train(self, name: str, notes: Sequence[Note], config: Config, recipe: TrainingRecipe,
               recipe_name: str) -> Bundle:
        """The cached (or newly trained) bundle, recorded in the results' setup."""
        synth_docs, synth_types = self.synth[recipe]
        docs = target_docs(notes, self.tune_gold, config.crf, recipe) + synth_docs
        extra = {"benchmark": "generalization", "physionet_notes": len(notes), "recipe": recipe_name,
                 "synthetic_note_types": dict(sorted(synth_types.items())), **synthetic_provenance(recipe)}
        t0 = time.process_time()
        bundle, trained = cached_bundle(docs, config, self.cache, name, rules=self.rules.feature_spans, extra=extra)
        self.results.setdefault("setup", {}).setdefault("bundles", {})[name] = {
            "id": bundle.id[:12], "path": str(bundle.path), "trained_now": trained,
            "train_cpu_s": round(time.process_time() - t0) if trained else 0,
            "notes": bundle.manifest["training"]["notes"], "recipe": recipe_name,
            "synthetic_note_types": bundle.manifest["training"]["synthetic_note_types"]}
        return bundle

    def deid(self, bundle: Bundle, config: Config | None = None):
        """The recipe's pipeline (or another configuration, e.g. the profile's) on a bundle, evaluation key
        (refused like a run when the configuration's EasyAdapt domain is not in the bundle)."""
        return build_deidentifier(config or self.tagging, bundle, EVAL_KEY)

    def main_bundle(self) -> Bundle:
        """Tune patients + synthetic training types: parts 1, 2, 4 and the blind re-insertion."""
        return self.bundle("tune+synth_train", self.tune)

    def profile_main_bundle(self) -> Bundle:
        """Tune patients + synthetic training types, trained like the profile's bundle: the blind profile row."""
        return self.bundle("tune+synth_train", self.tune, profile=True)

    def once(self, key: str, compute: Callable[[], dict]) -> dict:
        """An evaluation computed once per run (parts share them)."""
        if key not in self._memo:
            t0 = time.process_time()
            self._memo[key] = compute()
            log.info("%s: %.0f s CPU", key, time.process_time() - t0)
        return self._memo[key]

    def physionet_conventions(self):
        """The PhysioNet conventions view ([physionet] of the configuration)."""
        return convention_view(self.cfg.physionet.drop_labels, self.cfg.physionet.min_age)

    # -- evaluations shared by the parts --------------------------------------------------------
    def blind_default(self) -> dict:
        """Blind part, default configuration (PhysioNet locations compared coarsely)."""
        return self.once("blind/default", lambda: self.blind.evaluate(
            self.deid(self.main_bundle()), self.cfg.readable, view=coarse_locations))

    def blind_profile(self) -> dict:
        """Blind part, the comparability profile, scored on PhysioNet's conventions."""
        return self.once("blind/physionet_profile", lambda: self.blind.evaluate(
            self.deid(self.profile_main_bundle(), self.profile), self.cfg.readable, view=self.physionet_conventions()))

    def layouts(self) -> dict:
        """Held-out synthetic types (and the training types of the same unseen seed, for reference)."""
        def compute() -> dict:
            lc, held = self.cfg.layouts, tuple(self.held_out_types)
            deid = self.deid(self.main_bundle())
            out = {}
            for name, select in (("held_out_types", {"include": held}), ("seen_types", {"exclude": held})):
                size = lc.held_out_notes if name == "held_out_types" else lc.seen_notes
                test = generate(size, lc.test_seed, max(1, size // NOTES_PER_TEST_PATIENT), **select)
                out[name] = _synthetic_eval(deid, test, self.cfg.readable)
                out[name]["note_types"] = dict(sorted(Counter(s.note_type for s in test).items()))
            return out
        return self.once("layouts", compute)

    def blind_reinserted(self, kind: str) -> dict:
        """The tune bundle on the blind notes re-inserted with `kind` (aggregate only)."""
        return self.once(f"reinsert/blind/{kind}", lambda: self.blind.reinserted(
            kind, self.key, self.insert_config).evaluate(self.deid(self.main_bundle()), self.cfg.readable,
                                                         view=coarse_locations))

    def tune_cv(self) -> dict:
        """Patient-grouped CV over tune patients: each fold's bundle tags its held-out patients'
        original notes and every re-inserted variant of them (the development set), and the original
        notes once more with the comparability profile (`original_physionet`, scored on PhysioNet's
        conventions: the PPV figure comparable with the blind part's second row) and that fold trained
        like the profile's bundle (profile_training)."""
        def compute() -> dict:
            kinds = ["original", *self.cfg.reinsert.kinds]
            variants = {"original": (self.tune, self.tune_gold)}
            for kind in kinds[1:]:
                variants[kind] = reinsert(self.tune, self.tune_gold, kind, self.key, self.insert_config)
            folds = patient_folds(self.tune, self.cfg.reinsert.folds)
            pred: dict[str, dict[str, list[Span]]] = {k: {} for k in [*kinds, PROFILED]}
            outs: dict[str, dict[str, str | None]] = {k: {} for k in [*kinds, PROFILED]}
            for i, held in enumerate(folds):
                train = [n for n in self.tune if n.patient_id not in held]
                bundle = self.bundle(f"cv{len(folds)}-fold{i + 1}", train)
                deid = self.deid(bundle)
                for kind in kinds:
                    p, o = run_pipeline(deid, [n for n in variants[kind][0] if n.patient_id in held])
                    pred[kind].update(p)
                    outs[kind].update(o)
                pbundle = self.bundle(f"cv{len(folds)}-fold{i + 1}", train, profile=True)
                p, o = run_pipeline(self.deid(pbundle, self.profile), [n for n in self.tune if n.patient_id in held])
                pred[PROFILED].update(p)
                outs[PROFILED].update(o)
            out = {}
            for kind in kinds:
                notes, gold = variants[kind]
                out[kind] = aggregate(notes, gold, pred[kind], outs[kind], self.cfg.readable, view=coarse_locations)
                if self.show_misses:
                    out[kind]["misses_shown"] = len(_print_misses(kind, notes, gold, pred[kind], self.show_misses))
            view = self.physionet_conventions()
            out[PROFILED] = aggregate(self.tune, self.tune_gold, pred[PROFILED], outs[PROFILED], self.cfg.readable,
                                      view=view)
            if self.show_fps:
                texts = {n.note_id: n.text for n in self.tune}
                seen = {k: view(texts[k], v) for k, v in pred[PROFILED].items()}
                out[PROFILED]["fps_shown"] = len(_print_lines(
                    "false positives, original notes, physionet profile",
                    false_positives(self.tune, self.tune_gold, seen, self.show_fps)))
            return out
        return self.once("reinsert/tune_cv", compute)


def _synthetic_eval(deid, notes: Sequence[SynthNote], readable: Readable) -> dict:
    corpus = to_corpus(notes)
    pred, outs = run_pipeline(deid, corpus.notes)
    return aggregate(corpus.notes, corpus.gold, pred, outs, readable)


def _print_misses(kind: str, notes, gold, pred, limit: int) -> list[str]:
    """Tune-part misses to the terminal (development set only; never written to a file)."""
    return _print_lines(f"misses, {kind}", misses(notes, gold, pred, limit))


def _print_lines(what: str, lines: list[str]) -> list[str]:
    """Tune-part misses or false positives to the terminal (development set only; never written to a file)."""
    print(f"-- tune CV {what} (first {len(lines)}; development set, terminal only)")
    for line in lines:
        print("  " + line)
    return lines


def run(bench: Bench, parts: Sequence[str]) -> dict:
    """Compute the asked parts into bench.results (aggregate figures and setup)."""
    res = bench.results
    t0 = time.process_time()
    res.setdefault("setup", {}).update({
        "recipe": {**asdict(bench.cfg.recipe), "training": asdict(bench.recipe)}, "quick": bench.quick, "blind": bench.blind.size(),
        "tune": {"notes": len(bench.tune), "patients": len({n.patient_id for n in bench.tune})},
        "synthetic_training_types": bench.train_types, "held_out_types": bench.held_out_types,
        "max_iterations": bench.config.crf.training.max_iterations,
        "easyadapt": bench.config.crf.training.easyadapt, "domain": bench.tagging.crf.tagging.domain,
        "profile_easyadapt": bench.profile_training.crf.training.easyadapt,
        "profile_recipe": bench.profile.model.recipe,
        "profile_domain": bench.profile.crf.tagging.domain})
    kinds = list(bench.cfg.reinsert.kinds)
    if "blind" in parts:
        res["blind"] = {"default": bench.blind_default(), "physionet_profile": bench.blind_profile()}
    if "layouts" in parts:
        res["layouts"] = bench.layouts()
    if "reinsert" in parts:
        res["reinsert"] = {"tune_cv": bench.tune_cv(),
                           "blind": {"original": bench.blind_default(), **{k: bench.blind_reinserted(k) for k in kinds}}}
    elif TUNE in parts:
        res["reinsert"] = {"tune_cv": bench.tune_cv()}
    if "readable" in parts:
        rows = {"blind": bench.blind_default(), "layouts/held_out_types": bench.layouts()["held_out_types"]}
        rows.update({f"reinsert/blind/{k}": bench.blind_reinserted(k) for k in kinds})
        if "reinsert" in parts or TUNE in parts:
            rows.update({f"reinsert/tune_cv/{k}": v for k, v in bench.tune_cv().items() if k in kinds})
        res["readable"] = {k: {**v["readable"], "notes": v["notes"], "quarantined": v["quarantined"]}
                           for k, v in rows.items()}
    res["setup"]["cpu_s"] = round(time.process_time() - t0)
    return res
