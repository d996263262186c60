"""CRF features (seed 000 §3.2-3.3.3, seed 001, seed 002), registered by name, chosen by config.

Three kinds of feature family:
- token families `(token) -> list[str]`: intrinsic to the token string, computed once per
  token *type* and cached per process;
- window families: strings of a neighbour's cached entry, pre-prefixed with the offset and
  shared by reference (no string building per token);
- doc families `(ctx, feats)`: context of the note (sentence, section, line, attribute,
  metadata, rule hits) appended to the per-token lists.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain

import regex

from deid_core.doc import Doc
from deid_core.engine.crf.words import feature_words
from deid_core.gazetteers import gazetteer_hits, words
from deid_core.spans import Span
from deid_core.text.attributes import attributes
from deid_core.text.tokenize import token_offsets

TokenFn = Callable[[str], list[str]]
DocFn = Callable[["DocContext", list[list[str]]], None]

TOKEN_FAMILIES: dict[str, TokenFn] = {}
DOC_FAMILIES: dict[str, DocFn] = {}
# window family -> (which cached view of the neighbour, default radius or None = model window)
WINDOW_FAMILIES: dict[str, tuple[str, int | None]] = {
    "window_word": ("low", None),
    "window_shape": ("cshape", None),
    "context_shape": ("rshape", 3),
    "window_gazetteer": ("gz", 1),
}
# the cached views of a token a window family reads
VIEWS: dict[str, Callable[[TypeEntry], str]] = {"low": lambda e: e.low, "cshape": lambda e: e.cshape,
                                               "rshape": lambda e: e.rshape, "gz": lambda e: e.gz}
NGRAM_FAMILIES = ("word_bigram", "shape_ngram")
SPECIAL_FAMILIES = ("cluster",)  # needs the bundle's cluster table


def token_family(name: str) -> Callable[[TokenFn], TokenFn]:
    """Register a token-intrinsic feature family."""

    def deco(fn: TokenFn) -> TokenFn:
        TOKEN_FAMILIES[name] = fn
        return fn

    return deco


def doc_family(name: str) -> Callable[[DocFn], DocFn]:
    """Register a document-context feature family."""

    def deco(fn: DocFn) -> DocFn:
        DOC_FAMILIES[name] = fn
        return fn

    return deco


def all_families() -> list[str]:
    """Every registered family name."""
    return sorted([*TOKEN_FAMILIES, *DOC_FAMILIES, *WINDOW_FAMILIES, *NGRAM_FAMILIES, *SPECIAL_FAMILIES])


# ---------------------------------------------------------------- token shapes

_SHAPE_TABLE = {}
for _c in range(0x10000):
    _ch = chr(_c)
    if _ch.isdigit():
        _SHAPE_TABLE[_c] = "#"
    elif _ch.isupper():
        _SHAPE_TABLE[_c] = "A"
    elif _ch.islower():
        _SHAPE_TABLE[_c] = "a"
del _c, _ch

_COMPRESS_RE = regex.compile(r"(.)\1+")


def shape(token: str) -> str:
    """Orthographic shape: digits '#', upper 'A', lower 'a', other characters kept (capped at 10)."""
    s = token[:10].translate(_SHAPE_TABLE)
    return s + "~" if len(token) > 10 else s


def short_shape(token: str) -> str:
    """Compressed shape: runs of one shape character collapsed ('Smith' -> 'Aa')."""
    return _COMPRESS_RE.sub(r"\1", shape(token).rstrip("~"))


_WORDS = feature_words()  # conf/crf_features.toml, conf/calendar.toml


def regex_shape(token: str) -> str:
    """A coarse token class (year, month, 2-digit, init-cap, all-caps, title, punctuation...)."""
    low = token.lower()
    if token.isdigit():
        n = len(token)
        if n == 4 and token[:2] in ("19", "20"):
            return "YEAR"
        if n <= 2:
            return "D12" if int(token) <= 12 else ("D31" if int(token) <= 31 else "D2")
        return f"D{min(n, 6)}"
    if low in _WORDS.months:
        return "MONTH"
    if low in _WORDS.weekdays:
        return "WEEKDAY"
    if low in _WORDS.seasons:
        return "SEASON"
    if low in _WORDS.titles:
        return "TITLE"
    if token.isalpha():
        if len(token) == 1:
            return "INITIAL" if token.isupper() else "LETTER"
        if token.isupper():
            return "ALLCAPS"
        if token[0].isupper():
            return "INITCAP"
        return "LOWER"
    return "PUNCT" if len(token) == 1 else "OTHER"


@token_family("word")
def f_word(token: str) -> list[str]:
    """The lower-cased token."""
    return ["w=" + token.lower()]


@token_family("shape")
def f_shape(token: str) -> list[str]:
    """Orthographic shape."""
    return ["sh=" + shape(token)]


@token_family("short_shape")
def f_short_shape(token: str) -> list[str]:
    """Compressed orthographic shape."""
    return ["cs=" + short_shape(token)]


@token_family("regex_shape")
def f_regex_shape(token: str) -> list[str]:
    """Regex token-shape class."""
    return ["rs=" + regex_shape(token)]


@token_family("affixes")
def f_affixes(token: str) -> list[str]:
    """Prefixes and suffixes up to 3 characters (tokens longer than the affix)."""
    low = token.lower()
    n = len(low)
    out = []
    for k in (1, 2, 3):
        if n > k:
            out.append(f"p{k}={low[:k]}")
            out.append(f"s{k}={low[-k:]}")
    return out


@token_family("length")
def f_length(token: str) -> list[str]:
    """Token length class."""
    n = len(token)
    return ["len=" + (str(n) if n < 8 else "8+")]


@token_family("profession_suffix")
def f_profession_suffix(token: str) -> list[str]:
    """The token ends like a profession (-ist, -ian, -man, ...)."""
    low = token.lower()
    if len(low) < 5:
        return []
    for suf in _WORDS.profession_suffixes:
        if low.endswith(suf):
            return ["prof=" + suf]
    return []


# ---------------------------------------------------------------- per-type cache


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


# ---------------------------------------------------------------- doc context


@dataclass
class DocContext:
    """Per-note inputs of the doc families."""

    doc: Doc
    toks: list[str]
    starts: list[int]
    ends: list[int]
    rule_spans: Sequence[Span] = ()
    gazetteer: Callable[[Doc], list] | None = None
    lows: list[str] | None = None  # lower-cased tokens, when the extractor has them already


def _span_token_range(ctx: DocContext, start: int, end: int) -> range:
    i = bisect_right(ctx.ends, start)
    j = bisect_left(ctx.starts, end)
    return range(i, j)


@doc_family("sentence")
def d_sentence(ctx: DocContext, feats: list[list[str]]) -> None:
    """Sentence length class (1..5, 6+), sentence shape (ends with colon, enumeration), position."""
    text = ctx.doc.text
    starts = ctx.starts
    n = len(starts)
    for s, e in ctx.doc.sentences:
        rng = _span_token_range(ctx, s, e)
        if not rng:
            continue
        length = len(rng)
        tags = ["sl=" + (str(length) if length < 6 else "6+")]
        if text[e - 1] == ":":
            tags.append("ss=colon")
        first = ctx.toks[rng.start]
        if first in "-*•" or (first.isdigit() and rng.start + 1 < n and ctx.toks[rng.start + 1] in ".)"):
            tags.append("ss=enum")
        for i in rng:
            feats[i].extend(tags)
        feats[rng.start].append("sfirst")


@doc_family("section")
def d_section(ctx: DocContext, feats: list[list[str]]) -> None:
    """Canonical name of the section holding the token; header tokens flagged."""
    sections = ctx.doc.sections
    if not sections:
        return
    for sec in sections:
        tag = "sec=" + sec.name
        for i in _span_token_range(ctx, sec.header_start, sec.end):
            feats[i].append(tag)
        for i in _span_token_range(ctx, sec.header_start, sec.header_end):
            feats[i].append("hdr")


@doc_family("line")
def d_line(ctx: DocContext, feats: list[list[str]]) -> None:
    """Token starts or ends a line (structured lines: names, signatures)."""
    text = ctx.doc.text
    starts = ctx.starts
    n = len(starts)
    if not n:
        return
    feats[0].append("bol")
    last = 0
    pos = text.find("\n", starts[0])
    while pos >= 0:  # tokens hold no newline: the first token after one starts a line
        i = bisect_right(starts, pos, last)
        if i >= n:
            break
        if i > last:
            feats[i].append("bol")
            feats[i - 1].append("eol")
            last = i
        pos = text.find("\n", starts[i])
    feats[n - 1].append("eol")


def _attribute_names(ctx: DocContext) -> dict[int, str]:
    """Token index -> the attribute whose value holds it (later ones win): text/attributes.py's parser."""
    out: dict[int, str] = {}
    starts = ctx.starts
    for a in attributes(ctx.doc):  # tokens starting inside the value (as attributes.attribute_of)
        i = bisect_left(starts, a.value_start)
        for k in range(i, bisect_left(starts, a.value_end, i)):
            out[k] = a.name
    return out


