"""The filter memo (filters.CONTEXT_FREE, RuleTagger._filter): a context-free filter's result is remembered per hit
text, so it must read nothing outside the hit. Checked on every such rule's examples and negatives with the hit put in
other contexts, on hypothesis-built hits, on invented notes where the same hit text recurs in other contexts, and the
check itself must tell the two filters that read around their hit (`name_strong`, `initials_line`) apart.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.rules.filters import CONTEXT_FREE, FILTERS
from deid_core.engine.rules.loader import parse_example
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note

TAGGER = RuleTagger(load_config({}).rules)
SETTINGS = TAGGER.filter_settings
# what may stand around a hit: nothing, blanks, punctuation, a title's period, letters, digits, a line
BEFORE = ["", " ", ".", "Dr.", "dr.", "\n", "x", "9", "son ", "-", "(", "'", "CTA/RRR/", "Seen by "]
AFTER = ["", " ", ".", "\n", "x", "9", "'s", " and", "-", ")", "/soft", " RN", ", MD\nPlan"]


def _relative(name: str, text: str, start: int, end: int) -> tuple[int, int] | None:
    kept = FILTERS[name](text, start, end, SETTINGS)
    return None if kept is None else (kept[0] - start, kept[1] - start)


def _context_free_on(name: str, hit: str) -> bool:
    """Does filter `name` give the same span (relative to the hit) for `hit` in every context of BEFORE x AFTER?"""
    results = {_relative(name, b + hit + a, len(b), len(b) + len(hit)) for b in BEFORE for a in AFTER}
    return len(results) == 1


def _rule_hits(rule) -> list[str]:
    """The hit texts the rule's pattern gives (its `phi` group, or the match) on its examples and negatives."""
    pattern, _, _, has_phi, _ = rule.compiled
    texts = [parse_example(e)[0] for e in rule.examples] + list(rule.negatives)
    out = []
    for text in texts:
        for m in pattern.finditer(text):
            s, e = m.span("phi") if has_phi else m.span()
            if 0 <= s < e:
                out.append(text[s:e])
    return out


FILTERED = [r for r in TAGGER.rules if r.filter in CONTEXT_FREE]
HIT_WORDS = sorted({w for r in FILTERED for h in _rule_hits(r) for w in h.split()})


def test_every_memoized_filter_exists_and_rules_use_it():
    assert CONTEXT_FREE <= FILTERS.keys()
    assert {r.filter for r in TAGGER.rules if r.filter} & CONTEXT_FREE  # the memo is used


@pytest.mark.parametrize("rule", FILTERED, ids=lambda r: r.id)
def test_context_free_filters_on_their_rules_hits(rule):
    for hit in _rule_hits(rule):
        assert _context_free_on(rule.filter, hit), (rule.filter, hit)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CONTEXT_FREE)),
       words=st.lists(st.sampled_from(HIT_WORDS + ["and", "&", "K.", "Jo-Ann", "O'Neil", "91", "Street", "floor"]),
                      min_size=1, max_size=5),
       sep=st.sampled_from([" ", "  ", ", ", "\n"]))
def test_context_free_filters_on_built_hits(name, words, sep):
    assert _context_free_on(name, sep.join(words))


@pytest.mark.parametrize("name, hit", [
    ("name_strong", "floor"),  # "per dr.floor": the period before the hit makes the known name a name
    ("initials_line", "DVR"),  # the line's other letter groups decide ('CTA/RRR/soft' is an exam)
])
def test_the_check_tells_filters_that_read_around_their_hit(name, hit):
    assert name not in CONTEXT_FREE
    assert not _context_free_on(name, hit)


NOTES = [
    "Dr. Quell saw her. Son Arvo visited. Lives in Marlow.\nper dr.floor, son Arvo at bedside",
    "son at bedside; SON AT BEDSIDE. Son Arvo called son Arvo; daughter Peg and son Arvo visited.",
    "EW/DVR/tb\nCTA/RRR/soft\nDVR seen by K. Lee RN and K. Lee RN, 91 yo man, age 91, is a truck driver.",
    "Transferred from Quellmere General Hospital to Quellmere General Hospital ICU; from Marlow, NY 01234.",
]


def test_the_stage_hits_are_the_same_with_and_without_the_memo():
    plain = RuleTagger(load_config({}).rules)
    plain._filter = lambda name, text, start, end: FILTERS[name](text, start, end, plain.filter_settings)
    memo = RuleTagger(load_config({}).rules)
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    texts = NOTES + [to_note(n).text for n in generate(60, seed=4242, n_patients=20)]
    for _ in range(2):  # the second round reads every hit from the memo
        for k, text in enumerate(texts):
            doc = Note(f"n{k}", text)
            assert memo.regex_hits(Doc(doc)) == plain.regex_hits(Doc(doc)), f"note {k}"
    assert memo._filtered


def test_a_full_memo_is_emptied(monkeypatch):
    import deid_core.engine.rules.tagger as tagger

    monkeypatch.setattr(tagger, "FILTER_MEMO", 2)
    t = RuleTagger(load_config({}).rules)
    for k, text in enumerate(NOTES):
        t.regex_hits(Doc(Note(f"n{k}", text)))
        assert len(t._filtered) <= 2
