"""The feature extractor: one list of feature strings per token of a Doc, for one model's families.

Token-intrinsic strings are cached per token type (TypeEntry); window families reuse the
neighbour's pre-built, offset-prefixed strings by reference; doc families append context.
At tagging time strings the model never learned are dropped once per type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain

from deid_core.doc import Doc
from deid_core.engine.crf.doc_families import DOC_FAMILIES, DocContext
from deid_core.engine.crf.shapes import regex_shape, short_shape
from deid_core.engine.crf.token_families import TOKEN_FAMILIES, gazetteer_names
from deid_core.engine.generations import Generations
from deid_core.spans import Span

# window family -> (which cached view of the neighbour, default radius or None = model window)
WINDOW_FAMILIES: dict[str, tuple[str, int | None]] = {
    "window_word": ("low", None),
    "window_shape": ("cshape", None),
    "context_shape": ("rshape", 3),
    "window_gazetteer": ("gz", 1),
}
NGRAM_FAMILIES = ("word_bigram", "shape_ngram")
SPECIAL_FAMILIES = ("cluster",)  # needs the bundle's cluster table


def all_families() -> list[str]:
    """Every registered family name."""
    return sorted([*TOKEN_FAMILIES, *DOC_FAMILIES, *WINDOW_FAMILIES, *NGRAM_FAMILIES, *SPECIAL_FAMILIES])


@dataclass(slots=True)
class TypeEntry:
    """Everything cached for one token string."""

    own: list[str]
    low: str
    cshape: str
    rshape: str
    gz: str = ""
    win: dict[int, list[str]] = field(default_factory=dict)
    # At tagging time: the word is the left / right half of some word bigram the model knows.
    bl: bool = True
    br: bool = True


@dataclass
class FeatureConfig:
    """Which families a model uses and its window radius."""

    families: list[str]
    window: int = 2

    def __post_init__(self) -> None:
        unknown = [f for f in self.families if f not in all_families()]
        if unknown:
            raise ValueError(f"unknown feature families {unknown}; registered: {', '.join(all_families())}")


# the cached views of a token a window family reads
VIEWS: dict[str, Callable[[TypeEntry], str]] = {"low": lambda e: e.low, "cshape": lambda e: e.cshape,
                                               "rshape": lambda e: e.rshape, "gz": lambda e: e.gz}


class FeatureExtractor:
    """Turns a Doc into one list of feature strings per token, for one model's feature config."""

    def __init__(
        self,
        config: FeatureConfig,
        clusters: dict[str, tuple[str, ...]] | None = None,
        cache_size: int = 200_000,
        gazetteer: Callable[[Doc], list] | None = None,
        known: set[str] | None = None,
        as_bytes: bool = False,
    ) -> None:
        self.config = config
        # Cached strings kept as UTF-8 bytes: crfsuite then skips an encode per string per call.
        self.as_bytes = as_bytes
        # At tagging time: the model's attribute set. Cached per-type strings the model never
        # learned (zero weight, e.g. pruned by L1) are dropped once, so they cost nothing later.
        self.known = known
        fam = set(config.families)
        self.token_fns = [TOKEN_FAMILIES[f] for f in config.families if f in TOKEN_FAMILIES]
        self.use_clusters = "cluster" in fam and bool(clusters)
        self.clusters = clusters or {}
        self.doc_fns = [DOC_FAMILIES[f] for f in config.families if f in DOC_FAMILIES]
        self.uses_rules = "rule_hits" in fam
        self.gazetteer = gazetteer if "gazetteer" in fam else None
        self.use_gazetteer = "gazetteer" in fam
        offsets: dict[int, list[str]] = {}
        for f in config.families:
            if f in WINDOW_FAMILIES:
                view, radius = WINDOW_FAMILIES[f]
                r = radius if radius is not None else config.window
                for o in range(-r, r + 1):
                    if o:
                        offsets.setdefault(o, []).append(view)
        self.offsets = sorted(offsets.items())
        self.word_bigram = "word_bigram" in fam
        self.shape_ngram = "shape_ngram" in fam
        self.pad = {o: [f"{o}:{v}=<PAD>" for v in views] for o, views in self.offsets}
        if known is not None:
            self.pad = {o: [f for f in p if f in known] for o, p in self.pad.items()}
        if as_bytes:
            self.pad = {o: [f.encode() for f in p] for o, p in self.pad.items()}
        # per token type, at most cache_size entries (two generations: docs/BENCHMARKS.md, round 11)
        self.cache: Generations[str, TypeEntry] = Generations(cache_size)
        self.cache_size = cache_size
        # shape n-gram strings per (previous, own, next) compressed shape, filtered like `own`
        self.trigrams: dict[tuple[str, str, str], list[str]] = {}
        # Words that are a left / right half of a word bigram the model knows (all splits at '|'):
        # other pairs are never built at tagging time.
        self.bigram_left: set[str] = set()
        self.bigram_right: set[str] = set()
        if known is not None and self.word_bigram:
            for f in known:
                if f.startswith(("wb=", "wf=")):
                    pair = f[3:]
                    for k, ch in enumerate(pair):
                        if ch == "|":
                            self.bigram_left.add(pair[:k])
                            self.bigram_right.add(pair[k + 1:])

    def entry(self, token: str) -> TypeEntry:
        """The cached per-type entry of a token string."""
        e = self.cache.get(token)
        if e is None:
            e = self.build(token)
            self.cache.put(token, e)
        return e  # type: ignore[return-value]

    def build(self, token: str) -> TypeEntry:
        """The per-type entry of a token string, not cached (the emission tables keep their own rows)."""
        own: list[str] = []
        for fn in self.token_fns:
            own.extend(fn(token))
        low = token.lower()
        if self.use_clusters:
            cl = self.clusters.get(low)
            if cl:
                own.extend(f"c{i}={c}" for i, c in enumerate(cl))
            else:
                own.append("c=<UNK>")
        gz = gazetteer_names(low) if self.use_gazetteer else ""
        if gz:
            own.extend("gz=" + g for g in gz.split("+"))
        known = self.known
        if known is not None:
            own = [f for f in own if f in known]
        e = TypeEntry(own, low, short_shape(token), regex_shape(token), gz or "-")
        if known is not None:
            e.bl, e.br = low in self.bigram_left, low in self.bigram_right
        for o, views in self.offsets:
            w = [f"{o}:{v}={VIEWS[v](e)}" for v in views]
            e.win[o] = w if known is None else [f for f in w if f in known]
        if self.as_bytes:
            e.own = [f.encode() for f in own]
            e.win = {o: [f.encode() for f in w] for o, w in e.win.items()}
        return e

    def entries(self, toks: Sequence[str]) -> list[TypeEntry]:
        """The cached per-type entry of each token."""
        get = self.cache.young.get
        return [get(t) or self.entry(t) for t in toks]

    def extract(self, doc: Doc, rule_spans: Sequence[Span] = ()) -> list[list[str]]:
        """Feature lists, one per token of doc.tokens."""
        toks = doc.tokens[0]
        n = len(toks)
        ents = self.entries(toks)
        # columns: own strings, then each window offset's (shared, pre-built) neighbour strings
        cols: list[list[list[str]]] = [[e.own for e in ents]]
        for o, _ in self.offsets:
            pad = self.pad[o]
            if o < 0:
                cols.append([pad] * min(-o, n) + [e.win[o] for e in ents[: max(n + o, 0)]])
            else:
                cols.append([e.win[o] for e in ents[o:]] + [pad] * min(o, n))
        cols.append(self.ngrams(ents))
        if len(cols) == 6:  # the usual window of 2: one list display per token
            feats = [[*a, *b, *c, *d, *e, *f] for a, b, c, d, e, f in zip(*cols, strict=True)]
        else:
            feats = [list(chain.from_iterable(row)) for row in zip(*cols, strict=True)]
        self.add_doc_features(doc, rule_spans, feats, [e.low for e in ents])
        return feats

    def add_doc_features(self, doc: Doc, rule_spans: Sequence[Span], feats: list[list[str]],
                         lows: list[str] | None = None) -> None:
        """Append the doc families' strings (not filtered by `known`) to each token's list in `feats`."""
        if self.doc_fns:
            toks, starts, ends = doc.tokens
            ctx = DocContext(doc, toks, starts, ends, rule_spans, self.gazetteer, lows)
            for fn in self.doc_fns:
                fn(ctx, feats)

    def ngrams(self, ents: list[TypeEntry]) -> list[list[str]]:
        """Per token: word bigrams (wb: with the previous word, wf: with the next) then shape n-grams.

        Lists may be shared between tokens (read-only). At tagging time only strings the model
        knows are kept; bigram strings are built only for pairs that can be known.
        """
        n = len(ents)
        known = self.known
        empty: list[str] = []
        if self.shape_ngram and n:
            cs = [e.cshape for e in ents]
            tget = self.trigrams.get
            out = []
            for key in zip(["<S>", *cs[:-1]], cs, [*cs[1:], "<E>"], strict=True):
                t = tget(key)
                out.append(self.shape_ngrams(key) if t is None else t)
        else:
            out = [empty] * n
        if not (self.word_bigram and n):
            return out
        lows = [e.low for e in ents]
        if known is None:
            prev = "<S>"
            for i in range(n):
                cur = lows[i]
                bg = [f"wb={prev}|{cur}", f"wf={cur}|{lows[i + 1]}"] if i + 1 < n else [f"wb={prev}|{cur}"]
                out[i] = bg + out[i]
                prev = cur
            return out
        # pair i = (word i-1 or <S>, word i): wb of token i, wf of token i-1
        left = [("<S>" in self.bigram_left), *[e.bl for e in ents]]
        pairs = [i for i in range(n) if ents[i].br and left[i]]
        if not pairs:
            return out
        extra: dict[int, list[str]] = {}
        for i in pairs:
            wb, wf = self.word_pair(lows[i - 1] if i else "<S>", lows[i])
            if wb is not None:
                extra.setdefault(i, [None, None])[0] = wb
            if i and wf is not None:
                extra.setdefault(i - 1, [None, None])[1] = wf
        for i, (wb, wf) in extra.items():
            bg = [x for x in (wb, wf) if x is not None]
            out[i] = ([x.encode() for x in bg] if self.as_bytes else bg) + out[i]
        return out

    def shape_ngrams(self, key: tuple[str, str, str]) -> list[str]:
        """Shape bigram and trigram strings of (previous, own, next) compressed shapes ('<S>' / '<E>'
        past the note's ends), filtered and encoded like the cached strings; cached per key."""
        t = self.trigrams.get(key)
        if t is None:
            a, b, c = key
            t = [f"sb={a}|{b}", f"st={a}|{b}|{c}"]
            if self.known is not None:
                t = [x for x in t if x in self.known]
            if self.as_bytes:
                t = [x.encode() for x in t]
            if len(self.trigrams) >= self.cache_size:
                self.trigrams.clear()
            self.trigrams[key] = t
        return t

    def word_pair(self, a: str, b: str) -> tuple[str | None, str | None]:
        """Tagging time: the word pair (a, b)'s bigram strings the model knows (else None): wb, on b's
        token, and wf, on a's token."""
        wb, wf = f"wb={a}|{b}", f"wf={a}|{b}"
        known = self.known if self.known is not None else (wb, wf)
        return (wb if wb in known else None), (wf if wf in known else None)


def easyadapt(feats: list[list[str]], domain: str) -> list[list[str]]:
    """EasyAdapt augmentation: every feature kept (general) plus a copy prefixed with the domain."""
    pre = domain + "|"
    return [f + [pre + x for x in f] for f in feats]
