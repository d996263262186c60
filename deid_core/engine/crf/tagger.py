"""Token-CRF tagging: a bundle's crfsuite models + feature extractors as a pipeline stage."""

from __future__ import annotations

import logging
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from types import MappingProxyType

import pycrfsuite

from deid_core import taxonomy
from deid_core.config import Config
from deid_core.config.crf import Scorer
from deid_core.doc import Doc
from deid_core.engine.contract import (
    CRF_MARGINALS,
    RULE_SPANS,
    CrfMarginals,
    NoteState,
    Outcome,
    rule_spans_of,
    spans_or_raise,
)
from deid_core.engine.crf.batch import BatchPredictor, outliers
from deid_core.engine.crf.clusters import load_clusters
from deid_core.engine.crf.emissions import Emissions
from deid_core.engine.crf.features import FeatureConfig, FeatureExtractor, easyadapt
from deid_core.engine.crf.labels import decode, recall_knob
from deid_core.engine.crf.scorer import read_weights
from deid_core.engine.crf.versions import open_model
from deid_core.engine.guards import guard_line_breaks
from deid_core.spans import Span

log = logging.getLogger(__name__)


@dataclass
class ModelSpec:
    """One trained model's description as recorded in the bundle."""

    name: str
    file: str
    families: list[str]
    window: int
    categories: list[str]


Prediction = tuple[list[str], list[float]]  # Viterbi tags (recall knob applied), per-token PHI marginal
Tagged = tuple[list[Span], CrfMarginals | None]  # a note's spans and, when computed, its PHI marginals


class CrfModel:
    """One crfsuite model and its feature extractor, scored by numpy (batches) or by crfsuite (per note)."""

    def __init__(self, spec: ModelSpec, model_path: Path, clusters: dict | None, cache_size: int,
                 domain: str = "", tag_counts: dict[str, int] | None = None,
                 mention_counts: dict[str, int] | None = None, scorer: Scorer = "numpy",
                 batch_tokens: int = 32_768) -> None:
        self.spec = spec
        self.tag_counts = dict(tag_counts or {})
        self.mention_counts = dict(mention_counts or {})
        self.tagger = pycrfsuite.Tagger()
        open_model(self.tagger, Path(model_path))  # refuses a truncated file instead of crashing
        self.labels = [x for x in self.tagger.labels()]
        self.phi_labels = [x for x in self.labels if x != "O"]
        # prefix of a tag the recall knob starts: B- unless the model has none (IO scheme)
        self.begin = "B-" if any(x.startswith("B-") for x in self.labels) else "I-"
        self.domain = domain
        self.batch: BatchPredictor | None = None
        if scorer == "numpy":
            weights = read_weights(model_path)
            weights = weights.with_domain(domain) if domain else weights
            known = set(weights.attributes)
        else:
            known = {attr for attr, _ in self.tagger.info().state_features}
            if domain:
                pre = domain + "|"
                known |= {a[len(pre):] for a in known if a.startswith(pre)}
        self.extractor = FeatureExtractor(FeatureConfig(spec.families, spec.window), clusters, cache_size,
                                          known=known, as_bytes=scorer == "crfsuite" and not domain)
        if scorer == "numpy":
            self.batch = BatchPredictor(weights, Emissions(weights, self.extractor, cache_size), self.begin,
                                        batch_tokens)

    def features(self, doc: Doc, rule_spans: Sequence[Span]) -> list[list[str]]:
        """Feature lists of a doc (EasyAdapt target copy when the model was trained with domains)."""
        feats = self.extractor.extract(doc, rule_spans)
        return easyadapt(feats, self.domain) if self.domain else feats

    def predict(self, feats: list[list[str]], threshold: float = 1.0, marginals: bool = False,
                gate: Sequence[int] = ()) -> Prediction:
        """crfsuite, one note: Viterbi tags and per-token PHI marginal; tokens above `threshold` get
        their best PHI tag. Without marginals (threshold 1): phi 1.0 on PHI tags, else 0.0, except at `gate`."""
        if not feats:
            return [], []
        tags = self.tagger.tag(feats)
        marg = self.tagger.marginal
        if threshold >= 1.0 and not marginals:
            phi = [0.0 if t == "O" else 1.0 for t in tags]
            for i in gate:
                phi[i] = 1.0 - marg("O", i)
            return tags, phi
        n = len(tags)
        phi = [1.0 - p for p in map(marg, repeat("O", n), range(n))]
        # Viterbi O above the threshold: the best PHI tag, continuing the previous token's label.
        # Only these few tokens look at the other labels' marginals.
        knob = [i for i, p in enumerate(phi) if p > threshold and tags[i] == "O"]
        recall_knob(tags, knob, lambda i: max(self.phi_labels, key=lambda lab: marg(lab, i)), self.begin)
        return tags, phi

    def predict_many(self, docs: Sequence[Doc], rules: Sequence[Sequence[Span]], threshold: float = 1.0,
                     marginals: bool = False, gates: Sequence[Sequence[int]] | None = None,
                     ) -> list[Prediction | Exception]:
        """predict() for several notes from their docs: per note (tags, phi), or the exception it raised."""
        gates = gates if gates is not None else [()] * len(docs)
        out: list[Prediction | Exception] = [([], [])] * len(docs)
        alone: Sequence[int] | set[int] = range(len(docs))
        if self.batch is not None:  # the batch, but for outliers in length: cheaper note by note
            alone = outliers([len(d.tokens[0]) for d in docs], self.batch.max_tokens)
            batch = [i for i in range(len(docs)) if i not in alone]
            preds = self.batch.predict_many([docs[i] for i in batch], [rules[i] for i in batch], threshold,
                                            marginals, [gates[i] for i in batch])
            for i, pred in zip(batch, preds, strict=True):
                out[i] = pred
        for i in sorted(alone):
            try:
                out[i] = self.predict(self.features(docs[i], rules[i]), threshold, marginals, gates[i])
            except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                out[i] = exc
        return out


