"""Surrogate re-insertion (seed 004, Uzuner et al. 2008 §5): real notes, every gold PHI replaced by
new strings of one kind, gold spans moved with the insertion.

Kinds: `random` (the engine's keyed surrogates of each label: names from the name pools, shifted
dates, places, numbers), `ambiguous` (person and place words that are also dictionary or medical
words, drawn from the project's gazetteers: names intersected with the english/common/medical
word lists), `oov` (random letter strings with name shapes, in no gazetteer: "O. Ymfgi"), and
`lower` / `upper` (the random kind with every person name lower- or upper-cased). Labels other
than names and places get the random surrogates in every kind.

A patient's names map token by token, the same way in all of that patient's notes and in the
note metadata (known_phi), so the metadata still names the patient as a hospital's registry would.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import regex

from deid_core import gazetteers, taxonomy
from deid_core.config import Config, load_config
from deid_core.doc import Doc
from deid_core.engine.replace import apply_replacements
from deid_core.engine.surrogates.consistency import keyed_rng, keyed_seed, match_case, scope_of
from deid_core.engine.surrogates.modes import ModeReplacer
from deid_core.notes import Note
from deid_core.spans import Span, sort_spans

KINDS = ("random", "ambiguous", "oov", "lower", "upper")
_WORD = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")
MIN_WORD = 3  # ambiguous words shorter than this ("ed", "he") are not used as names


def is_person(label: str) -> bool:
    """PATIENT, DOCTOR (names of people; USERNAME has its own surrogates)."""
    return category(label) == "NAME" and label != "USERNAME"


def category(label: str) -> str:
    """The label's main category ('' outside the taxonomy)."""
    try:
        return taxonomy.category_of(label)
    except KeyError:
        return ""


@lru_cache(maxsize=1)
def dictionary_words() -> frozenset[str]:
    """English, common and medical words of the gazetteers (lower case, one word each)."""
    return gazetteers.words("english_word") | gazetteers.words("frequent_word")


@lru_cache(maxsize=1)
def ambiguous_pools() -> dict[str, tuple[str, ...]]:
    """Names that are also words, by kind: first names, last names, medical words, places."""
    words = dictionary_words()
    medical = gazetteers.words("medical_word")

    def keep(entries: frozenset[str], pool: frozenset[str]) -> tuple[str, ...]:
        return tuple(sorted(w for w in entries & pool if w.isalpha() and len(w) >= MIN_WORD))

    first, last = gazetteers.words("first_name"), gazetteers.words("last_name")
    return {
        "first": keep(first, words), "last": keep(last, words), "medical": keep(first | last, medical),
        "place": keep(gazetteers.words("city") | last, words),
    }


@lru_cache(maxsize=1)
def known_strings() -> frozenset[str]:
    """Every word of every gazetteer and of the surrogate name pools: what an OOV name avoids."""
    out: set[str] = set()
    for name in gazetteers.LISTS:
        for entry in gazetteers.words(name):
            out.update(entry.split())
    pools = ModeReplacer(load_config(), b"k" * 16, "surrogate").names.pools
    out |= pools.male | pools.female | pools.last_set | pools.more_male | pools.more_female
    return frozenset(out)


