"""Dump the rules stage's hits and the tagger's spans per note as JSON lines (tests/test_compiled_rules.py).

usage: python tests/compiled_rules_dump.py OUT DEV_DIR N_DEV N_SYNTH [STRIDE]: every STRIDE-th dev note (default 1,
N_DEV of them), N_SYNTH synthetic notes, then invented odd notes (empty, blanks, CRLF, tabs, NBSP, 'ſ', 'İ',
astral characters). Installs the compiled-module finder first (DEID_COMPILED=0: pure Python); the first line
names the engine modules that were imported compiled."""

from __future__ import annotations

import json
import sys

import deid_core.compiled as compiled

finder = compiled.install()

from deid_core.config import load_config  # noqa: E402 - after the finder, as the engine imports it
from deid_core.doc import Doc  # noqa: E402
from deid_core.engine.contract import NoteState  # noqa: E402
from deid_core.engine.rules.tagger import RuleTagger  # noqa: E402

# invented notes (no real patient) with the characters where typed code could part from Python: empty, one
# token, blanks only, CRLF, tabs, NBSP, 'ſ' and 'İ' (lower() changes their length), astral characters
_LINE = "Seen by Dr. John Smith on 03/14/2091 at Mercy Hospital, Boston, MA 02118. MRN 1234567, call 617-555-0199.\n"
ODD = ["", " ", "Smith", "\t\t\n", "\r\n\r\n", _LINE.replace("\n", "\r\n") * 3, _LINE.replace(" ", "\u00a0"),
       _LINE.replace(" ", "\t"), "Dr. \u017fmith \u0130lker \u0130\u0130 " + _LINE,
       "\U0001F600 " * 20 + _LINE + "\U0001D518",
       "Name: \u0130lker \u00d6zt\u00fcrk\nDOB: 01/02/1950\nAddr: 12 Main St\u00a0Apt 4, Cambridge, MA 02139\n"]


def _spans(spans) -> list:
    return [[s.start, s.end, s.label, s.source, repr(s.confidence)] for s in spans]


def main(out: str, dev_dir: str, n_dev: int, n_synth: int, stride: int = 1) -> None:
    """Write one line of active modules, then per note its rule hits and final spans."""
    from deid_core.bundle_choice import resolve_bundle
    from deid_core.engine.pipeline import build_deidentifier
    from deid_core.io.physionet import read_physionet
    from deid_core.notes import Note
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    notes = read_physionet(dev_dir).notes[::stride][:n_dev] if n_dev else []
    notes += [to_note(n) for n in generate(n_synth, seed=4242, n_patients=20)] if n_synth else []
    notes += [Note(f"odd{i}", text) for i, text in enumerate(ODD)]
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
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
