"""The numpy CRF scorer agrees with crfsuite: exact weights, Viterbi tags, marginals, CrfTagger spans."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pycrfsuite
import pytest
from crf_fixtures import crf_conf, tiny_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.bundle import load_bundle
from deid_core.config import ConfigError, conf_dir, load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.crf import batch as batch_module
from deid_core.engine.crf import emissions as emissions_module
from deid_core.engine.crf import scorer as scorer_module
from deid_core.engine.crf.batch import outliers
from deid_core.engine.crf.emissions import Emissions
from deid_core.engine.crf.scorer import (
    DenseEmission,
    TimeMajor,
    Workspace,
    best_other,
    decode,
    read_weights,
    restricted_viterbi,
)
from deid_core.engine.crf.tagger import crf_stage, load_models
from deid_core.engine.pipeline import build_stage
from deid_core.notes import Note
from deid_core.training.synth.generate import generate
from deid_core.training.synth.output import to_note
from deid_core.training.train import make_docs, train_bundle

TOLERANCE = 1e-9  # marginals: numpy vs crfsuite (both double precision, different summation orders)


def tune_notes(corpus) -> list:
    """The PhysioNet dev notes of the `tune` patients (conf/evaluation/physionet_split.tsv)."""
    part = {}
    for line in (conf_dir() / "evaluation" / "physionet_split.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            pid, _, which = line.partition("\t")
            part[pid] = which.strip()
    return [n for n in corpus.notes if part.get(n.patient_id) == "tune"]


def numpy_decoded(model, docs, rules):
    """The numpy scorer's Decoded for the docs (one batch) and the token offset of each doc."""
    out = [None] * len(docs)
    encoded = model.batch.encode_many(docs, rules, out)
    assert sorted(encoded) == list(range(len(docs)))
    emission, lengths = model.batch.emissions.scores([encoded[i] for i in range(len(docs))])
    dec = decode(emission, lengths, model.batch.weights.trans, model.batch.other)
    return dec, np.concatenate(([0], np.cumsum(lengths)))


def assert_agree(np_model, cs_model, docs, rules, chunk: int = 200) -> int:
    """Viterbi tags equal crfsuite's tag(); P(O) and the best other label agree with marginal(). Returns tokens."""
    tokens = 0
    for a in range(0, len(docs), chunk):
        part, prules = docs[a:a + chunk], rules[a:a + chunk]
        dec, off = numpy_decoded(np_model, part, prules)
        for k, (doc, r) in enumerate(zip(part, prules, strict=True)):
            feats = cs_model.features(doc, r)
            if not feats:
                continue
            tagger = cs_model.tagger
            labels = [np_model.labels[x] for x in dec.path[off[k]:off[k + 1]]]
            assert labels == tagger.tag(feats), doc.note.note_id
            p_o = np.array([tagger.marginal("O", i) for i in range(len(feats))])
            assert np.abs(p_o - dec.p_o[off[k]:off[k + 1]]).max() <= TOLERANCE
            for i in np.flatnonzero(p_o < 0.999):  # the recall knob's label choice where it can matter
                marg = sorted(((tagger.marginal(lab, i), lab) for lab in cs_model.phi_labels), reverse=True)
                if marg[0][0] - marg[1][0] > TOLERANCE:
                    assert np_model.labels[dec.best_other[off[k] + i]] == marg[0][1]
            tokens += len(feats)
    return tokens


def stage(bundle, scorer: str, domain: str = "source"):
    """The crf stage the configuration builds with this scorer (recall knob 0.2, as the default; the
    default domain: a plain bundle is refused the target copy)."""
    return crf_stage(load_config({"crf": {"tagging": {"scorer": scorer, "domain": domain,
                                                      "marginal_threshold": 0.2}}}), bundle)


