"""Character-level CRF (seed 001): char sequences, features, char labels, decoding, the `crf_char` stage.

The sequence of a note is every character inside a token (the aggressive tokenizer covers
every non-space character) plus ONE position per whitespace run between two tokens (a
space, or a newline when the run holds one): long runs of blanks cost one position, leading
and trailing whitespace none. Each position keeps the original [start, end) offsets it
stands for, so char tags map back to exact offsets of the original text; labels are
encoded and decoded with deid_core.engine.crf.labels over those position offsets, and decoded
spans go through spans.trim_span (the one trimming rule).

Features are registered by name (CHAR_FAMILIES); a model's list in conf/crf.toml
`[models.<name>] kind = "char"` chooses them. Everything intrinsic to the enclosing token
(the character, its class, its position in the token, the token's word/shape/gazetteer) is
built once per token *type* and cached per process; per position only the character
n-gram window and the note-context strings (neighbour tokens, rule hits, metadata) are
added, all shared strings.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pycrfsuite

from deid_core.config import Config, CrfSettings
from deid_core.config.crf import Model
from deid_core.doc import Doc
from deid_core.engine.contract import RULE_SPANS, NoteState, PerNoteStage, rule_spans_of
from deid_core.engine.crf.features import (
    gazetteer_names,
    known_name_tokens,
    regex_shape,
    short_shape,
)
from deid_core.engine.crf.labels import check_scheme, decode, encode
from deid_core.engine.crf.versions import open_model
from deid_core.engine.generations import Generations
from deid_core.spans import Span, trim_span

log = logging.getLogger(__name__)

CHAR_FEATURES_VERSION = "1"
KIND = "char"


# Family name -> what it adds (docs/crf.md). Token-intrinsic ones are cached per token type.
CHAR_FAMILIES: dict[str, str] = {
    "char": "the character itself (c=x); whitespace positions c=<sp> / c=<nl>",
    "char_class": "character class: upper, lower, digit, punctuation, space, newline",
    "char_ngram": "characters at -k..+k (model window) and the bigrams/trigram around the position",
    "char_position": "position in the token: B/I/E/S and index from the start (0..3+)",
    "token_word": "the enclosing token, lower-cased",
    "token_shape": "the enclosing token's compressed shape and regex shape class",
    "token_gazetteer": "gazetteer lists holding the enclosing token",
    "token_context": "the previous and next token, lower-cased",
    "rule_hits": "the rule tagger's label on the character (and B- on the first character of a hit)",
    "metadata": "the enclosing token is a known name of the note's patient (seed 002)",
}
TOKEN_INTRINSIC = ("char", "char_class", "char_position", "token_word", "token_shape", "token_gazetteer")


def check_families(families: Sequence[str]) -> list[str]:
    """The families, validated against CHAR_FAMILIES (ValueError naming the unknown ones)."""
    unknown = [f for f in families if f not in CHAR_FAMILIES]
    if unknown:
        raise ValueError(f"unknown char feature families {unknown}; registered: {', '.join(sorted(CHAR_FAMILIES))}")
    return list(families)


def is_char_model(mconf: Model) -> bool:
    """True for a [models.*] table with kind = "char"."""
    return mconf.kind == KIND


# ---------------------------------------------------------------- the char sequence


@dataclass(slots=True)
class CharSeq:
    """Positions of a note's char sequence: compressed chars, original [start, end), token index (-1: gap)."""

    chars: str
    starts: list[int]
    ends: list[int]
    tok: list[int]


def char_sequence(doc: Doc) -> CharSeq:
    """The note's char sequence (memoized on the Doc): token characters + one position per gap."""
    return doc.memo("char_sequence", lambda: _build_sequence(doc))


