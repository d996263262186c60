"""Place label decisions after the merge policy (issue 14, round 13: places on unseen layouts): a place span
cut after the cue words it took in before the name ('Attends [Quell Counseling]', 'WHO WORKS FOR [QUELL PLC]'), and a state
abbreviation written right after a town span made a STATE span ('Quellton, [MA], regarding', 'quellton [nh]'), and
a person span whose records are cited made an ORGANIZATION ('per son Ray and [Corvane Pharmacy] records'); before
it, a name-net span cut where a deciding place rule stands ('travel to [Brazil] January 2015' is no 'Brazil
January'). Configured by [merge] place_lead_words, state_after_town, organization_record_words and
rule_label_sources."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import cache, lru_cache

import regex

from deid_core.engine.label_decisions import parts_outside
from deid_core.engine.propagation import is_crf, phrase_alternation, source_kind
from deid_core.engine.rules.filters import country_reading
from deid_core.engine.rules.place_words import place_words
from deid_core.engine.vetoes import PERSON
from deid_core.gazetteers import is_common, is_frequent, is_name, words
from deid_core.spans import Span, source_in

_PLACES = frozenset({"HOSPITAL", "ORGANIZATION", "LOCATION-OTHER", "CITY", "COUNTRY", "STATE", "STREET"})
_NAMED = frozenset({"HOSPITAL", "ORGANIZATION"})  # 'the [Holy Name Hospital]', not 'The Oaks at X', 'the Berkshires'
_LEAD_WORD = regex.compile(r"(\p{L}+)[ \t]+")
# After a town: ', ' or blanks, an optional '(', two letters, then no letter, digit or word joiner ('MA,', 'NH\n', 'ID)').
_STATE_AFTER = regex.compile(r"(?:,[ \t]?|[ \t]{1,2})\(?(\p{L}{2})(?![\p{L}\d'’@/-])")


def trim_place_leads(spans: Sequence[Span], text: str, lead_words: frozenset[str]) -> list[Span]:
    """Place spans (any source: the merge joins a CRF span and a rule's) without the lead words (lower-cased;
    `lead_words`) they open with: 'Attends [Quell Counseling Associates]', 'choosing [Quell Health]', 'NOTE FOR
    [QUELL PLC]', 'from the [Holy Name Hospital]' (a lower-case 'the' before a hospital or an organization; 'The
    Oaks at Quellton' keeps it); one word at least is left. A capitalised lead word inside a sentence may be the
    name's own ('Via Quellis Hospital', 'Work Memorial'): it goes only when it is a function word ('TO', 'For'),
    opens the sentence, or comes before another lead word that goes ('WORKS FOR')."""
    if not lead_words:
        return list(spans)
    out: list[Span] = []
    for s in spans:
        if s.label in _PLACES:
            start = _trimmed_start(s, text, lead_words)
            if start != s.start and start < s.end:
                s = Span(start, s.end, s.label, s.source, s.confidence)
        out.append(s)
    return out


_FUNCTION_LEADS = frozenset({"for", "at", "to", "from", "with", "by", "who"})  # open no place name
_SENTENCE_START = regex.compile(r"(?:\A|[.!?:;(\n*•-])[ \t]*\Z")


def _trimmed_start(s: Span, text: str, lead_words: frozenset[str]) -> int:
    """Where `s` starts once the lead words it may lose are cut (see trim_place_leads)."""
    leads: list[regex.Match] = []
    pos = s.start
    while (m := _LEAD_WORD.match(text, pos, s.end)) and (m.group(1).lower() in lead_words or (
            m.group(1) == "the" and s.label in _NAMED)):
        leads.append(m)
        pos = m.end()
    ok = [False] * len(leads)
    for k in range(len(leads) - 1, -1, -1):  # from the last: a capital cue goes before one that goes
        w = leads[k].group(1)
        ok[k] = (w.islower() or w.lower() in _FUNCTION_LEADS or (k + 1 < len(leads) and ok[k + 1])
                 or (k == 0 and bool(_SENTENCE_START.search(text, max(0, s.start - 4), s.start))))
    start = s.start
    for m, go in zip(leads, ok, strict=True):
        if not go:
            break
        start = m.end()
    return start


@cache
def _state_abbreviations() -> frozenset[str]:
    """The gazetteer's US state abbreviations (lower case) but 'md', which after a name is the credential."""
    return words("us_state_abbr") - {"md"}


_LOWER_WORDS = frozenset({"in", "or", "me", "hi", "oh", "id", "de", "la", "al", "co"})
_CLOSED = regex.compile(r"\)|[.;]?[ \t]*(?:\n|\Z)|[.;][ \t]")  # what closes an address: 'quellton, in.', '(Quellton, ma)'
_TITLE_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:dr|doctor|prof|professor|mr|mrs|ms|miss)\.?[ \t]+\Z")


