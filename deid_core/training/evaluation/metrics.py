"""Per-note PHI scores (DESIGN.md §6): entity strict/relaxed, token, binary token/strict, overlap.

Every metric yields Counts per label for one note; sums over notes give micro averages.
tp and fn are attributed to the gold span's (or token's) label, fp and ptp (predictions
judged correct) to the predicted label, so precision = ptp / (ptp + fp) and
recall = tp / (tp + fn). For label-matching metrics ptp == tp; they differ only in the
binary metrics' per-label rows and in overlap (PhysioNet's scorer: a gold span is found
when any prediction overlaps it, and a prediction is correct when it overlaps any gold span).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass

from deid_core.spans import Span, sort_spans
from deid_core.taxonomy import is_hipaa, labels

METRICS = ("strict", "relaxed", "token", "binary_token", "binary_strict", "overlap")
LABEL_SETS = ("all", "hipaa")
RELAXED_END_SLACK = 2
# Evaluation tokens: maximal runs of letters or digits (DESIGN.md §6), so "22at" is one token.
_EVAL_TOKEN_RE = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Counts:
    """tp/fn (gold side), fp/ptp (prediction side) of one metric; adds up over notes and labels."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    ptp: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.ptp + other.ptp)

    @property
    def precision(self) -> float:
        """Share of predictions judged correct (1.0 when nothing was predicted)."""
        return ratio(self.ptp, self.ptp + self.fp)

    @property
    def recall(self) -> float:
        """Share of gold found (1.0 when there was no gold)."""
        return ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0.0 when both are 0)."""
        return f1_score(self.precision, self.recall)


def ratio(num: int, den: int) -> float:
    """num / den, vacuously 1.0 when there is nothing to count."""
    return num / den if den else 1.0


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean, 0.0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


NoteScores = dict[str, dict[str, Counts]]  # metric -> label -> Counts


class _Tally:
    """Mutable per-label counters for one metric of one note."""

    def __init__(self) -> None:
        self.c: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])

    def add(self, label: str, tp: int = 0, fp: int = 0, fn: int = 0, ptp: int = 0) -> None:
        row = self.c[label]
        row[0] += tp
        row[1] += fp
        row[2] += fn
        row[3] += ptp

    def freeze(self) -> dict[str, Counts]:
        return {k: Counts(*v) for k, v in self.c.items()}


def strict(gold: list[Span], pred: list[Span]) -> dict[str, Counts]:
    """Entity strict: label and both offsets equal (multiset matching)."""
    return _exact(gold, pred, lambda s: (s.start, s.end, s.label))


def binary_strict(gold: list[Span], pred: list[Span]) -> dict[str, Counts]:
    """Both offsets equal, label ignored (one-to-one per offset pair)."""
    return _exact(gold, pred, lambda s: (s.start, s.end))


def _exact(gold: list[Span], pred: list[Span], key) -> dict[str, Counts]:
    """One-to-one matching of spans with equal keys; credit to gold labels (tp/fn), pred labels (ptp/fp)."""
    t = _Tally()
    g = _group(gold, key)
    p = _group(pred, key)
    for k in g.keys() | p.keys():
        gs, ps = sorted(x.label for x in g.get(k, ())), sorted(x.label for x in p.get(k, ()))
        m = min(len(gs), len(ps))
        for i, lab in enumerate(gs):
            t.add(lab, tp=int(i < m), fn=int(i >= m))
        for i, lab in enumerate(ps):
            t.add(lab, ptp=int(i < m), fp=int(i >= m))
    return t.freeze()


def relaxed(gold: list[Span], pred: list[Span]) -> dict[str, Counts]:
    """Entity relaxed: label and start equal, ends within 2 characters (maximum one-to-one matching)."""
    t = _Tally()
    g = _group(gold, lambda s: (s.start, s.label))
    p = _group(pred, lambda s: (s.start, s.label))
    for key in g.keys() | p.keys():
        gs, ps = g.get(key, []), p.get(key, [])
        m = _max_matching([[j for j, q in enumerate(ps) if abs(q.end - x.end) <= RELAXED_END_SLACK] for x in gs],
                          len(ps))
        t.add(key[1], tp=m, ptp=m, fn=len(gs) - m, fp=len(ps) - m)
    return t.freeze()


def _max_matching(adj: list[list[int]], n_right: int) -> int:
    """Size of a maximum bipartite matching (augmenting paths; groups here are tiny)."""
    owner = [-1] * n_right

    def augment(u: int, seen: list[bool]) -> bool:
        for v in adj[u]:
            if not seen[v]:
                seen[v] = True
                if owner[v] < 0 or augment(owner[v], seen):
                    owner[v] = u
                    return True
        return False

    return sum(augment(u, [False] * n_right) for u in range(len(adj)))


def token_labels(starts: list[int], ends: list[int], spans: list[Span]) -> dict[int, str]:
    """Token index -> label of the first span (text order, longer first) sharing a character with it."""
    out: dict[int, str] = {}
    for s in sort_spans(spans):
        for i in range(bisect_right(ends, s.start), bisect_left(starts, s.end)):
            out.setdefault(i, s.label)
    return out


def eval_tokens(text: str) -> tuple[list[int], list[int]]:
    """Starts and ends of the evaluation tokens (maximal runs of letters or digits)."""
    spans = [m.span() for m in _EVAL_TOKEN_RE.finditer(text)]
    return [a for a, _ in spans], [b for _, b in spans]


def token_metrics(text: str, gold: list[Span], pred: list[Span]) -> tuple[dict[str, Counts], dict[str, Counts]]:
    """Token (label must match) and binary token (any PHI label) counts of one note."""
    starts, ends = eval_tokens(text)
    g, p = token_labels(starts, ends, gold), token_labels(starts, ends, pred)
    tok, binary = _Tally(), _Tally()
    for i in g.keys() | p.keys():
        gl, pl = g.get(i), p.get(i)
        if gl is not None and gl == pl:
            tok.add(gl, tp=1, ptp=1)
        else:
            if gl is not None:
                tok.add(gl, fn=1)
            if pl is not None:
                tok.add(pl, fp=1)
        if gl is not None and pl is not None:
            binary.add(gl, tp=1)
            binary.add(pl, ptp=1)
        elif gl is not None:
            binary.add(gl, fn=1)
        else:
            binary.add(pl, fp=1)
    return tok.freeze(), binary.freeze()


def overlap(gold: list[Span], pred: list[Span]) -> dict[str, Counts]:
    """PhysioNet overlap: gold found when any prediction overlaps it; prediction correct when it overlaps any gold."""
    t = _Tally()
    pred_union = _union(pred)
    gold_union = _union(gold)
    for s in gold:
        hit = _hits(pred_union, s)
        t.add(s.label, tp=int(hit), fn=int(not hit))
    for s in pred:
        hit = _hits(gold_union, s)
        t.add(s.label, ptp=int(hit), fp=int(not hit))
    return t.freeze()


def _group(spans: Iterable[Span], key: Callable[[Span], Hashable]) -> dict:
    """Spans grouped by key, each group in text order."""
    out: dict = defaultdict(list)
    for s in sort_spans(spans):
        out[key(s)].append(s)
    return out


def _union(spans: list[Span]) -> tuple[list[int], list[int]]:
    """Disjoint sorted intervals covering exactly the characters of `spans`."""
    starts: list[int] = []
    ends: list[int] = []
    for s in sorted(spans, key=lambda x: x.start):
        if starts and s.start <= ends[-1]:
            ends[-1] = max(ends[-1], s.end)
        else:
            starts.append(s.start)
            ends.append(s.end)
    return starts, ends


def _hits(union: tuple[list[int], list[int]], s: Span) -> bool:
    """True when span `s` shares a character with the union intervals."""
    starts, ends = union
    i = bisect_right(ends, s.start)
    return i < len(starts) and starts[i] < s.end


def filter_labels(spans: list[Span], label_set: str) -> list[Span]:
    """Spans of the label set: `all`, or `hipaa` (the labels HIPAA requires removing)."""
    if label_set == "all":
        return spans
    if label_set == "hipaa":
        return [s for s in spans if is_hipaa(s.label)]
    raise ValueError(f"unknown label set {label_set!r}; expected one of {', '.join(LABEL_SETS)}")


def score_note(text: str, gold: list[Span], pred: list[Span], label_set: str = "all") -> NoteScores:
    """Every metric's per-label counts for one note."""
    gold, pred = filter_labels(gold, label_set), filter_labels(pred, label_set)
    tok, binary = token_metrics(text, gold, pred)
    return {"strict": strict(gold, pred), "relaxed": relaxed(gold, pred), "token": tok,
            "binary_token": binary, "binary_strict": binary_strict(gold, pred),
            "overlap": overlap(gold, pred)}