def learned_categories(models: Sequence[CrfModel], min_examples: int) -> frozenset[str]:
    """Categories with at least `min_examples` training mentions in some model.

    Mentions as recorded in the bundle (mention_counts, any scheme); bundles without them: B-/S- tags.
    """
    from deid_core.taxonomy import category_of

    counts: dict[str, int] = {}
    for m in models:
        per_label = m.mention_counts or {t[2:]: n for t, n in m.tag_counts.items() if t[:2] in ("B-", "S-")}
        for label, n in per_label.items():
            cat = category_of(label)
            counts[cat] = counts.get(cat, 0) + n
    return frozenset(c for c, n in counts.items() if n >= min_examples)


class CrfTagger:
    """Pipeline stage: runs each token-CRF model and returns its spans (source 'crf:<model>').

    Needs the rule spans when its models were trained with rule_hits features (`needs_rules`);
    provides the per-token PHI marginals the merge's rule gate reads (when it computed them).
    """

    provides = frozenset({CRF_MARGINALS})

    def __init__(self, models: Sequence[CrfModel], *, threshold: float, needs_rules: bool, name: str = "crf",
                 keep_marginals: bool = False, min_gate_examples: int, gate: bool,
                 gated_source: Callable[[str], bool]) -> None:
        self.models = list(models)
        self.gated_source = gated_source
        self.keep_marginals = keep_marginals
        self.gate = gate  # the merge gates rule spans: compute marginals under them
        self.gate_categories = learned_categories(self.models, min_gate_examples)
        self.threshold = threshold
        self.name = name
        self.name_labels = frozenset(taxonomy.labels_of("NAME"))
        self.uses_rules = any(m.extractor.uses_rules for m in self.models)
        trained = ", ".join(m.spec.name for m in self.models if m.extractor.uses_rules)
        self.needs: Mapping[str, str] = MappingProxyType(
            {RULE_SPANS: f"its model(s) {trained} were trained with rule_hits features"}
            if needs_rules and self.uses_rules else {})

    def _gate_positions(self, doc: Doc, rules: Sequence[Span]) -> list[int]:
        """Token positions under rule spans of gated categories (where marginals are needed)."""
        from deid_core.taxonomy import category_of

        _, starts, ends = doc.tokens
        pos: set[int] = set()
        for s in rules:
            if category_of(s.label) in self.gate_categories and self.gated_source(s.source):
                pos.update(range(bisect_right(ends, s.start), bisect_left(starts, s.end)))
        return sorted(pos)

    def rule_spans(self, state: NoteState) -> Sequence[Span]:
        """The rule hits the rule_hits features read: the rules stage's spans (none when not used)."""
        return rule_spans_of(state, self.name, bool(self.needs)) if self.uses_rules else ()

    def run(self, doc: Doc, state: NoteState) -> list[Span]:
        """The stage on one note: spans of every model; the marginals go to the state for the merge's rule gate."""
        return spans_or_raise(self.run_many([doc], [state])[0])

    def run_many(self, docs: Sequence[Doc], states: Sequence[NoteState]) -> list[Outcome]:
        """The stage on a batch (one numpy batch per model): per note its spans, or its exception."""
        out: list[Outcome] = [[] for _ in docs]
        rules: dict[int, Sequence[Span]] = {}
        for i, state in enumerate(states):
            try:
                rules[i] = self.rule_spans(state)
            except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                out[i] = exc
        live = list(rules)
        for i, res in zip(live, self.tag_many([docs[i] for i in live], [rules[i] for i in live]), strict=True):
            if isinstance(res, Exception):
                out[i] = res
                continue
            out[i], marginals = res
            if marginals is not None:
                states[i].crf = marginals
        return out

    def tag(self, doc: Doc, rules: Sequence[Span] = ()) -> Tagged:
        """PHI spans found by every model (may overlap across models; the merge resolves), and the
        per-token PHI marginals when they were computed (recall knob, kept, or under gated rules)."""
        (res,) = self.tag_many([doc], [rules])
        if isinstance(res, Exception):
            raise res
        return res

    def tag_many(self, docs: Sequence[Doc], rules: Sequence[Sequence[Span]]) -> list[Tagged | Exception]:
        """tag() for several notes at once (one batch per model): per note its result or its exception."""
        out: list[Tagged | Exception] = [([], None) for _ in docs]
        full = self.threshold < 1.0 or self.keep_marginals
        live: list[int] = []
        gates: list[list[int]] = []
        for i, doc in enumerate(docs):
            try:
                if not doc.tokens[1]:
                    continue
                gates.append([] if full or not self.gate else self._gate_positions(doc, rules[i]))
                live.append(i)
            except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                out[i] = exc
        spans: dict[int, list[Span]] = {i: [] for i in live}
        doc_phi: dict[int, list[float]] = {}
        for m in self.models:
            preds = m.predict_many([docs[i] for i in live], [rules[i] for i in live], self.threshold,
                                   self.keep_marginals, gates)
            for i, pred in zip(live, preds, strict=True):
                if isinstance(out[i], Exception):
                    continue
                if isinstance(pred, Exception):
                    out[i] = pred
                    continue
                tags, phi = pred
                prev = doc_phi.get(i)
                doc_phi[i] = phi if prev is None else [max(a, b) for a, b in zip(prev, phi, strict=True)]
                _, starts, ends = docs[i].tokens
                for a, b, label in decode(tags, starts, ends):
                    if label in self.name_labels:  # a name never starts or ends with a letterless token ("07:30\nAnn")
                        a, b = _letter_edges(docs[i].text, starts, ends, a, b)
                        if a >= b:
                            continue
                    conf = sum(phi[a:b]) / (b - a)
                    spans[i].append(Span(starts[a], ends[b - 1], label, f"{self.name}:{m.spec.name}",
                                         round(conf, 4)))
        for i, gate in zip(live, gates, strict=True):
            if not isinstance(out[i], Exception):
                phi = doc_phi.get(i)
                # an I- tag run on across a line break (engine/guards.py)
                out[i] = (guard_line_breaks(spans[i], docs[i].text), CrfMarginals(phi, self.gate_categories)
                          if (full or gate) and phi is not None else None)
        return out