_IN_PARENS = regex.compile(r"[ \t]{1,2}\(\p{L}{2}")  # 'quellton (sc)': a lower-case state in parentheses after a town
# A town span that took in its capital state abbreviation after one or two blanks: 'lives in [Quellbury UT] with'.
_TOWN_THEN_STATE = regex.compile(r"(\p{L}[\p{L}'’.-]*(?:[ \t]+\p{L}[\p{L}'’.-]*)*)[ \t]{1,2}(\p{Lu}{2})")


def split_town_states(spans: Sequence[Span], text: str) -> list[Span]:
    """A CITY span of a town and a capital US state abbreviation after one or two blanks ('lives in [Quellbury UT]
    with', 'from [Quellfurt AZ] via') is two spans: the town (CITY) and the state (STATE); not VA, a veterans'
    hospital after its town ('Quellborough VA'). Round 16."""
    out: list[Span] = []
    for s in spans:
        if s.label == "CITY" and s.end - s.start > 4 and text[s.end - 1].isupper() and text[s.end - 2].isupper() and (
                m := _TOWN_THEN_STATE.fullmatch(text, s.start, s.end)) and (
                abbr := m.group(2).lower()) in _state_abbreviations() and abbr != "va":
            out.append(Span(s.start, m.end(1), "CITY", s.source, s.confidence))
            out.append(Span(m.start(2), s.end, "STATE", s.source, s.confidence))
            continue
        out.append(s)
    return out


_MD_ZIP = regex.compile(r"[ \t]+\d{5}(?:-\d{4})?(?![\w-])")


def _maryland_after(t: Span, text: str, m: regex.Match) -> bool:
    """'MD' after a town's span and a comma is Maryland, not a credential, when a ZIP follows ('East Quellton, [MD]
    39915') or the address closes ('lives alone in Quellville, [md].', '(East Quellton, [MD])'): the town's span
    says it is an address (a titled name is left out by the caller: 'Dr. Quellan, MD'). Round 17. Round 18: or alone in
    parentheses right after a rule's town ('LIVES WITH HER SON IN [QUELLSBERG] ([MD])'; a CRF's 'Ann Quell (MD)' stays)."""
    if "(" in m.group(0):  # 'IN [QUELLSBERG] (MD);': only after a rule's town, the abbreviation alone in parentheses
        return not is_crf(t) and not t.source.endswith("propagate") and text.startswith(")", m.end())
    if text[t.end] != ",":
        return False
    if _MD_ZIP.match(text, m.end()):
        return True
    return _CLOSED.match(text, m.end()) is not None


def state_after_town(spans: Sequence[Span], text: str) -> list[Span]:
    """A US state abbreviation right after a CITY span and in no span made a STATE span: 'from Quellton, [MA],
    regarding', 'Quellton [NH]' at a line end, 'Quellton ([ID])'; in lower case only after a comma, and after a lower-case town no English
    word ('quellton, [ct]', not 'quellton in 2010') unless the address closes there ('quellton, [in].', '(Quellton, [ma])'); never after a titled name ('Dr. Quellan, PA'). The town's span says it is an address, which a bare 'MA' or 'in' does not.
    After a rule's town, a capital abbreviation the CRF alone read as another label is the state ('- Quell, Ann -
    Springfield [IL]' read DOCTOR)."""
    spans = split_town_states(spans, text)
    towns = [s for s in spans if s.label == "CITY"]
    if not towns:
        return list(spans)
    taken = sorted((s.start, s.end) for s in spans)
    starts = [a for a, _ in taken]
    added: list[Span] = []
    relabel: dict[tuple[int, int], float] = {}
    for t in towns:
        m = _STATE_AFTER.match(text, t.end)
        if m is None:
            continue
        abbr = m.group(1)
        town = text[t.start:t.end]
        if abbr.lower() == "md" and _maryland_after(t, text, m):
            pass
        elif abbr.lower() not in _state_abbreviations() or not (abbr.isupper() or (abbr.islower() and (
                text[t.end] == "," or _IN_PARENS.fullmatch(m.group(0)) and text.startswith(")", m.end())) and (
                (town.islower() and abbr not in _LOWER_WORDS) or _CLOSED.match(text, m.end())))):
            continue
        if _TITLE_BEFORE.search(text, max(0, t.start - 12), t.start):
            continue  # 'Dr. Quellan, PA': a titled surname the CRF read as a town; 'PA' is a credential
        a, b = m.span(1)
        i = bisect_left(starts, b)  # spans starting before the abbreviation's end; the last ones may cover it
        if any(taken[j][1] > a for j in range(max(0, i - 2), i)):
            if not is_crf(t) and abbr.isupper():  # review16: a rule's town cut a CRF 'Springfield IL' (DOCTOR)
                cover = [s for s in spans if s.start < b and s.end > a]
                if len(cover) == 1 and (cover[0].start, cover[0].end) == (a, b) and is_crf(cover[0]) and cover[0].label != "STATE":
                    relabel[(a, b)] = t.confidence
            continue
        added.append(Span(a, b, "STATE", "state-after-town", t.confidence))
    if relabel:
        spans = [Span(s.start, s.end, "STATE", "state-after-town", relabel[(s.start, s.end)])
                 if (s.start, s.end) in relabel and is_crf(s) else s for s in spans]
    if not added:
        return list(spans)
    return sorted([*spans, *added], key=lambda s: (s.start, s.end))