def score_corpus(texts: Mapping[str, str], gold: Mapping[str, list[Span]], pred: Mapping[str, list[Span]],
                 label_set: str = "all", names: tuple[str, str] = ("gold", "pred")) -> dict[str, NoteScores]:
    """Scores of every note in `texts` (absent gold or pred = no spans); ValueError for stray or bad spans."""
    for name, spans in zip(names, (gold, pred), strict=True):
        stray = sorted(set(spans) - set(texts))
        if stray:
            raise ValueError(f"{name}: {len(stray)} note_id(s) not among the notes, e.g. {stray[0]!r}")
        for nid, ss in spans.items():
            n = len(texts[nid])
            bad = next((s for s in ss if not 0 <= s.start < s.end <= n), None)
            if bad is not None:
                raise ValueError(f"{name}: note {nid!r}: span [{bad.start}, {bad.end}) outside text of length {n}")
    return {nid: score_note(text, list(gold.get(nid, ())), list(pred.get(nid, ())), label_set)
            for nid, text in texts.items()}


def totals(scores: Mapping[str, NoteScores], metric: str) -> dict[str, Counts]:
    """Per-label Counts of a metric summed over notes."""
    out: dict[str, Counts] = defaultdict(Counts)
    for ns in scores.values():
        for label, c in ns[metric].items():
            out[label] += c
    return dict(out)


def micro(by_label: Mapping[str, Counts]) -> Counts:
    """The micro average: counts summed over labels."""
    return sum(by_label.values(), Counts())


def label_order(names: Iterable[str]) -> list[str]:
    """Labels in taxonomy order, anything else after them alphabetically."""
    rank = {lab: i for i, lab in enumerate(labels())}
    return sorted(names, key=lambda x: (rank.get(x, len(rank)), x))
