"""Training the token CRFs and writing a model bundle; patient-grouped folds."""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pycrfsuite

from deid_core import taxonomy
from deid_core.bundle import BUNDLE_FORMAT, Bundle, content_id, file_digests, load_bundle
from deid_core.config import CrfSettings, crf_settings
from deid_core.doc import Doc
from deid_core.engine.crf.chars import CHAR_FEATURES_VERSION, char_sequences, is_char_model
from deid_core.engine.crf.clusters import save_clusters, train_clusters
from deid_core.engine.crf.features import FeatureConfig, FeatureExtractor, easyadapt
from deid_core.engine.crf.labels import check_scheme, encode, mention_counts
from deid_core.engine.crf.versions import current_versions
from deid_core.notes import Note
from deid_core.spans import Span

log = logging.getLogger(__name__)

RuleSource = Callable[[Doc], Sequence[Span]]


@dataclass
class TrainDoc:
    """A training note: its Doc, gold spans and domain ('T' target, 'S' source for EasyAdapt)."""

    doc: Doc
    gold: list[Span]
    domain: str = "T"


def crf_config(path: str | Path | None = None) -> CrfSettings:
    """conf/crf.toml, or another whole file of the same shape, checked."""
    return crf_settings(path)


def model_labels(conf: CrfSettings, model: str) -> set[str]:
    """CRF labels a model learns: its categories' labels after the label map."""
    lmap = conf.labels.map
    cats = conf.models[model].categories
    return {lmap.get(lab, lab) for c in cats for lab in taxonomy.labels_of(c)}


def make_docs(notes: Sequence[Note], gold: dict[str, list[Span]], domain: str = "T") -> list[TrainDoc]:
    """TrainDocs of a corpus."""
    return [TrainDoc(Doc(n), list(gold.get(n.note_id, [])), domain) for n in notes]


def _rules_for(docs: Sequence[TrainDoc], rules: RuleSource | None) -> list[Sequence[Span]]:
    return [rules(d.doc) if rules else () for d in docs]


def model_sequences(
    docs: Sequence[TrainDoc], conf: CrfSettings, model: str, *, clusters: dict | None,
    rule_spans: Sequence[Sequence[Span]], easy: bool = False,
) -> Iterator[tuple[list[list[str]], list[str]]]:
    """(features, tags) per non-empty training doc for one [models.<model>] (runs anywhere: driver or executor)."""
    mconf = conf.models[model]
    scheme = check_scheme(conf.labels.scheme)
    lmap = conf.labels.map
    keep = model_labels(conf, model)
    ext = FeatureExtractor(FeatureConfig(list(mconf.features), mconf.window), clusters)
    for d, rs in zip(docs, rule_spans, strict=True):
        _, starts, ends = d.doc.tokens
        if not starts:
            continue
        x = ext.extract(d.doc, rs)
        if easy:
            x = easyadapt(x, d.domain)
        yield x, encode(d.gold, starts, ends, scheme, lmap, keep)


def train_model(
    docs: Sequence[TrainDoc], conf: CrfSettings, model: str, out_file: Path, *, clusters: dict | None,
    rule_spans: Sequence[Sequence[Span]], c1: float, c2: float, easy: bool = False,
    sequences: Iterable[tuple[list[list[str]], list[str]]] | None = None,
) -> dict:
    """Train one [models.<model>] CRF into out_file (from `sequences` if given); its bundle entry."""
    mconf = conf.models[model]
    tconf = conf.training
    trainer = pycrfsuite.Trainer(algorithm=tconf.algorithm, verbose=False)
    t0 = time.perf_counter()
    counts: Counter = Counter()
    mentions: Counter = Counter()
    if sequences is None:
        sequences = model_sequences(docs, conf, model, clusters=clusters, rule_spans=rule_spans, easy=easy)
    for x, y in sequences:
        counts.update(t for t in y if t != "O")
        mentions.update(mention_counts(y))
        trainer.append(x, y)
    t_feat = time.perf_counter() - t0
    trainer.set_params({
        "c1": c1, "c2": c2, "max_iterations": tconf.max_iterations,
        "feature.possible_transitions": True, "feature.minfreq": tconf.feature_minfreq,
    })
    trainer.train(str(out_file))
    log.info("model %s: %d docs, features %.1fs, train %.1fs", model, len(docs), t_feat,
             time.perf_counter() - t0 - t_feat)
    return {
        "file": out_file.name, "features": list(mconf.features), "window": mconf.window,
        "categories": list(mconf.categories), "labels": sorted(model_labels(conf, model)), "c1": c1, "c2": c2,
        "tag_counts": dict(sorted(counts.items())), "mention_counts": dict(sorted(mentions.items())),
    }