_LISTED_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:and|per)[ \t]+\Z")  # 'per X records', 'per son Ray and X records'
_STORE = r"(?:[ \t]+(?:Pharmacy|PHARMACY|pharmacy|Drug[ \t]Store|DRUG[ \t]STORE|drug[ \t]store|Apothecary|APOTHECARY|apothecary))?"


@lru_cache(maxsize=8)
def _records_after(words: tuple[str, ...]) -> regex.Pattern | None:
    """An optional store kind ('Pharmacy', 'Drug Store', 'Apothecary') then a record word, after a span."""
    if not words:
        return None
    return regex.compile(r"(" + _STORE + r")[ \t]+(?i:" + phrase_alternation(words) + r")(?![\p{L}\d])")


def person_records_organizations(spans: Sequence[Span], text: str, record_words: Sequence[str]) -> list[Span]:
    """A person span (any source) right before a record word (`record_words`: 'records', 'fill history'), or
    before a store kind and one ('[Corvane] Pharmacy records'), is the organization keeping them: an ORGANIZATION
    span over the name and the kind ('per son Ray and [Corvane Pharmacy] records', 'per [OptumRx] fill history'),
    when 'per' or 'and' opens it ('S: Ann Lee records from...' and 'per Dr. Ames records' stay). Spans inside the
    kind are dropped."""
    after = _records_after(tuple(record_words))
    if after is None:
        return list(spans)
    lowered = text.lower()
    if not any(w.split()[0].lower() in lowered for w in record_words):
        return list(spans)  # a literal prefilter: most notes cite no records
    grown: dict[int, Span] = {}
    for i, s in enumerate(spans):
        if s.label in PERSON and (m := after.match(text, s.end)) and _LISTED_BEFORE.search(
                text, max(0, s.start - 12), s.start):
            grown[i] = Span(s.start, m.end(1), "ORGANIZATION", s.source, s.confidence)
    if not grown:
        return list(spans)
    kinds = sorted((g.start, g.end) for g in grown.values())
    starts = [a for a, _ in kinds]
    out: list[Span] = []
    for i, s in enumerate(spans):
        if i in grown:
            out.append(grown[i])
            continue
        j = bisect_right(starts, s.start) - 1  # the grown span starting last at or before s (they do not overlap)
        if j < 0 or s.end > kinds[j][1]:
            out.append(s)  # not inside a grown span: spans inside its store kind are dropped
    return out


def place_rules_cut_net(spans: Sequence[Span], text: str, sources: Sequence[str]) -> list[Span]:
    """Name-net spans keep only their parts outside the place spans of the deciding rules (`sources`: [merge]
    rule_label_sources), as rule_labels_win does to CRF spans: the union merge would otherwise join 'Brazil'
    (COUNTRY, 'travel to Brazil') and the net's 'Brazil January' into one span of another label."""
    places = sorted((s for s in spans if s.label in _PLACES and source_in(s.source, sources)),
                    key=lambda p: p.start) if sources else []
    if not places:
        return list(spans)
    starts = [p.start for p in places]
    longest = max(p.end - p.start for p in places)
    out: list[Span] = []
    for s in spans:
        rivals = None
        if source_kind(s.source) == "names":  # places starting within the longest one's length before s
            lo, hi = bisect_left(starts, s.start - longest), bisect_left(starts, s.end)
            rivals = [p for p in places[lo:hi] if p.overlaps(s)]
        out.extend(parts_outside(s, rivals, text) if rivals else [s])
    return out


TOWN_BEFORE_STATE_LABELS = frozenset({"STATE", "LOCATION-OTHER", "ORGANIZATION", "HOSPITAL"})  # CRF readings of a town
_TO_STATE = regex.compile(r",[ \t]?|[ \t]{1,2}")


def towns_before_states(spans: Sequence[Span], text: str, heads: dict[str, str]) -> list[Span]:
    """A CRF or propagated place span right before ', ' and a STATE span that names a US state ('[Quellton], VT',
    '[quellton], vermont'; blanks only before a capital abbreviation: '[Quellton] VT') is that address's town: CITY,
    whatever place label it had (STATE, LOCATION-OTHER, ORGANIZATION, HOSPITAL). A place named by its head word
    (`heads`: 'Quell Hospital, VT'), a state's or a country's name, and a span across a line stay."""
    out = list(spans)
    for k in range(len(out) - 1):
        a, b = out[k], out[k + 1]
        if b.label != "STATE" or a.label not in TOWN_BEFORE_STATE_LABELS or not (
                is_crf(a) or a.source.endswith("propagate")) or not (gap := _TO_STATE.fullmatch(text, a.end, b.start)):
            continue
        state = " ".join(text[b.start:b.end].lower().split())
        if not (state in words("us_state") or (state in _state_abbreviations() and (
                "," in gap.group(0) or text[b.start:b.end].isupper()))):
            continue
        town = " ".join(text[a.start:a.end].lower().split())
        last = town.split()
        if "\n" in text[a.start:a.end] or town in words("us_state") or town in words("country") or last[-1] in heads or (
                len(last) > 1 and " ".join(last[-2:]) in heads):
            continue
        out[k] = a.with_label("CITY")
    return out


