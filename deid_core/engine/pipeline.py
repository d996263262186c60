"""The Deidentifier: tag a note with every configured tagger, merge, replace, build audit rows.

Built once per process (per Python worker on Spark) from a bundle and a configuration, then
reused for every batch of notes: each stage runs over the whole batch before the next (the
token CRF scores a batch at once); long notes are tagged alone, in windows. A failure in any
stage for one note becomes a quarantine result for that note (fail closed: never its text), and
the rest of the batch proceeds; so does a note that overruns its CPU budget (engine/budget.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from deid_core import taxonomy
from deid_core.config import Config
from deid_core.doc import Doc
from deid_core.engine import budget
from deid_core.engine.contract import (
    CrossNoteStep,
    FaultHook,
    MergeStep,
    NoteState,
    Outcome,
    PerNoteStage,
    Replacer,
    Stage,
    check_stages,
    spans_or_raise,
)
from deid_core.engine.crossnote import spread_across_notes
from deid_core.engine.guards import guard_line_breaks
from deid_core.engine.profiles import OutputProfile, output_profile
from deid_core.engine.registry import resolve
from deid_core.engine.replace import apply_replacements
from deid_core.engine.windows import tag_in_windows
from deid_core.keys import audit_digest
from deid_core.notes import AuditSpan, Note, NoteResult
from deid_core.spans import Span, resolve_overlaps, validate_spans
from deid_core.text.normalize import TextView, normalize_text, normalize_value


@dataclass
class Tagged:
    """A tagged note: the view the taggers read (normalized text), its map back, merged spans on the view."""

    doc: Doc
    view: TextView
    spans: list[Span]
    cpu_s: float = 0.0  # CPU seconds spent tagging it (the replace step gets the rest of the budget)

    def original_spans(self) -> list[Span]:
        """The spans as offsets into the original text (covering characters the view removed)."""
        if self.view.same_offsets:
            return self.spans
        return [replace(s, start=a, end=b) for s in self.spans for a, b in [self.view.original_span(s.start, s.end)]]


def matching_view(note: Note) -> tuple[Note, TextView]:
    """The note as taggers read it (text and known names normalized for matching) and the map back."""
    view = normalize_text(note.text)
    if view.text == note.text and all(normalize_value(v) == v for v, _ in note.known_phi):
        return note, view
    return replace(note, text=view.text, known_phi=tuple((normalize_value(v), lab) for v, lab in note.known_phi)), view


@dataclass(frozen=True)
class NoteLimits:
    """Per-note limits ([pipeline]): CPU budget (engine/budget.py) and windows for long notes (engine/windows.py).

    None: no CPU limit / never windowed (a Deidentifier built by hand; build_deidentifier sets the configured ones).
    """

    cpu_s: float | None = None
    cpu_s_per_mb: float | None = None  # and this much more per million characters
    window_chars: int | None = None
    window_overlap_chars: int = 0

    def seconds(self, chars: int) -> float | None:
        """CPU seconds a note of `chars` characters may take, None without a limit."""
        return budget.note_seconds(self.cpu_s, self.cpu_s_per_mb, chars)

    def windowed(self, chars: int) -> bool:
        """Is a note of `chars` characters tagged in windows?"""
        return self.window_chars is not None and chars > self.window_chars


class Deidentifier:
    """Stages + merge step + replacer + key (+ output profile): turns Notes into NoteResults."""

    def __init__(self, stages: Sequence[Stage], *, key: bytes, merge: MergeStep, replacer: Replacer,
                 fault_hook: FaultHook | None = None, limits: NoteLimits | None = None,
                 profile: OutputProfile | None = None) -> None:
        check_stages(stages)  # every stage gets what it needs from an earlier one, or we refuse
        self.stages = list(stages)
        self.key = key
        self.merge = merge
        self.cross_note: CrossNoteStep | None = merge.cross_note()
        self.replacer = replacer
        self.fault_hook = fault_hook  # test suite only (deid_core.app.batch.make_deidentifier)
        self.limits = limits or NoteLimits()
        self.profile = profile  # what of the detected spans is output ([surrogates] profile)

    def tag(self, note: Note) -> list[Span]:
        """Merged, validated, non-overlapping PHI spans of one note (offsets into its original text; those
        its output profile outputs)."""
        return self._output(note, _tagged_or_raise(self._analyse_many([note])[0]).original_spans())

    def _output(self, note: Note, spans: list[Span]) -> list[Span]:
        """The spans the output profile outputs (spans it drops are not PHI under its conventions)."""
        return spans if self.profile is None else self.profile.select(note.text, spans)

    def _analyse_many(self, notes: Sequence[Note]) -> list[Tagged | Exception]:
        """Tag the notes' matching views: long notes one by one in windows, the others as one batch,
        stage by stage; per note its Tagged (spans on the view) or the exception that stopped it."""
        out: list[Tagged | Exception | None] = [None] * len(notes)
        batch: list[int] = []
        docs: dict[int, tuple[Doc, TextView]] = {}
        for i, note in enumerate(notes):
            try:
                vnote, view = matching_view(note)
                docs[i] = (Doc(vnote), view)
                if self.limits.windowed(len(vnote.text)):
                    with budget.note_budget(self.limits.seconds(len(note.text))) as spent:
                        out[i] = self._windowed(*docs[i], spent)
                else:
                    batch.append(i)
            except budget.NoteTimeout as exc:
                out[i] = exc
            except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                out[i] = exc
        budgets = [budget.Budget(self.limits.seconds(len(notes[i].text)), active=False) for i in batch]
        found = self._tag_docs([docs[i][0] for i in batch], budgets)
        for i, res, b in zip(batch, found, budgets, strict=True):
            out[i] = res if isinstance(res, Exception) else self._checked(*docs[i], res, b)
        return out  # type: ignore[return-value]

    def _windowed(self, doc: Doc, view: TextView, spent: budget.Budget) -> Tagged:
        """A long note: every window tagged alone, then the merge's note-wide step over all of them."""
        def one(window: Doc) -> list[Span]:
            return spans_or_raise(self._tag_docs([window], [spent], note_wide=False)[0])

        spans = tag_in_windows(doc, one, self.limits.window_chars or 0, self.limits.window_overlap_chars)
        spans = self.merge.whole_note(spans, doc.text)  # type agreement, propagation: over the whole note
        budget.check("merge")
        res = self._checked(doc, view, spans, spent)
        if isinstance(res, Exception):
            raise res
        return res

    @staticmethod
    def _checked(doc: Doc, view: TextView, spans: list[Span], spent: budget.Budget) -> Tagged | Exception:
        """The note's final spans: no span across a line break into another token kind, validated."""
        try:
            spans = guard_line_breaks(spans, doc.text)
            validate_spans(spans, len(doc.text))
            return Tagged(doc, view, spans, spent.used())
        except Exception as exc:  # noqa: BLE001 - fail closed for this note only
            return exc

    def _tag_docs(self, docs: Sequence[Doc], budgets: Sequence[budget.Budget],
                  note_wide: bool = True) -> list[Outcome]:
        """Every stage over the batch, then the merge; per doc its merged spans, or the exception of the
        first stage (or the merge) that failed for it. A per-note stage runs under the note's budget;
        a batch stage (the numpy CRF: linear, bounded by [tagging] batch_tokens) is checked after.
        note_wide=False (a window of a long note): the merge's note-wide step is left to the whole note."""
        states = [NoteState() for _ in docs]
        out: list[Outcome] = [[] for _ in docs]
        for stage in self.stages:
            live = [i for i, o in enumerate(out) if not isinstance(o, Exception)]
            if not live:
                break
            if isinstance(stage, PerNoteStage):
                found = [_under(budgets[i], stage.name, stage.run, docs[i], states[i]) for i in live]
            else:
                try:
                    found = stage.run_many([docs[i] for i in live], [states[i] for i in live])
                except Exception as exc:  # noqa: BLE001 - fail closed: the stage failed the whole batch
                    found = [exc] * len(live)
                found = [f if isinstance(f, Exception) else _under(budgets[i], stage.name, lambda f=f: f)
                         for i, f in zip(live, found, strict=True)]
            for i, spans in zip(live, found, strict=True):
                if isinstance(spans, Exception):
                    out[i] = spans
                else:
                    states[i].spans[stage.name] = spans
                    out[i].extend(spans)  # type: ignore[union-attr]
        merge = self.merge if note_wide else partial(self.merge, note_wide=False)
        for i, found_i in enumerate(out):
            if not isinstance(found_i, Exception):
                out[i] = _under(budgets[i], "merge", merge, found_i, docs[i], states[i])
        return out

    def process(self, note: Note) -> NoteResult:
        """Tag and replace one note; any exception yields a quarantine result without text."""
        return self.process_many([note])[0]

    def process_many(self, notes: Sequence[Note]) -> list[NoteResult]:
        """Tag, then spread across each patient's notes (the merge's cross-note step), then replace.

        Fail closed per note: an exception in one note's stages quarantines that note only; an
        exception in a patient's cross-note step quarantines that patient's notes.
        """
        tagged = self._tag_or_quarantine(notes)
        failed: dict[int, NoteResult] = {}

        def quarantine(idx: list[int], exc: Exception) -> None:
            for i in idx:
                failed[i] = NoteResult(notes[i].note_id, notes[i].patient_id, error_stage="tag",
                                       error_class=type(exc).__name__)

        self._spread(notes, tagged, quarantine)
        out = []
        for i, (note, t) in enumerate(zip(notes, tagged, strict=True)):
            if isinstance(t, NoteResult):
                out.append(t)
            elif i in failed:
                out.append(failed[i])
            else:
                out.append(self._replace_or_quarantine(note, t))
        return out

    def tag_many(self, notes: Sequence[Note]) -> list[list[Span]]:
        """Merged spans of several notes, with the cross-note step of process_many (evaluation)."""
        tagged = [_tagged_or_raise(t) for t in self._analyse_many(notes)]
        self._spread(notes, tagged)
        return [self._output(n, t.original_spans()) for n, t in zip(notes, tagged, strict=True)]

    def _spread(self, notes: Sequence[Note], tagged: Sequence[Tagged | NoteResult], on_error=None) -> None:
        """The cross-note step over each patient's tagged notes, on their matching views (spans updated in place)."""
        ok = [t if isinstance(t, Tagged) else None for t in tagged]
        views = [t.doc.note if t is not None else n for n, t in zip(notes, ok, strict=True)]
        spread = spread_across_notes(self.cross_note, views, [t.spans if t is not None else None for t in ok], on_error)
        for t, spans in zip(ok, spread, strict=True):
            if t is not None and spans is not None:
                t.spans = spans

    def _tag_or_quarantine(self, notes: Sequence[Note]) -> list[Tagged | NoteResult]:
        """Per note: its Tagged, or a quarantine result naming the step that failed (Timeout for the budget)."""
        out: list[Tagged | NoteResult | None] = [None] * len(notes)
        valid: list[int] = []
        for i, note in enumerate(notes):
            stage = "validate"
            try:
                if not isinstance(note.text, str):
                    raise TypeError("text is null")
                stage = "tag"
                if self.fault_hook is not None:
                    self.fault_hook(note)
                valid.append(i)
            except Exception as exc:  # noqa: BLE001 - fail closed: any error quarantines the note
                out[i] = NoteResult(note.note_id, note.patient_id, error_stage=stage, error_class=type(exc).__name__)
        for i, res in zip(valid, self._analyse_many([notes[i] for i in valid]), strict=True):
            note = notes[i]
            if isinstance(res, budget.NoteTimeout):  # overran its CPU budget: quarantined, the rest proceed
                out[i] = NoteResult(note.note_id, note.patient_id, error_stage=res.stage, error_class=budget.TIMEOUT)
            elif isinstance(res, Exception):
                out[i] = NoteResult(note.note_id, note.patient_id, error_stage="tag", error_class=type(res).__name__)
            else:
                out[i] = res
        return out  # type: ignore[return-value]

    def _replace_or_quarantine(self, note: Note, tagged: Tagged) -> NoteResult:
        try:
            total = self.limits.seconds(len(note.text))
            left = None if total is None else max(total - tagged.cpu_s, 0.0)
            tagged = replace(tagged, spans=self._output(tagged.doc.note, tagged.spans))
            with budget.note_budget(left):
                reps = self.replacer(tagged.doc, tagged.spans)  # surrogates of the normalized mentions
                if self.profile is not None:
                    reps = self.profile.replacements(tagged.doc.text, tagged.spans, reps)
                budget.check("replace")
            spans = tagged.original_spans()
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
        except budget.NoteTimeout as exc:
            return NoteResult(note.note_id, note.patient_id, error_stage=exc.stage, error_class=budget.TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - fail closed: any error quarantines the note
            return NoteResult(note.note_id, note.patient_id, error_stage="replace", error_class=type(exc).__name__)


def _tagged_or_raise(res: Tagged | Exception) -> Tagged:
    if isinstance(res, Exception):
        raise res
    return res


def _under(spent: budget.Budget, stage: str, fn, *args) -> list[Span] | Exception:
    """fn(*args) with the note's budget in force, then checked: its spans, or the exception (NoteTimeout
    naming `stage` when the budget ran out, also inside a `regex` call)."""
    with budget.resumed(spent):
        try:
            spans = fn(*args)
            budget.check(stage)
            return spans
        except TimeoutError:  # a `regex` call ran out of the note's budget
            return budget.NoteTimeout(stage)
        except Exception as exc:  # noqa: BLE001 - fail closed for this note only
            return exc


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
    limits = NoteLimits(budget.budget_seconds(pipe.note_cpu_budget_s), budget.budget_seconds(pipe.note_cpu_budget_s_per_mb),
                        pipe.window_chars, pipe.window_overlap_chars)
    return Deidentifier(stages, key=key, merge=merge, replacer=replacer, fault_hook=fault_hook, limits=limits,
                        profile=output_profile(config))


class LongestMerge:
    """The `longest` merge: overlapping spans resolved longest-first; no reconciliation, no cross-note step."""

    def __call__(self, spans: Sequence[Span], doc: Doc | None = None, state: NoteState | None = None) -> list[Span]:
        return resolve_overlaps(spans)

    def cross_note(self) -> CrossNoteStep | None:
        """None: spans stay within their note."""
        return None

    def whole_note(self, spans: list[Span], text: str) -> list[Span]:
        """Nothing note-wide to redo after windows."""
        return spans


def longest_merge(config: Config) -> LongestMerge:
    """Factory for the `longest` merge."""
    return LongestMerge()
