"""Training corpora: a PhysioNet-format folder or a notes/gold Parquet folder, and the pipeline
configuration training and CV run the rules with."""

from __future__ import annotations

from pathlib import Path

from deid_core.config import Config, load_config

# Known-PHI metadata columns used when a Parquet training corpus has them (EHR features).
NAME_COLUMNS = {"patient_first_name": "PATIENT", "patient_last_name": "PATIENT", "attending_name": "DOCTOR"}


def read_training_corpus(path: str):
    """(notes, gold) of a PhysioNet-format folder or a notes/gold Parquet folder."""
    from deid_core.io.physionet import read_physionet

    folder = Path(path)
    if (folder / "id.text").is_file():
        c = read_physionet(folder)
        return c.notes, c.gold
    from deid_core.io.tables import read_notes, read_spans, read_table

    for notes_name, gold_name in (("notes.parquet", "gold.parquet"), ("notes", "gold"), ("notes", "spans")):
        if (folder / notes_name).exists() and (folder / gold_name).exists():
            present = set(read_table(folder / notes_name).column_names)
            names = {c: lab for c, lab in NAME_COLUMNS.items() if c in present}
            return read_notes(folder / notes_name, names), read_spans(folder / gold_name)
    raise FileNotFoundError(f"{folder}: neither id.text nor notes(.parquet) + gold(.parquet) found")


def pipeline_config(path: str | None) -> Config:
    """The effective configuration: conf/ with an optional override file (--config FILE) merged over it."""
    return load_config(config_file=path)
