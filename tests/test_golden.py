"""Golden net: the default pipeline's spans and output text on the sample notes, and the README example.

A difference fails with the changed notes listed; if the change is deliberate, regenerate with
`./build.sh golden --update` and commit the new golden file with the change.
"""

from __future__ import annotations

from tests.golden_outputs import (
    README,
    differences,
    load_golden,
    readme_example,
    readme_with_example,
    run_default,
)


def test_default_pipeline_matches_golden(tmp_path):
    new = run_default(tmp_path / "out")
    diff = differences(load_golden(), new)
    assert not diff, "golden outputs changed (./build.sh golden --update if deliberate):\n" + "\n".join(diff)
    readme = README.read_text()
    assert readme_with_example(readme, readme_example(new)) == readme, "README example is stale: ./build.sh golden --update"


def test_differences_reports_spans_and_text():
    old = [{"note_id": "a", "text": "x\ny", "spans": [[0, 1, "DATE", "r", 0, 1, "z"]]}]
    new = [{"note_id": "a", "text": "x\nw", "spans": [[0, 1, "AGE", "r", 0, 1, "z"]]}]
    diff = differences(old, new)
    assert "  - span [0, 1, 'DATE', 'r', 0, 1, 'z']" in diff and "  + span [0, 1, 'AGE', 'r', 0, 1, 'z']" in diff
    assert "-y" in [d.strip() for d in diff] and "+w" in [d.strip() for d in diff]
    assert differences(old, old) == []
