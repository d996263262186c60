"""The Deidentifier: tag a note with every configured tagger, merge, replace, build audit rows.

Built once per process (per Python worker on Spark) from a bundle and a configuration, then
reused for every note. A failure in any stage for one note becomes a quarantine result for
that note (fail closed: never its text), and the rest of the batch proceeds.
"""

from __future__ import annotations

from collections.abc import Sequence

from deid_core import taxonomy
from deid_core.config import Config
from deid_core.doc import Doc
from deid_core.engine.contract import (
    CrossNoteStep,
    FaultHook,
    MergeStep,
    NoteState,
    Replacer,
    Stage,
    check_stages,
)
from deid_core.engine.crossnote import spread_across_notes
from deid_core.engine.profiles import OutputProfile, output_profile
from deid_core.engine.registry import resolve
from deid_core.engine.replace import apply_replacements
from deid_core.keys import audit_digest
from deid_core.notes import AuditSpan, Note, NoteResult
from deid_core.spans import Span, resolve_overlaps, validate_spans


class Deidentifier:
    """Stages + merge step + replacer + key (+ output profile): turns Notes into NoteResults."""

    def __init__(self, stages: Sequence[Stage], *, key: bytes, merge: MergeStep, replacer: Replacer,
                 fault_hook: FaultHook | None = None, profile: OutputProfile | None = None) -> None:
        check_stages(stages)  # every stage gets what it needs from an earlier one, or we refuse
        self.stages = list(stages)
        self.key = key
        self.merge = merge
        self.cross_note: CrossNoteStep | None = merge.cross_note()
        self.replacer = replacer
        self.fault_hook = fault_hook  # test suite only (deid_core.app.batch.make_deidentifier)
        self.profile = profile  # what of the detected spans is output ([surrogates] profile)

    def tag(self, note: Note) -> list[Span]:
        """Merged, validated, non-overlapping PHI spans of one note (those its output profile outputs)."""
        return self._output(note, self._tag_doc(Doc(note)))

    def _output(self, note: Note, spans: list[Span]) -> list[Span]:
        """The spans the output profile outputs (spans it drops are not PHI under its conventions)."""
        return spans if self.profile is None else self.profile.select(note.text, spans)

    def _tag_doc(self, doc: Doc) -> list[Span]:
        state = NoteState()
        found: list[Span] = []
        for stage in self.stages:
            spans = state.spans[stage.name] = stage.run(doc, state)
            found.extend(spans)
        merged = self.merge(found, doc, state)
        validate_spans(merged, len(doc.text))
        return merged

    def process(self, note: Note) -> NoteResult:
        """Tag and replace one note; any exception yields a quarantine result without text."""
        return self.process_many([note])[0]

    def process_many(self, notes: Sequence[Note]) -> list[NoteResult]:
        """Tag, then spread across each patient's notes (the merge's cross-note step), then replace.

        Fail closed per note: an exception in one note's stages quarantines that note only; an
        exception in a patient's cross-note step quarantines that patient's notes.
        """
        tagged = [self._tag_or_quarantine(n) for n in notes]
        failed: dict[int, NoteResult] = {}

        def quarantine(idx: list[int], exc: Exception) -> None:
            for i in idx:
                failed[i] = NoteResult(notes[i].note_id, notes[i].patient_id, error_stage="tag",
                                       error_class=type(exc).__name__)

        spans = spread_across_notes(self.cross_note, notes,
                                    [None if isinstance(t, NoteResult) else t[1] for t in tagged], quarantine)
        out = []
        for i, (note, t) in enumerate(zip(notes, tagged, strict=True)):
            if isinstance(t, NoteResult):
                out.append(t)
            elif i in failed:
                out.append(failed[i])
            else:
                out.append(self._replace_or_quarantine(note, t[0], spans[i]))
        return out

    def tag_many(self, notes: Sequence[Note]) -> list[list[Span]]:
        """Merged spans of several notes, with the cross-note step of process_many (evaluation)."""
        spread = spread_across_notes(self.cross_note, notes, [self._tag_doc(Doc(n)) for n in notes])
        return [self._output(n, s) for n, s in zip(notes, spread, strict=True)]

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
            spans = self._output(note, spans)
            reps = self.replacer(doc, spans)
            if self.profile is not None:
                reps = self.profile.replacements(note.text, spans, reps)
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


def build_stage(config: Config, name: str, bundle) -> Stage:
    """The stage [registry.stages] registers as `name`, built from the typed config (and bundle)."""
    return resolve(config.registry.stages[name])(config, bundle)


def build_deidentifier(config: Config, bundle, key: bytes, *, fault_hook: FaultHook | None = None) -> Deidentifier:
    """The Deidentifier a configuration asks for: [pipeline] stages, merge policy, mode.

    Stages, modes and merges are named in conf/deidentify.toml ([registry.stages],
    [registry.modes], [registry.merge]) as 'module:factory': a stage factory takes (config,
    bundle) and returns a Stage; a mode factory takes (config, key) and returns a Replacer; a
    merge factory takes (config) and returns a MergeStep (deid_core/engine/contract.py); the output
    profile ([surrogates] profile) decides what of the detected spans is output. The
    names were checked against the registry when the configuration was loaded; stages whose
    needs no earlier stage provides are refused here, before any note.
    """
    pipe, registry = config.pipeline, config.registry
    stages = [build_stage(config, s, bundle) for s in pipe.stages]
    replacer = resolve(registry.modes[pipe.mode])(config, key)
    merge = resolve(registry.merge[pipe.merge])(config)
    return Deidentifier(stages, key=key, merge=merge, replacer=replacer, fault_hook=fault_hook,
                        profile=output_profile(config))


class LongestMerge:
    """The `longest` merge: overlapping spans resolved longest-first; no reconciliation, no cross-note step."""

    def __call__(self, spans: Sequence[Span], doc: Doc | None = None, state: NoteState | None = None) -> list[Span]:
        return resolve_overlaps(spans)

    def cross_note(self) -> CrossNoteStep | None:
        """None: spans stay within their note."""
        return None


def longest_merge(config: Config) -> LongestMerge:
    """Factory for the `longest` merge."""
    return LongestMerge()
