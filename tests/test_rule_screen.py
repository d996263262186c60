"""The one-pass rule screen (screen.py, superset.py): a rule it rules out for a note cannot match in that note.

Superset-ness is checked where it matters: on every rule's own examples and negatives (and case variants),
on texts hypothesis builds from the rules' words, digits and punctuation, on strings drawn from each
pattern itself, and on the real notes (the synthetic corpus; the PhysioNet dev split when present): each
scan rule's search, and the stage's hits with and without the screen.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument, Unsatisfiable

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.rules.loader import parse_example
from deid_core.engine.rules.screen import RuleScreen
from deid_core.engine.rules.superset import search_superset, superset
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note

TAGGER = RuleTagger(load_config({}).rules)
RULES = TAGGER.rules
SCREEN = TAGGER.screen
PHYSIONET = Path(__file__).resolve().parents[2] / "shared" / "data" / "physionet-deid"


def _rule_texts(rule) -> list[str]:
    plain = [parse_example(e)[0] for e in rule.examples] + list(rule.negatives)
    return [v for t in plain for v in (t, t.upper(), t.lower(), t.title())]


ALL_TEXTS = [t for r in RULES for t in _rule_texts(r)]
WORDS = sorted({w for t in ALL_TEXTS for w in regex.findall(r"\w+|[^\w\s]", t)})
PIECES = WORDS + list("0123456789") + [" ", " ", "\n", "\t", ", ", ". ", "/", "-", ":", "(", ")", "'"]


def _may_match(i: int, text: str) -> bool:
    """Does scan rule i find a match in text (as the stage searches it)?"""
    return RULES[i].compiled[0].search(text) is not None


# rules the screen reads by their `needs` (triggered rules, patterns not read safely): screened out of a
# text, their `needs` must not be found in it (the stage then skips them before trying the pattern)
BY_NEEDS = frozenset(i for i in SCREEN.screened if RULES[i].triggers or superset(RULES[i].pattern, RULES[i].flags) is None)


def _needs_found(i: int, text: str) -> bool:
    """Does the note hold rule i's `needs` (as the stage searches it)?"""
    return TAGGER.need_patterns[i].search(text) is not None


def _check(text: str) -> None:
    possible = SCREEN.possible(text)
    if possible is None:
        return
    for i in SCREEN.screened - possible:
        if i in BY_NEEDS:
            assert not _needs_found(i, text), f"rule {RULES[i].id} screened out of a text holding its needs: {text!r}"
        else:
            assert not _may_match(i, text), f"rule {RULES[i].id} screened out of a text it matches: {text!r}"


def test_most_scan_rules_are_screened_and_triggered_ones_only_by_their_needs():
    scan = {i for i, r in enumerate(RULES) if not r.triggers}
    assert all(RULES[i].needs for i in SCREEN.screened - scan)
    assert {i for i, r in enumerate(RULES) if r.triggers and r.needs} <= SCREEN.screened  # every needs is read
    unscreened = sorted(RULES[i].id for i in scan - SCREEN.screened)
    assert len(unscreened) <= 3, unscreened  # what Python's parser refuses


@pytest.mark.parametrize("rule", [r for i, r in enumerate(RULES) if not r.triggers or i in SCREEN.screened],
                         ids=lambda r: r.id)
