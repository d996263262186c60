"""Hand-computed expectations for every metric, PhysioNet's overlap rule, and invariants."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.spans import Span
from deid_core.training.evaluation.metrics import (
    Counts,
    micro,
    score_corpus,
    score_note,
)

TEXT = "Pt John Smith seen 12/03/2020 by Dr Lee at MGH 555-1234."


def at(sub: str, label: str, cut: int = 0) -> Span:
    """The span of `sub` in TEXT (its end moved by `cut`)."""
    i = TEXT.index(sub)
    return Span(i, i + len(sub) + cut, label)


GOLD = [at("John Smith", "PATIENT"), at("12/03/2020", "DATE"), at("Lee", "DOCTOR"), at("MGH", "HOSPITAL")]
PRED = [at("John Smith", "PATIENT"),        # exact
        at("12/03/2020", "DATE", cut=-2),   # "12/03/20": relaxed match, ends inside token "2020"
        at("Lee", "PATIENT"),               # right offsets, wrong label
        at("555-1234", "PHONE")]            # not PHI in gold; MGH is missed


def six(scores):
    return {m: (c.tp, c.fp, c.fn) for m, c in ((m, micro(v)) for m, v in scores.items())}


def test_every_metric_hand_computed():
    assert six(score_note(TEXT, GOLD, PRED)) == {
        "strict": (1, 3, 3),          # John Smith; fp 12/03/20, Lee/PATIENT, phone; fn date, Lee, MGH
        "relaxed": (2, 2, 2),         # + the date (same start, end 2 short)
        "binary_strict": (2, 2, 2),   # John Smith and Lee (label ignored)
        "overlap": (3, 1, 1),         # golds found: name, date, Lee; MGH missed; phone overlaps nothing
        "token": (5, 3, 2),           # John Smith 12 03 2020 | fp Lee(P) 555 1234 | fn Lee(D) MGH
        "binary_token": (6, 2, 1),    # + Lee | fp 555 1234 | fn MGH
    }


def test_precision_recall_f1_and_per_label_attribution():
    s = score_note(TEXT, GOLD, PRED)
    c = micro(s["overlap"])
    assert (c.precision, c.recall) == (0.75, 0.75) and c.ptp == 3
    assert micro(s["strict"]).f1 == 0.25
    tok = s["token"]
    assert tok["PATIENT"] == Counts(tp=2, fp=1, fn=0, ptp=2)
    assert tok["DATE"] == Counts(tp=3, ptp=3)
    assert tok["DOCTOR"] == Counts(fn=1) and tok["HOSPITAL"] == Counts(fn=1) and tok["PHONE"] == Counts(fp=2)
    # binary: the gold label gets the tp, the predicted label the correct prediction
    assert s["binary_strict"]["DOCTOR"] == Counts(tp=1)
    assert s["binary_strict"]["PATIENT"] == Counts(tp=1, ptp=2)
    assert s["binary_strict"]["DATE"] == Counts(fp=1, fn=1)


def test_hipaa_filters_gold_and_pred():
    # DOCTOR and HOSPITAL leave both sides: gold = name, date; pred = name, date', Lee/PATIENT, phone
    assert six(score_note(TEXT, GOLD, PRED, "hipaa"))["strict"] == (1, 3, 1)
    assert six(score_note(TEXT, GOLD, PRED, "hipaa"))["overlap"] == (2, 2, 0)


def test_overlap_physionet_rule():
    text = "abcdefghijklmnopqrstuvwxyz"
    g = [Span(0, 4, "DATE"), Span(5, 9, "DATE"), Span(10, 20, "PATIENT")]
    # one prediction over two golds; two predictions inside one gold
    c = micro(score_note(text, g, [Span(2, 7, "AGE"), Span(10, 12, "DATE"), Span(15, 20, "DATE")])["overlap"])
    assert (c.tp, c.fn, c.ptp, c.fp) == (3, 0, 3, 0)
    # adjacent is not overlapping: [4, 5) touches [0, 4) and [5, 9) but shares no character
    c = micro(score_note(text, g, [Span(4, 5, "DATE"), Span(20, 22, "DATE")])["overlap"])
    assert (c.tp, c.fn, c.ptp, c.fp) == (0, 3, 0, 2)
    assert (c.recall, c.precision) == (0.0, 0.0)


def test_relaxed_end_slack_and_start():
    text = "x" * 30
    g = [Span(5, 10, "DATE")]
    for pred, hit in [(Span(5, 12, "DATE"), 1), (Span(5, 8, "DATE"), 1), (Span(5, 13, "DATE"), 0),
                      (Span(4, 10, "DATE"), 0), (Span(5, 10, "AGE"), 0)]:
        assert micro(score_note(text, g, [pred])["relaxed"]).tp == hit, pred


def test_relaxed_matching_is_maximum():
    # greedy-by-closest would give [0,7) the [0,5) prediction and leave [0,5) unmatched
    text = "x" * 20
    g = [Span(0, 7, "DATE"), Span(0, 5, "DATE")]
    p = [Span(0, 5, "DATE"), Span(0, 9, "DATE")]
    assert micro(score_note(text, g, p)["relaxed"]).tp == 2


def test_duplicates_count_once():
    text = "Lee Lee"
    c = micro(score_note(text, [Span(0, 3, "DOCTOR")], [Span(0, 3, "DOCTOR")] * 2)["strict"])
    assert (c.tp, c.fp, c.fn) == (1, 1, 0)


def test_tokens_are_letter_digit_runs_labelled_by_any_overlap():
    # "22at" is one evaluation token; underscores and punctuation separate tokens
    text = "22at_x y"
    s = score_note(text, [Span(0, 2, "AGE")], [Span(3, 4, "AGE")])
    assert micro(s["token"]) == Counts(tp=1, ptp=1)
    assert micro(s["strict"]) == Counts(fp=1, fn=1)


def test_vacuous_and_empty():
    c = micro(score_note("no phi here", [], [])["strict"])
    assert (c.precision, c.recall, c.f1) == (1.0, 1.0, 1.0)
    c = micro(score_note("Lee", [Span(0, 3, "DOCTOR")], [])["token"])
    assert (c.precision, c.recall, c.f1) == (1.0, 0.0, 0.0)


def test_corpus_missing_pred_note_predicts_nothing_and_stray_ids_fail():
    texts = {"a": "Lee", "b": "Ann"}
    gold = {"a": [Span(0, 3, "DOCTOR")], "b": [Span(0, 3, "PATIENT")]}
    scores = score_corpus(texts, gold, {"a": [Span(0, 3, "DOCTOR")]})
    assert sum((micro(s["strict"]) for s in scores.values()), Counts()) == Counts(tp=1, fn=1, ptp=1)
    for bad in ({"zz": []}, {"a": [Span(0, 9, "DOCTOR")]}):
        try:
            score_corpus(texts, gold, bad, names=("G", "P"))
        except ValueError as exc:
            assert str(exc).startswith("P: ")
        else:
            raise AssertionError("expected ValueError")


LABELS = ["PATIENT", "DOCTOR", "DATE"]


@st.composite
def text_and_spans(draw):
    text = draw(st.text(alphabet="ab1 _-", min_size=1, max_size=40))

    def spans():
        out = []
        for _ in range(draw(st.integers(0, 5))):
            a = draw(st.integers(0, len(text) - 1))
            b = draw(st.integers(a + 1, len(text)))
            out.append(Span(a, b, draw(st.sampled_from(LABELS))))
        return out

    return text, spans(), spans()


def naive_tokens(text, gold, pred, binary):
    """Per-token outcomes computed character by character, the slow obvious way."""
    def label(spans, a, b):
        hits = sorted((s for s in spans if s.start < b and a < s.end), key=lambda s: (s.start, -s.end, s.label))
        return hits[0].label if hits else None

    tp = fp = fn = 0
    for m in re.finditer(r"[^\W_]+", text):
        g, p = label(gold, *m.span()), label(pred, *m.span())
        if binary:
            tp += bool(g and p)
            fn += bool(g and not p)
            fp += bool(p and not g)
        else:
            tp += bool(g and g == p)
            fn += bool(g and g != p)
            fp += bool(p and g != p)
    return tp, fp, fn


@settings(max_examples=300, deadline=None)
@given(text_and_spans())
def test_invariants(data):
    text, gold, pred = data
    s = {m: micro(v) for m, v in score_note(text, gold, pred).items()}
    for m in ("strict", "relaxed", "binary_strict", "overlap"):
        assert s[m].tp + s[m].fn == len(gold) and s[m].ptp + s[m].fp == len(pred)
    assert s["strict"].tp <= s["relaxed"].tp <= s["overlap"].tp
    assert s["strict"].tp <= s["binary_strict"].tp <= s["overlap"].tp
    assert s["token"].tp <= s["binary_token"].tp
    assert (s["token"].tp, s["token"].fp, s["token"].fn) == naive_tokens(text, gold, pred, False)
    assert (s["binary_token"].tp, s["binary_token"].fp, s["binary_token"].fn) == naive_tokens(text, gold, pred, True)
    same = score_note(text, gold, gold)
    assert all(micro(v).f1 == 1.0 for v in same.values())
