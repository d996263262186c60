"""The Deidentifier: tag a note with every configured tagger, merge, replace, build audit rows.

Built once per process (per Python worker on Spark) from a bundle and a configuration, then
reused for every note. A failure in any stage for one note becomes a quarantine result for
that note (fail closed: never its text), and the rest of the batch proceeds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from deid_core import taxonomy
from deid_core.config import Config
from deid_core.doc import Doc
from deid_core.engine.merge import patient_groups
from deid_core.engine.registry import resolve
from deid_core.engine.replace import apply_replacements, mask_token
from deid_core.keys import audit_digest
from deid_core.notes import AuditSpan, Note, NoteResult
from deid_core.spans import Span, resolve_overlaps, validate_spans


class Tagger(Protocol):
    """Anything that finds PHI spans in an analysed note."""

    name: str

    def tag(self, doc: Doc) -> list[Span]: ...


# (doc, spans) -> one replacement string per span; the surrogate modes plug in here.
Replacer = Callable[[Doc, Sequence[Span]], list[str]]


def mask_replacer(doc: Doc, spans: Sequence[Span]) -> list[str]:
    """`mask` mode: every span becomes [**LABEL**]."""
    return [mask_token(s.label) for s in spans]


Merger = Callable[[Sequence[Span]], list[Span]]


class Deidentifier:
    """Taggers + merge policy + replacer + key: turns Notes into NoteResults."""

    def __init__(
        self,
        taggers: Sequence[Tagger],
        *,
        key: bytes,
        merge: Merger = resolve_overlaps,
        replacer: Replacer = mask_replacer,
    ) -> None:
        self.taggers = list(taggers)
        self.key = key
        self.merge = merge
        self.replacer = replacer
        self.fault_hook: Callable[[Note], None] | None = None  # tests: raise for chosen notes

    def tag(self, note: Note) -> list[Span]:
        """Merged, validated, non-overlapping PHI spans of one note."""
        doc = Doc(note)
        return self._tag_doc(doc)

    def _tag_doc(self, doc: Doc) -> list[Span]:
        found: list[Span] = []
        for tagger in self.taggers:
            spans = doc.stage_spans[tagger.name] = tagger.tag(doc)  # later stages may read it
            found.extend(spans)
        merged = self.merge(found, doc=doc) if getattr(self.merge, "wants_doc", False) else self.merge(found)
        validate_spans(merged, len(doc.text))
        return merged

    def process(self, note: Note) -> NoteResult:
        """Tag and replace one note; any exception yields a quarantine result without text."""
        return self.process_many([note])[0]

    def process_many(self, notes: Sequence[Note]) -> list[NoteResult]:
        """Tag, then (merge option propagate_patient) propagate across each patient's notes, then replace.

        Fail closed per note: an exception in one note's stages quarantines that note only; an
        exception in a patient's cross-note step quarantines that patient's notes.
        """
        tagged: list[tuple[Doc, list[Span]] | NoteResult] = [self._tag_or_quarantine(n) for n in notes]
        for idx in self._patient_groups(notes, [not isinstance(t, NoteResult) for t in tagged]):
            try:
                spread = self.merge.patient([(notes[i].text, tagged[i][1]) for i in idx])
                for i, spans in zip(idx, spread, strict=True):
                    validate_spans(spans, len(notes[i].text))
                    tagged[i] = (tagged[i][0], spans)
            except Exception as exc:  # noqa: BLE001 - fail closed for the patient's notes
                for i in idx:
                    tagged[i] = NoteResult(notes[i].note_id, notes[i].patient_id, error_stage="tag",
                                           error_class=type(exc).__name__)
        return [t if isinstance(t, NoteResult) else self._replace_or_quarantine(n, *t)
                for n, t in zip(notes, tagged, strict=True)]

    def tag_many(self, notes: Sequence[Note]) -> list[list[Span]]:
        """Merged spans of several notes, with the cross-note step of process_many (evaluation)."""
        out = [self.tag(n) for n in notes]
        for idx in self._patient_groups(notes, [True] * len(notes)):
            for i, spans in zip(idx, self.merge.patient([(notes[i].text, out[i]) for i in idx]), strict=True):
                out[i] = spans
        return out

    def _patient_groups(self, notes: Sequence[Note], ok: Sequence[bool]) -> list[list[int]]:
        """Indices of each patient's (two or more) tagged notes, when the merge propagates across notes."""
        if not getattr(self.merge, "across_notes", False):
            return []
        return patient_groups([n.patient_id if good else None for n, good in zip(notes, ok, strict=True)])

    def _tag_or_quarantine(self, note: Note) -> tuple[Doc, list[Span]] | NoteResult:
        stage = "validate"
        try:
            if not isinstance(note.text, str):
                raise TypeError("text is null")
            stage = "tag"
            if self.fault_hook is not None:
                self.fault_hook(note)
            doc = Doc(note)
            return doc, self._tag_doc(doc)
        except Exception as exc:  # noqa: BLE001 - fail closed: any error quarantines the note
            return NoteResult(note.note_id, note.patient_id, error_stage=stage, error_class=type(exc).__name__)

    def _replace_or_quarantine(self, note: Note, doc: Doc, spans: list[Span]) -> NoteResult:
        try:
            reps = self.replacer(doc, spans)
            out_text, offsets = apply_replacements(note.text, spans, reps)
            pid = note.patient_id or ""
            audit = [
                AuditSpan(
                    start=s.start,
                    end=s.end,
                    label=s.label,
                    category=taxonomy.category_of(s.label),
                    source=s.source,
                    confidence=float(s.confidence),
                    out_start=o[0],
                    out_end=o[1],
                    replacement=r,
                    original_digest=audit_digest(self.key, pid, note.text[s.start : s.end]),
                )
                for s, r, o in zip(spans, reps, offsets, strict=True)
            ]
            return NoteResult(note.note_id, note.patient_id, out_text, audit)
        except Exception as exc:  # noqa: BLE001 - fail closed: any error quarantines the note
            return NoteResult(note.note_id, note.patient_id, error_stage="replace", error_class=type(exc).__name__)


def build_deidentifier(config: Config, bundle, key: bytes) -> Deidentifier:
    """The Deidentifier a configuration asks for: [pipeline] stages, merge policy, mode.

    Stages and replacers are named in conf/deidentify.toml ([registry.stages],
    [registry.modes], [registry.merge]) as 'module:factory'. A stage factory takes
    (config, bundle) and returns a Tagger; a mode factory takes (config, key) and returns a
    Replacer; a merge factory takes (config) and returns a Merger. The names were checked
    against the registry when the configuration was loaded.
    """
    pipe, registry = config.pipeline, config.registry
    taggers = [resolve(registry.stages[s])(config, bundle) for s in pipe.stages]
    replacer = resolve(registry.modes[pipe.mode])(config, key)
    merge = resolve(registry.merge[pipe.merge])(config)
    return Deidentifier(taggers, key=key, merge=merge, replacer=replacer)


def longest_merge(config: Config) -> Merger:
    """Factory for the default merge: overlapping spans resolved longest-first."""
    return resolve_overlaps