_GAZETTEER_RELABELLED = frozenset({"CITY", "HOSPITAL", "ORGANIZATION", "LOCATION-OTHER", "STREET", "STATE", "COUNTRY"})
_TOWN_TOO = place_words("town_named_states")  # a state named as its town: the town reading stands


def _gazetteer_label(surface: str) -> str | None:
    """STATE for a US state's name, COUNTRY for a country's (in lower case only one that is no common word), else None."""
    low = " ".join(surface.lower().split())
    if low in words("us_state") and low not in _TOWN_TOO:
        return "STATE"
    if country_reading(surface, low):
        return "COUNTRY"
    return None


_KNOWN_TOWN_RELABELLED = frozenset({"LOCATION-OTHER", "ORGANIZATION"})
_PREPOSITION_BEFORE = regex.compile(r"(?<![\p{L}'’-])(?i:in|from|of)[ \t]+\Z")  # not 'near' or 'to' a landmark
# Last words of a known town's name that also end a landmark or a region ('South Shore', 'Golden Gate', 'Quell
# Park'): conf/rules/words/places.toml ('Fall River', 'Myrtle Beach', 'Cedar Falls' stay towns).
_LANDMARK_ENDS = (place_words("landmark_last_words") | place_words("town_after_preposition_landmark_words")
                  | (place_words("landmark_town_words") - place_words("town_after_preposition_town_words")))


def _known_town_after_preposition(s: Span, text: str) -> bool:
    """A CRF or propagated span of two or more words, a known town's whole name ('fall river'; not one ending in a
    landmark word), right after 'in', 'from' or 'of' (not 'near' or 'to': 'MVC near Niagara Falls' is a landmark): the
    CRF's LOCATION-OTHER or ORGANIZATION reading of a town in a phrase ('grew up in [Fall River]'). Round 17."""
    if not (is_crf(s) or s.source.endswith("propagate")):
        return False
    low = " ".join(text[s.start:s.end].lower().split())
    return (" " in low and low in words("city") and low.rsplit(" ", 1)[1] not in _LANDMARK_ENDS
            and _PREPOSITION_BEFORE.search(text, max(0, s.start - 12), s.start) is not None)


_LAST_WORDS = regex.compile(r"[ \t]+(?=\p{Lu})")


def towns_then_countries(spans: Sequence[Span], text: str) -> list[Span]:
    """A CITY span whose last one to three capitalised words, after a blank, name a country is a town and that country:
    two spans ('grew up in [Zandrowstad] [Norway] and moved', read one CITY span by a frame); not when the whole span
    is a known town or a US state ('New Jersey'), nor 'Georgia' (a US state too). Round 18."""
    out: list[Span] = []
    for s in spans:
        if s.label == "CITY" and (parts := _country_tail(s, text)):
            out.extend(parts)
            continue
        out.append(s)
    return out


def _country_tail(s: Span, text: str) -> tuple[Span, Span] | None:
    """(town, country) of a CITY span ending in a country's name after a blank, or None."""
    surface = text[s.start:s.end]
    if " " not in surface and "\t" not in surface:
        return None
    low = " ".join(surface.lower().split())
    if low in words("city") or low in words("us_state"):
        return None
    cuts = [m.start() for m in _LAST_WORDS.finditer(surface)]
    for cut in cuts[-3:]:  # the longest tail first: 'Quellton [Trinidad and Tobago]'
        tail = surface[cut:].strip()
        if country_reading(tail, " ".join(tail.lower().split())):
            head_end = s.start + cut
            return (Span(s.start, head_end, "CITY", s.source, s.confidence),
                    Span(s.end - len(tail), s.end, "COUNTRY", s.source, s.confidence))
    return None


_BODY_OF = regex.compile(r"(\p{L}+)[ \t]+(?i:of)")
_LOCAL_BODIES = place_words("town_body_words")  # 'town', 'city', 'village': 'Town of X' names the town X


def _body_of_town(s: Span, nxt: Span | None, text: str) -> bool:
    """Whether `s` is only a local body's word and 'of' ('Town of', 'CITY OF') right before a CITY span one blank on:
    the CRF's ORGANIZATION 'Town of Quellsbury' that a town rule cut ('works for the [Town of] [Quellsbury] highway
    department'), whose leftover names no one. Round 18."""
    return (nxt is not None and nxt.label == "CITY" and nxt.start == s.end + 1 and text[s.end] in " \t"
            and (m := _BODY_OF.fullmatch(text, s.start, s.end)) is not None and m.group(1).lower() in _LOCAL_BODIES)


