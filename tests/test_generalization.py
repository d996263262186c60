"""The generalization benchmark: re-insertion keeps gold exact and gives the promised strings,
leave-type-out training never sees held-out types, the blind part yields totals only, the
readable-names measure counts right, and the whole benchmark runs (--quick)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core import gazetteers
from deid_core.config import ConfigError, conf_dir, load_config
from deid_core.engine.pipeline import build_deidentifier
from deid_core.keys import DEMO_KEY
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training import reinsert as ri
from deid_core.training.blind import SPLIT_FILE, BlindCorpus, read_tsv_split
from deid_core.training.evaluation.readable import Readable, readable_names
from deid_core.training.generalization import synth_types, synthetic_training
from deid_core.training.generalization_config import settings as bench_settings
from deid_core.training.generalization_config import training_recipe

KEY = b"test-reinsert-key-0123456789"
INSERT = load_config().with_file(bench_settings().reinsert.config)  # the surrogate settings re-insertion uses
NAMES_4 = Readable(labels=("PATIENT", "DOCTOR"), min_letters=4)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LABELS = ["PATIENT", "DOCTOR", "LOCATION-OTHER", "DATE", "PHONE", "AGE", "IDNUM"]
SURFACE = {"PATIENT": ["John", "MARY SMITH", "d", "o'brien"], "DOCTOR": ["Murphy", "J. Lee", "SAEED"],
           "LOCATION-OTHER": ["GH", "harford memorial", "Baltimore"], "DATE": ["8/20", "1957", "July 4"],
           "PHONE": ["415-999-8604", "12345"], "AGE": ["92", "67"], "IDNUM": ["rg17"]}


@st.composite
def notes_with_gold(draw):
    """Patients' notes built from filler text and labelled PHI strings, with exact gold spans."""
    notes, gold = [], {}
    filler = st.text(alphabet="abc xyz.,\n:-", min_size=0, max_size=12)
    for p in range(draw(st.integers(1, 3))):
        meta = (("MARY", "PATIENT"), ("SMITH", "PATIENT")) if draw(st.booleans()) else ()
        for k in range(draw(st.integers(1, 3))):
            text, spans = draw(filler), []
            for _ in range(draw(st.integers(0, 6))):
                label = draw(st.sampled_from(LABELS))
                value = draw(st.sampled_from(SURFACE[label]))
                text += " "
                spans.append(Span(len(text), len(text) + len(value), label, "gold"))
                text += value + " " + draw(filler)
            nid = f"{p}-{k}"
            notes.append(Note(nid, text, str(p), None, meta))
            gold[nid] = spans
    return notes, gold


def outside(text: str, spans: list[Span]) -> list[str]:
    """The text segments between spans."""
    out, pos = [], 0
    for s in sorted(spans, key=lambda s: s.start):
        out.append(text[pos:s.start])
        pos = s.end
    return out + [text[pos:]]


@FAST
@given(st.text(min_size=0, max_size=60), st.data())
def test_insert_round_trips(text, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8, unique=True)))
    spans = [Span(a, b, "DATE") for a, b in zip(cuts[::2], cuts[1::2], strict=False) if a < b]
    reps = [data.draw(st.text(min_size=1, max_size=9)) for _ in spans]
    new, moved = ri.insert(text, spans, reps)
    assert [new[s.start:s.end] for s in moved] == reps
    assert outside(new, moved) == outside(text, spans)
    back, again = ri.insert(new, moved, [text[s.start:s.end] for s in spans])
    assert back == text and [(s.start, s.end) for s in again] == [(s.start, s.end) for s in spans]


@FAST
@given(notes_with_gold(), st.sampled_from(ri.KINDS))
def test_reinsert_keeps_gold_exact(corpus, kind):
    notes, gold = corpus
    new_notes, new_gold = ri.reinsert(notes, gold, kind, KEY, INSERT)
    assert [n.note_id for n in new_notes] == [n.note_id for n in notes]
    for old, new in zip(notes, new_notes, strict=True):
        moved, spans = new_gold[new.note_id], gold[old.note_id]
        assert [s.label for s in moved] == [s.label for s in spans]
        assert outside(new.text, moved) == outside(old.text, spans)
        assert all(0 <= s.start < s.end <= len(new.text) for s in moved)
        # replace-and-reread: putting the originals back gives the original note
        back, _ = ri.insert(new.text, moved, [old.text[s.start:s.end] for s in spans])
        assert back == old.text
    assert ri.reinsert(notes, gold, kind, KEY, INSERT) == (new_notes, new_gold)  # keyed, deterministic


