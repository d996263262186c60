"""Behaviour snapshot for refactors: the default Deidentifier's spans and surrogates on two corpora.

    python scripts/snapshot_spans.py --out /tmp/before.jsonl      # before the change
    python scripts/snapshot_spans.py --out /tmp/after.jsonl       # after it
    python scripts/snapshot_spans.py --compare /tmp/before.jsonl /tmp/after.jsonl

Corpora: the PhysioNet dev split (read in place from ../shared/data, with patients.tsv names)
and 400 synthetic notes (`deid synth` seed 4242). The snapshot holds note ids, offsets, labels,
sources and replacements; keep it outside the repository (it derives from licensed notes).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHYSIONET = ROOT.parent / "shared" / "data" / "physionet-deid"
KEY = b"snapshot-key-not-secret-0000000"


def corpora() -> dict[str, list]:
    """name -> notes of each snapshot corpus."""
    from deid_core.io.physionet import read_physionet
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    out = {"synthetic": [to_note(n) for n in generate(400, seed=4242, n_patients=60)]}
    if (PHYSIONET / "id.text").is_file():
        out["physionet"] = read_physionet(PHYSIONET).notes
    return out


def snapshot(path: Path) -> int:
    """Write one JSON line per note: corpus, note id, spans and replacements of the default pipeline."""
    from deid_core.app.options import effective_config
    from deid_core.bundle_choice import resolve_bundle
    from deid_core.engine.pipeline import build_deidentifier

    config = effective_config()
    deid = build_deidentifier(config, resolve_bundle(config), KEY)
    n = 0
    with open(path, "w") as fh:
        for name, notes in corpora().items():
            for note, res in zip(notes, deid.process_many(notes), strict=True):
                rec = {"corpus": name, "note_id": note.note_id, "error": res.error_class,
                       "spans": [[s.start, s.end, s.label, s.source, s.replacement] for s in res.spans]}
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} notes -> {path}")
    return 0


def compare(a: Path, b: Path, show: int = 25) -> int:
    """Print how the two snapshots differ (counts per corpus, then the first differing notes)."""
    def load(p: Path) -> dict:
        return {(r["corpus"], r["note_id"]): r for r in map(json.loads, p.read_text().splitlines())}

    ra, rb = load(a), load(b)
    differing = [k for k in sorted(ra.keys() | rb.keys()) if ra.get(k) != rb.get(k)]
    for corpus in sorted({k[0] for k in ra.keys() | rb.keys()}):
        total = sum(1 for k in ra if k[0] == corpus)
        print(f"{corpus}: {sum(1 for k in differing if k[0] == corpus)} of {total} notes differ")
    for k in differing[:show]:
        sa = {tuple(s) for s in (ra.get(k) or {}).get("spans", [])}
        sb = {tuple(s) for s in (rb.get(k) or {}).get("spans", [])}
        print(f"{k[0]} {k[1]}: -{sorted(s[:4] for s in sa - sb)} +{sorted(s[:4] for s in sb - sa)}")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    """--out FILE writes a snapshot; --compare A B diffs two."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path)
    g.add_argument("--compare", nargs=2, type=Path)
    args = p.parse_args(argv)
    return snapshot(args.out) if args.out else compare(*args.compare)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