@doc_family("attribute")
def d_attribute(ctx: DocContext, feats: list[list[str]]) -> None:
    """Attribute name when the token is in the value of an attribute-value pair."""
    for i, name in _attribute_names(ctx).items():
        if name:
            feats[i].append("attr=" + name)


@lru_cache(maxsize=4096)
def _known_tokens(known: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """Known name tokens (lower case) -> label, their prefixes of 3+ letters (clipped names), and both."""
    out: dict[str, str] = {}
    for value, label in known:
        for t in token_offsets(value)[0]:
            if len(t) >= 2 and t.isalpha():
                out.setdefault(t.lower(), label)
    prefixes = frozenset(k[:n] for k in out for n in range(3, len(k)))
    return out, prefixes, prefixes | out.keys()


@doc_family("metadata")
def d_metadata(ctx: DocContext, feats: list[list[str]]) -> None:
    """Seed 002: the token (or a clipped prefix of it) is a known name of the note's patient."""
    known, prefixes, either = _known_tokens(ctx.doc.note.known_phi)
    if not known:
        return
    n = len(ctx.toks)
    lows = ctx.lows if ctx.lows is not None else [t.lower() for t in ctx.toks]
    for i in [i for i, low in enumerate(lows) if low in either]:
        low = lows[i]
        lab = known.get(low)
        if lab:
            h = "meta=" + lab
        elif low in prefixes:
            h = "meta~"
        else:
            continue
        feats[i].append(h)
        if i:
            feats[i - 1].append("+1" + h)
        if i + 1 < n:
            feats[i + 1].append("-1" + h)


@doc_family("rule_hits")
def d_rule_hits(ctx: DocContext, feats: list[list[str]]) -> None:
    """Token inside a rule-tagger span (label), and next to one."""
    n = len(ctx.toks)
    for sp in ctx.rule_spans:
        rng = _span_token_range(ctx, sp.start, sp.end)
        if not rng:
            continue
        tag = "rule=" + sp.label
        for i in rng:
            feats[i].append(tag)
        if rng.start:
            feats[rng.start - 1].append("+1" + tag)
        if rng.stop < n:
            feats[rng.stop].append("-1" + tag)


@lru_cache(maxsize=1)
def _gaz_sets() -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((name, words(name)) for name in _WORDS.gazetteer_lists)


def gazetteer_names(low: str) -> str:
    """'+'-joined names of the gazetteers holding the lower-cased token ('' if none): per type."""
    return "+".join(name for name, ws in _gaz_sets() if low in ws)


@doc_family("gazetteer")
def d_gazetteer(ctx: DocContext, feats: list[list[str]]) -> None:
    """Multi-word gazetteer entries covering the token ('new haven'); single tokens are per type."""
    for s, e, names in gazetteer_hits(ctx.doc):
        rng = _span_token_range(ctx, s, e)
        if len(rng) < 2:
            continue
        tags = ["gzm=" + g for g in names]
        for i in rng:
            feats[i].extend(tags)


# ---------------------------------------------------------------- extractor


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
        self.cache: dict[str, TypeEntry] = {}
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
        if e is not None:
            return e
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
        if len(self.cache) >= self.cache_size:
            self.cache.clear()
        self.cache[token] = e
        return e

    def extract(self, doc: Doc, rule_spans: Sequence[Span] = ()) -> list[list[str]]:
        """Feature lists, one per token of doc.tokens."""
        toks, starts, ends = doc.tokens
        n = len(toks)
        get = self.cache.get
        ents = [get(t) or self.entry(t) for t in toks]
        # columns: own strings, then each window offset's (shared, pre-built) neighbour strings
        cols: list[list[list[str]]] = [[e.own for e in ents]]
        for o, _ in self.offsets:
            pad = self.pad[o]
            if o < 0:
                cols.append([pad] * min(-o, n) + [e.win[o] for e in ents[: max(n + o, 0)]])
            else:
                cols.append([e.win[o] for e in ents[o:]] + [pad] * min(o, n))
        cols.append(self._ngrams(ents))
        if len(cols) == 6:  # the usual window of 2: one list display per token
            feats = [[*a, *b, *c, *d, *e, *f] for a, b, c, d, e, f in zip(*cols, strict=True)]
        else:
            feats = [list(chain.from_iterable(row)) for row in zip(*cols, strict=True)]
        if self.doc_fns:
            ctx = DocContext(doc, toks, starts, ends, rule_spans, self.gazetteer, [e.low for e in ents])
            for fn in self.doc_fns:
                fn(ctx, feats)
        return feats

    def _ngrams(self, ents: list[TypeEntry]) -> list[list[str]]:
        """Per token: word bigrams (wb: with the previous word, wf: with the next) then shape n-grams.

        Lists may be shared between tokens (read-only). At tagging time only strings the model
        knows are kept; bigram strings are built only for pairs that can be known.
        """
        n = len(ents)
        known = self.known
        empty: list[str] = []
        if self.shape_ngram and n:
            cs = [e.cshape for e in ents]
            tri = self.trigrams
            tget = tri.get
            out = []
            for key in zip(["<S>", *cs[:-1]], cs, [*cs[1:], "<E>"], strict=True):
                t = tget(key)
                if t is None:
                    a, b, c = key
                    t = [f"sb={a}|{b}", f"st={a}|{b}|{c}"]
                    if known is not None:
                        t = [x for x in t if x in known]
                    if self.as_bytes:
                        t = [x.encode() for x in t]
                    if len(tri) >= self.cache_size:
                        tri.clear()
                    tri[key] = t
                out.append(t)
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
            a, b = (lows[i - 1] if i else "<S>"), lows[i]
            wb, wf = f"wb={a}|{b}", f"wf={a}|{b}"
            if wb in known:
                extra.setdefault(i, [None, None])[0] = wb
            if i and wf in known:
                extra.setdefault(i - 1, [None, None])[1] = wf
        for i, (wb, wf) in extra.items():
            bg = [x for x in (wb, wf) if x is not None]
            out[i] = ([x.encode() for x in bg] if self.as_bytes else bg) + out[i]
        return out


def easyadapt(feats: list[list[str]], domain: str) -> list[list[str]]:
    """EasyAdapt augmentation: every feature kept (general) plus a copy prefixed with the domain."""
    pre = domain + "|"
    return [f + [pre + x for x in f] for f in feats]