def gazetteer_place_labels(spans: Sequence[Span], text: str) -> list[Span]:
    """A place span (any source) that is a whole US state's or country's name takes that label ('winters in
    [South Quell]' read CITY stays; 'winters in [South Carolina]' is a STATE, 'from [FRANCE]' read CITY a COUNTRY);
    two place or name spans one blank apart that together name a state are one STATE span ('west' CITY +
    'virginia' STATE, 'new' STATE + 'york' DOCTOR after a town and a comma). 'New York' and 'Washington' keep a
    town reading, 'Georgia' a state reading. A CITY span that opens a longer country's name is that country
    (countries_over_towns); a CRF LOCATION-OTHER or ORGANIZATION span that is a known town of two or more words after
    a preposition is a CITY ('grew up in [Fall River]'); 'New York' or 'Washington' read CITY right after a town and
    a comma is its state ('Port Quellfurt, [New York], 29056')."""
    out: list[Span] = []
    spans = towns_then_countries(countries_over_towns(spans, text), text)
    for i, s in enumerate(spans):
        if out and (prev := out[-1]).end + 1 == s.start and text[prev.end] in " \t" and (
                prev.label in _PLACES or s.label in _PLACES):
            joined = text[prev.start:s.end].lower()
            if " " in joined and joined in words("us_state") and (
                    joined not in _TOWN_TOO or text[max(0, prev.start - 2):prev.start] == ", "):
                out[-1] = Span(prev.start, s.end, "STATE", prev.source, max(prev.confidence, s.confidence))
                continue
        if s.label in _GAZETTEER_RELABELLED and (label := _gazetteer_label(text[s.start:s.end])) and label != s.label and not (
                label == "COUNTRY" and s.label in _NAMED):  # 'transferred to [Jordan]': a hospital named after a person
            s = s.with_label(label)
        elif s.label == "CITY" and out and out[-1].label == "CITY" and text[out[-1].end:s.start] in (", ", ",") and (
                " ".join(text[s.start:s.end].lower().split()) in _TOWN_TOO):
            s = s.with_label("STATE")  # 'Port Quellfurt, [New York], 29056': the state of the town before it
        elif s.label in _KNOWN_TOWN_RELABELLED and _known_town_after_preposition(s, text):
            s = s.with_label("CITY")
        elif s.label in _PLACES and is_crf(s) and text[s.start:s.end].lower() in _FUNCTION_LEADS:
            continue  # a function word left of a CRF place a town rule cut ('from Quellfield [to] Quellbury')
        elif s.label in _PLACES and is_crf(s) and _body_of_town(s, spans[i + 1] if i + 1 < len(spans) else None, text):
            continue  # '[Town of] Quellsbury': the CRF's body word left of the town a rule cut out of it (round 18)
        out.append(s)
    return out


@cache
def _long_countries() -> dict[str, tuple[str, ...]]:
    """The known countries of three or more words by first word (lower case), longest first."""
    by_first: dict[str, list[str]] = {}
    for c in words("country"):
        if len(parts := c.split()) >= 3:
            by_first.setdefault(parts[0], []).append(c)
    return {k: tuple(sorted(v, key=len, reverse=True)) for k, v in by_first.items()}


_BLANKS = regex.compile(r"[ \t]+")


def countries_over_towns(spans: Sequence[Span], text: str) -> list[Span]:
    """A CITY span (a town frame's, or the CRF's) that opens a known country's name of three or more words is one
    COUNTRY span over the whole name, taking in the spans inside it ('visiting from [South Georgia] and the [South
    Sandwich Islands]', 'moved to [Trinidad] and Tobago' stays: two words). Round 17."""
    long = _long_countries()
    out: list[Span] = []
    grown_to = -1
    for s in spans:
        if s.end <= grown_to:
            continue  # inside a country made here
        if s.start < grown_to:
            s = Span(grown_to, s.end, s.label, s.source, s.confidence) if s.end > grown_to else s
        if s.label == "CITY" and (names := long.get(text[s.start:s.end].split(None, 1)[0].lower())):
            line_end = text.find("\n", s.start)
            tail = _BLANKS.sub(" ", text[s.start:line_end if line_end >= 0 else len(text)]).lower()
            for name in names:
                if tail.startswith(name) and not tail[len(name):len(name) + 1].isalnum():
                    end, seen = s.start, 0  # map the name's length back over runs of blanks
                    while seen < len(name):
                        m = _BLANKS.match(text, end)
                        end, seen = (m.end(), seen + 1) if m else (end + 1, seen + 1)
                    if end > s.end:
                        s = Span(s.start, end, "COUNTRY", s.source, s.confidence)
                        grown_to = end
                    break
        out.append(s)
    return out