def test_overlapping_gold_is_reinserted_as_one_span():
    spans = [Span(0, 7, "LOCATION-OTHER"), Span(3, 11, "LOCATION-OTHER"), Span(12, 16, "DATE")]
    assert [(s.start, s.end) for s in ri.disjoint(spans)] == [(0, 11), (12, 16)]
    notes, gold = ri.reinsert([Note("1-1", "Harford Gen 7/23 ok", "1")], {"1-1": spans}, "random", KEY, INSERT)
    assert [s.label for s in gold["1-1"]] == ["LOCATION-OTHER", "DATE"] and notes[0].text.endswith(" ok")


def _person_tokens(notes, gold):
    for n in notes:
        for s in gold[n.note_id]:
            if ri.is_person(s.label):
                yield from (w for w in ri._WORD.findall(n.text[s.start:s.end]) if len(w) > 1)


def _corpus():
    text = "Pt John Smith seen by Dr. Murphy at Harford Memorial. Wife MARY called. john ok."
    spans = [Span(3, 7, "PATIENT"), Span(8, 13, "PATIENT"), Span(26, 32, "DOCTOR"),
             Span(36, 52, "LOCATION-OTHER"), Span(59, 63, "PATIENT"), Span(72, 76, "PATIENT")]
    meta = (("JOHN", "PATIENT"), ("SMITH", "PATIENT"))
    notes = [Note("1-1", text, "1", None, meta), Note("1-2", "Called John Smith.", "1", None, meta)]
    return notes, {"1-1": spans, "1-2": [Span(7, 11, "PATIENT"), Span(12, 17, "PATIENT")]}


def test_ambiguous_names_are_dictionary_words_and_oov_names_in_no_gazetteer():
    notes, gold = _corpus()
    amb = list(_person_tokens(*ri.reinsert(notes, gold, "ambiguous", KEY, INSERT)))
    names = gazetteers.words("first_name") | gazetteers.words("last_name")
    assert amb and all(w.casefold() in ri.dictionary_words() and w.casefold() in names for w in amb)
    oov_notes, oov_gold = ri.reinsert(notes, gold, "oov", KEY, INSERT)
    oov = list(_person_tokens(oov_notes, oov_gold))
    every = set().union(*(gazetteers.words(g) for g in gazetteers.LISTS))
    assert oov and all(w.casefold() not in ri.known_strings() and w.casefold() not in every for w in oov)
    loc = [n.text[s.start:s.end] for n in oov_notes for s in oov_gold[n.note_id] if s.label == "LOCATION-OTHER"]
    assert loc[0].endswith(" Memorial") and loc[0].split()[0].casefold() not in every  # generic word kept


def test_case_variants_and_consistent_metadata():
    notes, gold = _corpus()
    for kind, check in (("lower", str.islower), ("upper", str.isupper)):
        new_notes, new_gold = ri.reinsert(notes, gold, kind, KEY, INSERT)
        persons = [n.text[s.start:s.end] for n in new_notes for s in new_gold[n.note_id] if ri.is_person(s.label)]
        assert persons and all(check(p) for p in persons)
    for kind in ("random", "ambiguous", "oov"):
        new_notes, new_gold = ri.reinsert(notes, gold, kind, KEY, INSERT)
        first, last = (v for v, _ in new_notes[0].known_phi)
        assert (first, last) != ("JOHN", "SMITH") and first.isupper()
        for n in new_notes:  # the metadata names the patient as the notes now do
            spans = new_gold[n.note_id]
            surfaces = {n.text[s.start:s.end].casefold() for s in spans if s.label == "PATIENT"}
            assert {first.casefold(), last.casefold()} <= surfaces
        old = {notes[0].text[s.start:s.end] for s in gold["1-1"]}
        assert not old & {new_notes[0].text[s.start:s.end] for s in new_gold["1-1"]}


def test_readable_names_counts_whole_words_case_insensitive():
    text = "Dr. Johnson saw Mary Lee; Mary's son Al called. Cole. 12 Main St"
    gold = [Span(4, 11, "DOCTOR"), Span(16, 20, "PATIENT"), Span(21, 24, "PATIENT"), Span(26, 30, "PATIENT"),
            Span(37, 39, "PATIENT"), Span(48, 52, "DOCTOR"), Span(54, 64, "STREET")]
    out = "Dr. Johnsonville saw MARY Lee; Anna's son Al called. cole. 12 Main St"
    # counted: Johnson, Mary, Mary, Cole (4+ letters; Lee, Al too short; the street is no name)
    # readable: Mary (as MARY) twice, Cole (as cole); Johnson only inside a longer word
    assert readable_names(text, gold, out, NAMES_4) == (4, 3)
    assert readable_names(text, gold, text, NAMES_4) == (4, 4)
    assert readable_names(text, [], out, NAMES_4) == (0, 0)
    assert readable_names(text, gold, out, Readable(labels=("DOCTOR",), min_letters=3)) == (2, 1)


