"""resolve_overlaps: the clustered greedy gives the plain greedy's result."""

import random

from deid_core.spans import Span, default_rank, resolve_overlaps, sort_spans


def naive(spans):
    kept = []
    for s in sorted(spans, key=default_rank, reverse=True):
        if s.start < s.end and not any(s.overlaps(k) for k in kept):
            kept.append(s)
    return sort_spans(kept)


def test_matches_plain_greedy_on_random_spans():
    r = random.Random(5)
    for _ in range(500):
        spans = []
        for _ in range(r.randint(0, 25)):
            a = r.randint(0, 80)
            spans.append(Span(a, a + r.randint(0, 12), r.choice("AB"), confidence=r.choice([0.5, 1.0])))
        assert resolve_overlaps(spans) == naive(spans)


def test_chain_of_overlaps_keeps_longest_then_disjoint():
    spans = [Span(0, 4, "A"), Span(3, 9, "B"), Span(8, 10, "C"), Span(20, 22, "D")]
    assert resolve_overlaps(spans) == [Span(0, 4, "A"), Span(8, 10, "C"), Span(20, 22, "D")] or \
        resolve_overlaps(spans) == [Span(3, 9, "B"), Span(20, 22, "D")]
    assert resolve_overlaps(spans) == naive(spans)