def town_labels(spans: Sequence[Span], text: str, sources: Sequence[str]) -> list[Span]:
    """The towns a strong frame found (CITY spans of the `sources` rules: an address line, 'lives in', '<town>, <ST>')
    are towns wherever the note writes them: a CRF or propagated span of the same string (any case) with another
    place or person label is relabelled CITY ('lives in [Quellton], MA' ... 'returned to [Quellton]' read HOSPITAL).
    A town that is a known first or last name leaves person spans alone ('Jackson, MS' ... 'Dr. Jackson')."""
    towns = {text[s.start:s.end].lower() for s in spans if s.label == "CITY" and source_in(s.source, sources)} if sources else set()
    if not towns:
        return list(spans)
    out: list[Span] = []
    for s in spans:
        if s.label != "CITY" and (s.label in _PLACES or s.label in PERSON) and (key := text[s.start:s.end].lower()) in towns \
                and (source_kind(s.source).startswith("crf") or s.source.endswith("propagate")) \
                and not (s.label in PERSON and any(is_name(w) for w in key.split())):
            s = s.with_label("CITY")
        out.append(s)
    return out


_EMPLOYER_AFTER = regex.compile(r"[ \t]+(?:at|for)[ \t]+(?:the[ \t]+)?")
_EMPLOYER_WORD = regex.compile(r"\p{L}[\p{L}'’&-]*(?<=\p{L}|')")
_EMPLOYER_JOIN = regex.compile(r"[ \t]+")
_CARE_WORDS = place_words("employer_care_words")  # a place of care, no employer
_EMPLOYER_LABELS = _PLACES | PERSON


def _employer_run(text: str, pos: int) -> tuple[int, int] | None:
    """Up to three name words from `pos` (none a frequent, clinical or care word, nor a lower-case word after a Title or
    capital one; a lone lower-case dictionary word is no name: 'teacher at school', 'nurse at night')."""
    found: list[tuple[int, int]] = []
    while len(found) < 3 and (m := _EMPLOYER_WORD.match(text, pos)):
        w = m.group(0)
        low = w.lower().removesuffix("'s").removesuffix("’s")
        if is_frequent(low) or low in words("medical_word") or low in _CARE_WORDS:
            if not found or low in _CARE_WORDS:
                return None  # a clinical first word, or a place of care: the hospital rules' reading stands
            break
        if found and w.islower() and not text[found[0][0]:found[0][1]].islower():
            break  # a lower-case word after a Title or capital name is no part of it ('teacher for Quellton students')
        found.append(m.span())
        if not (j := _EMPLOYER_JOIN.match(text, m.end())):
            break
        pos = j.end()
    if not found:
        return None
    if len(found) == 1:
        w = text[found[0][0]:found[0][1]]
        if w.islower() and is_common(w.lower()):
            return None
    return found[0][0], found[-1][1]


def profession_employers(spans: Sequence[Span], text: str) -> list[Span]:
    """The name right after a profession span and 'at' / 'for' is the employer: an ORGANIZATION span over it ('roofer
    at [Quellmart]', 'works as a bookseller at [quell-ames]'), replacing the CRF's, the name net's or propagation's
    readings of it ('Quellmart' read PATIENT); a rule's span there stands, and so does a place of care ('nurse at
    Quell Hospital')."""
    jobs = [s for s in spans if s.label == "PROFESSION"]
    if not jobs:
        return list(spans)
    new: list[Span] = []
    for p in jobs:
        if (m := _EMPLOYER_AFTER.match(text, p.end)) and (run := _employer_run(text, m.end())):
            new.append(Span(run[0], run[1], "ORGANIZATION", "profession-employer", p.confidence))
    if not new:
        return list(spans)
    ordered = sorted(spans, key=lambda s: s.start)
    starts = [s.start for s in ordered]
    longest = max((s.end - s.start for s in ordered), default=0)
    dropped: set[int] = set()
    kept: list[Span] = []
    for n in new:  # spans starting within the longest one's length before the run may overlap it
        near = [k for k in range(bisect_left(starts, n.start - longest), bisect_left(starts, n.end))
                if ordered[k].overlaps(n)]
        rivals = [ordered[k] for k in near]
        if any(not (is_crf(s) or source_kind(s.source) == "names" or s.source.endswith("propagate"))
               or s.label not in _EMPLOYER_LABELS or "\n" in text[min(s.start, n.start):max(s.end, n.end)] for s in rivals):
            continue  # a rule decided there, or a span of another kind or line
        dropped.update(near)
        kept.append(Span(min([n.start] + [s.start for s in rivals]), max([n.end] + [s.end for s in rivals]),
                         "ORGANIZATION", n.source, n.confidence))
    if not kept:
        return list(spans)
    return sorted([*(s for k, s in enumerate(ordered) if k not in dropped), *kept], key=lambda s: (s.start, s.end))