def _build_sequence(doc: Doc) -> CharSeq:
    text = doc.text
    toks, tstarts, tends = doc.tokens
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    tok: list[int] = []
    prev_end = -1
    for i, (t, s, e) in enumerate(zip(toks, tstarts, tends, strict=True)):
        if prev_end >= 0 and s > prev_end:
            parts.append("\n" if "\n" in text[prev_end:s] else " ")
            starts.append(prev_end)
            ends.append(s)
            tok.append(-1)
        parts.append(t)
        n = len(t)
        starts.extend(range(s, e))
        ends.extend(range(s + 1, e + 1))
        tok.extend([i] * n)
        prev_end = e
    return CharSeq("".join(parts), starts, ends, tok)


# ---------------------------------------------------------------- labels


def char_tags(doc: Doc, gold: Sequence[Span], scheme: str = "BIO", label_map: dict[str, str] | None = None,
              keep: set[str] | None = None) -> list[str]:
    """One tag per char-sequence position (BIO or BIOES) from gold spans."""
    seq = char_sequence(doc)
    return encode(gold, seq.starts, seq.ends, scheme, label_map, keep)


def decode_chars(doc: Doc, tags: Sequence[str], source: str = "crf_char", confidence: float = 1.0) -> list[Span]:
    """Spans of char tags: exact offsets into doc.text, trimmed (spans.trim_span); empty ones dropped."""
    seq = char_sequence(doc)
    out = []
    for i, j, label in decode(tags, seq.starts, seq.ends):
        s = trim_span(Span(seq.starts[i], seq.ends[j - 1], label, source, confidence), doc.text)
        if s is not None:
            out.append(s)
    return out


# ---------------------------------------------------------------- features


def _char_class(ch: str) -> str:
    if ch.isdigit():
        return "#"
    if ch.isupper():
        return "A"
    if ch.isalpha():
        return "a"
    return "p"


_GAP_CHAR = {" ": "c=<sp>", "\n": "c=<nl>"}
_GAP_CLASS = {" ": "k=s", "\n": "k=n"}


