"""The stage contract: stages declare what they need and provide, a CRF trained with rule hits
refuses to start without the rules stage, and one cross-note step serves process_many, tag_many and CV."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from deid_core.bundle import load_bundle
from deid_core.config import ConfigError, load_config
from deid_core.engine.contract import RULE_SPANS, NoteState, PerNoteStage, check_stages
from deid_core.engine.crossnote import patient_groups, spread_across_notes
from deid_core.engine.merge import Merger
from deid_core.engine.pipeline import Deidentifier, LongestMerge, build_deidentifier
from deid_core.engine.propagation import PatientPropagation
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.cv import merged_predictions

ROOT = Path(__file__).resolve().parent.parent


class Fixed(PerNoteStage):
    """A stage returning the spans given per note id."""

    needs: dict[str, str] = {}
    provides: frozenset[str] = frozenset()

    def __init__(self, name: str, spans: dict[str, list[Span]]) -> None:
        self.name = name
        self.spans = spans

    def run(self, doc, state: NoteState) -> list[Span]:
        return list(self.spans.get(doc.note.note_id, []))


class NeedsRules(Fixed):
    needs = {RULE_SPANS: "test"}


class Mask:
    """A replacer: [LABEL] for each span."""

    def __call__(self, doc, spans):
        return [f"[{s.label}]" for s in spans]

    def shift_note_date(self, note):
        return None


class Appender:
    """A cross-note step that adds one span at 0..1 to each note of a group, and counts its calls."""

    def __init__(self, fail_for: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_for = fail_for

    def spread(self, notes):
        self.calls.append([text for text, _ in notes])
        if any(self.fail_for and self.fail_for in text for text, _ in notes):
            raise RuntimeError("boom")
        return [[Span(0, 1, "PATIENT", "x"), *spans] for _, spans in notes]


class WithStep(LongestMerge):
    """The longest merge with a given cross-note step."""

    def __init__(self, step) -> None:
        self.step = step

    def cross_note(self):
        return self.step


NOTES = [Note("a1", "A note one.", "pa"), Note("b1", "B note one.", "pb"), Note("a2", "A note two.", "pa"),
         Note("c1", "C note one.", None), Note("b2", "B boom two.", "pb")]


def test_a_crf_trained_with_rule_hits_refuses_to_start_without_the_rules_stage():
    bundle = load_bundle()  # the default bundle: trained with rule_hits features and rules
    assert bundle.manifest["training"]["rules_used"]
    for stages in (["crf"], ["crf", "rules"]):
        with pytest.raises(ConfigError) as exc:
            build_deidentifier(load_config({"pipeline": {"stages": stages}}), bundle, DEMO_KEY)
        msg = str(exc.value)
        assert "stage 'crf' needs the rule spans" in msg and "rule_hits" in msg and "'rules' stage before 'crf'" in msg
    deid = build_deidentifier(load_config({"pipeline": {"stages": ["rules", "crf"]}}), bundle, DEMO_KEY)
    assert [s.name for s in deid.stages] == ["rules", "crf"] and "rule spans" in deid.stages[1].needs


def test_the_refusal_stops_the_cli_and_the_job_before_any_note(tmp_path, capsys):
    from deid_core.app.cli import main as deid_main
    from deid_spark.jobs.deidentify import main as job_main
    from tests.helpers_job import SAMPLES

    out = tmp_path / "o"
    assert deid_main(["tag", "--input", str(SAMPLES), "--output", str(out), "--stages", "crf", "--demo-key"]) == 2
    assert job_main(["--input", str(SAMPLES), "--output", str(out), "--stages", "crf", "--demo-key"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("stage 'crf' needs the rule spans" in line for line in err)
    assert not out.exists()


def test_check_stages_needs_an_earlier_provider_and_unique_names():
    rules = Fixed("rules", {})
    rules.provides = frozenset({RULE_SPANS})
    check_stages([rules, NeedsRules("crf", {})])
    with pytest.raises(ConfigError, match="stage 'crf' needs the rule spans \\(test\\)"):
        check_stages([NeedsRules("crf", {}), rules])
    with pytest.raises(ConfigError, match="listed twice"):
        check_stages([rules, rules])


def test_stages_hand_over_through_the_note_state():
    """The rules stage's spans reach the CRF through the state; the merge gets the CRF marginals."""
    bundle = load_bundle()
    deid = build_deidentifier(load_config(), bundle, DEMO_KEY)
    note = Note("n", "Seen by Dr. Quillaby on Tuesday, Boston.", "p")
    from deid_core.doc import Doc

    state = NoteState()
    doc = Doc(note)
    rules, crf, names = deid.stages
    state.spans["rules"] = rules.run(doc, state)
    assert state.rule_spans == state.spans["rules"] and state.rule_spans
    crf.run(doc, state)
    assert state.crf is not None and len(state.crf.phi) == len(doc.tokens[0])
    assert "NAME" in state.crf.gate_categories
    assert names.needs == {} and names.run(doc, state)  # the name net needs nothing, proposes "Quillaby"
    with pytest.raises(RuntimeError, match="without the rule spans"):
        crf.run(doc, NoteState())