GROWN_LABELS = _GROWN = frozenset({"HOSPITAL", "ORGANIZATION", "LOCATION-OTHER"})  # the labels grow_place_heads grows
_NEXT_WORDS = regex.compile(r"[ \t]+(\p{L}+)(?:[ \t]+(\p{L}+))?")
_LAST_WORD = regex.compile(r"\p{L}+(?=[^\p{L}]*\Z)")
_WORD_REACH = 40  # characters read at a span's end for its last word (linear on a crafted long span)


def grow_place_heads(spans: Sequence[Span], text: str, heads: dict[str, str]) -> list[Span]:
    """A named place (HOSPITAL, ORGANIZATION, LOCATION-OTHER) cut before its head word grows over it ('[Quellton
    High] School' -> '[Quellton High School]'; `heads`: place_heads, two words before one), so that place_head_labels
    reads the head; the head is written like the name (a Title or capital head after a Title or capital name, any
    after a lower-case one: not '[Quell] general surgery') and is in no span; a span that ends in a head already
    stays ('[Quell Hospital] General Surgery')."""
    if not heads:
        return list(spans)
    out = list(spans)
    for k, s in enumerate(out):
        if s.label not in _GROWN or not (m := _NEXT_WORDS.match(text, s.end)):
            continue
        two = f"{m.group(1)} {m.group(2)}".lower() if m.group(2) else None
        end = m.end(2) if two in heads else m.end(1) if m.group(1).lower() in heads else None
        if end is None or (k + 1 < len(out) and out[k + 1].start < end) or not (
                text[s.start:s.end].islower() or text[m.start(1)].isupper()):
            continue
        if (last := _LAST_WORD.search(text, max(s.start, s.end - _WORD_REACH), s.end)) and last.group(0).lower() in heads:
            continue  # a span that ends in its head already ('Quell Hospital' before 'General Surgery') stays
        out[k] = Span(s.start, end, s.label, s.source, s.confidence)
    return out


STREET_SHAPED_LABELS = frozenset({"HOSPITAL", "ORGANIZATION", "LOCATION-OTHER", "PHONE"})  # CRF readings of a street
# A house number and one to five words (the whole span), or a name, ', ' and such a street (the span's tail).
_HOUSE_STREET = regex.compile(r"\d{1,6}[ \t]+(\p{L}[\p{L}'’.-]*(?:[ \t]+\p{L}[\p{L}'’.-]*){0,4})")
_NAME_THEN_STREET = regex.compile(r"[^\n]*?\p{L},[ \t]+(?=\d)")
_NO_STREET_END = _CARE_WORDS | place_words("ward_last_words")  # '1199 Quell Hospital', '7 Quell North'
# a unit, a town or the line's end follows a street, or the next column (a tab or two blanks: the letterhead's town)
_ADDRESS_GOES_ON = regex.compile(r"[ \t]*(?:[,;#\n]|\Z)|(?:\t|[ ]{2,})(?=\S)")
_SUFFIXES = place_words("street_suffixes")
_PERSON_SUFFIXES = place_words("person_street_suffixes")  # no common surname: 'bed 12 Ann Park' stays a person
_STREET_WORDS = regex.compile(r"\p{L}[\p{L}'’.-]*(?:[ \t]+\p{L}[\p{L}'’.-]*){0,3}")  # a street's name and suffix
_NUMBER_BEFORE = regex.compile(r"(?<![\w/.,:#-])\d{1,6}[ \t]+")  # a house number right before a span
_NUMBER_REACH = 8  # characters read before a span for its house number


def street_numbers(spans: Sequence[Span], text: str) -> list[Span]:
    """A CRF place or phone span that is a house number and up to five words, where the address goes on (',', ';', '#',
    a line end), is a STREET ('lives alone at [00952 quell key], west quellton' read HOSPITAL, 'mailed to [2449 Quell
    Place] #8' read PHONE); a CRF place span '<name>, <house number> <words>' gives that tail to a STREET span
    ('[QUELL AID], [965 QUELLER STATION], QUELLAND'). Two words at least; a place of care or a ward ('1199 Quell
    Hospital', '7 Quell North', '5 West') stays."""
    out: list[Span] = []
    for s in spans:
        if (street := _suffixed_street(s, text, out[-1].end if out else 0)) is not None:
            out.append(street)
            continue
        if s.label not in STREET_SHAPED_LABELS or not is_crf(s) or not _ADDRESS_GOES_ON.match(text, s.end):
            out.append(s)
            continue
        cut = s.start
        if not text[s.start].isdigit():
            if s.label == "PHONE" or not (m := _NAME_THEN_STREET.match(text, s.start, s.end)):
                out.append(s)
                continue
            cut = m.end()
        street = _HOUSE_STREET.fullmatch(text, cut, s.end)
        if street is None or len(names := street.group(1).split()) < 2 or names[-1].lower().rstrip(".") in _NO_STREET_END:
            out.append(s)
            continue
        if cut > s.start:  # the name before the street keeps its label, without the comma
            out.append(Span(s.start, text.rindex(",", s.start, cut), s.label, s.source, s.confidence))
        out.append(Span(cut, s.end, "STREET", s.source, s.confidence))
    return out


