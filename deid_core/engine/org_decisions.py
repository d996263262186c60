"""Organization decisions after the merge (issue 14, round 15: organizations named with no frame and no kind word):
a well-known organization of the hand-written lists (conf/rules/words/organizations*.txt) is an
ORGANIZATION span ('Attends [YMCA]', 'To: Human Resources, [General Electric]', 'works for [UPS]'), replacing the
CRF's, the name net's or propagation's other readings of it ('YMCA' read DOCTOR, 'UnitedHealthcare' HOSPITAL).
Three lists: names read in any case, names read in Title or capital letters only ('Red Cross', not 'red cross'),
and names that are common, clinical or person's words ('UPS', 'CVS', 'Target'), read only in a frame ('employer:',
'works at', 'pharmacy:', '<job> with', '<name> pharmacy'). Configured by [merge] organization_gazetteer."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache

import ahocorasick
import regex

from deid_core.config import Merge as MergeOptions
from deid_core.config import conf_dir
from deid_core.doc import Doc
from deid_core.engine.note_text import lower_text, may_occur
from deid_core.engine.propagation import (
    ORGANIZATION_LIST_SOURCE,
    is_crf,
    person_cue_before,
    phrase_alternation,
    source_kind,
)
from deid_core.engine.rules.metadata import SOURCE as KNOWN_NAME
from deid_core.gazetteers import (
    is_common,
    is_frequent,
    is_function_word,
    is_name,
    lowered,
    normalize_phrase,
    words,
)
from deid_core.spans import Span

SOURCE = ORGANIZATION_LIST_SOURCE  # no propagation seed (engine/propagation.py)
ANY, TITLED, FRAMED, KIND = 0, 1, 2, 3  # how a list's entries must be written or framed to be read; KIND: a kind hit
KINDS_FILE = "organizations_kinds.txt"  # kinds of organization read after name words (round 16)
VALUE_NOT_NAMES_FILE = "organizations_value_not_names.txt"  # field values that name no organization ('Company: Self')
KIND_LEADS_FILE = "organizations_kind_leads.txt"  # words before a kind that are none of its name words ('attends')
PREFIXES_FILE = "organizations_name_prefixes.txt"  # place prefixes before a strong name word ('East Quellton')
DEPARTMENT_HEADS_FILE = "organizations_department_heads.txt"  # a hospital unit's head: a DEPARTMENT (round 17)
DRUG_ENDINGS_FILE = "organizations_drug_endings.txt"  # drug-name endings: no kind's name word ('ceftriaxone'; round 17)
FAITH_WORDS_FILE = "organizations_faith_words.txt"  # faith words after 'First' ('[First Baptist]'; round 17)
HOSPITAL_WORDS_FILE = "organizations_hospital_words.txt"  # a hospital's own name: no unit head relabels it (round 17)
FIRM_KIN_FILE = "organizations_firm_kin.txt"  # kin words ending a firm's name ('<Name> & Sons <kind>'; round 17)
FILES = {ANY: "organizations.txt", TITLED: "organizations_titled.txt", FRAMED: "organizations_framed.txt"}
# merge-only lists live with the rules' word lists, outside the CRF's gazetteers: no bundle version or bench digest moves
WORDS_DIR = "rules/words"
# labels a CRF, name-net or propagated reading of an organization takes that run past the entry ('LifeCenter Ohio'
# read DOCTOR): the whole span becomes the organization; a place span past it ('Red Cross Hospital') stands
_RELABELLED = frozenset({"DOCTOR", "PATIENT", "USERNAME", "CITY", "STATE", "COUNTRY", "HEALTHPLAN"})
_PERSONS = frozenset({"DOCTOR", "PATIENT"})
_TOWNS = frozenset({"CITY", "LOCATION-OTHER", "ORGANIZATION"})  # a chapter's town before the entry, as the CRF reads it
_SMALL = frozenset({"of", "on", "and", "for", "the", "de", "in", "at", "&"})  # lower case in a Title-case name
_JOINED_BEFORE = frozenset("-/@._'’&")  # a character before the entry that joins it to a longer token ('push-ups')
_JOINED_AFTER = frozenset("-/@_'’&")
_WORD = regex.compile(r"[\p{L}\d][\p{L}\d'’.-]*")
_FRAME_REACH = 48  # characters read before an entry for a frame
_PHARMACY = regex.compile(r"[ \t]+((?i:pharmacy))(?![\p{L}\d])")
# how far past an entry its "Pharmacy" is looked for: the regex module looks for a required literal up to endpos,
# so an unbounded match costs the rest of the note at every entry (quadratic on long notes; review16)
_PHARMACY_REACH = 40
_STOP = regex.compile(r"[ \t]*[(,;:]")  # after an organization's name: its name ends there
_WORK_UP = r"(?![ \t]*-?[ \t]*(?i:up)(?![\p{L}\d]))"  # 'work-up for IBM', 'worked up for CVS': a clinical work-up
_CLAUSE_END = regex.compile(r"[ \t]*(?:[.,;:!?)\]\n]|\Z)")  # after a lower-case framed name ('lost her job at ups.')
_SENTENCE_END = regex.compile(r"[.!?][ \t]+(?=\p{Lu})")  # 'Ford. Chase Ford': a span across it is two readings
_PHONE_AFTER = regex.compile(r"[ \t]*[(,:]?[ \t]*(?:\+?1[ .-]?)?\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}(?!\d)")  # 'CVS (+1 809 729 9919)', 'CVS (563-3452829)' (round 17)
_PARTNERS_AFTER = regex.compile(r",[ \t]+\p{Lu}[\p{L}'’-]*(?:,?[ \t]+\p{Lu}[\p{L}'’-]*)*,?[ \t]+(?:and|AND|&)[ \t]+\p{Lu}")
_UNIT_PLACES = frozenset({"HOSPITAL", "ORGANIZATION", "LOCATION-OTHER"})
_OF_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:of)[ \t]+\Z")
_NEXT_NAME = regex.compile(r"[\p{L}'’.-]+[ \t]+(?=[\p{L}])")  # a name word and the blanks after it, another word next
_UNIT_NUMBER = regex.compile(r"[ \t]+\d{1,2}[A-Z]?(?![\p{L}\d])")  # 'Behavioral Health Unit [14]'
_NEWLINE = regex.compile(r"\n")
_COLON_BEFORE = regex.compile(r":[ \t]*\Z")
_DASH_AFTER = regex.compile(r"[ \t]+-[ \t]")  # 'salvation army - skilled nursing visit'
_DETERMINER_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:a|an|the|this|that|no|any|some|big|small)[ \t]+\Z")
_STOP_BEFORE = regex.compile(r"[ \t]*[(,;:][ \t]*\Z")  # right before an organization's name: it starts there
_REP = regex.compile(r"[ \t]+(?i:rep|representative|agent|adjuster|liaison|coordinator)\.?[ \t]+(?=\p{L})")
_AMPERSAND_BEFORE = regex.compile(r"[ \t]&[ \t]+\Z")
_AND_BEFORE = regex.compile(r"[ \t](?:and|AND)[ \t]+\Z")  # 'Bender and Sons Funeral Home' (round 17)
_SAINTED = frozenset({"ORGANIZATION", "HOSPITAL"})
# review17: not after a slash ('PT/OT/ST [Mercy Hospital]': speech therapy)
_SAINT_BEFORE = regex.compile(r"(?<![\p{L}\d'’./-])((?i:st|ste|saint)\.?|First|FIRST)[ \t]+\Z")  # 'St. [Brendan's Church]'
_SAINT_START = regex.compile(r"(?i:st|ste|saint)\.?[ \t]")  # a span with its own saint ('ST. [St. Quell Hospital]'; review17)
_FIRM_SOURCES = frozenset({"organization16-firm-partners", "organization17-firm-work", "organization-firm-frame"})
_FIELD_SEP = regex.compile(r"[ \t]*:[ \t]*")  # a field's colon and the blanks around it
_NAME_BEFORE = regex.compile(r"(?<![\p{L}\d'’.-])(\p{L}[\p{L}'’-]*\p{L}\.?|\p{L})[ \t]+\Z")  # one name word, a blank
_JOB_LINK = regex.compile(r"[ \t]+(?i:at|for|with|from)[ \t]+(?:the[ \t]+)?\Z")  # '<PROFESSION> with Target'


Framing = tuple[regex.Pattern | None, ...]  # (before, after[, tail]): frames(); a missing tail reads no tail


@lru_cache(maxsize=8)
def frames(frame_words: tuple[str, ...], field_words: tuple[str, ...],
           store_words: tuple[str, ...], tail_words: tuple[str, ...] = ()) -> Framing:
    """(before, after, tail): a frame right before a framed entry, a frame word of `frame_words` then 'at / for /
    with / by / from / of / in' within the clause, or a field word of `field_words` ('works at Target', 'lost her job
    at ups', 'WORK NOTE FOR UPS', 'employer: UPS', 'pharmacy: cvs'), a store word of `store_words` right after it
    ('Target pharmacy'), and the corporate words of `tail_words` an entry takes in when they follow it in its case
    ('[Ford Motor]', '[KROGER CO]'; round 16)."""
    parts = []
    if frame_words:
        parts.append(r"(?:" + phrase_alternation(frame_words) + r")(?![\p{L}\d])" + _WORK_UP + r"[^\n.;:]{0,24}?(?<![\p{L}\d])"
                     r"(?:at|for|with|by|from|of|in)")
    if field_words:
        parts.append(r"(?:" + phrase_alternation(field_words) + r")")
    before = regex.compile(r"(?i:(?<![\p{L}\d])(?:" + "|".join(parts) + r"))[ \t]*[:-]?[ \t]*(?:the[ \t]+)?\Z"
                           ) if parts else None
    after = regex.compile(r"[ \t]+(?i:" + phrase_alternation(store_words) + r")(?![\p{L}\d])") if store_words else None
    tail = regex.compile(r"(?:[ \t]+(?i:" + phrase_alternation(tail_words) + r")(?![\p{L}\d'’&-]))+") if tail_words else None
    return before, after, tail


def list_entries(name: str) -> frozenset[str]:
    """One list file of conf/rules/words: its entries, lower-cased, '#' comments and blank lines dropped."""
    path = conf_dir() / WORDS_DIR / name
    lines = (line.split("#", 1)[0].strip().lower() for line in path.read_text(encoding="utf-8").splitlines())
    return frozenset(e for e in lines if e)


@lru_cache(maxsize=8)
def automaton(fields: tuple[str, ...] = ()) -> ahocorasick.Automaton:
    """One Aho-Corasick automaton over ' key ' of the three lists, the kinds (organizations_kinds.txt) and the value
    `fields` ([merge] organization_value_fields): value (key length, how a list entry must be read or None, a kind?, a
    field?); one pass over the note reads all three (round 16). A one-word entry that is a dictionary or clinical word
    or a known name ('Dupont', 'Kroger': a doctor's surname), also before "'s" ('Wendy's', 'Lowe's': a person's
    possessive; review15), is read only in a frame."""
    auto = ahocorasick.Automaton()
    tiers: dict[str, int] = {}
    for tier in (ANY, TITLED, FRAMED):
        for entry in list_entries(FILES[tier]):
            key = normalize_phrase(entry)
            stem = key[:-2] if key[-2:] in ("'s", "’s") else None  # 'wendy's', 'lowe's': also a person's possessive
            word = stem or key
            read = FRAMED if " " not in key and (is_common(word) or is_name(word)) else tier
            # the note's '&' or '.' is a blank of its own in the lowered text: 'stop & shop' is 'stop   shop' there
            for k in {key, _as_written(entry)}:
                tiers[k] = max(read, tiers.get(k, ANY))  # an entry in two lists keeps the stricter reading
    kinds = {normalize_phrase(k) for k in list_entries(KINDS_FILE)}
    values = {normalize_phrase(f) for f in fields}
    for key in {*tiers, *kinds, *values}:
        auto.add_word(f" {key} ", (len(key), tiers.get(key), key in kinds, key in values))
    auto.make_automaton()
    return auto


def _as_written(entry: str) -> str:
    """The entry as the lowered note writes it: every ASCII sign but the apostrophe one blank, none collapsed ('stop &
    shop' -> 'stop   shop', 'st. vincent de paul' -> 'st  vincent de paul'), as gazetteers.lowered does."""
    return "".join(" " if c.isascii() and not c.isalnum() and c != "'" else c for c in entry.lower()).strip()


@lru_cache(maxsize=16)
def word_set(name: str) -> frozenset[str]:
    """One list file of conf/rules/words as a set, read once (review16: the decision's word lists are data)."""
    return list_entries(name)


def entries(tier: int) -> frozenset[str]:
    """The normalized entries read with that tier (ANY, TITLED, FRAMED): for tests and docs."""
    return frozenset(k.strip() for k, (_, t, _, _) in automaton().items() if t == tier)


def named_organizations(spans: Sequence[Span], doc: Doc,
                        framing: tuple[regex.Pattern | None, regex.Pattern | None] = (None, None),
                        opts: MergeOptions | None = None) -> list[Span]:
    """ORGANIZATION spans over the listed organizations the note names (see the module's docstring); a framed entry
    needs `framing` (frames(): [merge] organization_frame_words ...) or a profession span before it; a rule's span
    or a known name (metadata) overlapping one stands, and so does a place or other span running past it, and (with
    `opts`) a person span after a title or kin word of [merge] propagate_cue_words / propagate_kin_words ('Dr.
    Nordstrom', 'wife Wendy Kroger'). First (round 17): firms of first names (first_name_firms), saints (saint_prefixes),
    employer values that name none (field_non_names) and hospital units (department_heads, named_units)."""
    text = doc.text
    spans = first_name_firms(spans, text)
    spans = named_units(department_heads(field_non_names(saint_prefixes(spans, text), text), text), text, lower_text(doc))
    hits = _hits(doc, opts.organization_value_fields if opts is not None else ())
    if not hits:
        return list(spans)
    tail = framing[2] if len(framing) > 2 else None
    out = sorted(spans, key=lambda s: s.start)
    starts = [s.start for s in out]
    reach = max((s.end - s.start for s in out), default=0)  # the longest span: how far before an entry a rival starts
    lower_lines = _LowerLines(text)
    for start, end, tier in hits:
        # the spans a decision reads (rivals, a town before them, a profession before the entry) start in this window:
        # each hit reads and rewrites only it, so the pass stays linear in the note (review15)
        i0 = bisect_left(starts, start - 2 * reach - _FRAME_REACH)
        if not _read(text, start, end, tier, out[i0:bisect_left(starts, end)], framing, lower_lines):
            continue
        end = _with_tail(text, start, _with_pharmacy(text, start, end), tail)
        end = _with_state(out, starts, text, end)
        i1 = bisect_left(starts, end)
        window = out[i0:i1]
        rivals = [s for s in window if start < s.end]
        if any(not _yields(s, start, end, text, tier) or (opts is not None and tier != KIND and s.label in _PERSONS
                                                     and person_cue_before(text, s.start, opts)) for s in rivals):
            continue
        rest = [p for s in rivals if (p := _after_stop(s, end, text) or _after_rep(s, end, text)) is not None]
        rest += [p for s in rivals if (p := _before_stop(s, start, text)) is not None]
        cut = {id(s) for s in rivals if s.label != "ORGANIZATION" and s.end > end and _STOP.match(text, end)}
        # an ORGANIZATION span from the left with a name in it joins ('[EAST QUELLHAVEN COUNCIL] ON AGING'; round 16),
        # not across a stop ('School counselor Quell Ames ([Hardin Elementary]')
        grown = [s for s in rivals if (s.label != "ORGANIZATION" or (
            s.start < start and s.end <= end and _named_part(s, start, end, text))) and _before_stop(s, start, text) is None]
        lo = min([start, *(s.start for s in grown)])
        hi = max([end, *(s.end for s in grown if id(s) not in cut and s.label != "ORGANIZATION"),
                  # a kind's name goes on past it as the CRF reads it ('[Quellon Freight Lines]')
                  *(_name_goes_on(text, start, end, s.end) for s in rivals if tier == KIND and s.label == "ORGANIZATION"
                    and _soft(s) and s.end > end and not _STOP.match(text, end) and "\n" not in text[end:s.end])])
        town = _town_before(window, lo, text)
        made = [Span(town.start if town else _lead_trimmed(text, lo, start), hi, "ORGANIZATION", SOURCE, 0.9), *rest]
        window = sorted([*(s for s in window if not start < s.end and s is not town), *made], key=lambda s: s.start)
        out[i0:i1] = window
        starts[i0:i1] = [s.start for s in window]
        reach = max(reach, *(s.end - s.start for s in made))
        if i0 + len(window) < len(out) and window and window[-1].start > starts[i0 + len(window)]:
            out.sort(key=lambda s: s.start)  # a span after a stop ('Aetna (Quell Ames') starts past a later span
            starts = [s.start for s in out]
    return sorted(out, key=lambda s: (s.start, s.end))


def named_units(spans: Sequence[Span], text: str, low: str | None = None) -> list[Span]:
    """A hospital unit named by one to three name words before its head (organizations_department_heads.txt), read as
    a kind's name is (_kind_hit: '[HAMRIC CARDIAC UNIT]', '[viebrock neuro icu]', '[Bahoora Cardiac Unit]' read DOCTOR
    'Bahoora'), with a unit number after 'Unit' ('[Mccollam Behavioral Health Unit 14]'), is a DEPARTMENT span over
    the soft spans inside it; a rule's span or a span running past it stands (round 17). `low`: text.lower() when
    the caller has it (note_text.lower_text); a note naming no head's words skips the scan (round 18)."""
    out = list(spans)
    if not may_occur(text, low, word_set(DEPARTMENT_HEADS_FILE)):
        return sorted(out, key=lambda s: (s.start, s.end))
    for m in _department_heads().finditer(text):
        if (first := _kind_hit(text, m.start(), m.end())) is None:
            continue
        if _OF_BEFORE.search(text, max(0, first - 4), first) and (w := _NEXT_NAME.match(text, first, m.start())):
            first = w.end()  # 'Hospital of [Quellton] Shaddox Heart Center': the hospital's town, not the unit's
        end = n.end() if (n := _UNIT_NUMBER.match(text, m.end())) and m.group().lower().endswith("unit") else m.end()
        inside = [s for s in out if s.start < end and first < s.end]
        if any(s.start < first or s.end > end or not _soft(s) for s in inside):
            continue  # a rule's span, or a span running past the unit ('Quell Hospital Shaddox Heart Center')
        out = [s for s in out if not (s.start < end and first < s.end)]
        out.append(Span(first, end, "DEPARTMENT", SOURCE, 0.9))
    return sorted(out, key=lambda s: (s.start, s.end))


def department_heads(spans: Sequence[Span], text: str) -> list[Span]:
    """A HOSPITAL, ORGANIZATION or LOCATION-OTHER span named by a hospital unit's head (organizations_department_heads.txt:
    'Heart Center', 'Family Birthing Center', 'Cardiac Unit', 'Neuro ICU', 'Pavilion') after a name word, with no
    hospital word in it, is a DEPARTMENT ('Quell General Hospital - [Shaddox Heart Center]'; round 17)."""
    heads = _department_heads()
    out: list[Span] = []
    for s in spans:
        if s.label in _UNIT_PLACES and (m := _last_head(heads, text, s.start, s.end)) is not None and (
                m.start() > s.start) and _WORD.search(text, s.start, m.start()) and not _hospital_word().search(
                text, s.start, s.end):
            s = s.with_label("DEPARTMENT")
        out.append(s)
    return out


def _last_head(heads: regex.Pattern, text: str, start: int, end: int) -> regex.Match | None:
    """The unit head ending the span [start, end), if one does."""
    for m in heads.finditer(text, start, end):
        if m.end() == end:
            return m
    return None


@lru_cache(maxsize=1)
def _faith() -> regex.Pattern:
    """A faith word (organizations_faith_words.txt) opening a congregation's name after 'First' ('[First Baptist]')."""
    return regex.compile(r"(?i:" + phrase_alternation(tuple(word_set(FAITH_WORDS_FILE))) + r")(?![\p{L}\d])")


@lru_cache(maxsize=1)
def _hospital_word() -> regex.Pattern:
    """A word of a hospital's own name (organizations_hospital_words.txt) anywhere in a span."""
    return regex.compile(r"(?<![\p{L}\d])(?i:" + phrase_alternation(tuple(word_set(HOSPITAL_WORDS_FILE))) + r")(?![\p{L}\d])")


@lru_cache(maxsize=1)
def _department_heads() -> regex.Pattern:
    """The hospital units' heads (organizations_department_heads.txt) as one pattern ending a span."""
    return regex.compile(r"(?<![\p{L}\d])(?i:" + phrase_alternation(tuple(word_set(DEPARTMENT_HEADS_FILE))) + r")(?![\p{L}\d])")


def field_non_names(spans: Sequence[Span], text: str) -> list[Span]:
    """An ORGANIZATION span of one word right after a field's colon that names no organization
    (organizations_value_not_names.txt: 'Employer: [Retired]', 'Employer: [Disabled]', 'Employer: [Unknown]') is
    dropped (round 17)."""
    out: list[Span] = []
    for s in spans:
        if s.label == "ORGANIZATION" and text[s.start:s.end].lower().strip(".") in word_set(VALUE_NOT_NAMES_FILE) and (
                _COLON_BEFORE.search(text, max(0, s.start - 4), s.start)):
            continue
        out.append(s)
    return out


def saint_prefixes(spans: Sequence[Span], text: str) -> list[Span]:
    """An ORGANIZATION or HOSPITAL span right after 'St.' / 'Saint' (a church's, a parish's or a hospital's saint:
    'Member of [St. Brendan's Church]', '[st. michael's hospital]') or after 'First' when it opens with a faith word
    ('Attends [First Baptist]') grows over it (round 17)."""
    out: list[Span] = []
    for s in spans:
        if s.label in _SAINTED and not _SAINT_START.match(text, s.start) and (
                m := _SAINT_BEFORE.search(text, max(0, s.start - 8), s.start)) is not None and (
                m.group(1).lower() != "first" or _faith().match(text, s.start)) and not any(
                o.end > m.start() and o.start < m.end() for o in out[-2:] if o is not s):
            s = Span(m.start(), s.end, s.label, s.source, s.confidence)
        out.append(s)
    return out


def first_name_firms(spans: Sequence[Span], text: str) -> list[Span]:
    """A firm rule's span ('X, Y and Z' after 'letter / note for' or a work frame) whose partners are all known first
    names, one of them no known last name, is the people named: a PATIENT span each ('school note for [Emma], [Liam] and
    [Noah]': review16's open item; round 17). Firms are named by surnames ('Wells, Washington and Hunter')."""
    if not any(s.source in _FIRM_SOURCES for s in spans):
        return list(spans)
    out: list[Span] = []
    firsts, lasts = words("first_name"), words("last_name")
    for s in spans:
        parts = [w for w in _WORD.finditer(text, s.start, s.end) if w.group().lower() not in ("and", "&")]
        lows = [w.group().lower().strip(".'’,") for w in parts]
        if s.source in _FIRM_SOURCES and lows and all(w in firsts for w in lows) and any(w not in lasts for w in lows):
            out.extend(Span(w.start(), w.start() + len(w.group().rstrip(".,")), "PATIENT", s.source, s.confidence)
                       for w in parts)
        else:
            out.append(s)
    return out


def _lead_trimmed(text: str, lo: int, start: int) -> int:
    """Where an organization grown to a rival's start at `lo` begins, past the signs and the lead words
    (organizations_kind_leads.txt, function words) before the entry at `start`: 'Per [Vermont Donor Services]'
    (a CRF DOCTOR 'Per Vermont'), '- [LifeCenter Vermont]:' (round 17)."""
    while lo < start:
        if not text[lo].isalnum():
            lo += 1
            continue
        m = _WORD.match(text, lo, start)
        low = m.group().lower().strip(".'’") if m else ""
        if m is None or not (low in word_set(KIND_LEADS_FILE) or is_function_word(low)):
            break
        lo = m.end()
    return lo


def _strong(word: str) -> bool:
    """A name word on its own: no dictionary word, or a known name that is no frequent word ('Chesney', 'koch'); a
    hyphenated word in one case all of whose parts are ('potassium-rich', 'c-spine', 'Self-employed' are not; a Title
    'Hill-Quell' needs one; review16)."""
    low = word.lower().strip(".'’")
    if "-" in low.strip("-"):
        parts = [p for p in low.split("-") if p]
        strong = [_strong(p) for p in parts]
        titled = all(p[:1].isupper() for p in word.split("-") if p)
        return any(strong) if titled else all(strong)
    return not is_common(low) or (is_name(low) and not is_frequent(low))


def _after_word(text: str, start: int) -> bool:
    """Is [start...) right after a word on its line, blanks between ('Mary Ford', 'Thought Organization'; review16)?"""
    i = start
    while i > 0 and text[i - 1] in " \t\u00a0":
        i -= 1
    return i > 0 and text[i - 1].isalnum()


def _ends_sentence(word: str) -> bool:
    """A word with a period after it that is no short abbreviation ('Lincare.', 'AMLODIPINE.'; not 'St.', 'st.', 'MT.',
    'U.S.'): a name does not go on past it (review16)."""
    core = word.rstrip(".")
    return word.endswith(".") and "." not in core and len(core) > 2


def _kind_hit(text: str, start: int, end: int) -> int | None:
    """The start of one to three name words written in the case of the kind at [start, end) right before it, one of
    them a name word on its own (_strong) and none a function, lead or clinical word; lower-case and capital words but
    a place prefix ('east', 'PORT') must be strong ('[KOCH CONSTRUCTION]', '[majkut home care]', '[East Quellton
    Senior Center]'; not 'road construction', 'Patient Transport', 'the senior center')."""
    kind = text[start:end]
    case = "upper" if kind.isupper() else "lower" if kind.islower() else "title" if kind[:1].isupper() else None
    if case == "upper" and len(kind) <= 4:
        case = "title"  # an acronym kind after a Title-case name ('[Quellton VNA]')
    if case is None:
        return None
    pos, first, strong = start, None, False
    for _ in range(3):
        if first is not None and (amp := _AMPERSAND_BEFORE.search(text, max(0, pos - 4), pos)) is not None:
            pos = amp.start() + 1  # partners joined by '&' ('[Quell & Marlow LLP]')
        m = _NAME_BEFORE.search(text, max(0, pos - 40), pos)
        if m is None:
            break
        word = m.group(1)
        if _ends_sentence(word):
            break  # 'AMLODIPINE. HOME INFUSION': the name ends a sentence before the kind
        low = word.lower().strip(".'’")
        written = word.isupper() if case == "upper" else word.islower() if case == "lower" else word[:1].isupper()
        if not written:
            break
        if low in word_set(PREFIXES_FILE) and strong:
            pos = first = m.start(1)
            continue
        if low in word_set(FIRM_KIN_FILE) and (_AMPERSAND_BEFORE.search(text, max(0, m.start(1) - 4), m.start(1))
                                                       or _AND_BEFORE.search(text, max(0, m.start(1) - 6), m.start(1))):
            pos = first = m.start(1)  # '[Marrick & Sons Funeral Home]': the firm's partners before its kind (round 17)
            if (a := _AND_BEFORE.search(text, max(0, pos - 6), pos)) is not None:
                pos = a.start() + 1
            continue
        if low in word_set(KIND_LEADS_FILE) or is_function_word(low) or low in words("medical_word") or (
                case != "title" and _drug_shaped(low)):
            break  # 'ceftriaxone home infusion' (round 17: review16's open item)
        if _strong(word):
            strong = True
        elif case != "title" or is_frequent(low):
            break
        pos = first = m.start(1)
    return first if strong else None


def _drug_shaped(low: str) -> bool:
    """Does the lower-cased word end as drug names do ('ceftriaxone', 'vancomycin', 'ertapenem'; the endings of
    conf/rules/words/organizations_drug_endings.txt), a drug's name before 'home infusion' and no firm's (round 17)?"""
    return len(low) > 6 and low.endswith(_drug_endings())


@lru_cache(maxsize=1)
def _drug_endings() -> tuple[str, ...]:
    """The drug-name endings (conf/rules/words/organizations_drug_endings.txt), longest first."""
    return tuple(sorted(word_set(DRUG_ENDINGS_FILE), key=len, reverse=True))


def _field_value(text: str, start: int, end: int) -> tuple[int, int, int] | None:
    """(start, end, KIND) of the organization name written as the value of the field at [start, end) ('Company:
    [Quellco Freight]', 'DME vendor: [APRIA]', 'Agency: [Quellton VNA]'; round 16): Title or capital name words (small
    words between them) up to a stop, one of them a name word on its own (_strong) or two Title words opening with no
    frequent word; not 'School: 3rd grade', 'Agency: none', 'Church: Catholic', 'Company: Self'."""
    if (m := _FIELD_SEP.match(text, end)) is None or (start > 0 and text[start - 1] not in " \t\n|;([") or (
            _after_word(text, start)):
        return None  # 'Thought Organization:' is another field (review16)
    names, strong, titled = [], False, 0
    pos = m.end()
    for w in _WORD.finditer(text, pos, min(len(text), pos + 80)):
        gap, word = text[pos:w.start()], w.group()
        low = word.lower().strip(".'’")
        if (names and gap not in (" ", " & ")) or (not names and gap):
            break
        if low in _SMALL and names:
            pos = w.end()
            continue  # 'Bank of [America]', 'Council on Aging': a small word between name words
        if not word[:1].isupper() or low in word_set(VALUE_NOT_NAMES_FILE) or low in words("medical_word"):
            break
        strong = strong or _strong(word)
        titled += not word.isupper()
        names.append(w)
        pos = w.end()
        if len(names) == 6 or _ends_sentence(word):
            break  # 'Vendor: [Lincare]. Oxygen 2L'
    if not names or not (strong or (len(names) > 1 and titled > 1 and not is_frequent(names[0].group()))) or (
            _PARTNERS_AFTER.match(text, names[-1].end())):
        return None  # 'Employer: Wells, Washington and Hunter': a firm's partners, the rules' (round 17)
    end = names[-1].end()
    while text[end - 1] in ".'’-":
        end -= 1  # 'Church: [Francis Soup Kitchen].'
    return names[0].start(), end, KIND


def _hits(doc: Doc, fields: tuple[str, ...] = ()) -> list[tuple[int, int, int]]:
    """(start, end, tier) of the entries, the kind hits and the field values (round 16) in the note, leftmost-longest,
    none overlapping."""
    found = []
    text = doc.text
    for end_idx, (length, tier, kind, field) in automaton(fields).iter(lowered(doc)):
        end = end_idx - 1  # ' key ' ends at padded index end_idx: its trailing space is doc offset end_idx - 1
        if tier is not None:
            found.append((end - length, end, tier))
        if kind and (start := _kind_hit(text, end - length, end)) is not None:
            found.append((start, end, KIND))
        if field and (value := _field_value(text, end - length, end)) is not None:
            found.append(value)
    if not found:
        return []
    found.sort(key=lambda h: (h[0], -h[1]))
    out: list[tuple[int, int, int]] = []
    for h in found:
        if not out or h[0] >= out[-1][1]:
            out.append(h)
    return out


def _read(text: str, start: int, end: int, tier: int, spans: Sequence[Span],
          framing: tuple[regex.Pattern | None, regex.Pattern | None], lower_lines: _LowerLines | None = None) -> bool:
    """Is the entry at [start, end) a whole token, written or framed as its tier asks?"""
    if (start > 0 and text[start - 1] in _JOINED_BEFORE) or (end < len(text) and (
            text[end] in _JOINED_AFTER or (text[end] == "." and end + 1 < len(text) and text[end + 1].isalnum()))):
        return False
    if tier in (ANY, KIND):
        return True
    if tier == TITLED:  # in lower case in a frame too ('attends red cross.'; round 16), or on a lower-case line (round 17)
        return _titled(text[start:end]) or _framed(text, start, end, spans, framing) or _lower_line(
            text, start, end, lower_lines or _LowerLines(text))
    return _framed(text, start, end, spans, framing)


class _LowerLines:
    """Which lines of a text are written all in lower case (20 letters at least, no capital): each line read once, its
    line found by bisection (review17: reading the line again for each entry was quadratic on one long line)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ends: list[int] | None = None
        self.memo: dict[int, bool] = {}

    def __call__(self, pos: int) -> bool:
        """Is the line holding `pos` written all in lower case?"""
        if self.ends is None:
            self.ends = [m.start() for m in _NEWLINE.finditer(self.text)]
        i = bisect_left(self.ends, pos)
        if i not in self.memo:
            line = self.text[self.ends[i - 1] + 1 if i else 0:self.ends[i] if i < len(self.ends) else len(self.text)]
            self.memo[i] = sum(c.isalpha() for c in line) >= 20 and not any(c.isupper() for c in line)
        return self.memo[i]


def _lower_line(text: str, start: int, end: int, lower_lines: _LowerLines) -> bool:
    """Is the several-word entry at [start, end) on a line written all in lower case, a writer who capitalizes no name,
    ending its clause with no article before it ('resources given: elder services, ...', 'salvation army - skilled
    nursing visit'; not 'a red cross on the sign'; round 17)?"""
    if " " not in text[start:end].strip() or not (_CLAUSE_END.match(text, end) or _DASH_AFTER.match(text, end)) or (
            _DETERMINER_BEFORE.search(text, max(0, start - 8), start)):
        return False  # 'a red cross on the sign': a name ends its clause, and no article opens it
    return lower_lines(start) and lower_lines(end)


def _titled(name: str) -> bool:
    """Every word but the small ones starts with a capital ('Red Cross', 'BOY SCOUTS'; not 'red cross')."""
    return all(w[0].isupper() or w.lower() in _SMALL for w in _WORD.findall(name))


def _framed(text: str, start: int, end: int, spans: Sequence[Span],
            framing: tuple[regex.Pattern | None, regex.Pattern | None]) -> bool:
    """A store word after the entry, or a work, volunteer, shopping or pharmacy frame before it, or a profession span
    before it and 'at' / 'for' / 'with' ('seismic interpreter with Target'); an entry in lower case needs a store word
    or the end of its clause after it ('lost her job at ups.', not 'shopping for apple juice')."""
    before, after = framing[:2]
    if (after is not None and after.match(text, end)) or (_PHONE_AFTER.match(text, end) and not _after_word(text, start)):
        return True  # 'Target pharmacy', 'CVS (555) 201-3344': a store's name and its number; not 'Mary Ford (555)...'
    if text[start:end].islower() and not _CLAUSE_END.match(text, end):
        return False  # 'shopping for apple juice', 'working with PT for target weight': the word's own use
    if before is not None and before.search(text, max(0, start - _FRAME_REACH), start):
        return True
    if (m := _JOB_LINK.search(text, max(0, start - 12), start)) is not None:
        return any(s.label == "PROFESSION" and s.end == m.start() for s in spans)
    return False


def _with_pharmacy(text: str, start: int, end: int) -> int:
    """The entry's end, past a 'Pharmacy' written in its case right after it ('[Costco Pharmacy]', '[CVS
    PHARMACY]'; not 'Walgreens pharmacy')."""
    if (m := _PHARMACY.match(text, end, min(len(text), end + _PHARMACY_REACH))) is None:
        return end
    name, word = text[start:end], m.group(1)
    same = word.isupper() if name.isupper() else word.islower() if name.islower() else word[0].isupper() and word[1:].islower()
    return m.end() if same else end


def _with_tail(text: str, start: int, end: int, tail: regex.Pattern | None) -> int:
    """The entry's end, past corporate words of [merge] organization_tail_words written in its case right after it
    ('[Ford Motor]', '[KROGER CO.]'; not 'Ford motor vehicle')."""
    if tail is None or (m := tail.match(text, end)) is None:
        return end
    name, words = text[start:end], _WORD.findall(m.group())
    same = all(w.isupper() for w in words) if name.isupper() else all(w[0].isupper() for w in words)
    return m.end() if same else end


def _name_goes_on(text: str, start: int, end: int, until: int) -> int:
    """The end of the name words right after a kind hit at [start, end), up to `until` (a CRF organization span's
    end): Title words after a Title-case kind, or words that are no dictionary word ('[Quellon Freight Lines]'; not
    'Housing Authority apartments', 'SENIOR CENTER TODAY', 'Soup Kitchen assistance')."""
    title = not text[start:end].isupper() and not text[start:end].islower()
    last = end
    for w in _WORD.finditer(text, end, until):
        word = w.group()
        if text[last:w.start()].strip() or not ((title and word[0].isupper() and not word.isupper()) or not is_common(word)):
            break
        last = w.end()
    return last


def _with_state(spans: Sequence[Span], starts: Sequence[int], text: str, end: int) -> int:
    """The entry's end, past a CRF or propagated STATE span one blank after it on its line ('[LIFECENTER NEW
    MEXICO]', a chapter named by its state; round 16)."""
    j = bisect_left(starts, end + 1)
    if j < len(spans) and (s := spans[j]).start == end + 1 and text[end] == " " and s.label == "STATE" and _soft(s) and (
            "\n" not in text[s.start:s.end] and _titled(text[s.start:s.end])):
        return s.end
    return end


def _named_part(s: Span, start: int, end: int, text: str) -> bool:
    """Does span `s` hold, outside the entry at [start, end), a word that is no dictionary word or a known name written
    as one ('Chase [Miller] at Ford': dropping it would leak it; '[North Quell] Council on Aging', 'KAISER
    PERMANENTE REP [WANDA]'; not 'Pharmacy Costco', 'lowe's. country')?"""
    return any(not is_common(word := w.group().strip(".'’-")) or (word[:1].isupper() and is_name(word))
               for lo, hi in ((s.start, start), (end, s.end)) for w in _WORD.finditer(text, lo, hi))


def _after_stop(s: Span, end: int, text: str) -> Span | None:
    """The words of a CRF, name-net or propagated span `s` after the entry ending at `end` and a stop ('(', ',', ';',
    ':'), which ends the organization's name: 'Aetna [(Quell Ames]' keeps 'Quell Ames' as a span, 'MYRIAD GENETICS,
    [MEGHANTON]' read DOCTOR whole keeps its town with that label (round 16)."""
    if not (_soft(s) and s.end > end and _STOP.match(text, end)):
        return None
    words = list(_WORD.finditer(text, end, s.end))
    return Span(words[0].start(), words[-1].end(), s.label, s.source, s.confidence) if words else None


def _after_rep(s: Span, end: int, text: str) -> Span | None:
    """The person a CRF, name-net or propagated ORGANIZATION span `s` names after the entry ending at `end` and a
    payer's or agency's role word ('INSURANCE VERIFIED WITH AETNA REP [FRANCESCA]': a DOCTOR span; round 16)."""
    if not (_soft(s) and s.label == "ORGANIZATION" and s.end > end and (m := _REP.match(text, end, s.end))):
        return None
    words = list(_WORD.finditer(text, m.end(), s.end))
    return Span(words[0].start(), words[-1].end(), "DOCTOR", s.source, s.confidence) if words else None


def _before_stop(s: Span, start: int, text: str) -> Span | None:
    """The words of a CRF, name-net or propagated span `s` before a stop ('(', ',', ';', ':') right before the entry
    starting at `start`: 'School counselor [Quell Ames] ([Hardin Elementary]' keeps its words before the bracket as a
    span with its label (round 16)."""
    if not (_soft(s) and s.start < start and (m := _STOP_BEFORE.search(text, s.start, start))):
        return None
    words = list(_WORD.finditer(text, s.start, m.start()))
    return Span(words[0].start(), words[-1].end(), s.label, s.source, s.confidence) if words else None


def _town_before(spans: Sequence[Span], start: int, text: str) -> Span | None:
    """A CRF, name-net or propagated place span of Title or capital words right before the entry (one blank
    between): the chapter's town ('[Quellton] Council on Aging', '[QUELLTON] YMCA'), which the entry takes in."""
    for s in spans:
        if s.end < start - 1 or s.start >= start:
            continue
        if (s.end == start - 1 and text[s.end] == " " and s.label in _TOWNS and _soft(s)
                and _titled(town := text[s.start:s.end]) and any(w[0].isupper() for w in _WORD.findall(town))
                and _titled(text[start:start + 1])):
            return s
    return None


def _yields(s: Span, start: int, end: int, text: str, tier: int = ANY) -> bool:
    """Does span `s`, overlapping the entry at [start, end), give way to it? A span inside the entry does (a known
    name of the note's metadata or a rule's ORGANIZATION stands, but inside a kind hit: '[KOCH] CONSTRUCTION'); a CRF,
    name-net or propagated person, town or payer reading running past it in the same line (and, but an
    organization's, sentence) is relabelled whole."""
    if s.source == KNOWN_NAME or (s.label == "ORGANIZATION" and not _soft(s) and not (
            tier == KIND and start <= s.start and s.end < end)):
        return False
    if start <= s.start and s.end <= end:
        return True
    if not _soft(s) or "\n" in text[s.start:s.end] or (s.label != "ORGANIZATION" and (
            _SENTENCE_END.search(text, s.start, start) or _SENTENCE_END.search(text, end, s.end))):
        return False  # across a line, or a sentence ('works for Ford. [Chase Ford]' read DOCTOR whole): no one name
    return s.label in _RELABELLED or (s.label == "ORGANIZATION" and (not _named_part(s, start, end, text) or (
        s.start >= start and _STOP.match(text, end) is not None) or (s.start < start and s.end <= end)
        or _after_rep(s, end, text) is not None))


def _soft(s: Span) -> bool:
    """A CRF, name-net or propagated span (not a rule's)."""
    return is_crf(s) or source_kind(s.source) == "names" or s.source.endswith("propagate")
