"""Synthetic corpus generator: exact trimmed gold spans, coverage of labels and hard cases, determinism."""

from __future__ import annotations

import collections
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.spans import Span, trim_span, validate_spans
from deid_core.taxonomy import labels
from deid_core.training.synth import Plan, generate
from deid_core.training.synth.generate import block_notes, note_counts
from deid_core.training.synth.lexicon import lexicon
from deid_core.training.synth.template import Slot, TemplateError, parse, render

N_EXACT = 10_000


@pytest.fixture(scope="module")
def corpus():
    """A 10,000-note corpus with the independently recorded surface of each span."""
    surfaces: list[list[str]] = []
    notes = generate(N_EXACT, seed=11, surfaces=surfaces)
    return notes, surfaces


def test_every_span_exact_trimmed_and_non_overlapping(corpus):
    notes, surfaces = corpus
    assert len(notes) == N_EXACT and len(surfaces) == N_EXACT
    n_spans = 0
    for note, surf in zip(notes, surfaces, strict=True):
        assert len(note.spans) == len(surf)
        for s, expected in zip(note.spans, surf, strict=True):
            assert note.text[s.start:s.end] == expected
            assert trim_span(s, note.text) == s
        validate_spans(note.spans, len(note.text))
        assert list(note.spans) == sorted(note.spans, key=lambda s: s.start)
        n_spans += len(note.spans)
    assert n_spans > 5 * N_EXACT


def test_all_30_labels_in_realistic_order(corpus):
    notes, _ = corpus
    counts = collections.Counter(s.label for n in notes for s in n.spans)
    assert set(counts) == set(labels())
    top = {lab for lab, _ in counts.most_common(4)}
    assert {"DATE", "DOCTOR", "PATIENT"} <= top
    for rare in ("SSN", "BIOID", "IPADDR"):
        assert counts[rare] < counts["DATE"] / 20


def test_hard_cases_present(corpus):
    notes, _ = corpus
    texts = [n.text for n in notes]
    spans_text = collections.defaultdict(set)
    for n in notes:
        for s in n.spans:
            spans_text[s.label].add(n.text[s.start:s.end])
    ages = [int(a) for a in spans_text["AGE"] if a.isdigit()]
    assert max(ages) >= 90 and min(ages) < 90
    # non-ASCII names, OOV-looking names, all-caps notes, notes without PHI, very long notes
    assert any(not name.isascii() for name in spans_text["PATIENT"])
    assert any(t.isupper() for t in texts) and any(t.islower() for t in texts)
    assert sum(1 for n in notes if not n.spans) > 50
    assert max(len(t) for t in texts) > 8000
    # conjoined tokens: a span glued to the following word
    assert any(s.end < len(n.text) and n.text[s.end].isalpha() for n in notes for s in n.spans)
    assert any(s.start > 0 and n.text[s.start - 1].isalpha() for n in notes for s in n.spans)
    # many date formats
    dates = spans_text["DATE"]
    for pattern in (r"^\d{1,2}/\d{1,2}/\d{4}$", r"^\d{2}-\d{2}-\d{2}$", r"^[A-Z][a-z]+ \d{1,2}, \d{4}$",
                    r"^\d{1,2} [A-Z][a-z]{2} \d{4}$", r"^\d{1,2}/\d{1,2}$", r"^\d{4}$", r"^\d{2}$",
                    r"^(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day$"):
        assert any(re.match(pattern, d) for d in dates), pattern
    assert "Christmas" in dates or "CHRISTMAS" in dates
    # phone numbers with extensions; non-PHI look-alikes
    assert any(re.search(r"(?i)x\d+$|ext", p) for p in spans_text["PHONE"])
    joined = "\n".join(texts[:3000])
    for lookalike in (r"\b\d{2,3}/\d{2,3}\b", r"\b[345]/5\b", r"\b[12]:[123]\b", r"\bx[1-4]\b", r"\d+ mg\b"):
        assert re.search(lookalike, joined, re.I), lookalike


