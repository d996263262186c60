"""Synthetic template families: every template renders exact spans, every family generates, selections,
no unannotated PHI, the audit catches leaks, templates hold no literal names."""

from __future__ import annotations

import collections
import datetime as dt
import random
import re
from dataclasses import replace

import pytest

from deid_core.app.cli import main
from deid_core.gazetteers import words as gazetteer
from deid_core.spans import trim_span, validate_spans
from deid_core.taxonomy import labels
from deid_core.training.synth import generate
from deid_core.training.synth.audit import PatientAudit, audit_corpus, slot_labels_used
from deid_core.training.synth.catalog import (
    SelectionError,
    catalog,
    catalog_text,
    family_names,
    resolve,
    type_names,
)
from deid_core.training.synth.generate import patient_identity
from deid_core.training.synth.lexicon import pools
from deid_core.training.synth.notetypes import (
    TemplateError,
    breadth_overlay,
    global_snippets,
    note_types,
    with_breadth,
)
from deid_core.training.synth.template import Ref, Slot, render
from deid_core.training.synth.values import ROLES, NoteValues

BASE_TYPES = ("discharge_summary", "ed_note", "icu_nursing", "lab_report", "outpatient_letter", "psych_intake",
              "radiology", "telephone")
# Literal words of the templates that are in the name gazetteers but are not names here
# (abbreviations, an eponym): a new entry means a template wrote a name outside a slot.
LITERAL_NAME_ALLOWLIST = {"Bruce", "Disch", "EHR", "LIS", "MAC", "ORD", "ROM", "ROS", "SAR", "SEM", "colace",
                          "le", "rad", "toto"}


def _check_exact(text, spans, surfaces):
    """Every span cuts exactly its recorded surface, is trimmed, and spans do not overlap."""
    assert len(spans) == len(surfaces)
    for s, surf in zip(spans, surfaces, strict=True):
        assert text[s.start:s.end] == surf
        assert trim_span(s, text) == s
    validate_spans(spans, len(text))


def test_base_types_kept_and_many_families_added():
    assert set(BASE_TYPES) <= set(type_names())
    fams = note_types()
    assert len(fams) >= 40 and len(type_names()) >= 30
    assert sum(f.templates() for f in fams) >= 700
    for f in fams:
        assert f.family.startswith(f.name + "."), f.family
        assert f.weight > 0 and f.layouts and f.description


@pytest.mark.parametrize("family", family_names())
def test_every_template_of_a_family_renders_exact_spans(family):
    """Property-style: each alternative of each part, snippets expanded with 12 patients' RNGs, renders exactly."""
    fam = next(f for f in note_types() if f.family == family)
    seed = 5
    pool = pools(seed)
    n_spans = 0
    for k in range(12):
        rng, patient = patient_identity(seed, k)
        for alts in fam.parts.values():
            for template in alts:
                parts = fam.expand(template, rng)
                assert not any(isinstance(p, Ref) for p in parts)
                values = NoteValues(rng, patient, dt.date(2019, 3, 14) + dt.timedelta(days=k * 37), k, pool)
                surfaces: list[str] = []
                case = fam.case(rng)
                text, spans = render([parts], values, rng, case=case, glue_p=fam.glue, surfaces=surfaces)
                _check_exact(text, spans, surfaces)
                n_spans += len(spans)
    assert n_spans > 0


@pytest.mark.parametrize("family", family_names())
def test_every_family_generates_alone(family):
    surfaces: list[list[str]] = []
    notes = generate(60, seed=5, include=(family,), surfaces=surfaces)
    assert len(notes) == 60
    ntype = family.split(".")[0]
    assert {n.family for n in notes} == {family} and {n.note_type for n in notes} == {ntype}
    for n, surf in zip(notes, surfaces, strict=True):
        _check_exact(n.text, n.spans, surf)
    assert sum(len(n.spans) for n in notes) > 60
    assert audit_corpus(notes, 5) == []


@pytest.fixture(scope="module")
def big():
    return {seed: generate(1500, seed=seed) for seed in (5, 6)}


def test_no_unannotated_phi_in_the_corpus(big):
    for seed, notes in big.items():
        found = audit_corpus(notes, seed)
        assert found == [], found[:5]


def test_every_label_written_by_templates_and_present(big):
    assert slot_labels_used() == frozenset(labels())
    counts = collections.Counter(s.label for n in big[5] for s in n.spans)
    assert set(counts) == set(labels())
    fams = collections.Counter(n.family for n in big[5])
    assert len(fams) == len(family_names())