def test_blind_corpus_gives_totals_only():
    notes = [Note(f"9{i}-1", f"Zebulonia Quaxton seen {i}/3. Call 555-0134.", f"9{i}") for i in range(3)]
    gold = {n.note_id: [Span(0, 9, "PATIENT"), Span(10, 17, "PATIENT")] for n in notes}
    blind = BlindCorpus(notes, gold)
    public = {a for a in dir(blind) if not a.startswith("_")}
    assert public == {"evaluate", "reinserted", "first_patients", "size"}
    assert "Zebulonia" not in repr(blind) and "Zebulonia" not in str(blind)
    with pytest.raises(TypeError):
        iter(blind)
    cfg = load_config({"pipeline": {"stages": ["rules"]}})
    res = blind.evaluate(build_deidentifier(cfg, None, DEMO_KEY), NAMES_4)
    dumped = json.dumps(res)
    assert res["notes"] == 3 and res["gold_spans"] == 6 and "report" in res
    assert not any(s in dumped for s in ("Zebulonia", "Quaxton", "555-0134", "90-1", "91-1"))
    assert isinstance(blind.reinserted("oov", KEY, INSERT), BlindCorpus)


def test_a_breadth_overlay_reaching_a_held_out_type_is_refused(tmp_path):
    cfg = bench_settings(quick=True)
    _, held = synth_types(cfg)
    overlay = tmp_path / "wide.toml"
    overlay.write_text(f'part = "w"\ntypes = ["radiology", "{held[0]}"]\n[snippets]\nw = ["Seen."]\n')
    recipe = training_recipe(cfg, quick=True)
    recipe = replace(recipe, synthetic=replace(recipe.synthetic, breadth=(str(overlay),)))
    with pytest.raises(ConfigError, match=f"types \\['{held[0]}'\\] are held out"):
        synthetic_training(recipe, held)


def test_leave_type_out_training_never_sees_held_out_types():
    cfg = bench_settings(quick=True)
    train, held = synth_types(cfg)
    assert held and not set(train) & set(held)
    docs, types = synthetic_training(training_recipe(cfg, quick=True), held)
    assert docs and set(types) <= set(train)
    assert len(docs) == sum(types.values()) == cfg.quick.synth_notes
    from deid_core.training.synth.catalog import type_names

    assert set(train) | set(held) == set(type_names())  # every generator type is placed