def assert_same_spans(bundle, config, docs_a, docs_b, domain: str = "source") -> None:
    """CrfTagger spans (sources, labels, offsets, confidences) equal with either scorer; marginals close."""
    np_tagger, cs_tagger = stage(bundle, "numpy", domain), stage(bundle, "crfsuite", domain)
    rules = rule_spans(bundle, config, docs_a)
    got = np_tagger.tag_many(docs_a, rules)
    for doc_b, r, res in zip(docs_b, rules, got, strict=True):
        spans, marginals = cs_tagger.tag(doc_b, r)
        assert res[0] == spans
        assert (res[1] is None) == (marginals is None)
        if marginals is not None:
            assert res[1].gate_categories == marginals.gate_categories
            assert np.abs(np.array(res[1].phi) - np.array(marginals.phi)).max() <= TOLERANCE


def _pair(bundle, domain: str = "target"):
    cache = load_config().crf.tagging.cache_size
    (np_model,) = load_models(bundle, cache, domain, "numpy")
    (cs_model,) = load_models(bundle, cache, domain, "crfsuite")
    return np_model, cs_model


@pytest.fixture(scope="module")
def default_bundle():
    return load_bundle()


@pytest.fixture(scope="module")
def config():
    return load_config()


def rule_spans(bundle, config, docs) -> list:
    """The rules stage's spans of each doc (the CRF's rule_hits features)."""
    rules = build_stage(config, "rules", bundle)
    return [rules.tag(d) for d in docs]


def _with_rules(bundle, config, notes):
    docs = [Doc(n) for n in notes]
    return docs, rule_spans(bundle, config, docs)


def test_weights_are_exact_and_match_the_dump(default_bundle):
    w = read_weights(default_bundle.file("crf-single.crfsuite"))
    t = pycrfsuite.Tagger()
    t.open(str(default_bundle.file("crf-single.crfsuite")))
    assert w.labels == t.labels() and w.state.shape == (len(t.info().attributes), len(w.labels))
    assert np.count_nonzero(w.trans) == len(t.info().transitions)
    assert not np.all(np.round(w.state, 6) == w.state)  # full precision, not the dump's 6 decimals


def test_not_a_model_file_is_refused(tmp_path):
    bad = tmp_path / "x.crfsuite"
    bad.write_bytes(b"lCRF" + bytes(60))
    with pytest.raises(ValueError, match="not a crfsuite first-order CRF model"):
        read_weights(bad)


def test_agreement_on_physionet_tune_notes(physionet, default_bundle, config):
    docs, rules = _with_rules(default_bundle, config, tune_notes(physionet))
    assert len(docs) > 700
    assert assert_agree(*_pair(default_bundle), docs, rules) > 100_000
    docs_b, _ = _with_rules(default_bundle, config, [d.note for d in docs[:300]])
    assert_same_spans(default_bundle, config, docs[:300], docs_b)


def test_agreement_on_synthetic_notes(default_bundle, config):
    notes = [to_note(n) for n in generate(100, seed=777, n_patients=20)]
    docs, rules = _with_rules(default_bundle, config, notes)
    assert_agree(*_pair(default_bundle), docs, rules)
    assert_same_spans(default_bundle, config, docs, _with_rules(default_bundle, config, notes)[0])


@pytest.fixture(scope="module")
def tiny_bundles(tmp_path_factory):
    """A plain IOB1 bundle and an EasyAdapt one (two domains), freshly trained on the tiny corpus."""
    notes, gold = tiny_corpus(60)
    generated = generate(30, seed=5, n_patients=6)
    synth = [to_note(n) for n in generated]
    synth_gold = {n.note_id: list(n.spans) for n in generated}
    conf = crf_conf({"training": {"max_iterations": 30}, "clusters": {"k": [4, 8], "min_count": 2}})
    plain = train_bundle(make_docs(notes, gold), conf, tmp_path_factory.mktemp("plain"), models=["single"])
    docs = make_docs(notes, gold) + make_docs(synth, synth_gold, domain="S")
    easy = train_bundle(docs, conf, tmp_path_factory.mktemp("easy"), models=["single"], easy=True)
    assert easy.manifest["components"]["crf"]["easyadapt"]
    return plain, easy


