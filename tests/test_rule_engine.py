"""Rule engine features on small rule files: triggers, requires, needs, anchors, guards, `from` groups, suppressors, filters."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.config import ConfigError, load_config
from deid_core.doc import Doc
from deid_core.engine.rules.filter_words import hit_words
from deid_core.engine.rules.filters import FILTERS, place_like, profession_run
from deid_core.engine.rules.loader import Rule, compile_rule
from deid_core.engine.rules.name_filters import (
    context_name_filter,
    cut_hyphen_tail,
    first_name_ok,
    name_before_filter,
    name_filter,
)
from deid_core.engine.rules.prefilter import digit_shape, first_class, guarded
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note

RULES = '''
[macros]
NUM = '\\d{3}'

[[rule]]
id = "t-trig"
label = "IDNUM"
priority = 50
description = "trigger-anchored"
triggers = ["code word"]
pattern = '(?i:code\\s+word)\\s+(?P<phi>{{NUM}})'
examples = ["x [[123]]"]

[[rule]]
id = "t-trig3"
label = "ACCOUNT"
priority = 50
description = "three-word trigger; blanks and tabs only between its words"
triggers = ["one two three"]
pattern = 'one[ \\t]+two[ \\t]+three[ \\t]+(?P<phi>\\d{4})'
examples = ["x"]

[[rule]]
id = "t-req"
label = "ACCOUNT"
priority = 50
description = "skipped without '#'"
requires = ["#"]
pattern = 'acct\\s*#?\\s*(?P<phi>\\d+)'
examples = ["x"]

[[rule]]
id = "t-from"
label = "DATE"
priority = 50
description = "keyword first, start moved back by a look-behind group"
pattern = 'ZZ(?<=(?P<from>\\d\\d)\\sZZ)'
examples = ["x"]

[[rule]]
id = "t-needs"
label = "ZIP"
priority = 50
description = "runs only on notes holding five digits"
needs = '\\d{5}'
pattern = 'zip\\s+(?P<phi>\\d+)'
examples = ["zip [[12345]]"]

[[rule]]
id = "t-digits"
label = "IDNUM"
priority = 50
description = "runs only on notes holding six digits in a row"
digits = 6
pattern = 'ref\\s+(?P<phi>\\d{6})'
examples = ["ref [[123456]]"]

[[rule]]
id = "t-anchor"
label = "LOCATION-OTHER"
priority = 50
description = "runs only on notes where 'pond' or 'lake' begins a word"
anchors = ["pond", "Lake"]
pattern = '(?P<phi>[A-Z][a-z]+ ?(?:Pond|Lake)s?)'
examples = ["at [[Walden Pond]]", "[[Crystal Lakes]]"]

[[rule]]
id = "t-guard"
label = "DATE"
priority = 50
description = "guarded scan"
guard = true
pattern = '(?<![\\w.])(?<!\\d-)(?P<phi>\\d{1,2}\\.\\d{1,2}\\.\\d{4})'
examples = ["on [[1.2.2019]]"]

[[rule]]
id = "t-sup"
label = "NONPHI"
priority = 60
description = "suppresses 999"
pattern = '999'
examples = ["x"]
'''


@pytest.fixture()
def small(tmp_path) -> RuleTagger:
    f = tmp_path / "small.toml"
    f.write_text(RULES)
    return RuleTagger(load_config({"rules": {"files": [str(f)], "gazetteer_file": "", "metadata": False}}).rules)


def _tag(t: RuleTagger, text: str) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.source) for s in t.tag(Doc(Note("e", text)))]


def test_triggers_anchor_the_pattern(small):
    assert _tag(small, "the Code Word 123 here") == [("123", "t-trig")]
    assert _tag(small, "the code-word 123") == [], "pattern needs whitespace"
    assert _tag(small, "codeword 123") == []


@pytest.mark.parametrize("gap", ["  ", "\t", " \t ", "\u00a0", "\u2009\u00a0", " \n ", "\n\n"])
def test_a_multi_word_trigger_matches_its_words_apart_by_a_run_of_blanks(small, gap):
    assert _tag(small, f"the code{gap}word 123") == [("123", "t-trig")]
    assert _tag(small, f"x\u00a0Code{gap}Word\u00a0123") == [("123", "t-trig")], "a no-break space beside a trigger"


@pytest.mark.parametrize(("text", "hit"), [
    ("one  two three 1234", True), ("one two  three 1234", True), ("one\t two \t\tthree 1234", True),
    ("one two\nthree 1234", False), ("one\n\ntwo three 1234", False), ("one  two 1234", False),
    ("one  twothree 1234", False), ("none  two three 1234", False), ("one  two  three  four 1234", False),
])
def test_the_pattern_decides_where_a_trigger_phrase_stretches(small, text, hit):
    assert _tag(small, text) == ([("1234", "t-trig3")] if hit else [])


def _one_rule(tmp_path, triggers: list[str], pattern: str) -> RuleTagger:
    f = tmp_path / "one.toml"
    f.write_text(f"[[rule]]\nid = 't-one'\nlabel = 'IDNUM'\ntriggers = {triggers!r}\npattern = '''{pattern}'''\n")
    return RuleTagger(load_config({"rules": {"files": [str(f)], "gazetteer_file": "", "metadata": False}}).rules)


_PHRASE = r"\bcode[\s,./-]+word\b"


@pytest.fixture(scope="module")
def phrase_rule(tmp_path_factory) -> RuleTagger:
    return _one_rule(tmp_path_factory.mktemp("phrase"), ["code word"], _PHRASE)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from([" ", "\t", "\n", "\u00a0", ",", ".", "-", "/", "x"]), max_size=4)
                .map("".join), min_size=4, max_size=4))
def test_a_trigger_phrase_is_tried_wherever_its_pattern_matches(phrase_rule, gaps):
    """A pattern joining a trigger's words with any run of blanks or punctuation finds at its trigger positions
    what a scan of the note finds."""
    text = f"see{gaps[0]}code{gaps[1]}word{gaps[2]}and{gaps[3]}code{gaps[1]}word 5"
    scan = [(m.start(), m.end()) for m in regex.finditer(_PHRASE, text)]
    assert [(s.start, s.end) for s in phrase_rule.tag(Doc(Note("e", text)))] == scan


def test_requires_skips_notes_without_the_substring(small):
    assert _tag(small, "acct # 42") == [("42", "t-req")]
    assert _tag(small, "acct 42") == []


def test_needs_skips_notes_without_the_pattern(small):
    assert _tag(small, "zip 12345") == [("12345", "t-needs")]
    assert _tag(small, "zip 1234") == [], "no five digits: the rule does not run"
    assert _tag(small, "zip 12 and 99999") == [("12", "t-needs")], "five digits anywhere in the note"


def test_needs_must_hold_in_every_example():
    with pytest.raises(ConfigError, match="t-bad.*needs"):
        compile_rule(Rule("t-bad", "ZIP", r"zip (?P<phi>\d+)", needs=r"\d{5}", examples=("zip [[123]]",)))


def test_digits_skip_ascii_notes_without_the_run(small):
    assert _tag(small, "ref 123456") == [("123456", "t-digits")]
    assert _tag(small, "ref 12345 and 1 23456") == [], "no six digits in a row: the rule does not run"
    # `\\d` matches any Unicode digit: a note that is not ASCII is always searched
    arabic = "ref \u0661\u0662\u0663\u0664\u0665\u0666"
    assert _tag(small, arabic) == [(arabic[4:], "t-digits")]


def test_digit_shape():
    assert digit_shape("a12 b3") == b" 00  0"
    assert digit_shape("caf\u00e9 12345") is None


@pytest.mark.parametrize(("digits", "example", "message"), [
    (5, "zip [[1234]]", "no run of 5 digits"),
    (True, "zip [[12345]]", "whole number"),
    (17, "zip [[12345]]", "whole number"),
])
def test_bad_digits_are_refused(digits, example, message):
    with pytest.raises(ConfigError, match=f"t-bad.*{message}"):
        compile_rule(Rule("t-bad", "ZIP", r"zip (?P<phi>\d+)", digits=digits, examples=(example,)))


def test_anchors_skip_notes_where_no_anchor_begins_a_word(small):
    assert _tag(small, "fishing at Walden Pond.") == [("Walden Pond", "t-anchor")]
    assert _tag(small, "Crystal Lakes, MA") == [("Crystal Lakes", "t-anchor")], "a word start is enough"
    assert _tag(small, "WaldenPond and xpond") == [], "no anchor begins a word: the rule does not run"
    assert _tag(small, "WaldenPond and (LAKE)") == [("WaldenPond", "t-anchor")], "an anchor anywhere, any case"


@pytest.mark.parametrize(("anchors", "triggers", "message"), [
    (("pond",), (), "none of its `anchors`"),
    (("walden pond",), (), "single words"),
    (("lake",), ("at",), "takes none"),
])
def test_bad_anchors_are_refused(anchors, triggers, message):
    with pytest.raises(ConfigError, match=f"t-bad.*{message}"):
        compile_rule(Rule("t-bad", "LOCATION-OTHER", r"[A-Z]\w+ Lake", anchors=anchors, triggers=triggers,
                          examples=("at [[Crater Lake]]",)))


def test_guarded_rule_finds_the_same_spans(small):
    assert _tag(small, "on 1.2.2019 and x1.2.2019 and 3-1.2.2019, 12.31.2020") == [
        ("1.2.2019", "t-guard"), ("12.31.2020", "t-guard")]


@pytest.mark.parametrize(("pattern", "flags", "guard"), [
    (r"(?<![\w/])\d{3}-\d{4}", "", r"(?=[\d])"),
    (r"(?:^|(?<=[.!?][ \t]))[ \t]*(?P<phi>[A-Z]{2})", "m", r"(?=[\U00000020\U00000009\U00000041-\U0000005a])"),
    (r"(?i:ab)|c", "", r"(?i:(?=[\U00000061\U00000063]))"),
    (r"x?y*", "", None),  # may match the empty string
    (r"(?<=a).b", "", None),  # may start with any character
    (r"[^a]b", "", None),  # a negated class
    (r"\p{Lu}x", "", None),  # syntax only `regex` reads
    (r"(?:Smith){s<=1}", "", None),  # fuzzy: `regex` also matches "Xmith", Python's parser reads text
    (r"(?:Smith){1i+1d<2}", "", None),
    (r"(?x:\ a)", "", None),  # scoped verbose
])
def test_first_class(pattern, flags, guard):
    assert first_class(pattern, flags) == guard


# every shipped rule with a guard derived (whether its file turns the guard on or not)
GUARDED = [(r.id, r.compiled[0], regex.compile(guarded(r.pattern, r.flags), r.compiled[0].flags))
           for r in RuleTagger(load_config({}).rules).rules if first_class(r.pattern, r.flags)]


def test_most_shipped_rules_get_a_guard():
    assert len(GUARDED) > 60


@settings(deadline=None, max_examples=300)
@given(st.text(alphabet="0123456789./-: \t\nAaMmFfyoYOzZsSTtCc,'()°#@", max_size=60))
def test_guards_keep_every_match_of_every_shipped_rule(text):
    """A guard is a superset of the first characters: each shipped rule, guarded, finds the same matches."""
    for rid, plain, fenced in GUARDED:
        assert [m.span() for m in plain.finditer(text)] == [m.span() for m in fenced.finditer(text)], rid


def test_from_group_moves_the_start_back(small):
    assert _tag(small, "on 12 ZZ ok") == [("12 ZZ", "t-from")]


def test_suppressor_cancels_lower_priority_hits(small):
    assert _tag(small, "code word 999") == []
    assert _tag(small, "code word 998") == [("998", "t-trig")]


def test_first_name_ok_classes():
    assert first_name_ok("Zelnik") and not first_name_ok("zelnik")
    assert first_name_ok("zelnik", strong=True)
    assert first_name_ok("MARIA") and first_name_ok("maria")
    assert not first_name_ok("aware", strong=True) and not first_name_ok("called")
    assert first_name_ok("YOUNG", strong=True) and not first_name_ok("YOUNG")
    assert not first_name_ok("will", strong=True)
    # round 6: after a clinician role, a known name that is also a frequent word, in capitals or Title
    assert first_name_ok("LONG", role=True) and not first_name_ok("LONG")
    assert not first_name_ok("long", role=True) and not first_name_ok("WILL", role=True)
    assert not first_name_ok("AWARE", role=True)


def test_a_frequent_known_surname_continues_a_name_written_in_its_case():
    """Round 6: "GRACE YOUNG", "dr. bill case" (both in one case); never a function word or a mixed case."""
    text = "GRACE YOUNG AWARE"
    assert name_filter(text, 0, len(text), {}) == (0, 11)
    text = "GRACE WILL CALL"
    assert name_filter(text, 0, len(text), {}) == (0, 5)
    text = "Grace long walk"
    assert name_filter(text, 0, len(text), {}) == (0, 5)


def test_name_filter_trims_trailing_words():
    text = "Marisol called back"
    assert name_filter(text, 0, len(text), {}) == (0, 7)
    text = "lucia and maggie visited"
    assert name_filter(text, 0, len(text), {}) == (0, 16)
    assert name_filter("in to visit", 0, 11, {}) is None



def test_one_hyphen_cut_for_names_and_context_names():
    """Round 7: one cut (name runs: a frequent word glued on; context names: a clinical word too)."""
    def words_of(text, **kw):
        return [w for _, _, w in cut_hyphen_tail(hit_words(text, 0, len(text)), **kw)]
    assert words_of("Rob-who called") == ["Rob"]
    assert words_of("B. KARGAS-PT WET") == ["B.", "KARGAS"]
    assert words_of("Oakes-Vantrell saw") == ["Oakes-Vantrell", "saw"]
    assert words_of("follow-up visit") == ["follow-up", "visit"]  # a frequent first part: no name to cut
    text = "per B. MORROW-PT"
    assert context_name_filter(text, 4, len(text), {}) == (4, 13)


def test_round7_name_filters():
    """A lower-case word in no list after a family word; one known name (a function word only in a kin list);
    an initial and a capitalised dictionary word before a credential; a title glued to a function-word name."""
    text = "daughter-in-law zelunwa helps"
    assert FILTERS["kin_name"](text, 16, len(text), {}) == (16, 23)
    assert FILTERS["kin_name"]("son visisted", 4, 12, {}) is None  # a typo
    assert FILTERS["kin_name"]("son abx", 4, 7, {}) is None  # clinical
    assert FILTERS["known_name"]("Art", 0, 3, {}) == (0, 3)
    assert FILTERS["known_name"]("Will", 0, 4, {}) is None and FILTERS["listed_name"]("will", 0, 4, {}) == (0, 4)
    assert FILTERS["listed_name"]("then", 0, 4, {}) is None
    text = "W. FANG OTR/L"
    assert name_before_filter(text, 0, 7, {}) == (0, 7)
    assert name_before_filter("R. ARM", 0, 6, {}) is None
    text = "per dr.floor at bedside"
    assert FILTERS["name_strong"](text, 7, 12, {}) == (7, 12)
    assert FILTERS["name_strong"]("Dr. will call", 4, 13, {}) is None

def test_place_like():
    assert place_like("Towson") and place_like("GH") and place_like("Denver")
    assert not place_like("floor") and not place_like("MICU") and not place_like("normal")
    assert place_like("square", loose=True) and not place_like("leaving", loose=True)


@given(st.text(min_size=1, max_size=60), st.sampled_from(sorted(FILTERS)))
def test_filters_stay_inside_their_span(text, name):
    out = FILTERS[name](text, 0, len(text), {"min_age": 0, "_kw_words": frozenset({"hospital"})})
    if out is not None:
        assert 0 <= out[0] < out[1] <= len(text)


_SPAN = st.builds(lambda a, n, c: __import__("deid_core.spans", fromlist=["Span"]).Span(a, a + n, "DATE", "r", c),
                  st.integers(0, 60), st.integers(1, 12), st.sampled_from([0.5, 0.9]))


@given(st.lists(_SPAN, max_size=40))
def test_resolve_overlaps_equals_naive_reference(spans):
    """The O(n log n) resolution keeps exactly what the quadratic reference keeps."""
    from deid_core.spans import default_rank, naive_resolve_overlaps, resolve_overlaps

    assert resolve_overlaps(spans, default_rank) == naive_resolve_overlaps(spans, default_rank)



@settings(deadline=None, max_examples=400)
@given(st.text(alphabet="ab'’-.s S1\n\t,é", max_size=30), st.integers(0, 32), st.integers(0, 32))
def test_hit_words_and_base_read_as_on_the_slice(text, start, end):
    """hit_words searches between start and end in place, base skips the possessive pattern without an
    apostrophe: both as the slice-and-substitute forms they replace."""
    from deid_core.engine.rules.filter_words import _POSSESSIVE_RE, _WORD_RE, base

    old = [(start + m.start(), start + m.end(), m.group(0)) for m in _WORD_RE.finditer(text[start:end])]
    assert hit_words(text, start, end) == old
    for word in (text, text[start:end]):
        assert base(word) == _POSSESSIVE_RE.sub("", word).rstrip(".").lower()


def test_per_rule_table_times_every_regex_rule_behind_its_gates(small):
    from benchmarks.rules import per_rule

    notes = [Note("a", "the code word 123, acct # 42, zip 12345, ref 123456, Walden Pond"), Note("b", "nothing")]
    rows = {rid: (us, what) for rid, us, what in per_rule(small, notes, repeats=1)}
    assert set(rows) == {r.id for r in small.rules} | {"(screen: one RE2 Set pass)"}
    assert all(us >= 0 for us, _ in rows.values())
    assert rows["t-trig"][1].startswith("1 notes pass, 1 trigger tries")
    assert rows["t-digits"][1] == "1 notes searched" and rows["t-anchor"][1] == "1 notes searched"
    assert rows["t-needs"][1].startswith("1 notes searched, needs")


def _profession_words() -> list[str]:
    from deid_core.gazetteers import words

    jobs = sorted(words("profession"))
    return sorted({w for j in jobs for w in j.split()}) + [j + "s" for j in jobs[:200]] + [
        "is", "stable", "the", "a", "retired", "Nurse's", "x-ray", "RN.", "s", "123", "co-worker"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_profession_words()), min_size=0, max_size=5),
       st.sampled_from([" ", "  ", ", ", " - ", "\n"]), st.sampled_from(["", ".", " and more"]))
def test_profession_filter_reads_hits_as_in_full(parts, sep, tail):
    """The first-word test skips only hits no profession phrase can open: same result as reading every hit."""
    for text in ("works as " + sep.join(parts) + tail, sep.join(p.upper() for p in parts) + tail):
        start = 9 if text.startswith("works as ") else 0
        assert FILTERS["profession"](text, start, len(text), {}) == profession_run(text, start, len(text))


def test_profession_filter_on_every_profession():
    from deid_core.gazetteers import words

    for job in sorted(words("profession")):
        for text in (job, job.title() + "s", job.upper() + ".", "is a " + job):
            assert FILTERS["profession"](text, 0, len(text), {}) == profession_run(text, 0, len(text)), text


def _kin_name_read_in_full(text: str, start: int, end: int) -> tuple[int, int] | None:
    """kin_name_filter as it read every hit before its case test came first (round 11): the reference."""
    from deid_core.engine.propagation import SHORT_MAX, is_clinical_word
    from deid_core.engine.rules.filter_words import base
    from deid_core.engine.rules.name_filters import _name_run
    from deid_core.engine.vetoes import misspelt
    from deid_core.gazetteers import is_name

    pieces = hit_words(text, start, end)
    if not pieces or "-" in pieces[0][2] or misspelt(base(pieces[0][2])):
        return _name_run(text, start, end, strong=False, from_left=False)
    if pieces[0][2].islower():
        low = base(pieces[0][2])
        unknown = len(low) > SHORT_MAX and low.isalpha() and not is_name(low) and not is_clinical_word(low)
        return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=2 if unknown else 0)
    if not pieces[0][2].isupper():
        return _name_run(text, start, end, strong=False, from_left=False)
    return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=1, role=True)


_KIN_WORDS = ["visisted", "arived", "currntly", "stbale", "ujunwa", "qwyrt", "will", "peg", "maria", "jones", "abx",
              "home", "and", "o'neil", "smith-jones", "k.", "to", "called", "at", "daughter-in-law", "123", "é"]


def test_the_remembered_typo_search_answers_as_the_search():
    """kin_name_filter's memo of vetoes.misspelt (round 13): the same answer, first asked and asked again."""
    from deid_core.engine.rules.name_filters import _misspelt
    from deid_core.engine.vetoes import misspelt

    words = [w for k in _KIN_WORDS for w in (k, k.upper(), k.title())] + ["visitted", "stbale", "qqplorvik"]
    assert any(misspelt(w) for w in words) and not all(misspelt(w) for w in words)
    for _ in range(2):
        assert [_misspelt(w) for w in words] == [misspelt(w) for w in words]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_KIN_WORDS), st.sampled_from(["lower", "upper", "title", "same"])),
                min_size=0, max_size=4))
def test_kin_name_filter_reads_hits_as_in_full(words):
    """The typo search runs only for a first word in one case: same result as running it for every hit."""
    cased = [getattr(w, c)() if c != "same" else w for w, c in words]
    text = "son " + " ".join(cased)
    assert FILTERS["kin_name"](text, 4, len(text), {}) == _kin_name_read_in_full(text, 4, len(text)), text