def train_bundle(
    docs: Sequence[TrainDoc], conf: CrfSettings, out_dir: Path, *, rules: RuleSource | None = None,
    c1: float | None = None, c2: float | None = None, models: Sequence[str] | None = None,
    easy: bool | None = None, extra: dict | None = None,
    sequence_provider: Callable[[str, dict | None, bool], Iterable] | None = None,
) -> Bundle:
    """Train clusters and every configured model on `docs`; write a complete bundle to out_dir."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tconf = conf.training
    c1 = float(tconf.c1 if c1 is None else c1)
    c2 = float(tconf.c2 if c2 is None else c2)
    models = list(models or tconf.models)
    unknown = [m for m in models if m not in conf.models]
    if unknown:
        raise ValueError(f"unknown models {unknown}; [models.*] tables: {', '.join(conf.models)}")
    char_models = [m for m in models if is_char_model(conf.models[m])]
    if len(char_models) > 1:
        raise ValueError(f"at most one char model per bundle, got {char_models}")
    models = [m for m in models if m not in char_models]
    easy = bool(tconf.easyadapt if easy is None else easy)
    easy = easy and len({d.domain for d in docs}) > 1
    cconf = conf.clusters
    uses_clusters = any("cluster" in conf.models[m].features for m in models)
    clusters = None
    if uses_clusters:
        clusters = train_clusters((d.doc.text for d in docs), min_count=cconf.min_count, dims=cconf.dims,
                                  k=tuple(cconf.k), seed=cconf.seed)
        save_clusters(clusters, out_dir / "clusters.tsv")
    uses_rules = any("rule_hits" in conf.models[m].features for m in models + char_models)
    # with a sequence_provider the token models' sequences (rules included) come from it
    need_rules = uses_rules and (bool(char_models) or sequence_provider is None)
    rule_spans = _rules_for(docs, rules) if need_rules else [()] * len(docs)
    entries = {m: train_model(docs, conf, m, out_dir / f"crf-{m}.crfsuite", clusters=clusters,
                              rule_spans=rule_spans, c1=c1, c2=c2, easy=easy,
                              sequences=sequence_provider(m, clusters, easy) if sequence_provider else None)
               for m in models}
    char_comp = None
    for m in char_models:  # trained here from the docs (also under jobs/train.py)
        entry = train_model(docs, conf, m, out_dir / f"crf-{m}.crfsuite", clusters=None, rule_spans=rule_spans,
                            c1=c1, c2=c2, sequences=char_sequences(docs, conf, m, rule_spans, model_labels(conf, m)))
        entry["kind"] = "char"
        char_comp = {"models": {m: entry}, "features_version": CHAR_FEATURES_VERSION, "scheme": conf.labels.scheme}
    depends = ["features", "taxonomy"]
    fams = {f for m in models + char_models for f in conf.models[m].features}
    if "rule_hits" in fams:
        depends.append("rules")
    if fams & {"gazetteer", "token_gazetteer"}:
        depends.append("gazetteers")
    gold_counts = Counter(s.label for d in docs for s in d.gold)
    manifest = {
        "format": BUNDLE_FORMAT,
        "id": "",
        "components": {"crf": {
            "models": entries, "scheme": conf.labels.scheme,
            "label_map": dict(conf.labels.map),
            "clusters": "clusters.tsv" if clusters else None,
            "easyadapt": easy, "target_domain": "T" if easy else "",
            "depends_on": depends, "tagging": asdict(conf.tagging),
        }, **({"crf_char": char_comp} if char_comp else {})},
        "versions": current_versions(),
        "training": {
            "notes": len(docs), "patients": len({d.doc.note.patient_id for d in docs}),
            "domains": dict(Counter(d.domain for d in docs)), "gold_spans": dict(sorted(gold_counts.items())),
            "rules_used": rules is not None,
            **(extra or {}),
        },
    }
    (out_dir / "bundle.json").write_text("{}")
    manifest["files"] = file_digests(out_dir)  # size + SHA-256 of every file, checked at load (bundle.py)
    manifest["id"] = content_id(out_dir)
    (out_dir / "bundle.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return load_bundle(out_dir)


def set_bundle_metadata(bundle_dir: Path, key: str, value) -> None:
    """Add a key (e.g. CV metrics) to bundle.json without changing the content id."""
    mf = Path(bundle_dir) / "bundle.json"
    manifest = json.loads(mf.read_text())
    manifest[key] = value
    mf.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def patient_folds(notes: Sequence[Note], k: int) -> list[set[str]]:
    """k disjoint patient sets with balanced note counts (greedy, deterministic)."""
    per: Counter = Counter(n.patient_id or n.note_id for n in notes)
    folds: list[set[str]] = [set() for _ in range(k)]
    sizes = [0] * k
    for pid, c in sorted(per.items(), key=lambda kv: (-kv[1], kv[0])):
        j = min(range(k), key=lambda i: (sizes[i], i))
        folds[j].add(pid)
        sizes[j] += c
    return folds
