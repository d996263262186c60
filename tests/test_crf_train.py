"""Training a tiny CRF bundle, tagging with it through build_deidentifier, version checks, CV."""

from __future__ import annotations

import json

import pytest
from crf_fixtures import crf_conf, tiny_corpus

from deid_core.bundle import BundleError, load_bundle
from deid_core.config import load_config
from deid_core.engine.crf.versions import check_versions
from deid_core.engine.pipeline import build_deidentifier
from deid_core.training.train import crf_config, make_docs, patient_folds, train_bundle


@pytest.fixture(scope="module")
def tiny_bundle(tmp_path_factory):
    notes, gold = tiny_corpus(60)
    conf = crf_conf({"training": {"max_iterations": 40}, "clusters": {"k": [4, 8], "min_count": 2}})
    out = tmp_path_factory.mktemp("bundle")
    return train_bundle(make_docs(notes, gold), conf, out, models=["quant", "names"])


def test_bundle_manifest(tiny_bundle):
    m = tiny_bundle.manifest
    crf = m["components"]["crf"]
    assert set(crf["models"]) == {"quant", "names"}
    assert "DATE" in crf["models"]["quant"]["labels"] and "DOCTOR" not in crf["models"]["quant"]["labels"]
    assert (tiny_bundle.path / "clusters.tsv").is_file()
    assert m["training"]["notes"] == 60 and m["versions"]["features"]
    assert len(m["id"]) == 64


def test_pipeline_tags_with_crf(tiny_bundle):
    config = load_config({"pipeline": {"stages": ["crf"], "merge": "rules_win"}})
    deid = build_deidentifier(config, tiny_bundle, b"k" * 32)
    notes, gold = tiny_corpus(10, seed=99)
    found = total = 0
    for n in notes:
        spans = deid.tag(n)
        assert all(s.source.startswith("crf") for s in spans)
        for g in gold[n.note_id]:
            total += 1
            found += any(g.start < s.end and s.start < g.end for s in spans)
        res = deid.process(n)
        assert res.ok
    assert found / total > 0.8


def test_version_mismatch_is_refused(tiny_bundle, tmp_path):
    import shutil

    dst = tmp_path / "b"
    shutil.copytree(tiny_bundle.path, dst)
    mf = json.loads((dst / "bundle.json").read_text())
    mf["versions"]["features"] = "0-old"
    (dst / "bundle.json").write_text(json.dumps(mf))
    with pytest.raises(BundleError, match="features: bundle '0-old'"):
        check_versions(load_bundle(dst))
    check_versions(tiny_bundle)  # the fresh one passes
    mf["versions"]["features"] = tiny_bundle.manifest["versions"]["features"]
    mf["versions"]["rules"] = "old-rules"
    mf["components"]["crf"]["depends_on"] = ["features", "taxonomy", "rules"]
    (dst / "bundle.json").write_text(json.dumps(mf))
    assert check_versions(load_bundle(dst), strict=False) == ["rules"]  # soft: warning only
    with pytest.raises(BundleError, match="rules: bundle 'old-rules'"):
        check_versions(load_bundle(dst), strict=True)


def test_patient_folds_are_disjoint_and_cover():
    notes, _ = tiny_corpus(60, patients=12)
    folds = patient_folds(notes, 5)
    assert sum(len(f) for f in folds) == 12
    assert all(not (a & b) for i, a in enumerate(folds) for b in folds[i + 1:])


def test_train_command_with_cv(tmp_path):
    from deid_core.app.cli import main
    from deid_core.io.physionet import Corpus, write_physionet

    notes, gold = tiny_corpus(40, patients=8)
    write_physionet(Corpus(notes, gold), tmp_path / "corpus", {"HOSPITAL": "Location"})
    conf = tmp_path / "crf.toml"


    from deid_core.config import conf_dir

    raw = (conf_dir() / "crf.toml").read_text().replace("max_iterations = 150", "max_iterations = 20")
    conf.write_text(raw)
    rc = main(["train", "--physionet", str(tmp_path / "corpus"), "--output", str(tmp_path / "out"),
               "--crf-config", str(conf), "--cv", "2", "--no-rules", "--report", str(tmp_path / "cv.json")])
    assert rc == 0
    b = load_bundle(tmp_path / "out")
    assert b.manifest["cv"]["setup"]["folds"] == 2
    assert 0.0 <= b.manifest["cv"]["overlap"]["recall"] <= 1.0
    assert json.loads((tmp_path / "cv.json").read_text())["setup"]["grouped_by"] == "patient"