@pytest.mark.parametrize("which,domain", [(0, "source"), (1, "target"), (1, "source")])
def test_agreement_on_freshly_trained_bundles(tiny_bundles, config, which, domain):
    bundle = tiny_bundles[which]
    notes = tiny_corpus(30, seed=11)[0] + [to_note(n) for n in generate(30, seed=12, n_patients=6)]
    docs, rules = _with_rules(bundle, config, notes)
    np_model, cs_model = _pair(bundle, domain)
    assert cs_model.domain == ("" if which == 0 else domain[0].upper())
    assert_agree(np_model, cs_model, docs, rules)
    assert_same_spans(bundle, config, docs, _with_rules(bundle, config, notes)[0], domain)


def test_a_failing_note_fails_alone(default_bundle, config):
    notes = [to_note(n) for n in generate(6, seed=3, n_patients=3)]
    # a metadata value that is not text: the metadata feature family raises for this note only
    bad = Note("bad", "Seen by Dr. Moreau today.", patient_id="p", known_phi=((None, "PATIENT"),))
    rules, crf = build_stage(config, "rules", default_bundle), crf_stage(config, default_bundle)
    docs = [Doc(n) for n in notes[:3]] + [Doc(bad)] + [Doc(n) for n in notes[3:]]
    states = [NoteState() for _ in docs]
    rules.run_many(docs, states)
    out = crf.run_many(docs, states)
    assert isinstance(out[3], Exception)
    alone = []
    for n in notes:
        state = NoteState()
        rules.run(Doc(n), state)
        alone.append(crf.run(Doc(n), state))
    assert [o for i, o in enumerate(out) if i != 3] == alone


def test_length_outliers_are_scored_note_by_note(default_bundle, config):
    assert outliers([200] * 10 + [5000], 32_768) == {10}
    assert outliers([793, 750, 700, 200], 32_768) == set()
    assert outliers([300] * 3 + [40_000], 32_768) == {3}
    assert outliers([40_000] * 3, 32_768) == {0, 1, 2}  # past batch_tokens: never a chunk of their own
    notes = [to_note(n) for n in generate(5, seed=8, n_patients=2)]
    long = Note("long", "\n".join(n.text for n in notes) * 6, patient_id="p")
    docs = [Doc(n) for n in [*notes, long]]
    (model,) = crf_stage(config, default_bundle).models
    assert outliers([len(d.tokens[0]) for d in docs], model.batch.max_tokens) == {5}
    assert_same_spans(default_bundle, config, docs, [Doc(d.note) for d in docs])


def _encoded(bundle, config, notes):
    """The default model and the notes encoded by its numpy scorer."""
    docs, rules = _with_rules(bundle, config, notes)
    np_model, _ = _pair(bundle)
    encoded = np_model.batch.encode_many(docs, rules, [None] * len(docs))
    return np_model, [encoded[i] for i in range(len(docs))]


def test_a_failing_chunk_is_scored_note_by_note_and_says_so(default_bundle, config, caplog):
    """A chunk whose scoring fails is scored again note by note (only the failing note is lost) and the
    fallback is logged (count and exception type only), so a systematic scorer bug is not a silent slowdown."""
    from deid_core.engine.crf.emissions import EncodedNote

    notes = [to_note(n) for n in generate(4, seed=11, n_patients=2)]
    model, encoded = _encoded(default_bundle, config, notes)
    whole: list = [None] * len(encoded)
    model.batch.score_many(dict(enumerate(encoded)), 1.0, True, [()] * len(encoded), whole)
    broken = dict(enumerate(encoded))
    broken[2] = EncodedNote([10**9] * len(encoded[2].types), encoded[2].docs, encoded[2].generation)
    out: list = [None] * len(encoded)
    with caplog.at_level("WARNING", logger="deid_core.engine.crf.batch"):
        model.batch.score_many(broken, 1.0, True, [()] * len(encoded), out)
    assert isinstance(out[2], Exception)
    for i in (0, 1, 3):  # the same tags; marginals within float tolerance (a chunk of one sums in another order)
        assert out[i][0] == whole[i][0]
        np.testing.assert_allclose(out[i][1], whole[i][1], rtol=0, atol=1e-12)
    (record,) = [r for r in caplog.records if "one by one" in r.getMessage()]
    assert "chunk of 4 notes" in record.getMessage() and "IndexError" in record.getMessage()


