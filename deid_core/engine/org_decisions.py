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
from deid_core.engine.propagation import (
    ORGANIZATION_LIST_SOURCE,
    is_crf,
    person_cue_before,
    phrase_alternation,
    source_kind,
)
from deid_core.engine.rules.metadata import SOURCE as KNOWN_NAME
from deid_core.gazetteers import is_common, is_name, lowered, normalize_phrase
from deid_core.spans import Span

SOURCE = ORGANIZATION_LIST_SOURCE  # no propagation seed (engine/propagation.py)
ANY, TITLED, FRAMED = 0, 1, 2  # how a list's entries must be written or framed to be read
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
_STOP = regex.compile(r"[ \t]*[(,;:]")  # after an organization's name: its name ends there
_WORK_UP = r"(?![ \t]*-?[ \t]*(?i:up)(?![\p{L}\d]))"  # 'work-up for IBM', 'worked up for CVS': a clinical work-up
_CLAUSE_END = regex.compile(r"[ \t]*(?:[.,;:!?)\]\n]|\Z)")  # after a lower-case framed name ('lost her job at ups.')
_SENTENCE_END = regex.compile(r"[.!?][ \t]+(?=\p{Lu})")  # 'Ford. Chase Ford': a span across it is two readings
_JOB_LINK = regex.compile(r"[ \t]+(?i:at|for|with|from)[ \t]+(?:the[ \t]+)?\Z")  # '<PROFESSION> with Target'


@lru_cache(maxsize=8)
def frames(frame_words: tuple[str, ...], field_words: tuple[str, ...],
           store_words: tuple[str, ...]) -> tuple[regex.Pattern | None, regex.Pattern | None]:
    """(before, after): a frame right before a framed entry, a frame word of `frame_words` then 'at / for / with /
    by / from / of / in' within the clause, or a field word of `field_words` ('works at Target', 'lost her job at
    ups', 'WORK NOTE FOR UPS', 'employer: UPS', 'pharmacy: cvs'), and a store word of `store_words` right after it
    ('Target pharmacy')."""
    parts = []
    if frame_words:
        parts.append(r"(?:" + phrase_alternation(frame_words) + r")(?![\p{L}\d])" + _WORK_UP + r"[^\n.;:]{0,24}?(?<![\p{L}\d])"
                     r"(?:at|for|with|by|from|of|in)")
    if field_words:
        parts.append(r"(?:" + phrase_alternation(field_words) + r")")
    before = regex.compile(r"(?i:(?<![\p{L}\d])(?:" + "|".join(parts) + r"))[ \t]*[:-]?[ \t]*(?:the[ \t]+)?\Z"
                           ) if parts else None
    after = regex.compile(r"[ \t]+(?i:" + phrase_alternation(store_words) + r")(?![\p{L}\d])") if store_words else None
    return before, after


def list_entries(name: str) -> frozenset[str]:
    """One list file of conf/rules/words: its entries, lower-cased, '#' comments and blank lines dropped."""
    path = conf_dir() / WORDS_DIR / name
    lines = (line.split("#", 1)[0].strip().lower() for line in path.read_text(encoding="utf-8").splitlines())
    return frozenset(e for e in lines if e)


@lru_cache(maxsize=1)
def automaton() -> ahocorasick.Automaton:
    """The Aho-Corasick automaton over ' entry ' of the three lists: value (entry length, how it must be read).
    A one-word entry that is a dictionary or clinical word or a known name ('Dupont', 'Kroger': a doctor's surname),
    also before "'s" ('Wendy's', 'Lowe's': a person's possessive; review15), is read only in a frame."""
    auto = ahocorasick.Automaton()
    tiers: dict[str, int] = {}
    for tier in (ANY, TITLED, FRAMED):
        for entry in list_entries(FILES[tier]):
            key = normalize_phrase(entry)
            stem = key[:-2] if key[-2:] in ("'s", "’s") else None  # 'wendy's', 'lowe's': also a person's possessive
            word = stem or key
            read = FRAMED if " " not in key and (is_common(word) or is_name(word)) else tier
            tiers[key] = max(read, tiers.get(key, ANY))  # an entry in two lists keeps the stricter reading
    for key, tier in tiers.items():
        auto.add_word(f" {key} ", (len(key), tier))
    auto.make_automaton()
    return auto


