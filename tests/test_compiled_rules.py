"""The compiled (Cython) rules stage, names and merge give exactly the pure-Python hits and spans on real notes.

Each side runs in its own process (tests/compiled_rules_dump.py): DEID_COMPILED=0 imports every engine module as
Python; the other imports this checkout's build (scripts/compile_modules.py). Skipped without a build of the
rules modules (no compiler): then both sides would be pure Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "tests" / "compiled_rules_dump.py"
# the typed modules of the rules stage (a .pxd next to the .py): each must run compiled on the compiled side
TYPED = ("deid_core.engine.rules.tagger", "deid_core.engine.rules.triggers", "deid_core.engine.rules.screen")
# every 12th dev note (101 across the split's patients and note types), 20 synthetic notes and the dumper's 11
# invented odd notes: one process per side, ~4 CPU s each (the first version's 300 + 60 notes took 217 s at load 26)
N_DEV, N_SYNTH, STRIDE, N_ODD = 101, 20, 12, 11


def _dump(tmp_path: Path, physionet_dir: Path, compiled: bool) -> tuple[list[str], list[dict]]:
    out = tmp_path / ("compiled.jsonl" if compiled else "pure.jsonl")
    env = {**os.environ, "DEID_COMPILED": "1" if compiled else "0", "PYTHONHASHSEED": "0"}
    args = [str(out), str(physionet_dir), str(N_DEV), str(N_SYNTH), str(STRIDE)]
    subprocess.run([sys.executable, str(DUMP), *args], env=env, check=True, cwd=ROOT, timeout=900)
    lines = out.read_text().splitlines()
    return json.loads(lines[0]), [json.loads(x) for x in lines[1:]]


def test_compiled_rules_names_merge_identical(tmp_path: Path, physionet_dir: Path) -> None:
    """Dev notes across the split, synthetic and invented odd notes: every rule hit, the stage's spans, rule_spans,
    nonphi and the tagger's final spans (names, merge, propagation) equal, in order, compiled and pure."""
    import deid_core.compiled as compiled

    manifest = compiled.BUILD_DIR / compiled.build_tag() / compiled.MANIFEST
    if not manifest.is_file() or not all(m in json.loads(manifest.read_text())["modules"] for m in TYPED):
        pytest.skip("no compiled build of the rules modules (scripts/compile_modules.py)")
    active_pure, pure = _dump(tmp_path, physionet_dir, compiled=False)
    active, comp = _dump(tmp_path, physionet_dir, compiled=True)
    assert active_pure == []
    assert set(TYPED) <= set(active), f"stale or missing builds: {set(TYPED) - set(active)}"
    assert len(pure) == len(comp) == N_DEV + N_SYNTH + N_ODD
    differ = [p["id"] for p, c in zip(pure, comp, strict=True) if p != c]
    assert not differ, f"{len(differ)} notes differ"
    assert sum(len(p["final"]) for p in pure) > 300  # the notes do have spans
    odd = {p["id"]: p for p in pure[-N_ODD:]}
    assert all(odd[f"odd{i}"]["final"] for i in range(5, N_ODD))  # the odd notes with PHI have spans
