"""The leave-phrasings-out probe (conf/evaluation/layout_probe.toml, scripts/probe_layouts.py) stays out of
training and renders notes whose gold spans are exactly the PHI written."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from deid_core.training.synth.catalog import family_names, type_names

ROOT = Path(__file__).resolve().parents[1]


def _probe_module():
    spec = importlib.util.spec_from_file_location("probe_layouts", ROOT / "scripts" / "probe_layouts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_probe_family_is_never_drawn_by_the_generator():
    assert "probe" not in type_names()
    assert not any(f.startswith("probe.") for f in family_names())


def test_probe_notes_carry_the_worst_labels_with_exact_gold():
    notes = _probe_module().probe_notes(40, 3)
    assert len(notes) == 40 and {n.family for n in notes} == {"probe.layouts7"}
    labels = {s.label for n in notes for s in n.spans}
    assert {"CITY", "HEALTHPLAN", "LOCATION-OTHER", "ORGANIZATION", "USERNAME", "MEDICALRECORD", "FAX"} <= labels
    for n in notes:
        for s in n.spans:
            surface = n.text[s.start:s.end]
            assert surface == surface.strip() and surface, (n.note_id, s)
    assert _probe_module().probe_notes(12, 3)[5].text == notes[5].text  # same seed, same notes


def test_probe_script_rejects_a_missing_bundle(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "probe_layouts.py"), "--bundle", str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--bundle" in r.stderr
