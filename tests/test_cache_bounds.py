"""The per-worker caches' bounds never change outputs: tiny caches (emptied and turned all the time) vs large."""

from __future__ import annotations

from deid_core.bundle_choice import resolve_bundle
from deid_core.config import load_config
from deid_core.engine.pipeline import build_deidentifier
from deid_core.engine.surrogates import dates
from deid_core.training.synth.generate import generate
from deid_core.training.synth.output import to_note

KEY = b"cache-bounds-test-key-000000000"


def _outputs(cache_size: int, batch_tokens: int, notes, chunks: int = 4) -> list:
    config = load_config({"crf": {"tagging": {"cache_size": cache_size, "batch_tokens": batch_tokens}}})
    deid = build_deidentifier(config, resolve_bundle(config), KEY)
    step = -(-len(notes) // chunks)
    out = []
    for a in range(0, len(notes), step):  # several calls: the caches carry over from one to the next
        out += [(r.note_id, r.error_class, [(s.start, s.end, s.label, s.source, s.replacement) for s in r.spans])
                for r in deid.process_many(notes[a:a + step])]
    return out


def test_tiny_caches_give_the_same_outputs(monkeypatch):
    notes = [to_note(n) for n in generate(80, seed=515, n_patients=12)]
    large = _outputs(200_000, 32_768, notes)
    monkeypatch.setattr(dates, "PARSE_CACHE", 2)
    tiny = _outputs(2, 512, notes)  # the emission tables emptied before every scorer batch of ~512 tokens
    assert sum(len(spans) for _, _, spans in large) > 100
    assert tiny == large