def entries(tier: int) -> frozenset[str]:
    """The normalized entries read with that tier (ANY, TITLED, FRAMED): for tests and docs."""
    return frozenset(k.strip() for k, (_, t) in automaton().items() if t == tier)


def named_organizations(spans: Sequence[Span], doc: Doc,
                        framing: tuple[regex.Pattern | None, regex.Pattern | None] = (None, None),
                        opts: MergeOptions | None = None) -> list[Span]:
    """ORGANIZATION spans over the listed organizations the note names (see the module's docstring); a framed entry
    needs `framing` (frames(): [merge] organization_frame_words ...) or a profession span before it; a rule's span
    or a known name (metadata) overlapping one stands, and so does a place or other span running past it, and (with
    `opts`) a person span after a title or kin word of [merge] propagate_cue_words / propagate_kin_words ('Dr.
    Nordstrom', 'wife Wendy Kroger')."""
    hits = _hits(doc)
    if not hits:
        return list(spans)
    text = doc.text
    out = sorted(spans, key=lambda s: s.start)
    starts = [s.start for s in out]
    reach = max((s.end - s.start for s in out), default=0)  # the longest span: how far before an entry a rival starts
    for start, end, tier in hits:
        # the spans a decision reads (rivals, a town before them, a profession before the entry) start in this window:
        # each hit reads and rewrites only it, so the pass stays linear in the note (review15)
        i0 = bisect_left(starts, start - 2 * reach - _FRAME_REACH)
        if not _read(text, start, end, tier, out[i0:bisect_left(starts, end)], framing):
            continue
        end = _with_pharmacy(text, start, end)
        i1 = bisect_left(starts, end)
        window = out[i0:i1]
        rivals = [s for s in window if start < s.end]
        if any(not _yields(s, start, end, text) or (opts is not None and s.label in _PERSONS
                                                     and person_cue_before(text, s.start, opts)) for s in rivals):
            continue
        rest = [p for s in rivals if (p := _after_stop(s, end, text)) is not None]
        grown = [s for s in rivals if s.label != "ORGANIZATION"]
        lo = min([start, *(s.start for s in grown)])
        hi = max([end, *(s.end for s in grown)])
        town = _town_before(window, lo, text)
        made = [Span(town.start if town else lo, hi, "ORGANIZATION", SOURCE, 0.9), *rest]
        window = sorted([*(s for s in window if not start < s.end and s is not town), *made], key=lambda s: s.start)
        out[i0:i1] = window
        starts[i0:i1] = [s.start for s in window]
        reach = max(reach, *(s.end - s.start for s in made))
        if i0 + len(window) < len(out) and window and window[-1].start > starts[i0 + len(window)]:
            out.sort(key=lambda s: s.start)  # a span after a stop ('Aetna (Quell Ames') starts past a later span
            starts = [s.start for s in out]
    return sorted(out, key=lambda s: (s.start, s.end))


def _hits(doc: Doc) -> list[tuple[int, int, int]]:
    """(start, end, tier) of the entries in the note, leftmost-longest, none overlapping."""
    found = []
    for end_idx, (length, tier) in automaton().iter(lowered(doc)):
        end = end_idx - 1  # ' entry ' ends at padded index end_idx: its trailing space is doc offset end_idx - 1
        found.append((end - length, end, tier))
    if not found:
        return []
    found.sort(key=lambda h: (h[0], -h[1]))
    out: list[tuple[int, int, int]] = []
    for h in found:
        if not out or h[0] >= out[-1][1]:
            out.append(h)
    return out