def _suffixed_street(s: Span, text: str, free_from: int) -> Span | None:
    """A STREET span for a CRF person or place span of one to four words ending in a street suffix (a person span: one
    that is no common surname) that starts with a house number or comes right after one in no span (`free_from`:
    where the text is free of spans): '12 [birch road]' read DOCTOR, '[12 birch lane] in quellton' read HOSPITAL;
    not 'bed 12 [Ann Park]'; else None."""
    start = s.start
    if not (text[start].isdigit() or (start > 1 and text[start - 2].isdigit() and text[start - 1] in " \t")) or not (
            s.label in PERSON or s.label in STREET_SHAPED_LABELS) or s.label == "PHONE" or not is_crf(s):
        return None  # no house number at or right before the span: most spans stop at the first test
    if text[start].isdigit():
        if not (m := _NUMBER_BEFORE.match(text, start, s.end)):
            return None
        words_at = m.end()
    else:
        lo = max(free_from, s.start - _NUMBER_REACH)
        m = next((n for n in _NUMBER_BEFORE.finditer(text, lo, s.start) if n.end() == s.start), None)
        if m is None:
            return None
        start, words_at = m.start(), s.start
    if not (name := _STREET_WORDS.fullmatch(text, words_at, s.end)) or len(parts := name.group(0).split()) < 2 or \
            parts[-1].lower().rstrip(".") not in (_PERSON_SUFFIXES if s.label in PERSON else _SUFFIXES):
        return None
    return Span(start, s.end, "STREET", s.source, s.confidence)


_LANDMARK_LAST = place_words("landmark_last_words")  # few towns end in these: any CRF place reading is a landmark
_LANDMARK_TOWN_TOO = place_words("landmark_town_words")  # many towns end in these: a CITY reading stands
_LANDMARK_SERVICE = place_words("landmark_service_words")  # 'Fire Station', 'Nurses Station': a service, no landmark
LANDMARK_LABELS = frozenset({"CITY", "ORGANIZATION", "HOSPITAL"})  # CRF readings of a landmark
_SPAN_WORDS = regex.compile(r"\p{L}[\p{L}'’.-]*")
_NEXT_WORD = regex.compile(r"[ \t](\p{L}+)(?![\p{L}\d'’-])")
_LANDMARK_REACH = 60  # characters of a span read for its words (a landmark's name is short)


def _landmark_last(words_: list[str]) -> str | None:
    """The landmark word (one or two words, lower case) that ends `words_`, else None."""
    if len(words_) > 1 and (two := f"{words_[-2]} {words_[-1]}".lower()) in _LANDMARK_LAST:
        return two
    last = words_[-1].lower()
    return last if last in _LANDMARK_LAST or last in _LANDMARK_TOWN_TOO else None


def landmark_heads(spans: Sequence[Span], text: str) -> list[Span]:
    """A CRF or propagated place span named by a landmark's last word (conf/rules/words/places.toml) is a landmark
    (LOCATION-OTHER): '[South Station]' read ORGANIZATION, '[Quell Pond]' read CITY; a span cut right before such a
    word, both Title or capital, the word in no span and no street's ('NEAR [SOUTH] STATION', not 'Quell Station
    Rd'), grows over it. Words many towns end in ('Park',
    'Beach', 'Falls') leave a CITY reading; a service or a ward named by its kind ('Fire Station', 'Nurses
    Station') and a one-word span stay. Round 16."""
    out = list(spans)
    for k, s in enumerate(out):
        if s.label not in LANDMARK_LABELS or not (is_crf(s) or s.source.endswith("propagate")) or s.end - s.start > _LANDMARK_REACH:
            continue
        end = s.end
        if (m := _NEXT_WORD.match(text, s.end)) and (k + 1 >= len(out) or out[k + 1].start >= m.end(1)) and (
                (w := m.group(1)).lower() in _LANDMARK_LAST or w.lower() in _LANDMARK_TOWN_TOO) and (
                w.isupper() == text[s.start:s.end].isupper()) and w[0].isupper() and text[s.start].isupper() and not (
                (after := _NEXT_WORD.match(text, m.end(1))) and after.group(1).lower() in _SUFFIXES):
            end = m.end(1)  # cut right before its Title or capital landmark word (not a street's: 'Quell Station Rd')
        words_ = _SPAN_WORDS.findall(text, s.start, end)
        if len(words_) < 2 or any(w.lower() in _LANDMARK_SERVICE for w in words_[:-1]) or "\n" in text[s.start:end]:
            continue
        last = _landmark_last(words_)
        if last is None or (s.label == "CITY" and last not in _LANDMARK_LAST):
            continue
        out[k] = Span(s.start, end, "LOCATION-OTHER", s.source, s.confidence)
    return out