class CharFeatureExtractor:
    """Turns a Doc into one feature list per char-sequence position, for one char model's families."""

    def __init__(self, families: Sequence[str], window: int = 2, cache_size: int = 200_000,
                 known: set[str] | None = None) -> None:
        self.families = check_families(families)
        fam = set(self.families)
        self.fam = fam
        self.window = window
        self.known = known
        self.uses_rules = "rule_hits" in fam
        self.ngram = "char_ngram" in fam
        self.context = "token_context" in fam
        self.metadata = "metadata" in fam
        self.offsets = [o for o in range(-window, window + 1) if o] if self.ngram else []
        self.cache: Generations[str, tuple[list[list[str]], str, str]] = Generations(cache_size)  # per token type
        self.cache_size = cache_size
        self._uni: dict[int, dict[str, str]] = {o: {} for o in self.offsets}
        gap = {ch: [x for x in ([_GAP_CHAR[ch]] if "char" in fam else []) + ([_GAP_CLASS[ch]] if "char_class" in fam else [])]
               for ch in _GAP_CHAR}
        self.gap = {ch: self._keep(v) for ch, v in gap.items()}

    def _keep(self, feats: list[str]) -> list[str]:
        return feats if self.known is None else [f for f in feats if f in self.known]

    def entry(self, token: str) -> tuple[list[list[str]], str, str]:
        """Per token type: each character's token-intrinsic features, and the token as a -1/+1 context string."""
        e = self.cache.get(token)
        if e is not None:
            return e  # type: ignore[return-value]
        fam = self.fam
        low = token.lower()
        tok_feats: list[str] = []
        if "token_word" in fam:
            tok_feats.append("tw=" + low)
        if "token_shape" in fam:
            tok_feats += ["ts=" + short_shape(token), "tr=" + regex_shape(token)]
        if "token_gazetteer" in fam:
            gz = gazetteer_names(low)
            if gz:
                tok_feats += ["tg=" + g for g in gz.split("+")]
        n = len(token)
        per_char = []
        for k, ch in enumerate(token):
            f: list[str] = []
            if "char" in fam:
                f.append("c=" + ch)
            if "char_class" in fam:
                f.append("k=" + _char_class(ch))
            if "char_position" in fam:
                f.append("tp=" + ("S" if n == 1 else "B" if k == 0 else "E" if k == n - 1 else "I"))
                f.append("ti=" + (str(k) if k < 3 else "3+"))
            f += tok_feats
            per_char.append(self._keep(f))
        e = (per_char, "t-1=" + low, "t+1=" + low)
        self.cache.put(token, e)
        return e

    def _unigram(self, o: int, ch: str) -> str:
        d = self._uni[o]
        s = d.get(ch)
        if s is None:
            s = d[ch] = f"{o}:{_GAP_CHAR.get(ch, 'c=' + ch)}"
        return s

    def extract(self, doc: Doc, rule_spans: Sequence[Span] = ()) -> list[list[str]]:
        """Feature lists, one per position of char_sequence(doc)."""
        seq = char_sequence(doc)
        toks = doc.tokens[0]
        nt = len(toks)
        ents = [self.entry(t) for t in toks]
        feats: list[list[str]] = []
        gap = self.gap
        context = self.context
        for i, (per_char, _, _) in enumerate(ents):
            if i:
                # gap position between tokens i-1 and i (when the sequence has one)
                if seq.tok[len(feats)] == -1:
                    g = gap[seq.chars[len(feats)]].copy()
                    if context:
                        g += (ents[i - 1][1], ents[i][2])
                    feats.append(g)
            if context:
                ctx = (ents[i - 1][1] if i else "t-1=<S>", ents[i + 1][2] if i + 1 < nt else "t+1=<E>")
                feats.extend([*f, *ctx] for f in per_char)
            else:
                feats.extend(f.copy() for f in per_char)
        n = len(feats)
        chars = seq.chars
        if self.ngram and n:  # whole columns, then one extend per position
            cols = []
            for o in self.offsets:
                d = self._uni[o]
                col = [d.get(ch) or self._unigram(o, ch) for ch in chars]
                pad = [f"{o}:<PAD>"] * min(abs(o), n)
                cols.append(pad + col[:n + o] if o < 0 else col[o:] + pad)
            padded = "\x02" + chars.replace("\n", "\u00b6") + "\x03"  # no raw newline in feature strings
            pairs = [padded[q:q + 2] for q in range(n + 1)]
            cols.append(["bl=" + x for x in pairs[:-1]])
            cols.append(["br=" + x for x in pairs[1:]])
            cols.append(["tri=" + padded[p:p + 3] for p in range(n)])
            for f, extra in zip(feats, zip(*cols, strict=True), strict=True):
                f += extra
        if self.uses_rules and rule_spans:
            starts = seq.starts
            for sp in rule_spans:
                i, j = bisect_left(starts, sp.start), bisect_left(starts, sp.end)
                if i >= j:
                    continue
                tag = "rule=" + sp.label
                for p in range(i, j):
                    feats[p].append(tag)
                feats[i].append("rb=" + sp.label)
        if self.metadata:
            known, prefixes, _ = known_name_tokens(doc.note.known_phi)
            if known:
                tokidx = seq.tok
                hits = {}
                for i, t in enumerate(toks):
                    low = t.lower()
                    lab = known.get(low)
                    if lab:
                        hits[i] = "meta=" + lab
                    elif low in prefixes:
                        hits[i] = "meta~"
                if hits:
                    for p, ti in enumerate(tokidx):
                        h = hits.get(ti) if ti >= 0 else None
                        if h:
                            feats[p].append(h)
        return feats


# ---------------------------------------------------------------- training


def char_sequences(docs: Sequence, conf: CrfSettings, model: str, rule_spans: Sequence[Sequence[Span]],
                   labels: set[str]):
    """(features, tags) per non-empty training doc for a char model [models.<model>]."""
    mconf = conf.models[model]
    scheme = check_scheme(conf.labels.scheme)
    lmap = conf.labels.map
    ext = CharFeatureExtractor(mconf.features, mconf.window)
    for d, rs in zip(docs, rule_spans, strict=True):
        if not d.doc.tokens[0]:
            continue
        yield ext.extract(d.doc, rs), char_tags(d.doc, d.gold, scheme, lmap, labels)