def _read(text: str, start: int, end: int, tier: int, spans: Sequence[Span],
          framing: tuple[regex.Pattern | None, regex.Pattern | None]) -> bool:
    """Is the entry at [start, end) a whole token, written or framed as its tier asks?"""
    if (start > 0 and text[start - 1] in _JOINED_BEFORE) or (end < len(text) and (
            text[end] in _JOINED_AFTER or (text[end] == "." and end + 1 < len(text) and text[end + 1].isalnum()))):
        return False
    if tier == ANY:
        return True
    if tier == TITLED:
        return _titled(text[start:end])
    return _framed(text, start, end, spans, framing)


def _titled(name: str) -> bool:
    """Every word but the small ones starts with a capital ('Red Cross', 'BOY SCOUTS'; not 'red cross')."""
    return all(w[0].isupper() or w.lower() in _SMALL for w in _WORD.findall(name))


def _framed(text: str, start: int, end: int, spans: Sequence[Span],
            framing: tuple[regex.Pattern | None, regex.Pattern | None]) -> bool:
    """A store word after the entry, or a work, volunteer, shopping or pharmacy frame before it, or a profession span
    before it and 'at' / 'for' / 'with' ('seismic interpreter with Target'); an entry in lower case needs a store word
    or the end of its clause after it ('lost her job at ups.', not 'shopping for apple juice')."""
    before, after = framing
    if after is not None and after.match(text, end):
        return True
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
    if (m := _PHARMACY.match(text, end)) is None:
        return end
    name, word = text[start:end], m.group(1)
    same = word.isupper() if name.isupper() else word.islower() if name.islower() else word[0].isupper() and word[1:].islower()
    return m.end() if same else end


def _named_part(s: Span, start: int, end: int, text: str) -> bool:
    """Does span `s` hold, outside the entry at [start, end), a word that is no dictionary word or a known name written
    as one ('Chase [Miller] at Ford': dropping it would leak it; '[North Quell] Council on Aging', 'KAISER
    PERMANENTE REP [WANDA]'; not 'Pharmacy Costco', 'lowe's. country')?"""
    return any(not is_common(word := w.group().strip(".'’-")) or (word[:1].isupper() and is_name(word))
               for lo, hi in ((s.start, start), (end, s.end)) for w in _WORD.finditer(text, lo, hi))


def _after_stop(s: Span, end: int, text: str) -> Span | None:
    """The words of a CRF, name-net or propagated ORGANIZATION span `s` after the entry ending at `end` and a stop
    ('(', ',', ';', ':'), which ends the organization's name: 'Aetna [(Quell Ames]' keeps 'Quell Ames' as a span."""
    if not (_soft(s) and s.label == "ORGANIZATION" and s.end > end and _STOP.match(text, end)):
        return None
    words = list(_WORD.finditer(text, end, s.end))
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


def _yields(s: Span, start: int, end: int, text: str) -> bool:
    """Does span `s`, overlapping the entry at [start, end), give way to it? A span inside the entry does (a known
    name of the note's metadata or a rule's ORGANIZATION stands); a CRF, name-net or propagated person, town or
    payer reading running past it in the same line (and, but an organization's, sentence) is relabelled whole."""
    if s.source == KNOWN_NAME or (s.label == "ORGANIZATION" and not _soft(s)):
        return False
    if start <= s.start and s.end <= end:
        return True
    if not _soft(s) or "\n" in text[s.start:s.end] or (s.label != "ORGANIZATION" and (
            _SENTENCE_END.search(text, s.start, start) or _SENTENCE_END.search(text, end, s.end))):
        return False  # across a line, or a sentence ('works for Ford. [Chase Ford]' read DOCTOR whole): no one name
    return s.label in _RELABELLED or (s.label == "ORGANIZATION" and (not _named_part(s, start, end, text) or (
        s.start >= start and _STOP.match(text, end) is not None)))


def _soft(s: Span) -> bool:
    """A CRF, name-net or propagated span (not a rule's)."""
    return is_crf(s) or source_kind(s.source) == "names" or s.source.endswith("propagate")
