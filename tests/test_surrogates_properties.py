"""Property tests (hypothesis) of the surrogate modes: offsets, determinism, keys, consistency."""

from __future__ import annotations

import datetime as dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import PerNoteStage
from deid_core.engine.pipeline import Deidentifier, LongestMerge
from deid_core.engine.surrogates import dates as dates_mod
from deid_core.engine.surrogates import names as names_mod
from deid_core.engine.surrogates.modes import hash_mode, redact_mode, surrogate_mode
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span

KEY2 = b"another-secret-key-0123456789"
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Invented name tokens (never in Faker's lists, so no surrogate can collide with them).
name_tok = st.text(alphabet="bcdfghklmnprstvwz", min_size=3, max_size=7).map(lambda s: ("Zq" + s).title())
cased = st.sampled_from([str.title, str.upper, str.lower])
date_val = st.dates(min_value=dt.date(1950, 1, 1), max_value=dt.date(2035, 12, 31))
FULL_FORMATS = ["%m/%d/%Y", "%m-%d-%Y", "%Y-%m-%d", "%B %d, %Y", "%b %d, %Y", "%d %B %Y",
                "%d %b %Y", "%A, %B %d, %Y", "%a %m/%d/%Y", "%Y%m%d", "%b. %d, %Y", "%m.%d.%Y",
                "unpadded", "ordinal"]


def render_date(d: dt.date, fmt: str) -> str:
    """A date in one of FULL_FORMATS."""
    if fmt == "unpadded":
        return f"{d.month}/{d.day}/{d.year}"
    if fmt == "ordinal":
        return f"{d.day}{dates_mod.ordinal_suffix(d.day)} of {d:%B} {d.year}"
    return d.strftime(fmt)


def parse_date(s: str, fmt: str) -> dt.date:
    """Inverse of render_date."""
    if fmt == "unpadded":
        m, d, y = (int(x) for x in s.split("/"))
        return dt.date(y, m, d)
    if fmt == "ordinal":
        day, _, month, year = s.split()
        return dt.datetime.strptime(f"{int(day[:-2])} {month} {year}", "%d %B %Y").date()
    # "May" is both a month name and its abbreviation: accept either spelling back.
    for f in (fmt, fmt.replace("%b", "%B"), fmt.replace("%B", "%b")):
        try:
            return dt.datetime.strptime(s, f).date()
        except ValueError:
            continue
    raise ValueError(f"unparsed output in format {fmt}")


@st.composite
def phi_fragment(draw):
    """(text, label) of one PHI mention."""
    kind = draw(st.sampled_from(["name", "full", "date", "phone", "id", "city", "ssn", "email"]))
    if kind == "name":
        return draw(cased)(draw(name_tok)), "PATIENT"
    if kind == "full":
        return f"{draw(name_tok)} {draw(name_tok)}", "DOCTOR"
    if kind == "date":
        return render_date(draw(date_val), draw(st.sampled_from(FULL_FORMATS))), "DATE"
    if kind == "phone":
        return draw(st.from_regex(r"\([2-9]\d\d\) [2-9]\d\d-\d{4}", fullmatch=True)), "PHONE"
    if kind == "id":
        return draw(st.from_regex(r"[A-Z]{2}\d{6}", fullmatch=True)), "MEDICALRECORD"
    if kind == "ssn":
        return draw(st.from_regex(r"[1-8]\d\d-\d\d-\d{4}", fullmatch=True)), "SSN"
    if kind == "email":
        return draw(name_tok).lower() + "@example.org", "EMAIL"
    return draw(name_tok) + "ville", "CITY"


fillers = st.sampled_from([" seen on ", ", ", "\n", " called ", " and then\n  ", ". Plan: "])


@st.composite
def note_parts(draw):
    """(text, spans) of a note made of filler text and PHI fragments."""
    frags = draw(st.lists(phi_fragment(), min_size=1, max_size=8))
    text, spans = "Note: ", []
    for frag, label in frags:
        spans.append(Span(len(text), len(text) + len(frag), label))
        text += frag + draw(fillers)
    return text, spans


class Gold(PerNoteStage):
    """A tagger returning fixed spans."""

    name = "gold"
    needs: dict[str, str] = {}
    provides: frozenset[str] = frozenset()

    def __init__(self, spans: list[Span]) -> None:
        self.spans = spans

    def run(self, doc: Doc, state) -> list[Span]:
        return list(self.spans)


def process(replacer, text, spans, patient="p1", note_id="n1"):
    """NoteResult of one note through a Deidentifier with gold spans."""
    return Deidentifier([Gold(spans)], key=DEMO_KEY, merge=LongestMerge(),
                        replacer=replacer).process(Note(note_id, text, patient))


def clear_caches() -> None:
    """Forget every per-process cache, as a fresh executor would."""
    names_mod._letter_map.cache_clear()
    dates_mod._shift.cache_clear()


@FAST
@given(note_parts(), st.sampled_from(["surrogate", "redact", "hash"]))
def test_offsets_index_output(parts, mode):
    text, spans = parts
    factory = {"surrogate": surrogate_mode, "redact": redact_mode, "hash": hash_mode}[mode]
    res = process(factory(load_config(), DEMO_KEY), text, spans)
    assert res.ok
    prev_out, prev_in = 0, 0
    for s, a in zip(spans, res.spans, strict=True):
        assert res.text[a.out_start:a.out_end] == a.replacement
        assert res.text[prev_out:a.out_start] == text[prev_in:s.start]  # the text between kept
        prev_out, prev_in = a.out_end, s.end
    assert res.text[prev_out:] == text[prev_in:]
    if mode == "redact":  # same length, whitespace and newlines where they were
        assert len(res.text) == len(text)
        assert all((a.isspace() and a == b) or (not a.isspace() and not b.isspace())
                   for a, b in zip(text, res.text, strict=True))


@FAST
@given(note_parts())
def test_deterministic_and_keyed(parts):
    text, spans = parts
    a = process(surrogate_mode(load_config(), DEMO_KEY), text, spans).text
    clear_caches()
    b = process(surrogate_mode(load_config(), DEMO_KEY), text, spans).text
    c = process(surrogate_mode(load_config(), KEY2), text, spans).text
    assert a == b
    assert c != a


@FAST
@given(note_parts())
def test_surrogate_never_equals_original(parts):
    text, spans = parts
    res = process(surrogate_mode(load_config(), DEMO_KEY), text, spans)
    originals = {text[s.start:s.end].casefold() for s in spans}
    for s, a in zip(spans, res.spans, strict=True):
        assert a.replacement.casefold() != text[s.start:s.end].casefold()
        assert a.replacement.casefold() not in originals


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(note_parts(), min_size=10, max_size=10), st.randoms(use_true_random=False))
def test_consistency_across_separately_processed_halves(notes, rnd):
    # The same patient's notes share PHI: spread a common pool of originals over the notes.
    pool = [frag for text, spans in notes for frag in ((text[s.start:s.end], s.label) for s in spans)]
    built = []
    for i in range(10):
        frags = [rnd.choice(pool) for _ in range(4)]
        text, spans = f"Note {i}: ", []
        for frag, label in frags:
            spans.append(Span(len(text), len(text) + len(frag), label))
            text += frag + " ; "
        built.append((text, spans))
    seen: dict[tuple[str, str], str] = {}
    for half in (built[:5], built[5:]):
        clear_caches()
        rep = surrogate_mode(load_config(), DEMO_KEY)  # a fresh Replacer per half, as on another executor
        for i, (text, spans) in enumerate(half):
            res = process(rep, text, spans, note_id=f"n{i}")
            for s, a in zip(spans, res.spans, strict=True):
                k = (s.label, text[s.start:s.end])
                assert seen.setdefault(k, a.replacement) == a.replacement


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(date_val, st.sampled_from(FULL_FORMATS)), min_size=2, max_size=8),
       st.text(alphabet="abc123", min_size=1, max_size=6))