def test_audit_finds_leaks_of_every_kind():
    note = generate(40, seed=5)[7]
    _, p = patient_identity(5, int(note.patient_id[1:]))
    audit = PatientAudit(p)
    assert audit.check(note.text, note.spans) == []
    num = p.home_phone
    leak = (f"\nSeen by Dr. {p.attending.person.last} on Monday 3/14/2019; {p.relatives[0].person.first.lower()} "
            f"called from {p.city} at {num[:3]}-{num[3:6]}-{num[6:]}. 45 yo. mail {p.email}, ip 10.1.2.3, "
            f"SSN {p.ssn}, www.example.org")
    kinds = {f.kind for f in audit.check(note.text + leak, note.spans)}
    assert {"name", "weekday", "date", "identity", "phone", "age", "email", "ip", "ssn", "url"} <= kinds


def _literals():
    for fam in note_types():
        for alts in list(fam.parts.values()) + [a for a, _ in (fam.snippets or {}).values()]:
            for t in alts:
                yield fam.family, t


def test_template_literals_hold_no_names():
    names = gazetteer("first_name") | gazetteer("last_name")
    ordinary = gazetteer("english_word") | gazetteer("frequent_word") | gazetteer("medical_word")
    hits = set()
    for _, t in _literals():
        for p in t:
            if isinstance(p, str):
                hits.update(w for w in re.findall(r"[^\W\d_]+", p) if w.lower() in names and w.lower() not in ordinary)
                assert not re.search(r"\b(?:Dr|Mr|Mrs|Ms)\.? [A-Z][a-z]", p), p
                assert not re.search(r"(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", p), p
    assert hits <= LITERAL_NAME_ALLOWLIST, hits - LITERAL_NAME_ALLOWLIST


def test_one_person_is_one_span():
    """'{PATIENT:last}, {PATIENT:first}' would split a name i2b2 annotates as one span."""
    for family, t in _literals():
        for a, lit, b in zip(t, t[1:], t[2:], strict=False):
            if (isinstance(a, Slot) and isinstance(b, Slot) and isinstance(lit, str) and lit.strip(" ,") == ""
                    and a.name == b.name and a.name in ("PATIENT", "DOCTOR")):
                role = lambda s: s.form.split("_")[0] if s.form.split("_")[0] in ROLES or "$" in s.form else ""  # noqa: E731
                assert role(a) != role(b), (family, a, b)


def test_selection_include_exclude_and_errors():
    assert resolve(("radiology",)) == ("radiology.base", "radiology.structured")
    assert "radiology.base" not in resolve((), ("radiology",))
    assert resolve(("radiology.structured",)) == ("radiology.structured",)
    with pytest.raises(SelectionError):
        resolve(("no_such_type",))
    with pytest.raises(SelectionError):
        resolve(("radiology",), ("radiology",))
    out = generate(200, seed=5, exclude=("icu_nursing", "telephone.triage"))
    assert not {n.family for n in out} & {"icu_nursing.base", "telephone.triage"}
    shares = {r.family: r.share for r in catalog()}
    assert abs(sum(shares.values()) - 1.0) < 1e-9


def test_same_seed_same_corpus_with_selection_and_rng_independent_identity():
    a = generate(150, seed=5, include=("progress", "consult"))
    b = generate(150, seed=5, include=("progress", "consult"))
    assert a == b
    full = generate(150, seed=5)
    assert [n.patient_first_name for n in a] == [n.patient_first_name for n in full]


def test_cli_list_types_and_types_option(tmp_path, capsys):
    assert main(["synth", "--list-types"]) == 0
    listing = capsys.readouterr().out
    assert all(f in listing for f in family_names())
    assert catalog_text() in listing
    out = tmp_path / "c"
    assert main(["synth", "--notes", "40", "--seed", "5", "--out", str(out), "--types", "portal,it"]) == 0
    import pyarrow.parquet as pq

    t = pq.read_table(out / "notes")
    assert set(t.column("note_type").to_pylist()) <= {"portal", "it"}
    assert set(t.column("family").to_pylist()) <= {"portal.message", "it.incident"}
    assert main(["synth", "--notes", "4", "--out", str(out), "--types", "bogus"]) == 2
    assert "bogus" in capsys.readouterr().err