# ---------------------------------------------------------------- tagging


class CharModel:
    """One char-level crfsuite model and its feature extractor."""

    def __init__(self, name: str, entry: dict, model_path: Path, cache_size: int = 200_000) -> None:
        self.name = name
        self.entry = entry
        self.tagger = pycrfsuite.Tagger()
        open_model(self.tagger, Path(model_path))  # refuses a truncated file instead of crashing
        known = {attr for attr, _ in self.tagger.info().state_features}
        self.extractor = CharFeatureExtractor(entry["features"], int(entry.get("window", 2)), cache_size, known)

    def tag(self, doc: Doc, rule_spans: Sequence[Span], source: str) -> list[Span]:
        """Viterbi char tags of a doc, decoded to trimmed spans."""
        if not doc.tokens[0]:
            return []
        tags = self.tagger.tag(self.extractor.extract(doc, rule_spans))
        return decode_chars(doc, tags, source)


class CharCrfTagger(PerNoteStage):
    """Pipeline stage `crf_char`: the bundle's char-level CRF; spans with source 'crf_char:<model>'.

    Needs the rule spans when its model was trained with rule_hits features (`needs_rules`).
    """

    provides: frozenset[str] = frozenset()

    def __init__(self, model: CharModel, *, needs_rules: bool, name: str = "crf_char") -> None:
        self.model = model
        self.name = name
        self.uses_rules = model.extractor.uses_rules
        self.needs: Mapping[str, str] = MappingProxyType(
            {RULE_SPANS: f"its model {model.name} was trained with rule_hits features"}
            if needs_rules and self.uses_rules else {})

    def run(self, doc: Doc, state: NoteState) -> list[Span]:
        """The stage: the char CRF's spans, with the rules stage's spans as features."""
        return self.tag(doc, rule_spans_of(state, self.name, bool(self.needs)) if self.uses_rules else ())

    def tag(self, doc: Doc, rules: Sequence[Span] = ()) -> list[Span]:
        """PHI spans found by the char CRF, given the note's rule spans."""
        return self.model.tag(doc, rules, f"{self.name}:{self.model.name}")


def load_char_model(bundle, cache_size: int) -> CharModel | None:
    """The bundle's char model (components.crf_char), or None when it has none."""
    from deid_core.bundle import BundleError

    comp = bundle.manifest.get("components", {}).get("crf_char")
    if not comp:
        return None
    if comp.get("features_version") != CHAR_FEATURES_VERSION:
        raise BundleError(
            f"model bundle {bundle.path}: char CRF built for char feature version "
            f"{comp.get('features_version')!r}, engine {CHAR_FEATURES_VERSION!r}; retrain it with "
            "`deid train --models single,char` (docs/crf.md)")
    (name, entry), = comp["models"].items()
    return CharModel(name, entry, bundle.file(entry["file"]), cache_size)


def char_stage(config: Config, bundle) -> CharCrfTagger:
    """Stage factory (conf/deidentify.toml [registry.stages] crf_char): the bundle's char CRF."""
    from deid_core.bundle import BundleError
    from deid_core.bundle_choice import resolve_bundle
    from deid_core.engine.crf.tagger import trained_with_rules
    from deid_core.engine.crf.versions import check_versions

    if bundle is None:  # no bundle given: the configuration's ([model] bundle)
        bundle = resolve_bundle(config)
    tagging = config.crf.tagging
    check_versions(bundle, strict=tagging.strict_versions)
    model = load_char_model(bundle, tagging.cache_size)
    if model is None:
        raise BundleError(
            f"model bundle {bundle.path} (id {bundle.id[:12]}) has no character-level CRF, but the "
            "pipeline lists stage 'crf_char' ([pipeline] stages): train a bundle with a char model "
            "(`deid train --models single,char`, [training] models in conf/crf.toml) or remove "
            "'crf_char' from [pipeline] stages")
    return CharCrfTagger(model, needs_rules=trained_with_rules(bundle))
