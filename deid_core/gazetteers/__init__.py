"""Gazetteers: word lists (data/*.txt) compiled once into sets and an Aho-Corasick automaton.

`gazetteer_hits(doc)` finds every whole-word occurrence of any list entry (multi-word
entries included) in one pass over the note; `token_gazetteers(doc)` gives, per token of
`doc.tokens`, the set of list names it belongs to (a CRF feature). Lists are looked up in
lower case with ASCII folding of the text done by `lowered(doc)`.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cache, lru_cache
from operator import itemgetter
from pathlib import Path

import ahocorasick

from deid_core.config.files import load_toml
from deid_core.doc import Doc

DATA = Path(__file__).resolve().parent / "data"
_INDEX = load_toml(DATA / "lists.toml")  # list name -> data files; the lists the automaton scans
LISTS: dict[str, tuple[str, ...]] = {name: tuple(files) for name, files in _INDEX["lists"].items()}
SCANNED: tuple[str, ...] = tuple(_INDEX["scanned"])


def read_list(*files: str) -> frozenset[str]:
    """Entries of the named data files, lower-cased, comments and blanks dropped."""
    out: set[str] = set()
    for name in files:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            word = line.split("#", 1)[0].strip().lower()
            if word:
                out.add(word)
    return frozenset(out)


@cache
def words(list_name: str) -> frozenset[str]:
    """One gazetteer as a frozen set of lower-case entries; KeyError names unknown lists."""
    if list_name not in LISTS:
        raise KeyError(f"unknown gazetteer {list_name!r}; known: {', '.join(sorted(LISTS))}")
    return read_list(*LISTS[list_name])


def is_frequent(word: str) -> bool:
    """True for frequent English words and clinical words/abbreviations (never start a name)."""
    return word.lower() in words("frequent_word")


def is_function_word(word: str) -> bool:
    """True for the hand-written function words and note verbs (frequent_words.txt)."""
    return word.lower() in words("function_word")


def is_common(word: str) -> bool:
    """True for any English dictionary or clinical word (guards ambiguous names such as 'Will')."""
    w = word.lower()
    return w in words("frequent_word") or w in words("english_word")


def is_name(word: str) -> bool:
    """True when the word is a known first or last name."""
    w = word.lower()
    return w in words("first_name") or w in words("last_name")


@lru_cache(maxsize=1)
def automaton() -> ahocorasick.Automaton:
    """The Aho-Corasick automaton over ' entry ' of every scanned list (whole-word matches)."""
    auto = ahocorasick.Automaton()
    entries: dict[str, set[str]] = {}
    for name in SCANNED:
        for entry in words(name):
            entries.setdefault(entry, set()).add(name)
    shared: dict[tuple[int, tuple[str, ...]], tuple[int, tuple[str, ...]]] = {}  # one object per distinct value (~10 MB less)
    for entry, names in entries.items():
        key = f" {_normalize(entry)} "
        value = (len(key) - 2, tuple(sorted(names)))
        auto.add_word(key, shared.setdefault(value, value))
    auto.make_automaton()
    return auto


_TABLE = {i: " " for i in range(128) if not chr(i).isalnum() and chr(i) not in "'"}
_ASCII_TABLE = bytes(32 if i in _TABLE else i for i in range(256))  # _TABLE for ASCII text as bytes


def normalize_phrase(s: str) -> str:
    """A phrase as it appears in `lowered(doc)` (lower case, punctuation as spaces)."""
    return " ".join(_normalize(s).split())


@lru_cache(maxsize=1)
def _rule_entries() -> dict[str, frozenset[str]]:
    """Normalized entry -> lists, for the entries rules can act on: places that are not dictionary
    words (or are multi-word), and names that are not frequent words (a later entry normalizing
    to the same key replaces an earlier one, as an automaton's add_word does)."""
    entries: dict[str, set[str]] = {}
    for name in ("city", "us_state", "country"):
        for entry in words(name):
            if " " in entry or not is_common(entry):
                entries.setdefault(entry, set()).add(name)
    for name in ("first_name", "last_name"):
        for entry in words(name):
            if not is_frequent(entry):
                entries.setdefault(entry, set()).add(name)
    # ~98,000 entries but a handful of distinct sets of lists: one frozenset object each (not one per entry:
    # ~20 MB less per process, and ~97,000 fewer objects for the garbage collector), and the word list's own
    # string as the key where normalizing does not change it
    shared: dict[frozenset[str], frozenset[str]] = {}
    out: dict[str, frozenset[str]] = {}
    for entry, names in entries.items():
        key, lists = _normalize(entry), frozenset(names)
        out[entry if key == entry else key] = shared.setdefault(lists, lists)
    return out


def rule_hits(doc: Doc) -> list[tuple[int, int, frozenset[str]]]:
    """(start, end, list names) of the entries rules act on, ends ascending (starts ascending within
    an end): picked from gazetteer_hits(doc), so the note is scanned by one automaton for both."""
    table = _rule_entries()
    low = lowered(doc)  # an entry [s, e) is low[s + 1:e + 1] (one padding space before the text)
    out = [(s, e, names) for s, e, _ in gazetteer_hits(doc) if (names := table.get(low[s + 1:e + 1])) is not None]
    out.sort(key=itemgetter(1))
    return out


def _normalize(s: str) -> str:
    """Lower case, every ASCII non-alphanumeric except the apostrophe turned into a space."""
    return s.lower().translate(_TABLE)


def lowered(doc: Doc) -> str:
    """' ' + normalized text + ' ', same length plus two: cached on the Doc."""
    return doc.memo("gaz_lowered", lambda: _padded_lower(doc.text))


def _padded_lower(text: str) -> str:
    if text.isascii():  # the same mapping as _TABLE on bytes: one C pass instead of a dict lookup per character
        return " " + text.lower().encode("ascii").translate(_ASCII_TABLE).decode("ascii") + " "
    low = text.lower()
    if len(low) != len(text):  # a few characters lower-case to two code points
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return " " + low.translate(_TABLE) + " "


def gazetteer_hits(doc: Doc) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, list names) of every whole-word gazetteer entry in the note, in text order."""
    return doc.memo("gaz_hits", lambda: _find_hits(lowered(doc)))


def _find_hits(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    out = []
    for end_idx, (length, names) in automaton().iter(text):
        # ' entry ' ends at padded index end_idx (its trailing space = doc offset end_idx - 1).
        end = end_idx - 1
        start = end - length
        out.append((start, end, names))
    out.sort(key=itemgetter(1), reverse=True)  # two stable C-keyed sorts: start ascending, then end descending
    out.sort(key=itemgetter(0))
    return out


def token_gazetteers(doc: Doc) -> list[frozenset[str]]:
    """Per token of doc.tokens: names of the gazetteers with an entry covering the token."""
    _, starts, ends = doc.tokens
    member: list[set[str]] = [set() for _ in starts]
    for s, e, names in gazetteer_hits(doc):
        i = bisect_left(starts, s)
        while i < len(starts) and ends[i] <= e:
            member[i].update(names)
            i += 1
    return [frozenset(m) for m in member]