def _letter_edges(text: str, starts: Sequence[int], ends: Sequence[int], i: int, j: int) -> tuple[int, int]:
    """Token run [i, j) without its leading and trailing tokens that hold no letter."""
    def lettered(k: int) -> bool:
        return any(c.isalpha() for c in text[starts[k]:ends[k]])
    while i < j and not lettered(i):
        i += 1
    while j > i and not lettered(j - 1):
        j -= 1
    return i, j


# [tagging] domain -> which EasyAdapt feature copy is added at tagging time (seed 000 §3.3.3)
DOMAINS = ("target", "source", "general")


def easyadapt_domain(comp: dict, choice: str) -> str:
    """The feature-copy prefix to tag with: the bundle's target ('T'), source ('S') or none."""
    if choice not in DOMAINS:
        raise ValueError(f"[tagging] domain must be one of {', '.join(DOMAINS)}; got {choice!r}")
    if not comp.get("easyadapt") or choice == "general":
        return ""
    return comp.get("target_domain", "T") if choice == "target" else comp.get("source_domain", "S")


def load_models(bundle, cache_size: int, domain: str, scorer: Scorer = "numpy",
                batch_tokens: int = 32_768) -> list[CrfModel]:
    """The token-CRF models of a bundle (empty when it has none); `domain`: see DOMAINS; `scorer`: [tagging] scorer."""
    comp = bundle.manifest.get("components", {}).get("crf")
    if not comp:
        return []
    clusters = load_clusters(bundle.file(comp["clusters"])) if comp.get("clusters") else None
    domain = easyadapt_domain(comp, domain)
    models = []
    for name, m in comp["models"].items():
        spec = ModelSpec(name, m["file"], list(m["features"]), int(m["window"]), list(m["categories"]))
        models.append(CrfModel(spec, bundle.file(m["file"]), clusters, cache_size, domain, m.get("tag_counts"),
                               m.get("mention_counts"), scorer, batch_tokens))
    return models