def test_reused_buffers_change_nothing(default_bundle, config):
    """Decoding with a Workspace (buffers kept across chunks) gives the bit-identical result of fresh arrays,
    whatever the buffers held before: chunks bigger, smaller and bigger again, buffers poisoned with NaN."""
    model, encoded = _encoded(default_bundle, config, [to_note(n) for n in generate(40, seed=21, n_patients=5)])
    trans, other, work = model.batch.weights.trans, model.batch.other, Workspace()
    for part in (encoded, encoded[:5], encoded[10:], encoded[3:4], encoded):
        emission, lengths = model.batch.emissions.scores(part)
        for name in ("ee", "alpha", "beta"):
            work.array(name, 2 * int(lengths.sum()), len(model.labels)).fill(np.nan)
        fresh = decode(emission, lengths, trans, other)
        reused = decode(emission, lengths, trans, other, work)
        for a, b in ((fresh.path, reused.path), (fresh.p_o, reused.p_o), (fresh.best_other, reused.best_other)):
            assert np.array_equal(a, b)
        assert not np.isnan(reused.p_o).any()


def test_dense_shape_triples_agree_with_the_dict(default_bundle, config, monkeypatch):
    """Shape n-gram rows from the dense (shape, shape, shape) table equal those of the dict path it falls back to."""
    model, encoded = _encoded(default_bundle, config, [to_note(n) for n in generate(20, seed=22, n_patients=4)])
    got = model.batch.emissions.scores(encoded)[0].ids
    monkeypatch.setattr(emissions_module, "_DENSE_SHAPES", 2)  # fewer than the shapes seen: the dict path
    emissions = Emissions(model.batch.weights, model.extractor)
    again = [emissions.encode(Doc(n.note), r) for n, r in zip(*_with_rules(default_bundle, config, [
        to_note(n) for n in generate(20, seed=22, n_patients=4)]), strict=True)]
    assert len(emissions.shape_names) > 2
    ids = emissions.scores(again)[0].ids
    keys = [emissions.row_keys, model.batch.emissions.row_keys]
    assert [[keys[0][r] for r in row] for row in ids.tolist()] == [[keys[1][r] for r in row] for row in got.tolist()]


def test_knob_decode_computes_the_best_other_label_where_the_knob_reads_it(default_bundle, config):
    """decode(knob=t) gives the best other label of decode() at every token the recall knob reads (MAP O,
    1 - P(O) > t) and -1 elsewhere; the rest of the result is bit-identical."""
    model, encoded = _encoded(default_bundle, config, [to_note(n) for n in generate(30, seed=23, n_patients=5)])
    emission, lengths = model.batch.emissions.scores(encoded)
    trans, other = model.batch.weights.trans, model.batch.other
    full = decode(emission, lengths, trans, other)
    for knob in (0.0, 0.2, 0.9, 1.0):
        part = decode(emission, lengths, trans, other, knob=knob)
        assert np.array_equal(part.path, full.path) and np.array_equal(part.p_o, full.p_o)
        reads = ((1.0 - full.p_o) > knob) & (full.path == other)
        assert np.array_equal(part.best_other[reads], full.best_other[reads])
        assert (part.best_other[~reads] == -1).all()
        if knob == 0.2:
            assert reads.any()  # the test reaches the knob
    with pytest.raises(RuntimeError, match="not computed"):
        batch_module._label(model.batch.weights.labels, -1)


def test_best_other_skips_label_o_wherever_it_is():
    """The best label other than O, first on ties, for O in the first, a middle and the last column."""
    marg = np.array([[0.5, 0.2, 0.2, 0.1], [0.1, 0.1, 0.7, 0.1], [0.25, 0.25, 0.25, 0.25]])
    assert best_other(marg, 0).tolist() == [1, 2, 1]
    assert best_other(marg, 2).tolist() == [0, 0, 0]
    assert best_other(marg, 3).tolist() == [0, 2, 0]
    assert marg[1, 2] == 0.7  # the caller's array is left as it was