@pytest.fixture(scope="module", params=["BIO", "IO", "IOB1"])
def scheme_bundle(request, tmp_path_factory):
    notes, gold = tiny_corpus(60)
    conf = crf_conf({"labels": {"scheme": request.param}, "training": {"max_iterations": 40},
                     "clusters": {"k": [4, 8], "min_count": 2}})
    out = tmp_path_factory.mktemp("bundle-" + request.param)
    return request.param, train_bundle(make_docs(notes, gold), conf, out, models=["single"])


def _reference_predict(m, feats, threshold):
    """CrfModel.predict as it was before the recall-knob rewrite (BIO prefixes)."""
    tags = m.tagger.tag(feats)
    marg = m.tagger.marginal
    phi = [1.0 - marg("O", i) for i in range(len(tags))]
    for i, p in enumerate(phi):
        if tags[i] == "O" and p > threshold:
            best = max((lab for lab in m.labels if lab != "O"), key=lambda lab: marg(lab, i))
            label = best[2:]
            prev = tags[i - 1][2:] if i and tags[i - 1] != "O" else ""
            tags[i] = ("I-" if prev == label else "B-") + label
    return tags, phi


def test_scheme_bundle_mentions_and_knob_equivalence(scheme_bundle):
    """IO models have no B- tags; mentions per label are recorded for the gate; predict with the
    recall knob equals the reference implementation (same spans; same tags under BIO)."""
    from deid_core.doc import Doc
    from deid_core.engine.crf.labels import decode
    from deid_core.engine.crf.tagger import learned_categories, load_models

    scheme, bundle = scheme_bundle
    entry = bundle.manifest["components"]["crf"]["models"]["single"]
    assert bundle.manifest["components"]["crf"]["scheme"] == scheme
    assert entry["mention_counts"]["DOCTOR"] > 0
    (m,) = load_models(bundle, crf_config().tagging.cache_size, "target")
    assert any(lab.startswith("B-") for lab in m.labels) == (scheme != "IO")  # IOB1: "{first} {last}"
    assert "NAME" in learned_categories([m], 5) and "ID" not in learned_categories([m], 5)
    notes, _ = tiny_corpus(15, seed=5)
    flips = 0
    for n in notes:
        doc = Doc(n)
        feats = m.features(doc, ())
        for threshold in (0.0, 0.3, 0.9):
            tags, phi = m.predict(feats, threshold)
            ref_tags, ref_phi = _reference_predict(m, feats, threshold)
            assert phi == ref_phi
            assert decode(tags, *doc.tokens[1:]) == decode(ref_tags, *doc.tokens[1:])
            if scheme == "BIO":
                assert tags == ref_tags
            flips += sum(t != v for t, v in zip(tags, m.tagger.tag(feats), strict=True))
    assert flips  # threshold 0 forces the knob path


def test_learned_categories_from_mentions_or_bio_tags():
    """Bundles with mention_counts use them (any scheme); older ones count B-/S- tags."""
    from types import SimpleNamespace

    from deid_core.engine.crf.tagger import learned_categories

    old = SimpleNamespace(mention_counts={}, tag_counts={"B-DATE": 60, "I-DATE": 200, "I-DOCTOR": 90, "B-DOCTOR": 10})
    new = SimpleNamespace(mention_counts={"DATE": 60, "DOCTOR": 10}, tag_counts={"I-DATE": 260, "I-DOCTOR": 100})
    assert learned_categories([old], 50) == learned_categories([new], 50) == frozenset({"DATE"})


def test_name_spans_never_start_or_end_with_a_letterless_token():
    """A person-name span from the CRF is trimmed of edge tokens without a letter ('07:30\\nAnn Lee')."""
    from deid_core.engine.crf.tagger import _letter_edges

    text = "at 07:30\nAnn Lee 2"
    starts, ends = [0, 3, 6, 9, 13, 17], [2, 5, 8, 12, 16, 18]
    assert _letter_edges(text, starts, ends, 2, 6) == (3, 5)
    assert _letter_edges(text, starts, ends, 1, 3) == (3, 3)  # nothing left: no span
