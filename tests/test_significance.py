"""Approximate randomization: identical systems are not different, very different ones are."""

from deid_core.spans import Span
from deid_core.training.evaluation.metrics import score_corpus
from deid_core.training.evaluation.significance import approximate_randomization

TEXTS = {f"n{i}": "Dr Lee saw Ann" for i in range(30)}
GOLD = {k: [Span(3, 6, "DOCTOR"), Span(11, 14, "PATIENT")] for k in TEXTS}


def test_identical_systems_p_is_one():
    a = score_corpus(TEXTS, GOLD, GOLD)
    assert approximate_randomization(a, a, "strict", n=200) == 1.0


def test_very_different_systems_small_p_and_seeded():
    good = score_corpus(TEXTS, GOLD, GOLD)
    bad = score_corpus(TEXTS, GOLD, {k: [Span(0, 2, "DOCTOR")] for k in TEXTS})
    p = approximate_randomization(good, bad, "strict", n=999, seed=1)
    assert p < 0.01
    assert p == approximate_randomization(good, bad, "strict", n=999, seed=1)


def test_slightly_different_systems_not_significant():
    good = score_corpus(TEXTS, GOLD, GOLD)
    # one note of thirty loses one span: far from significant
    pred = dict(GOLD, n0=[Span(3, 6, "DOCTOR")])
    worse = score_corpus(TEXTS, GOLD, pred)
    p = approximate_randomization(good, worse, "strict", n=999, seed=3)
    assert p > 0.5
    assert approximate_randomization(worse, good, "strict", n=999, seed=3) == p


def test_different_note_sets_rejected():
    a = score_corpus(TEXTS, GOLD, GOLD)
    b = score_corpus({"n0": TEXTS["n0"]}, {}, {})
    try:
        approximate_randomization(a, b, "strict", n=10)
    except ValueError:
        return
    raise AssertionError("expected ValueError")
