"""The compiled gather-products of RowEmission.scaled_exp (_emissions_fast) against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from deid_core.bundle import load_bundle
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.crf import emissions as emissions_module
from deid_core.engine.crf.scorer import TimeMajor, Workspace, decode
from deid_core.engine.crf.tagger import load_models
from deid_core.engine.pipeline import build_stage

fast_module = emissions_module._emissions_fast
needs_build = pytest.mark.skipif(fast_module is None, reason="no current build of _emissions_fast")


@needs_build
def test_compiled_scaled_exp_is_bit_identical_to_numpy_on_dev_notes(physionet, monkeypatch):
    """300 real dev notes in two chunks as the tagger cuts them: the products and shifts of the C loop equal
    numpy's bit for bit (same multiplications in the same order), and so decode's labels, P(O), best-other
    labels and knob tokens are equal."""
    bundle, config = load_bundle(), load_config()
    docs = [Doc(n) for n in physionet.notes[:300]]
    rules = build_stage(config, "rules", bundle)
    spans = [rules.tag(d) for d in docs]
    (model,) = load_models(bundle, config.crf.tagging.cache_size, "target", "numpy")
    encoded = model.batch.encode_many(docs, spans, [None] * len(docs))
    trans, other = model.batch.weights.trans, model.batch.other
    for part in ([encoded[i] for i in range(150)], [encoded[i] for i in range(150, 300)]):
        emission, lengths = model.batch.emissions.scores(part)
        order = TimeMajor(lengths).rows
        work = Workspace()
        work.array("ee", 2 * len(order), len(model.labels)).fill(np.nan)  # a reused, poisoned buffer
        ee, shift = emission.scaled_exp(order, work)
        ref_ee, ref_shift = emission.scaled_exp_numpy(order)
        assert ee.shape == ref_ee.shape and np.array_equal(ee, ref_ee) and np.array_equal(shift, ref_shift)
        got = decode(emission, lengths, trans, other, Workspace(), 0.5)
        with monkeypatch.context() as m:
            m.setattr(emissions_module, "_emissions_fast", None)
            want = decode(emission, lengths, trans, other, Workspace(), 0.5)
        for a, b in ((got.path, want.path), (got.p_o, want.p_o), (got.best_other, want.best_other),
                     (got.knob_tokens, want.knob_tokens)):
            assert np.array_equal(a, b)


def _tiny_rows() -> emissions_module.RowEmission:
    """Rows whose product underflows on every label (rescaled exactly), ordinary rows, a sparse column in use."""
    x = -np.log(0.9e-200) / 2
    vectors = np.array([[0.0, 0.0, 0.0], [0.0, -x, -x], [-x, 0.0, -x], [-x, -x, 0.0],
                        [0.0, -470.0, -470.0], [-470.0, 0.0, -470.0], [-1.0, -2.0, 0.5]])
    row_max = vectors.max(axis=1)
    ids = np.array([[1, 2, 3, 0, 0], [4, 5, 0, 0, 0], [6, 1, 0, 0, 6], [6, 6, 6, 0, 0], [0, 0, 0, 0, 0]])
    return emissions_module.RowEmission(ids, vectors, np.exp(vectors - row_max[:, None]), row_max, dense=4)


@needs_build
@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [4, 2, 0], []])
def test_compiled_scaled_exp_equals_numpy_on_underflowing_rows(order):
    """Tiny rows (rescaled from their summed scores), ordinary rows, any order, no rows: the same arrays."""
    em, order = _tiny_rows(), np.array(order, dtype=np.int64)
    ee, shift = em.scaled_exp(order)
    ref_ee, ref_shift = em.scaled_exp_numpy(order)
    assert np.array_equal(ee, ref_ee) and np.array_equal(shift, ref_shift)
    if len(order) == 5:
        assert ee[0].max() == 1.0 and ee[1].max() == 1.0


@needs_build
def test_compiled_gather_fails_closed_on_a_row_outside_the_table():
    """A row id outside the table raises (as numpy's take does), not a read past the array."""
    em = _tiny_rows()
    bad = emissions_module.RowEmission(np.array([[1, 10**9, 0, 0, 0]]), em.vectors, em.exp_vectors, em.row_max, 4)
    with pytest.raises(IndexError):
        bad.scaled_exp(np.array([0]))
    with pytest.raises(IndexError):
        bad.scaled_exp_numpy(np.array([0]))