def test_a_rule_is_never_screened_out_of_its_own_texts(rule):
    for text in _rule_texts(rule):
        _check(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_never_screened_out_of_generated_text(pieces):
    _check("".join(pieces))


def _drawn(pattern: str, flags: str = "") -> None:
    """_check on strings hypothesis draws from the pattern (Python's reading of it; `regex` decides matches)."""
    re_flags = sum(getattr(re, {"i": "I", "m": "M", "s": "S", "x": "X"}[f]) for f in flags)
    try:
        strategy = st.from_regex(re.compile(pattern.replace("\\p{L}", "A-Za-z"), re_flags),
                                 alphabet=st.characters(max_codepoint=127))
    except Exception:  # noqa: BLE001 - a pattern Python's parser refuses: the other tests cover it
        pytest.skip("not drawable")

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(text):
        _check(text)

    try:
        run()
    except (Unsatisfiable, InvalidArgument):
        pytest.skip("hypothesis cannot draw from this pattern")


@pytest.mark.parametrize("i", sorted(SCREEN.screened), ids=lambda i: RULES[i].id)
def test_never_screened_out_of_strings_drawn_from_its_pattern(i):
    _drawn(RULES[i].pattern, RULES[i].flags)


@pytest.mark.parametrize("i", sorted(BY_NEEDS), ids=lambda i: RULES[i].id)
def test_never_screened_out_of_strings_drawn_from_its_needs(i):
    _drawn(RULES[i].needs)


def _notes() -> list[str]:
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    texts = [to_note(n).text for n in generate(120, seed=4242, n_patients=30)]
    if (PHYSIONET / "id.text").is_file():
        from deid_core.io.physionet import read_physionet

        texts += [n.text for n in read_physionet(PHYSIONET).notes[:300]]
    return texts


def _screen_off(calls: list | None = None) -> RuleTagger:
    """The rules stage with its screen off: every note screened with nothing ruled out, so every rule runs (a
    `needs_search = false` rule unsearched, as if it had no `needs`). The stage reads the screen through
    `screened_out` (round 19; patching `ruled_out`, which it no longer calls, left the screen on: review 19)."""
    plain = RuleTagger(load_config({}).rules)

    def nothing_out(text: str) -> frozenset[int]:
        if calls is not None:
            calls.append(text)
        return frozenset()

    plain.screen.screened_out = nothing_out
    return plain


def test_the_reference_stage_reads_no_screen():
    """The stage asks the patched method for every note: the comparison below is against a stage without a screen."""
    calls: list = []
    plain = _screen_off(calls)
    text = "Seen in clinic; BP 120/80."
    assert TAGGER.screen.ruled_out(text)  # the real screen rules rules out of this note ...
    plain.regex_hits(Doc(Note("n", text)))
    assert calls == [text]  # ... the reference asked the switched-off one instead


def test_the_stage_hits_are_the_same_with_and_without_the_screen():
    plain = _screen_off()
    for k, text in enumerate(_notes()):
        doc = Note(f"n{k}", text)
        assert TAGGER.regex_hits(Doc(doc)) == plain.regex_hits(Doc(doc)), f"note {k}"


def test_scan_rules_on_real_notes():
    for text in _notes():
        _check(text)


@pytest.mark.parametrize("pattern, text", [
    (r"(?<=\bin\s{1,3})(?:her|his)\b", "in his"),
    (r"\b(?:(?<=X)a)", "Xa"),
    (r"a(?=b)\b", "ab"),  # never matches (no boundary between a and b): any superset is fine
    (r"x(?<=yx)", "yx"),
    (r"(?i:kelvin)", "KELVIN"),
    (r"(?P<a>x)|(?P<a>y)\p{Lu}[\p{L}\d]", "yAb"),
    (r"\d{3}$", "123\n"),
    (r"(?m:^\s*\w+:$)", "  Plan:\nx"),
    (r"[^\w\s]{2}", "?!"),
    (r"(a)\1", "aa"),
    (r"\s", "\x0b"),
    (r"(?i:[^a])", "b"),
    (r"a{20}", "a" * 20),
    (r"(?>a+)b", "aab"),
    (r"(?<![\w.])[A-Za-z]\.", "a."),  # the match opens the text: no character before it
    (r"(?<![\w.])[A-Za-z]\.", "(b. x"),
    (r"(?<!x)(?<![\w.])[a-z]\.", "\nq."),
    (r"(?<![\w.])[A-Za-z]\.", "ab. c.d"),  # "c." after a space
    (r"(?i:(?<![a-z])[a-z]\.)", "1X."),
])
def test_superset_examples(pattern, text):
    found = superset(pattern)
    assert found is not None
    import re2

    assert regex.search(pattern, text) is None or all(re2.search(p, text) for p in found), found


def test_a_one_character_look_behind_is_read_with_the_opening_it_guards():
    """name-initial-surname's superset was only `\\.`: with the character before a one-letter word it selects."""
    import re2

    found = superset(r"(?<![\w.'’/-])(?P<phi>[A-Za-z]\.[ \t]?[A-Za-z][A-Za-z'’-]*[A-Za-z])(?![\w'’-])")
    assert found is not None and len(found) == 2
    opening = re2.compile(found[1])
    assert opening.search("seen by K. Lee") and opening.search("J.Smith") and not opening.search("Pt. ok. stable.")
    assert superset(r"x(?<![\w.])[A-Za-z]\.") == superset(r"x[A-Za-z]\.")  # not opening the pattern: not read
    assert len(superset(r"(?<![\w.])[A-Za-z]\.\d{4}")) == 1  # a core of several characters: not read
    folded = re2.compile(search_superset(r"(?i)(?<![a-z])[a-z]\.")[1])  # the look-behind read in the pattern's case
    assert folded.search("1X.") and not folded.search("aX.") and not folded.search("AX.")


@pytest.mark.parametrize("pattern", [r"(?(1)a|b)", r"[[:alpha:]]", r"a\b?", r"(?V1)a", r"(?i)a"])
def test_what_is_not_read_safely_gets_no_superset(pattern):
    assert superset(pattern) is None


def test_a_note_that_is_not_ascii_is_not_screened():
    assert SCREEN.possible("Patient seen 12/03 — café") is None
    assert SCREEN.ruled_out("Patient seen 12/03 — café") == frozenset()


def test_ruled_out_is_what_possible_leaves_out():
    for text in ALL_TEXTS[:300]:
        assert SCREEN.ruled_out(text) == SCREEN.screened - SCREEN.possible(text)


def test_a_rule_whose_pattern_is_not_read_is_screened_by_its_needs():
    screen = RuleScreen([None, (r"a\b?", ""), (r"\d{2}", ""), None], ["", r"(?i)x\d", r"(?i)ZZZ", ""])
    assert screen.screened == frozenset({1, 2})  # the pattern when it is read, else the needs
    assert screen.possible("X9 and 12") == frozenset({0, 1, 2, 3})  # "(?i)": X found
    assert screen.possible("y9 and 12") == frozenset({0, 2, 3})
    assert screen.possible("y9 and zzz") == frozenset({0, 3})  # rule 2: its pattern decides, not its needs


def test_the_stage_skips_a_triggered_rule_without_its_needs():
    i = next(i for i in sorted(BY_NEEDS) if RULES[i].triggers)
    example = parse_example(RULES[i].examples[0])[0]
    assert i in SCREEN.possible(example) and any(TAGGER.regex_hits(Doc(Note("n", example))))
    tagger = RuleTagger(load_config({}).rules)
    tagger.need_patterns[i] = None  # searching this rule's needs now raises: the screen must skip the rule first
    text = "nothing of the kind here " + " ".join(RULES[i].triggers)
    assert i not in tagger.screen.possible(text)
    tagger.regex_hits(Doc(Note("n", text)))
    with pytest.raises(AttributeError):
        tagger.regex_hits(Doc(Note("n", example)))


@pytest.mark.parametrize("needs, flags_read", [
    (r"(?i)ab", r"[\x41\x61][\x42\x62]"), (r"(?m)^a", r"(?m:^)a"), (r"(?im)^a", r"(?m:^)[\x41\x61]")])
def test_needs_opening_with_global_flags_are_read_with_them(needs, flags_read):
    assert search_superset(needs) == (flags_read,)


@pytest.mark.parametrize("needs", [r"a(?i)b", r"(?x)a b", r"(?i)a(?m)b", r"(?L)a"])
def test_needs_with_other_global_flags_are_not_read(needs):
    assert search_superset(needs) is None


def test_a_failed_pass_screens_nothing_out():
    screen = RuleScreen([(r"abc", ""), (r"\d{3}", ""), None])
    assert screen.possible("xyz 123") == frozenset({1, 2})

    class Failed:
        def Match(self, data):  # what RE2's Set reports when its DFA gives up: no match at all
            return None

    assert screen.ruled_out("xyz 123") == frozenset({0})
    screen._sets[-1] = (Failed().Match, screen._sets[-1][1])
    assert screen.possible("xyz 123") is None
    assert screen.ruled_out("xyz 123") == frozenset()




def _never_screened_out(pattern: str, text: str, flags: str = "") -> None:
    """The rule matches text, so either it is not screened or all its supersets are found in text."""
    import re2

    names = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "x": regex.VERBOSE}
    compiled = regex.compile(pattern, sum(names[f] for f in flags))
    assert compiled.search(text) is not None
    found = superset(pattern, flags)
    assert found is None or all(re2.search(p, text) for p in found), found