class Inserter:
    """Replacement strings of one kind for a patient's gold spans (keyed: same input, same output)."""

    def __init__(self, kind: str, key: bytes, config: Config) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown re-insertion kind {kind!r}; expected one of {', '.join(KINDS)}")
        self.kind, self.key = kind, key
        self.engine = ModeReplacer(config, key, "surrogate")
        self.names = self.engine.names
        self.keep = self.names.keep | self.engine.generic

    def replacements(self, note: Note, spans: Sequence[Span], forbidden: frozenset[str]) -> list[str]:
        """One new string per span (spans sorted, non-overlapping); `forbidden`: the patient's name words."""
        out = self.engine(Doc(note), spans)
        scope = scope_of(note)
        for i, s in enumerate(spans):
            original = note.text[s.start:s.end]
            if is_person(s.label):
                out[i] = self.person(scope, original, forbidden)
            elif category(s.label) == "LOCATION" and self.kind in ("ambiguous", "oov"):
                out[i] = _WORD.sub(lambda m: self._place_token(scope, m.group(0), forbidden), original)
        return out

    def person(self, scope: str, original: str, forbidden: frozenset[str], *, recase: bool = True) -> str:
        """A person name in this kind, consistent within the scope (`recase` False: metadata keeps its case)."""
        if self.kind in ("random", "lower", "upper"):
            rep = self.names.replace(self.key, scope, original, forbidden)
            if recase and self.kind != "random":
                rep = rep.lower() if self.kind == "lower" else rep.upper()
            return rep
        return _WORD.sub(lambda m: self._name_token(scope, m.group(0), forbidden), original)

    def _name_token(self, scope: str, tok: str, forbidden: frozenset[str]) -> str:
        norm = tok.casefold()
        if norm.rstrip(".") in self.names.keep:
            return tok
        if len(tok) == 1:
            return match_case(tok, self.names.letter_map(self.key, scope).get(tok.upper(), "Q"))
        pool = "last" if self.names.kind(norm) == "last" else "first"
        return match_case(tok, self.word(scope, pool, norm, forbidden).capitalize())

    def _place_token(self, scope: str, tok: str, forbidden: frozenset[str]) -> str:
        norm = tok.casefold()
        if len(tok) == 1 or norm in self.keep or gazetteers.is_function_word(norm):
            return tok
        if tok.isupper() and len(tok) <= 4:  # an abbreviation ("GH"): other letters, same shape
            rng = keyed_rng(self.key, scope, "reinsert-abbr", norm)
            letters = "ABCDEFGHJKLMNPRSTVWY"
            return "".join(rng.choice(letters.replace(c, "")) for c in tok)
        return match_case(tok, self.word(scope, "place", norm, forbidden).capitalize())

    def word(self, scope: str, pool: str, norm: str, forbidden: frozenset[str]) -> str:
        """The new word for an original word (lower case): ambiguous or OOV, never the original."""
        for attempt in range(50):
            if self.kind == "oov":
                cand = oov_word(self.key, scope, norm, attempt)
            else:
                pools = ambiguous_pools()
                seed = keyed_seed(self.key, scope, "reinsert-ambiguous", pool, norm, str(attempt))
                use = "medical" if pool != "place" and seed % 2 and pools["medical"] else pool
                cand = pools[use][(seed >> 1) % len(pools[use])]
            if cand != norm and cand not in forbidden:
                return cand
        raise ValueError("no re-insertion word found after 50 draws")


def oov_word(key: bytes, scope: str, norm: str, attempt: int = 0) -> str:
    """A random lower-case letter string of 4-8 letters that is in no gazetteer (a made-up name)."""
    rng = keyed_rng(key, scope, "reinsert-oov", norm, str(attempt))
    known = known_strings()
    while True:
        cand = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 8)))
        if cand not in known:
            return cand


def insert(text: str, spans: Sequence[Span], replacements: Sequence[str]) -> tuple[str, list[Span]]:
    """The text with each span replaced, and the spans moved onto their replacements (gold stays exact)."""
    out, offsets = apply_replacements(text, spans, replacements)
    return out, [Span(a, b, s.label, s.source) for s, (a, b) in zip(spans, offsets, strict=True)]


def disjoint(spans: Sequence[Span]) -> list[Span]:
    """Gold spans with overlapping ones joined (label of the longest): one replacement each."""
    out: list[Span] = []
    for s in sort_spans(spans):
        if out and s.start < out[-1].end:
            last = out[-1]
            label = last.label if len(last) >= len(s) else s.label
            out[-1] = Span(last.start, max(last.end, s.end), label, last.source)
        else:
            out.append(s)
    return out


def name_words(texts: Sequence[str]) -> frozenset[str]:
    """Case-folded words of person names (spans and metadata): no new name may reuse one."""
    return frozenset(w.casefold() for t in texts for w in _WORD.findall(t))


def reinsert(notes: Sequence[Note], gold: dict[str, list[Span]], kind: str, key: bytes,
             config: Config) -> tuple[list[Note], dict[str, list[Span]]]:
    """The notes with every gold PHI replaced by a new string of `kind`, and the moved gold spans.

    `config`: the surrogate settings that draw the strings (conf/evaluation/reinsert.toml over conf/).

    Metadata names (known_phi) of a person label are mapped like the notes' names of the patient.
    """
    ins = Inserter(kind, key, config)
    out_notes: list[Note | None] = [None] * len(notes)
    out_gold: dict[str, list[Span]] = {}
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(notes):
        groups.setdefault(scope_of(n), []).append(i)
    for idx in groups.values():
        spans = {i: disjoint(gold.get(notes[i].note_id, [])) for i in idx}
        names = [notes[i].text[s.start:s.end] for i in idx for s in spans[i] if is_person(s.label)]
        names += [v for v, lab in notes[idx[0]].known_phi if is_person(lab)]
        forbidden = name_words(names)
        for i in idx:
            n = notes[i]
            text, moved = insert(n.text, spans[i], ins.replacements(n, spans[i], forbidden))
            known = tuple((ins.person(scope_of(n), v, forbidden, recase=False) if is_person(lab) else v, lab)
                          for v, lab in n.known_phi)
            out_notes[i] = Note(n.note_id, text, n.patient_id, n.note_date, known)
            out_gold[n.note_id] = moved
    return [n for n in out_notes if n is not None], out_gold