def test_date_intervals_preserved(items, patient):
    rep = surrogate_mode(load_config(), DEMO_KEY)
    text, spans = "", []
    for d, fmt in items:
        s = render_date(d, fmt)
        spans.append(Span(len(text), len(text) + len(s), "DATE"))
        text += s + " | "
    res = process(rep, text, spans, patient=patient)
    outs = [parse_date(a.replacement, fmt) for a, (_, fmt) in zip(res.spans, items, strict=True)]
    for (d0, _), o0 in zip(items, outs, strict=True):
        assert o0 != d0
        for (d1, _), o1 in zip(items, outs, strict=True):
            assert (o1 - o0) == (d1 - d0)


@settings(max_examples=40, deadline=None)
@given(st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2000, 12, 31)),
       st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2000, 12, 31)))
def test_yearless_dates_shift_consistently(d0, d1):
    rep = surrogate_mode(load_config(), DEMO_KEY)
    text = f"{d0.month}/{d0.day} and {d1:%B} {d1.day}"
    a, b = text.split(" and ")
    res = process(rep, text, [Span(0, len(a), "DATE"), Span(len(a) + 5, len(text), "DATE")])
    o0 = dt.datetime.strptime(res.spans[0].replacement + "/2000", "%m/%d/%Y").date()
    o1 = dt.datetime.strptime(res.spans[1].replacement + " 2000", "%B %d %Y").date()
    shift = rep.dates.shift_days(DEMO_KEY, "p:p1")
    assert o0 == (d0 + dt.timedelta(days=shift)).replace(year=2000) or (o0.month, o0.day) == (
        (d0 + dt.timedelta(days=shift)).month, (d0 + dt.timedelta(days=shift)).day)
    assert (o1.month, o1.day) == ((d1 + dt.timedelta(days=shift)).month, (d1 + dt.timedelta(days=shift)).day)


@st.composite
def arbitrary_note(draw):
    """Any text with any non-overlapping spans and labels (robustness)."""
    from deid_core.taxonomy import labels

    text = draw(st.text(min_size=1, max_size=80))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=8))))
    spans = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        if a < b:
            spans.append(Span(a, b, draw(st.sampled_from(labels()))))
    return text, spans


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arbitrary_note(), st.sampled_from([{}, {"surrogates": {"profile": "safe_harbor"}}]))
def test_any_input_gets_a_replacement(parts, cfg):
    text, spans = parts
    rep = surrogate_mode(load_config(cfg), DEMO_KEY)
    out = rep(Doc(Note("n", text, "p")), spans)
    assert len(out) == len(spans) and all(isinstance(x, str) and x for x in out)
