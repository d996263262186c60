"""Output-mode factories (surrogate, redact, hash) and the per-label dispatching Replacer.

A mode factory is `(config, key) -> Replacer` ([registry.modes] in conf/deidentify.toml). The
global mode is `[pipeline] mode`; `[surrogates.label_modes]` overrides it per label; in surrogate
mode each label's generator is named by `[surrogates.generators]` (generators.py). Every choice
comes from a keyed hash of (key, scope, label or category, normalized original): no state is
shared between notes, batches, partitions or executors.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import regex

from deid_core import taxonomy
from deid_core.config import Config
from deid_core.doc import Doc
from deid_core.engine.generations import Generations
from deid_core.engine.replace import mask_token
from deid_core.engine.surrogates.consistency import normalize, scope_of
from deid_core.engine.surrogates.dates import DateShifter
from deid_core.engine.surrogates.generators import GENERATORS, PURE, WHOLE, NoteCtx
from deid_core.engine.surrogates.locations import LocationSurrogates
from deid_core.engine.surrogates.names import NameSurrogates
from deid_core.engine.surrogates.settings import MODES, label_mode
from deid_core.keys import keyed_digest
from deid_core.notes import Note
from deid_core.spans import Span

SURROGATE_MEMO = 16_384  # memo entries of a Replacer (~200 B each; the job's patients come in a row)
_MISSING = object()
_NONSPACE = regex.compile(r"\S")
_YY = regex.compile(r"\d\d")


def redact(original: str, filler: str = "X") -> str:
    """Same-length filler: one filler char per non-space char, whitespace and newlines kept."""
    return _NONSPACE.sub(filler, original)


class ModeReplacer:
    """The Replacer: one replacement per span, by the label's mode (default or overridden)."""

    def __init__(self, config: Config, key: bytes, default_mode: str) -> None:
        if default_mode not in MODES:
            raise ValueError(f"unknown mode {default_mode!r}; accepted: {', '.join(MODES)}")
        self.config = config
        self.settings = settings = config.surrogates
        self.key = key
        self.default_mode = default_mode
        self.safe_harbor = settings.profiles[settings.profile].safe_harbor
        # the Safe Harbor profile always truncates ZIP codes
        self.zip_policy = "truncate" if self.safe_harbor else settings.zip.policy
        self.filler = settings.redact.filler
        self.hash_digits = settings.hash.digits
        self.max_redraws = settings.max_redraws
        self.generic = frozenset(w.casefold() for w in settings.generic_words)
        self.names = NameSurrogates(settings)
        self.dates = DateShifter(settings.dates)
        self.places = LocationSurrogates(settings, self.names.pools)
        self.name_keep = self.names.keep
        # Labels whose surrogates are consistent over the whole corpus, not per patient.
        self.global_labels = frozenset(settings.global_labels)
        self.generators = {label: GENERATORS[name] for label, name in settings.generators.items()}
        self.pure = frozenset(label for label, name in settings.generators.items() if name in PURE)
        # Surrogates of pure generators and first candidates of pure drawn ones, per (key, scope, label,
        # original[, note year]): a patient's repeated mentions (~1 in 4 spans) skip the keyed draws.
        self.memo: Generations[tuple, str | None] = Generations(SURROGATE_MEMO)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (shipped to Spark workers): the memo is left behind."""
        state = dict(self.__dict__)
        state["memo"] = Generations(SURROGATE_MEMO)
        return state

    # -- the Replacer protocol --------------------------------------------------------------
    def __call__(self, doc: Doc, spans: Sequence[Span]) -> list[str]:
        """One replacement string per span (spans sorted and non-overlapping)."""
        note = doc.note
        originals = [doc.text[s.start:s.end] for s in spans]
        ctx = NoteCtx(
            key=self.key,
            scope=scope_of(note),
            note=note,
            originals=originals,
            note_year=note.note_date.year if note.note_date else None,
            name_originals=[o for s, o in zip(spans, originals, strict=True) if _category(s.label) == "NAME"],
        )
        out = []
        for s, o in zip(spans, originals, strict=True):
            if s.label == "DATE" and _YY.fullmatch(o) and self._two_digit_year(doc.text, s):
                # "'09" or "CABG 81" annotated without an apostrophe: a two-digit year.
                rep = self.replace_one(ctx, s.label, "'" + o)
                if rep.startswith("'"):
                    rep = rep[1:]
                elif rep.isdigit() and len(rep) == 4:  # safe_harbor year: keep two digits
                    rep = rep[2:]
                out.append(rep)
            else:
                out.append(self.replace_one(ctx, s.label, o))
        return out

    def _two_digit_year(self, text: str, s: Span) -> bool:
        """A bare two-digit DATE span read as a year ('09, 74', or any when so configured)."""
        if self.mode_of("DATE") != "surrogate":
            return False
        quoted = (s.start > 0 and text[s.start - 1] in "'’") or (s.end < len(text) and text[s.end] in "'’")
        return quoted or self.dates.bare_two_digits == "year"

    def shift_note_date(self, note: Note) -> dt.date | None:
        """The note's `note_date` moved by its patient's date shift (None stays None), so a
        `note_date` column written next to the text agrees with the dates inside it."""
        if note.note_date is None:
            return None
        return note.note_date + dt.timedelta(days=self.dates.shift_days(self.key, scope_of(note)))

    def mode_of(self, label: str) -> str:
        """The effective mode of a label."""
        return label_mode(self.config, label, self.default_mode)

    def replace_one(self, ctx: NoteCtx, label: str, original: str) -> str:
        """The replacement of one original string of a label."""
        if label in self.global_labels and label != "DATE":
            ctx = ctx.as_global
        mode = self.mode_of(label)
        if mode == "mask":
            return mask_token(label)
        if mode == "redact":
            return redact(original, self.filler)
        if mode == "hash":
            return self.hash_token(ctx, label, original)
        rep = self.surrogate(ctx, label, original)
        return mask_token(label) if rep is None else rep

    def hash_token(self, ctx: NoteCtx, label: str, original: str) -> str:
        """[LABEL-xxxxxxxx]: keyed digest of (scope, category, normalized original)."""
        cat = _category(label)
        norm = self._norm(cat, original)
        return f"[{label}-{keyed_digest(ctx.key, ctx.scope, cat, norm)[: self.hash_digits]}]"

    def _norm(self, category: str, original: str) -> str:
        norm = normalize(original)
        if category == "NAME":
            norm = " ".join(t for t in norm.split() if t not in self.name_keep)
        return norm

    # -- surrogates -------------------------------------------------------------------------
    def surrogate(self, ctx: NoteCtx, label: str, original: str) -> str | None:
        """A realistic surrogate from the label's generator ([surrogates.generators]), or None when
        the original cannot be handled (caller masks)."""
        if label not in self.pure:
            return self.generators[label](self, ctx, label, original)
        key = (WHOLE, ctx.key, ctx.scope, label, original, ctx.note_year)
        rep = self.memo.get(key, _MISSING)
        if rep is _MISSING:
            rep = self.generators[label](self, ctx, label, original)
            self.memo.put(key, rep)
        return rep  # type: ignore[return-value]


def _category(label: str) -> str:
    try:
        return taxonomy.category_of(label)
    except KeyError:
        return ""


def mask_mode(config: Config, key: bytes) -> ModeReplacer:
    """Factory for `mask` ([**LABEL**]), honouring per-label overrides in [surrogates.label_modes]."""
    return ModeReplacer(config, key, "mask")


def surrogate_mode(config: Config, key: bytes) -> ModeReplacer:
    """Factory for the `surrogate` mode (default)."""
    return ModeReplacer(config, key, "surrogate")


def redact_mode(config: Config, key: bytes) -> ModeReplacer:
    """Factory for the `redact` mode."""
    return ModeReplacer(config, key, "redact")


def hash_mode(config: Config, key: bytes) -> ModeReplacer:
    """Factory for the `hash` mode."""
    return ModeReplacer(config, key, "hash")