def test_values_teach_context_not_strings(big):
    """Names in many shapes: lower case, caps, initials, hyphens, apostrophes, non-gazetteer names."""
    notes = big[6]
    names = [n.text[s.start:s.end] for n in notes for s in n.spans if s.label in ("PATIENT", "DOCTOR")]
    assert any(x.islower() and len(x) > 3 for x in names) and any(x.isupper() and len(x) > 3 for x in names)
    assert any("-" in x for x in names) and any("'" in x for x in names)
    assert sum(1 for x in names if re.fullmatch(r"[A-Z]{2,3}", x)) > 100
    known = gazetteer("first_name") | gazetteer("last_name")
    oov = [x for x in names if x.isalpha() and len(x) > 3 and x.lower() not in known]
    assert len(oov) > 0.03 * len(names)
    dates = {n.text[s.start:s.end] for n in notes for s in n.spans if s.label == "DATE"}
    for pattern in (r"^\d{2}\.\d{2}\.\d{4}$", r"^\d{1,2}(st|nd|rd|th)$", r"^\d{1,2}(st|nd|rd|th) of [A-Z][a-z]+$",
                    r"^(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)$", r"^\d{4}/\d{2}/\d{2}$", r"^\d{8}$"):
        assert any(re.match(pattern, d) for d in dates), pattern
    ages = {n.text[s.start:s.end] for n in notes for s in n.spans if s.label == "AGE"}
    assert any(re.fullmatch(r"\d0s", a) for a in ages)
    rooms = {n.text[s.start:s.end] for n in notes for s in n.spans if s.label == "ROOM"}
    assert any(re.fullmatch(r"\d[NSEW]\d\d", r) for r in rooms) and any(re.fullmatch(r"[A-H]\d{3}", r) for r in rooms)
    mrns = {n.text[s.start:s.end] for n in notes for s in n.spans if s.label == "MEDICALRECORD"}
    assert any(" " in m for m in mrns)


def test_render_values_are_deterministic_per_rng():
    fam = note_types()[0]
    outs = []
    for _ in range(2):
        rng, patient = patient_identity(5, 0)
        parts = fam.compose(random.Random(5))
        values = NoteValues(rng, patient, dt.date(2020, 1, 2), 0, pools(5))
        outs.append(render(parts, values, rng)[0])
    assert outs[0] == outs[1]


def test_a_breadth_overlay_adds_its_optional_part_to_its_types_only(tmp_path):
    """Without an overlay the families are the files' (the same corpus); with one, notes of its types
    may end with its part, other types never; the shipped overlays render without unannotated PHI."""
    assert note_types(()) == note_types()
    overlay = breadth_overlay("ctx11")
    assert "echo" not in overlay.types and {"icu_nursing", "discharge_summary"} <= set(overlay.types)
    plain = generate(300, seed=9, exclude=("echo", "portal", "telephone"))
    wide = generate(300, seed=9, exclude=("echo", "portal", "telephone"), breadth=("ctx11",))
    assert [n.note_type for n in plain] != [] and any(a.text != b.text for a, b in zip(plain, wide, strict=True))
    assert audit_corpus(wide, 9) == []
    lines = {n.text.rstrip().splitlines()[-1].lower() for n in wide}
    assert {"hometown: not obtained.", "record no. requested from clinic."} & lines  # a look-alike, no PHI
    for fam in note_types(("ctx11",)):
        added = [lay for lay in fam.layouts if lay[-1] == "breadth.ctx11?"]
        assert len(added) == (len(fam.layouts) if fam.name in overlay.types else 0)
    other = with_breadth(next(f for f in note_types() if f.name == "echo"), overlay)
    assert "breadth.ctx11" not in other.parts  # a type the overlay does not list is untouched
    bad = tmp_path / "typo.toml"
    bad.write_text('part = "x"\ntypes = ["radiology"]\n[snippets]\ny = ["Seen."]\n')
    with pytest.raises(TemplateError, match="part 'x' must be one of its"):
        breadth_overlay(str(bad))
    bad.write_text('part = "y"\ntypes = ["radiology", "nosuch"]\n[snippets]\ny = ["Seen."]\n')
    with pytest.raises(TemplateError, match="unknown note types"):
        note_types((str(bad),))


def test_a_breadth_overlay_never_changes_what_the_templates_write(tmp_path):
    """An overlay whose snippet is named like a shared or a note type's own snippet would rewrite the
    templates' text (not only add its part): refused, as are two overlays of one name."""
    shared = next(iter(global_snippets()))
    clash = tmp_path / "clash.toml"
    clash.write_text(f'part = "y"\ntypes = ["radiology"]\n[snippets]\ny = ["Seen."]\n{shared} = ["Other."]\n')
    with pytest.raises(TemplateError, match=f"snippets \\['{shared}'\\] are already conf/synth/snippets.toml's"):
        breadth_overlay(str(clash))
    own = tmp_path / "own.toml"
    own.write_text('part = "y"\ntypes = ["radiology"]\n[snippets]\ny = ["Seen."]\n')
    radiology = next(f for f in note_types() if f.name == "radiology")
    family = replace(radiology, snippets={**(radiology.snippets or {}), "y": (("Its own.",), None)})
    with pytest.raises(TemplateError, match="snippets \\['y'\\] are already note type"):
        with_breadth(family, breadth_overlay(str(own)))
    twin = tmp_path / "ctx11.toml"
    twin.write_text('part = "y"\ntypes = ["radiology"]\n[snippets]\ny = ["Seen."]\n')
    with pytest.raises(TemplateError, match="two share a name"):
        note_types(("ctx11", str(twin)))