def test_ambiguous_words_are_phi_and_non_phi(corpus):
    notes, _ = corpus
    amb = set(lexicon()["ambiguous"]["first"]) | set(lexicon()["ambiguous"]["last"])
    as_phi: set[str] = set()
    as_text: set[str] = set()
    for n in notes:
        covered = [(s.start, s.end) for s in n.spans]
        for m in re.finditer(r"[A-Za-z]+", n.text):
            w = m.group().capitalize()
            if w not in amb:
                continue
            inside = any(a <= m.start() < b for a, b in covered)
            (as_phi if inside else as_text).add(w)
    both = as_phi & as_text
    assert len(both) >= 5, both


def test_metadata_columns_match_text_in_varied_forms(corpus):
    notes, _ = corpus
    assert any(n.patient_first_name is None for n in notes)
    assert any(n.attending_name is None for n in notes)
    exact = variant = 0
    for n in notes:
        if not n.patient_last_name:
            continue
        surfaces = {n.text[s.start:s.end] for s in n.spans if s.label == "PATIENT"}
        last = n.patient_last_name
        if any(last in s for s in surfaces):
            exact += 1
        elif any(last.lower() in s.lower() for s in surfaces):
            variant += 1
    assert exact > 100 and variant > 20


def test_same_seed_same_corpus_other_seed_differs():
    a = generate(300, seed=5)
    b = generate(300, seed=5)
    c = generate(300, seed=6)
    assert a == b
    assert [n.text for n in a] != [n.text for n in c]


def test_plan_counts_sum_and_patients_are_independent_of_size():
    plan = Plan(1000, seed=1, n_patients=90)
    total = sum(sum(note_counts(plan, b)) for b in range(plan.n_blocks))
    assert total == 1000
    assert {n.patient_id for b in range(plan.n_blocks) for n in block_notes(plan, b)} <= {f"P{i:07d}" for i in range(90)}
    # patient 3's identity (first note text aside from count) does not depend on the corpus size
    small = [n for n in generate(40, seed=2) if n.patient_id == "P0000003"]
    big = [n for n in generate(400, seed=2, n_patients=5) if n.patient_id == "P0000003"]
    assert small and big and small[0].patient_last_name == big[0].patient_last_name
    assert small[0].text == big[0].text


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 3000), patients=st.integers(0, 400), seed=st.integers(0, 5))
def test_plan_assigns_every_note_exactly_once(n, patients, seed):
    plan = Plan(n, seed, patients)
    per_block = [note_counts(plan, b) for b in range(plan.n_blocks)]
    assert sum(map(sum, per_block)) == n
    assert all(c >= 0 for counts in per_block for c in counts)
    assert sum(len(c) for c in per_block) == plan.n_patients


def test_parse_rejects_unknown_labels():
    with pytest.raises(TemplateError):
        parse("Seen by {DOCTRO:last}")
    assert parse("a {DATE:mdy@admit} b")[1] == Slot("DATE", "mdy", "admit", True)


_texts = st.text(alphabet=st.sampled_from(list("ab .,;:()'\"-\nßİ")), max_size=6)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.lists(st.tuples(_texts, st.booleans(), _texts), max_size=5), min_size=1, max_size=3),
       case=st.sampled_from(["as_is", "upper", "lower"]), glue=st.floats(0, 1), seed=st.integers(0, 99))
def test_render_spans_exact_for_any_values(pieces, case, glue, seed):
    import random

    parsed, values = [], {}
    for k, piece in enumerate(pieces):
        parts = []
        for j, (lit, phi, val) in enumerate(piece):
            name = "PATIENT" if phi else "n"
            slot = Slot(name, f"f{k}_{j}", "", phi)
            values[slot] = val
            parts.extend([lit, slot])
        parsed.append(tuple(parts))
    surfaces: list[str] = []
    text, spans = render(parsed, values.__getitem__, random.Random(seed), case=case, glue_p=glue,
                         surfaces=surfaces)
    assert len(spans) == len(surfaces)
    for s, surf in zip(spans, surfaces, strict=True):
        assert text[s.start:s.end] == surf
        assert trim_span(s, text) == s
    validate_spans(spans, len(text))
    assert all(isinstance(s, Span) for s in spans)
