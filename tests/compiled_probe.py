"""Run in a subprocess by tests/test_compiled.py: tag notes with the default pipeline, print JSON.

    python tests/compiled_probe.py DEV_DIR N    # sample notes + the first N dev notes (N may be 0)

Prints one JSON object: compiled.status(), which probed modules loaded compiled, and per note its
spans (start, end, label, source, replacement) and error class.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
KEY = b"compiled-probe-key-not-secret-00"
PROBED = ("deid_core.engine.crf.scorer", "deid_core.engine.crf._scorer_fast", "deid_core.engine.pipeline",
          "deid_core.engine.crf.labels", "deid_core.gazetteers", "deid_core.engine.crf._emissions_fast")


def notes(dev: str, n: int) -> list:
    """The sample notes (the golden test's input), then the first n PhysioNet dev notes."""
    from deid_core.notes import Note

    table = pq.read_table(ROOT / "samples" / "notes.parquet", columns=["note_id", "text"]).to_pylist()
    out = [Note(r["note_id"], r["text"] or "") for r in table]
    if n:
        from deid_core.io.physionet import read_physionet

        out += read_physionet(dev).notes[:n]
    return out


def main(argv: list[str]) -> int:
    """Tag and print."""
    import importlib

    from deid_core import compiled
    from deid_core.bundle_choice import resolve_bundle
    from deid_core.config import load_config
    from deid_core.engine.pipeline import build_deidentifier

    config = load_config()
    deid = build_deidentifier(config, resolve_bundle(config, None), KEY)
    batch = notes(argv[0], int(argv[1]))
    records = [[note.note_id, res.error_class, [[s.start, s.end, s.label, s.source, s.replacement]
                                                for s in res.spans]]
               for note, res in zip(batch, deid.process_many(batch), strict=True)]
    loaded = {}
    for name in PROBED:
        try:
            loaded[name] = compiled.is_compiled(importlib.import_module(name))
        except ImportError:
            loaded[name] = None
    print(json.dumps({"status": compiled.status(), "file": compiled.__file__, "compiled": loaded,
                      "notes": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