def test_quick_benchmark_runs_and_reuses_its_bundles(physionet_dir, tmp_path, capsys):
    from deid_core.training.generalization_report import main

    out = tmp_path / "gen.json"
    assert main(["--quick", "--json", str(out), "--cache", str(tmp_path / "cache"), "--data", str(physionet_dir),
                 "--show-misses", "2", "--show-fps", "3"]) == 0
    res = json.loads(out.read_text())
    assert {"blind", "layouts", "reinsert", "readable"} <= set(res)
    train, held = synth_types(bench_settings(quick=True))
    for b in res["setup"]["bundles"].values():  # the trained bundles' own record of their data
        assert b["trained_now"] and set(b["synthetic_note_types"]) <= set(train)
    # the physionet-profile rows are scored with bundles trained like the profile's (EasyAdapt), the others pooled
    from deid_core.bundle import easyadapt_trained, load_bundle

    assert {k: easyadapt_trained(load_bundle(b["path"])) for k, b in res["setup"]["bundles"].items()} == {
        "tune+synth_train": False, "tune+synth_train-easyadapt": True, "cv2-fold1": False, "cv2-fold2": False,
        "cv2-fold1-easyadapt": True, "cv2-fold2-easyadapt": True}
    assert res["setup"]["profile_easyadapt"] and res["setup"]["profile_domain"] == "target"
    assert set(res["layouts"]["held_out_types"]["note_types"]) <= set(held)
    assert set(res["reinsert"]["tune_cv"]) == {"original", "original_physionet", *ri.KINDS}
    res_tune_cv_profiled = res["reinsert"]["tune_cv"]["original_physionet"]
    text = capsys.readouterr().out
    assert "1. Blind real notes" in text and "4. Names readable" in text
    assert "tune CV misses, oov" in text and "tune CV false positives" in text
    split = read_tsv_split(SPLIT_FILE, "patient_id", ("tune", "blind"))
    lines = text.split("generalization benchmark")[0].splitlines()
    shown = [ln.split()[0] for ln in lines if ln.startswith("  ")]
    assert shown and all(split[nid.split("-")[0]] == "tune" for nid in shown)  # misses of tune notes only
    again = tmp_path / "again.json"
    assert main(["--quick", "--part", "blind", "--json", str(again), "--cache", str(tmp_path / "cache"),
                 "--data", str(physionet_dir)]) == 0
    bundles = json.loads(again.read_text())["setup"]["bundles"]
    assert list(bundles) == ["tune+synth_train", "tune+synth_train-easyadapt"]
    assert not any(b["trained_now"] for b in bundles.values())
    assert all(bundles[k]["id"] == res["setup"]["bundles"][k]["id"] for k in bundles)
    tune = tmp_path / "tune.json"  # the development set alone: the fold bundles, no blind note, no tune bundle
    assert main(["--quick", "--part", "tune", "--json", str(tune), "--cache", str(tmp_path / "cache"),
                 "--data", str(physionet_dir)]) == 0
    res = json.loads(tune.read_text())
    assert set(res) == {"setup", "reinsert"} and list(res["reinsert"]) == ["tune_cv"]
    assert all(k.startswith("cv2-fold") and not v["trained_now"] for k, v in res["setup"]["bundles"].items())
    assert res["reinsert"]["tune_cv"]["original_physionet"]["report"] == res_tune_cv_profiled["report"]


def test_easyadapt_switch_trains_domains_and_the_domain_is_a_tagging_choice(physionet_dir, tmp_path):
    from deid_core.bundle import load_bundle
    from deid_core.training.generalization_report import main

    def tune(*flags: str) -> dict:
        out = tmp_path / "tune.json"
        assert main(["--quick", "--part", "tune", "--json", str(out), "--cache", str(tmp_path / "cache"),
                     "--data", str(physionet_dir), *flags]) == 0
        return json.loads(out.read_text())

    # the profile's own recipe (conf/profiles/physionet.toml [model] recipe) trained like the default rows' now:
    # the same fold bundles serve both
    general = tune("--easyadapt", "on", "--domain", "general", "--recipe", "physionet")
    assert general["setup"]["easyadapt"] and general["setup"]["domain"] == "general"
    assert general["setup"]["profile_recipe"] == "physionet"
    assert list(general["setup"]["bundles"]) == ["cv2-fold1-easyadapt", "cv2-fold2-easyadapt"]
    for b in general["setup"]["bundles"].values():  # fold bundles trained with a domain copy per corpus
        assert b["trained_now"]
        crf = load_bundle(b["path"]).manifest["components"]["crf"]
        assert crf["easyadapt"] and crf["target_domain"] == "T"
    source = tune("--easyadapt", "on", "--recipe", "physionet")  # the recipe's domain ([crf.tagging] domain): the same fold bundles
    assert source["setup"]["domain"] == "source"
    assert all(not b["trained_now"] for b in source["setup"]["bundles"].values())
    assert [b["id"] for b in source["setup"]["bundles"].values()] == [
        b["id"] for b in general["setup"]["bundles"].values()]
    cv_general, cv_source = general["reinsert"]["tune_cv"], source["reinsert"]["tune_cv"]
    assert cv_general["original_physionet"]["report"] == cv_source["original_physionet"]["report"]  # the profile's copy
    off = tune("--easyadapt", "off", "--recipe", "physionet")
    assert not off["setup"]["easyadapt"]
    for name, b in off["setup"]["bundles"].items():  # pooled folds trained now; the profile's EasyAdapt ones reused
        easy = load_bundle(b["path"]).manifest["components"]["crf"]["easyadapt"]
        assert (b["trained_now"], easy) == ((False, True) if name.endswith("-easyadapt") else (True, False))
    assert off["reinsert"]["tune_cv"]["original_physionet"]["report"] == cv_source["original_physionet"]["report"]
    # another default recipe (here with a breadth overlay) never reaches the profile's bundles: the same ones
    wide = tune("--easyadapt", "off", "--recipe", "breadth11")
    for name, b in wide["setup"]["bundles"].items():
        assert b["trained_now"] != name.endswith("-easyadapt")
        assert b["recipe"] == ("physionet" if name.endswith("-easyadapt") else "breadth11")
        if name.endswith("-easyadapt"):
            assert b["id"] == off["setup"]["bundles"][name]["id"]
    assert wide["reinsert"]["tune_cv"]["original_physionet"]["report"] == cv_source["original_physionet"]["report"]


