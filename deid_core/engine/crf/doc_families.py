"""Doc families: features from the note around a token (sentence, section, line, attribute-value
pair, the patient's known names, rule hits, multi-word gazetteer entries), appended to the
per-token lists."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from deid_core.doc import Doc
from deid_core.gazetteers import gazetteer_hits
from deid_core.spans import Span
from deid_core.text.attributes import attributes
from deid_core.text.tokenize import token_offsets

DocFn = Callable[["DocContext", list[list[str]]], None]
DOC_FAMILIES: dict[str, DocFn] = {}


def doc_family(name: str) -> Callable[[DocFn], DocFn]:
    """Register a document-context feature family."""

    def deco(fn: DocFn) -> DocFn:
        DOC_FAMILIES[name] = fn
        return fn

    return deco


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


_SENTENCE_LENGTH = ("", "sl=1", "sl=2", "sl=3", "sl=4", "sl=5")  # then "sl=6+"


def d_sentence(ctx: DocContext, feats: list[list[str]]) -> None:
    """Sentence length class (1..5, 6+), sentence shape (ends with colon, enumeration), position."""
    text = ctx.doc.text
    starts, ends, toks = ctx.starts, ctx.ends, ctx.toks
    n = len(starts)
    i = 0
    for s, e in ctx.doc.sentences:  # in text order: each token range starts at or past the last one
        i = bisect_right(ends, s, i)
        j = bisect_left(starts, e, i)
        if i == j:
            continue
        length = j - i
        tags = [_SENTENCE_LENGTH[length] if length < 6 else "sl=6+"]
        if text[e - 1] == ":":
            tags.append("ss=colon")
        first = toks[i]
        if first in "-*•" or (first.isdigit() and i + 1 < n and toks[i + 1] in ".)"):
            tags.append("ss=enum")
        for k in range(i, j):
            feats[k].extend(tags)
        feats[i].append("sfirst")


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


def d_attribute(ctx: DocContext, feats: list[list[str]]) -> None:
    """Attribute name when the token is in the value of an attribute-value pair."""
    starts = ctx.starts
    ranges = []
    stop = 0
    for a in attributes(ctx.doc):  # one value per line: token ranges in order and disjoint...
        i = bisect_left(starts, a.value_start)
        j = bisect_left(starts, a.value_end, i)
        if i < j:
            if i < stop:  # ...else the later value wins per token, as _attribute_names has it
                for k, name in _attribute_names(ctx).items():
                    if name:
                        feats[k].append("attr=" + name)
                return
            ranges.append((i, j, a.name))
            stop = j
    for i, j, name in ranges:
        if name:
            tag = "attr=" + name
            for k in range(i, j):
                feats[k].append(tag)


@lru_cache(maxsize=4096)
def known_name_tokens(known: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """Known name tokens (lower case) -> label, their prefixes of 3+ letters (clipped names), and both."""
    out: dict[str, str] = {}
    for value, label in known:
        for t in token_offsets(value)[0]:
            if len(t) >= 2 and t.isalpha():
                out.setdefault(t.lower(), label)
    prefixes = frozenset(k[:n] for k in out for n in range(3, len(k)))
    return out, prefixes, prefixes | out.keys()


def d_metadata(ctx: DocContext, feats: list[list[str]]) -> None:
    """Seed 002: the token (or a clipped prefix of it) is a known name of the note's patient."""
    known, prefixes, either = known_name_tokens(ctx.doc.note.known_phi)
    if not known:
        return
    n = len(ctx.toks)
    lows = ctx.lows if ctx.lows is not None else [t.lower() for t in ctx.toks]
    if either.isdisjoint(lows):  # most notes (~94 % of the dev notes): one pass in C, no index list
        return
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


def d_gazetteer(ctx: DocContext, feats: list[list[str]]) -> None:
    """Multi-word gazetteer entries covering the token ('new haven'); single tokens are per type."""
    for s, e, names in gazetteer_hits(ctx.doc):
        rng = _span_token_range(ctx, s, e)
        if len(rng) < 2:
            continue
        tags = ["gzm=" + g for g in names]
        for i in rng:
            feats[i].extend(tags)


# Registered here, not by decorators: a compiled build (doc_families.pxd types these functions as cpdef)
# drops decorators.
doc_family("sentence")(d_sentence)
doc_family("section")(d_section)
doc_family("line")(d_line)
doc_family("attribute")(d_attribute)
doc_family("metadata")(d_metadata)
doc_family("rule_hits")(d_rule_hits)
doc_family("gazetteer")(d_gazetteer)
