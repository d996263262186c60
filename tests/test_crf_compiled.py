"""The compiled (typed, Cython) CRF feature modules give the features and emissions of pure Python.

Each side runs in its own interpreter on the same dev notes: pure Python (DEID_COMPILED=0) and with
the build of scripts/compile_modules.py (skipped when the feature modules are not built, or their
sources changed since). Features per token must be equal; emissions and their scaled exponentials
within 1e-12.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from deid_core.engine.crf import emissions

# modules whose typed build this test covers (their .pxd files type the hot loops)
TYPED = ("deid_core.engine.crf.doc_families", "deid_core.engine.crf.emissions")
NOTES = 120

_CHILD = r"""
import pickle, sys
import numpy as np
import deid_core.compiled as cc
finder = cc.install()
from deid_core.bundle_choice import resolve_bundle
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.crf.tagger import CrfTagger
from deid_core.engine.pipeline import build_deidentifier
from deid_core.io.physionet import read_physionet

notes = read_physionet(sys.argv[1]).notes[:int(sys.argv[2])]
config = load_config({}, None)
deid = build_deidentifier(config, resolve_bundle(config, None), b"test-key-not-secret-000000000000")
crf = next(s for s in deid.stages if isinstance(s, CrfTagger))
docs = [Doc(n) for n in notes]
states = [NoteState() for _ in docs]
for stage in deid.stages:
    if stage is crf:
        break
    for st, spans in zip(states, stage.run_many(docs, states)):
        st.spans[stage.name] = spans
out = []
for model in crf.models:
    em = model.batch.emissions
    live = [(d, crf.rule_spans(st)) for d, st in zip(docs, states) if d.tokens[1]]
    encoded = [em.encode(d, r) for d, r in live]
    rows, lengths = em.scores(encoded)
    n = int(lengths.sum())
    ee, shift = rows.scaled_exp(np.arange(n))
    feats = [model.extractor.extract(d, r) for d, r in live]
    docstrings = [[em.row_keys[i] for i in e.docs] for e in encoded]
    out.append((feats, docstrings, rows.rows(np.arange(n)), ee, shift))
pickle.dump({"active": sorted(finder.active) if finder else [], "out": out}, sys.stdout.buffer)
"""


def _run(corpus, compiled: bool) -> dict:
    env = {**os.environ, "DEID_COMPILED": "1" if compiled else "0", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(corpus), str(NOTES)], env=env,
                          capture_output=True, check=True)
    return pickle.loads(done.stdout)


def test_compiled_features_and_emissions_equal_pure_python(physionet_dir):
    compiled = _run(physionet_dir, True)
    missing = [m for m in TYPED if m not in compiled["active"]]
    if missing:
        pytest.skip(f"not built (scripts/compile_modules.py) or changed since: {missing}")
    pure = _run(physionet_dir, False)
    assert not pure["active"]
    assert len(pure["out"]) == len(compiled["out"]) > 0
    for (f0, d0, e0, x0, s0), (f1, d1, e1, x1, s1) in zip(pure["out"], compiled["out"], strict=True):
        assert f0 == f1  # every token's feature strings, note by note
        assert d0 == d1  # the doc-family strings the emission rows hold
        assert e0.shape == e1.shape and e0.shape[0] > 10_000
        np.testing.assert_allclose(e1, e0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(x1, x0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(s1, s0, rtol=0, atol=1e-12)


def test_doc_rows_reuse_only_equal_lists():
    rows = {(): 0}
    keys: list[tuple[str, ...]] = [()]

    def row(strings):
        key = tuple(strings)
        if key not in rows:
            rows[key] = len(keys)
            keys.append(key)
        return rows[key]

    a, b = ["sec=x", "attr=y"], ["sec=x", "attr=z"]
    extra = [[], a, list(a), b, [], ["sec=x"], list(a)]
    got = emissions.doc_rows(extra, rows, row)
    assert [keys[r] for r in got] == [tuple(x) for x in extra]
    assert got[1] == got[2] == got[6] != got[3]


def test_helpers():
    lists = emissions.empty_lists(3)
    assert lists == [[], [], []] and lists[0] is not lists[1]
    assert emissions.empty_lists(0) == []
    assert emissions.pick(["a", "b", "c"], [2, 0, 2]) == ["c", "a", "c"]