def test_bad_data_folder_exits_2(tmp_path, capsys):
    from deid_core.training.generalization_report import main

    assert main(["--quick", "--data", str(tmp_path)]) == 2
    assert "--data" in capsys.readouterr().err


def settings_file(tmp_path, old: str, new: str):
    """A copy of conf/evaluation/generalization.toml in tmp_path with one (unique) line changed."""
    body = (conf_dir() / "evaluation" / "generalization.toml").read_text()
    assert body.count(old) == 1
    cfg = tmp_path / "gen.toml"
    cfg.write_text(body.replace(old, new))
    return cfg


def run_with_settings(cfg, data, tmp_path) -> int:
    """The quick benchmark with another settings file (exit code); the cache is tmp_path."""
    from deid_core.training.generalization_report import main

    return main(["--quick", "--config", str(cfg), "--data", str(data), "--cache", str(tmp_path)])


def test_unplaced_note_type_stops_before_any_work(physionet_dir, tmp_path, capsys):
    split = tmp_path / "split.tsv"
    split.write_text("note_type\tpart\necho\theld_out\n")
    cfg = settings_file(tmp_path, 'split = "evaluation/synth_type_split.tsv"', f'split = "{split}"')
    assert run_with_settings(cfg, physionet_dir, tmp_path) == 2
    assert "not placed" in capsys.readouterr().err and not list(tmp_path.glob("tune*"))


SETTINGS_ERRORS = [
    ("min_letters = 4", "min_leters = 4", "[readable] unknown key 'min_leters'; accepted: labels, min_letters"),
    ("[physionet]", "[physionet]\ncolour = 1", "[physionet] unknown key 'colour'; accepted: drop_labels, min_age"),
    ('kinds = ["random",', 'kinds = ["randum",', "[reinsert] kinds[0] = 'randum' is not accepted; expected a re-insertion kind"),
    ('drop_labels = ["STATE",', 'drop_labels = ["STATES",', "[physionet] drop_labels[0] = 'STATES' is not accepted"),
    ("folds = 2\n\n", "\n", "[reinsert] folds is missing"),
    ("test_seed = 14014", "test_seed = 1", "[layouts] test_seed must differ from the recipe's synthetic seed"),
]


@pytest.mark.parametrize(("old", "new", "message"), SETTINGS_ERRORS, ids=[m[:30] for _, _, m in SETTINGS_ERRORS])
def test_settings_file_errors_name_the_file_table_and_key(tmp_path, old, new, message):
    cfg = settings_file(tmp_path, old, new)
    with pytest.raises(ConfigError) as exc:
        bench_settings(path=cfg)
    assert str(exc.value).startswith(f"{cfg}: {message}"), str(exc.value)


def test_override_files_are_checked_by_the_config_loader_before_any_work(physionet_dir, tmp_path, capsys):
    quick = tmp_path / "quick.toml"
    quick.write_text("[crf.training]\nmax_iteration = 10\n")
    cfg = settings_file(tmp_path, 'config = "evaluation/generalization_quick.toml"', f'config = "{quick}"')
    assert run_with_settings(cfg, physionet_dir, tmp_path) == 2
    err = capsys.readouterr().err
    assert f"{quick}: [crf.training] unknown key 'max_iteration'" in err and not list(tmp_path.glob("tune*"))
    profile = tmp_path / "profile.toml"
    profile.write_text('[crf.tagging]\ndomain = "physionet"\n')
    cfg = settings_file(tmp_path, 'profile = "profiles/physionet.toml"', f'profile = "{profile}"')
    assert run_with_settings(cfg, physionet_dir, tmp_path) == 2
    assert f"{profile}: [crf.tagging] domain = 'physionet' is not accepted" in capsys.readouterr().err


def test_the_benchmark_trains_the_recipe_of_the_shipped_bundle_by_default():
    """[recipe] name = "" follows the configuration's [model] recipe (lead, round 14: the default bundle's recipe
    changed; one place holds it); --recipe NAME still picks another."""
    from deid_core.config import load_config
    from deid_core.training.generalization_config import settings

    assert settings().recipe.name == load_config().model.recipe
    assert settings(recipe="previous").recipe.name == "previous"