def trained_with_rules(bundle) -> bool:
    """Whether the bundle's models saw rule hits in training (bundles that do not say: assume they did)."""
    return bool(bundle.manifest.get("training", {}).get("rules_used", True))


def crf_stage(config: Config, bundle) -> CrfTagger:
    """Stage factory (conf/deidentify.toml [registry.stages] crf): the bundle's token CRFs."""
    from deid_core.bundle_choice import check_domain, resolve_bundle
    from deid_core.engine.crf.versions import check_versions
    from deid_core.engine.merge import gated_source

    if bundle is None:  # no bundle given: the configuration's ([model] bundle), checked like a run's
        bundle = resolve_bundle(config)
    check_domain(config, bundle)  # a loaded bundle too: the target copy on a pooled bundle would tag as pooled
    tagging = config.crf.tagging
    check_versions(bundle, strict=tagging.strict_versions)
    models = load_models(bundle, tagging.cache_size, tagging.domain, tagging.scorer, tagging.batch_tokens)
    if not models:
        log.warning("bundle %s has no CRF models: the crf stage finds nothing", bundle.id[:12])
    merge = config.merge
    return CrfTagger(models, threshold=tagging.marginal_threshold, needs_rules=trained_with_rules(bundle),
                     min_gate_examples=tagging.min_gate_examples,
                     gate=merge.rule_gate > 0, gated_source=lambda src: gated_source(src, merge))