def _row_table(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exp table and row maxima Emissions keeps for these row vectors."""
    row_max = vectors.max(axis=1)
    return np.exp(vectors - row_max[:, None]), row_max


def test_scaled_exp_rescales_exactly_the_rows_whose_maximum_underflows():
    """The row-sum pre-filter of scaled_exp finds every product row whose maximum is below 1e-200, also when
    its sum is above it (three labels each at 0.9e-200); such rows are recomputed (maximum exactly 1), the
    others are the plain products (as a per-row maximum would decide)."""
    x = -np.log(0.9e-200) / 2
    vectors = np.array([[0.0, 0.0, 0.0], [0.0, -x, -x], [-x, 0.0, -x], [-x, -x, 0.0],
                        [0.0, -470.0, -470.0], [-470.0, 0.0, -470.0], [-1.0, -2.0, 0.5]])
    exp_vectors, row_max = _row_table(vectors)
    ids = np.array([[1, 2, 3, 0, 0],   # every label at e^-2x = 0.9e-200: sum 2.7e-200, maximum below 1e-200
                    [4, 5, 0, 0, 0],   # e^-470 on two labels
                    [6, 1, 0, 0, 6],   # ordinary (a sparse column in use)
                    [6, 6, 6, 0, 0]])
    em = emissions_module.RowEmission(ids, vectors, exp_vectors, row_max, dense=4)
    ee, shift = em.scaled_exp(np.arange(len(ids)))
    exact = vectors[ids].sum(axis=1)
    np.testing.assert_allclose(ee * np.exp(shift - exact.max(axis=1))[:, None], np.exp(exact - exact.max(axis=1)[:, None]),
                               rtol=1e-12)
    assert ee[0].max() == 1.0 and ee[1].max() == 1.0  # rescaled
    plain = np.prod(exp_vectors[ids], axis=1)
    assert np.array_equal(ee[2:], plain[2:])  # the products themselves, untouched
    assert np.array_equal(em.at(np.arange(4), np.array([0, 1, 2, 0])), exact[np.arange(4), [0, 1, 2, 0]])


@pytest.mark.parametrize("capacity", [1024, 2])
def test_word_bigram_rows_are_the_strings_of_each_pair(default_bundle, config, monkeypatch, capacity):
    """The interned word-pair rows (keyed by type ids) hold, at every token, the wb / wf strings the extractor
    gives that token, whatever the tables held before: fresh, filled by other notes, or emptied and refilled;
    also when the pair rows grow while a batch's pairs are looked up (capacity 2)."""
    monkeypatch.setattr(emissions_module, "_PAIRS", capacity)
    notes = [to_note(n) for n in generate(40, seed=24, n_patients=6)]
    model, _ = _encoded(default_bundle, config, notes[:1])
    docs, rules = _with_rules(default_bundle, config, notes)
    extractor = model.extractor
    expected = []
    for doc, r in zip(docs, rules, strict=True):
        for feats in extractor.extract(doc, r):
            expected.append(sorted(f for f in feats if f.startswith(("wb=", "wf="))))
    assert sum(map(bool, expected)) > 50  # the notes reach the bigram path
    tables = Emissions(model.batch.weights, extractor, max_rows=3_000)
    for order in (range(40), range(39, -1, -1), range(40)):
        tables.start_batch()  # past max_rows: emptied between rounds
        encoded = {i: tables.encode(docs[i], rules[i]) for i in order}
        rows = tables.scores([encoded[i] for i in range(40)])[0]
        got = [sorted(s for r in row[rows.dense:] for s in tables.row_keys[r]) for row in rows.ids.tolist()]
        assert got == expected
    assert tables.generation > 1


def test_doc_rows_are_each_tokens_doc_family_strings(default_bundle, config):
    """Each token's doc row holds exactly the strings the doc families give it, in their order, also where a
    token reuses the row of the token before it (equal lists) and where the next list differs only late."""
    notes = [to_note(n) for n in generate(30, seed=26, n_patients=5)]
    model, encoded = _encoded(default_bundle, config, notes)
    docs, rules = _with_rules(default_bundle, config, notes)
    tables = model.batch.emissions
    reused = 0
    for doc, r, enc in zip(docs, rules, encoded, strict=True):
        extra: list[list[str]] = [[] for _ in doc.tokens[0]]
        model.extractor.add_doc_features(doc, r, extra)
        assert [tables.row_keys[k] for k in enc.docs] == [tuple(x) for x in extra]
        reused += sum(a == b for a, b in zip(extra, extra[1:], strict=False))
    assert reused > 1000  # the notes reach the reuse path
    lists = [["a", "b"], ["a", "b"], ["a", "c"], [], [], ["a"], ["a", "b"]]
    rows = tables.doc_rows(lists)
    assert [tables.row_keys[k] for k in rows] == [tuple(x) for x in lists]


def test_scorer_settings_are_typed_config(default_bundle):
    """[tagging] scorer and batch_tokens come from conf/crf.toml, checked like every key; they reach the models."""
    tagging = load_config().crf.tagging
    assert (tagging.scorer, tagging.batch_tokens) == ("numpy", 32_768)
    with pytest.raises(ConfigError, match=r"\[crf.tagging\] unknown key 'scorr'"):
        load_config({"crf": {"tagging": {"scorr": "numpy"}}})
    with pytest.raises(ConfigError, match=r"scorer = 'viterbi' is not accepted; expected one of numpy, crfsuite"):
        load_config({"crf": {"tagging": {"scorer": "viterbi"}}})
    (m,) = stage(default_bundle, "crfsuite").models
    assert m.batch is None
    (m,) = crf_stage(load_config({"crf": {"tagging": {"batch_tokens": 500}}}), default_bundle).models
    assert m.batch is not None and m.batch.max_tokens == 500


# ---------------------------------------------------------------- random small models


def _train_random(data, path: Path) -> tuple[list[str], int]:
    """A crfsuite model trained on random sequences of random attributes; its labels and attribute count."""
    n_labels = data.draw(st.integers(2, 6))
    n_attrs = data.draw(st.integers(2, 12))
    labels = ["O", *(f"I-L{k}" for k in range(n_labels - 1))]
    trainer = pycrfsuite.Trainer(verbose=False)
    for _ in range(data.draw(st.integers(2, 8))):
        n = data.draw(st.integers(1, 12))
        xs = [data.draw(st.lists(st.integers(0, n_attrs - 1), max_size=4)) for _ in range(n)]
        ys = [data.draw(st.sampled_from(labels)) for _ in range(n)]
        trainer.append([[f"a{a}" for a in x] for x in xs], ys)
    trainer.set_params({"c1": data.draw(st.sampled_from([0.0, 0.01])), "c2": data.draw(st.sampled_from([1e-4, 0.1])),
                        "max_iterations": 30, "feature.possible_transitions": True})
    trainer.train(str(path))
    return labels, n_attrs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_models_agree_with_crfsuite(data, tmp_path):
    path = tmp_path / "m.crfsuite"
    _, n_attrs = _train_random(data, path)
    w = read_weights(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    seqs = [[data.draw(st.lists(st.integers(0, n_attrs + 1), max_size=5)) for _ in range(data.draw(st.integers(1, 40)))]
            for _ in range(data.draw(st.integers(1, 6)))]
    emis, lengths = [], []
    for seq in seqs:
        for x in seq:
            ids = [w.attributes[f"a{a}"] for a in x if f"a{a}" in w.attributes]
            emis.append(w.state[ids].sum(axis=0))
        lengths.append(len(seq))
    emission = DenseEmission(np.array(emis))
    other = w.labels.index("O") if "O" in w.labels else 0
    dec = decode(emission, np.array(lengths), w.trans, other)
    off = np.concatenate(([0], np.cumsum(lengths)))
    crf_paths = []
    for k, seq in enumerate(seqs):
        feats = [[f"a{a}" for a in x] for x in seq]
        expected = tagger.tag(feats)
        got = [w.labels[y] for y in dec.path[off[k]:off[k + 1]]]
        if got != expected:  # only where two paths tie for the maximum (rounding decides between them)
            assert tagger.probability(got) == pytest.approx(tagger.probability(expected), rel=1e-9)
        crf_paths.append([w.labels.index(y) for y in got])
        for lab_id, lab in enumerate(w.labels):
            if lab_id == other:
                got = dec.p_o[off[k]:off[k + 1]]
                assert np.abs(got - [tagger.marginal(lab, i) for i in range(len(seq))]).max() <= TOLERANCE
    # the restricted Viterbi finds the MAP path from any candidate sets holding it
    path = np.concatenate(crf_paths)
    n = len(path)
    cand = np.array([[y == p or data.draw(st.booleans()) for y in range(len(w.labels))] for p in path]).reshape(n, -1)
    tokens = np.flatnonzero(cand.sum(axis=1) > 1)
    if len(tokens):
        first = np.isin(np.arange(n), off[:-1])
        last = np.isin(np.arange(n), off[1:] - 1)
        got = np.where(cand.sum(axis=1) > 1, 0, path)
        restricted_viterbi(got, tokens, cand[tokens], emission, w.trans, first, last)
        for k, seq in enumerate(seqs):
            a, b = ([w.labels[y] for y in p[off[k]:off[k + 1]]] for p in (got, path))
            if a != b:
                tagger.set([[f"a{x}" for x in item] for item in seq])
                assert tagger.probability(a) == pytest.approx(tagger.probability(b), rel=1e-9)


@pytest.mark.skipif(scorer_module._scorer_fast is None, reason="no current build of the typed scorer loops")
def test_typed_forward_backward_agrees_with_the_numpy_reference(default_bundle, config, physionet, monkeypatch):
    """The compiled C loops (_scorer_fast) and the numpy reference on 300 real dev notes, in two chunks as the
    tagger cuts them: marginals within 1e-9, log scale sums within 1e-9; decode's MAP labels, P(O) and
    best-other labels equal."""
    docs, rules = _with_rules(default_bundle, config, physionet.notes[:300])
    model = _pair(default_bundle)[0]
    encoded = model.batch.encode_many(docs, rules, [None] * len(docs))
    trans, other = model.batch.weights.trans, model.batch.other
    for part in ([encoded[i] for i in range(150)], [encoded[i] for i in range(150, 300)]):
        emission, lengths = model.batch.emissions.scores(part)
        tm = TimeMajor(lengths)
        ee, _ = emission.scaled_exp(tm.rows)
        fast, fast_logc = scorer_module.forward_backward(ee.copy(), tm, trans)
        ref, ref_logc = scorer_module.forward_backward_numpy(ee.copy(), tm, trans)
        assert fast.shape == ref.shape and len(fast) == int(lengths.sum())
        fast_p = fast / fast.sum(axis=1, keepdims=True)
        ref_p = ref / ref.sum(axis=1, keepdims=True)
        assert np.abs(fast_p - ref_p).max() <= TOLERANCE
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        inv = np.empty_like(tm.rows)
        inv[tm.rows] = np.arange(len(tm.rows))
        log_z = [np.add.reduceat(x[inv], starts) for x in (fast_logc, ref_logc)]
        assert np.abs(log_z[0] - log_z[1]).max() <= TOLERANCE
        got = decode(emission, lengths, trans, other, Workspace(), 0.5)
        with monkeypatch.context() as m:
            m.setattr(scorer_module, "_scorer_fast", None)
            want = decode(emission, lengths, trans, other, Workspace(), 0.5)
        assert np.array_equal(got.path, want.path)
        assert np.array_equal(got.best_other, want.best_other)
        assert np.array_equal(got.knob_tokens, want.knob_tokens)
        assert np.abs(got.p_o - want.p_o).max() <= TOLERANCE