@pytest.mark.parametrize("pattern, text", [
    (r"(?:Smith){i<=1}", "Smiith"),
    (r"(?:Smith){s<=1}", "Smyth"),
    (r"(?:Smith){d<=1}", "Smth"),
    (r"(?:Smith){1i+1d<2}", "Smth"),
    (r"(?:Smith){e<=1}", "Smyth"),
    (r"(?x:a{1, 3}b)", "aab"),
])
def test_fuzzy_matching_and_odd_braces_are_not_screened(pattern, text):
    """`regex` reads {i<=1} (fuzzy) or {1, 3} (verbose) where Python's parser reads literal text (review11a #1)."""
    _never_screened_out(pattern, text)
    assert superset(pattern) is None


def test_verbose_rules_are_not_screened():
    """Flag x: `regex` reads a{1, 3} as a repeat, Python's parser as literal text (review11a #2)."""
    _never_screened_out(r"a{1, 3}b", "aab", "x")
    assert superset(r"a{1, 3}b", "x") is None
    assert superset(r"(?x:ab)") is None


@pytest.mark.parametrize("pattern, text, flags", [
    (r"(?:(?P<x>a)|(?P<x>b))(?P=x)", "bb", ""),  # a repeated name: the reference may be to either group
    (r"(?P<x>a)|(?P<x>b)(c)\2", "bcc", ""),  # a repeated name shifts the numbers of the groups after it
    (r"((?-i:ab))x\1", "abxAB", "i"),  # compared case-insensitively although the group's own text is not
    (r"(\ba)\1", "aa", ""),  # the copy need not stand where the group's assertions held
    (r"(a$)\n\1", "a\nab", "m"),
])
def test_back_references_are_never_screened_out(pattern, text, flags):
    """review11a #3: the text a back-reference matches, read from its group."""
    _never_screened_out(pattern, text, flags)


def test_repeated_group_names_with_a_back_reference_are_not_screened():
    assert superset(r"(?:(?P<x>a)|(?P<x>b))(?P=x)") is None
    assert superset(r"(?P<x>a)|(?P<x>b)(c)\2") is None
    assert superset(r"(?P<a>x)|(?P<a>y)z") is not None  # without a back-reference the names do not matter
