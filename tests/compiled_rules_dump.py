"""Dump the rules stage's hits and the tagger's spans per note as JSON lines (tests/test_compiled_rules.py).

usage: python tests/compiled_rules_dump.py OUT DEV_DIR N_DEV N_SYNTH. Installs the compiled-module finder first
(DEID_COMPILED=0: pure Python); the first line names the engine modules that were imported compiled."""

from __future__ import annotations

import json
import sys

import deid_core.compiled as compiled

finder = compiled.install()

from deid_core.config import load_config  # noqa: E402 - after the finder, as the engine imports it
from deid_core.doc import Doc  # noqa: E402
from deid_core.engine.contract import NoteState  # noqa: E402
from deid_core.engine.rules.tagger import RuleTagger  # noqa: E402


def _spans(spans) -> list:
    return [[s.start, s.end, s.label, s.source, repr(s.confidence)] for s in spans]


def main(out: str, dev_dir: str, n_dev: int, n_synth: int) -> None:
    """Write one line of active modules, then per note its rule hits and final spans."""
    from deid_core.bundle_choice import resolve_bundle
    from deid_core.engine.pipeline import build_deidentifier
    from deid_core.io.physionet import read_physionet
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    notes = read_physionet(dev_dir).notes[:n_dev] if n_dev else []
    notes += [to_note(n) for n in generate(n_synth, seed=4242, n_patients=20)] if n_synth else []
    config = load_config({}, None)
    rules = RuleTagger(config.rules)
    deid = build_deidentifier(config, resolve_bundle(config, None), b"compiled-test-key-not-secret-0000")
    tagged = deid._analyse_many(notes)
    with open(out, "w") as fh:
        fh.write(json.dumps(sorted(finder.active) if finder else []) + "\n")
        for note, t in zip(notes, tagged, strict=True):
            phi, sup = rules.regex_hits(Doc(note))
            state = NoteState()
            spans = rules.run(Doc(note), state)
            final = _spans(t.spans) if not isinstance(t, Exception) else [type(t).__name__]
            fh.write(json.dumps({"id": note.note_id, "phi": _spans(phi), "sup": _spans(sup), "spans": _spans(spans),
                                 "rule_spans": _spans(state.rule_spans or []), "nonphi": _spans(state.nonphi or []),
                                 "final": final}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