def test_patient_groups():
    assert patient_groups(["p", "q", "p", None, "q", "r"]) == [[0, 2], [1, 4]]


def test_cross_note_step_spreads_per_patient_and_skips_failed_notes():
    step = Appender()
    spans = [[], [], [], [], None]  # b2 failed in its stages: left out, b1 alone is no group
    out = spread_across_notes(step, NOTES, spans)
    assert step.calls == [["A note one.", "A note two."]]
    assert out[0] == out[2] == [Span(0, 1, "PATIENT", "x")] and out[1] == out[3] == [] and out[4] is None
    assert spread_across_notes(None, NOTES, spans) == spans


def test_cross_note_failure_goes_to_the_caller_or_raises():
    failed = []
    out = spread_across_notes(Appender(fail_for="boom"), NOTES, [[] for _ in NOTES],
                              lambda idx, exc: failed.append((idx, type(exc).__name__)))
    assert failed == [([1, 4], "RuntimeError")] and out[0] == [Span(0, 1, "PATIENT", "x")]
    with pytest.raises(RuntimeError, match="boom"):
        spread_across_notes(Appender(fail_for="boom"), NOTES, [[] for _ in NOTES])


def test_process_many_tag_many_and_cv_share_the_cross_note_step():
    step = Appender(fail_for="boom")
    deid = Deidentifier([Fixed("gold", {})], key=DEMO_KEY, merge=WithStep(step), replacer=Mask())
    res = deid.process_many(NOTES)
    assert [r.error_class for r in res] == [None, "RuntimeError", None, None, "RuntimeError"]  # patient pb only
    assert res[0].text == "[PATIENT] note one." and res[3].text == "C note one."
    assert all(r.error_stage == "tag" for r in res if not r.ok)
    ok = [n for n in NOTES if n.patient_id != "pb"]
    step.calls.clear()
    tagged = deid.tag_many(ok)
    staged = {n.note_id: NoteState(spans={"gold": []}) for n in ok}
    cv = merged_predictions(ok, staged, WithStep(step), ["gold"])
    assert step.calls == [["A note one.", "A note two."]] * 2
    assert [cv[n.note_id] for n in ok] == tagged


def test_merger_cross_note_step_follows_propagate_patient():
    on = Merger("union", load_config({"merge": {"propagate_patient": True}}).merge)
    assert isinstance(on.cross_note(), PatientPropagation)
    assert Merger("union", load_config({"merge": {"propagate_patient": False}}).merge).cross_note() is None
    assert LongestMerge().cross_note() is None
    a, b = "Son Quillaby at bedside.", "Quillaby called."
    spread = on.cross_note().spread([(a, [Span(4, 12, "PATIENT", "rules")]), (b, [])])
    assert [(b[s.start:s.end], s.source) for s in spread[1]] == [("Quillaby", "patient:propagate")]


def test_the_fault_hook_is_an_explicit_constructor_argument():
    from deid_core.app.batch import FaultNoteMarker, make_deidentifier

    cfg = load_config({"pipeline": {"stages": ["rules"], "mode": "mask"}, "testing": {"fault_note_marker": "FAULT"}})
    deid = make_deidentifier(cfg, None, DEMO_KEY)
    assert deid.fault_hook == FaultNoteMarker("FAULT")
    res = deid.process_many([Note("x-FAULT-1", "text"), Note("ok", "text")])
    assert (res[0].error_stage, res[0].error_class) == ("tag", "RuntimeError") and res[1].ok
    assert make_deidentifier(load_config({"pipeline": {"stages": ["rules"]}}), None, DEMO_KEY).fault_hook is None


# getattr/hasattr uses that are not capability probes of our objects: resolving 'module:attribute'
# registry names, Faker's locale-dependent providers, a build-time data script, record fields by
# column name (synthetic notes, staged NoteResults), the public names re-exported lazily (__init__.py).
ALLOWED_GETATTR = {"__init__.py", "engine/registry.py", "engine/surrogates/names.py", "engine/surrogates/locations.py",
                   "training/synth/lexicon.py", "gazetteers/build_data.py", "training/synth/output.py",
                   "app/batch.py"}


def test_no_capability_probes_in_deid_core():
    found = set()
    for path in (ROOT / "deid_core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
                found.add(str(path.relative_to(ROOT / "deid_core")))
    assert found <= ALLOWED_GETATTR, sorted(found - ALLOWED_GETATTR)
