"""Run options shared by the Spark job and `deid tag`: CLI arguments, effective config, checks."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deid_core import taxonomy
from deid_core.config import ConfigError, conf_file, deep_merge, load_toml

DUPLICATE_POLICIES = ("fail", "quarantine")
NULL_ID_POLICIES = ("fail", "drop")
STAGING_MODES = ("parquet", "persist")
# [job] keys and the check each value must pass (the message lists what is accepted).
JOB_KEYS = {
    "batch_size": "an integer >= 1 (notes per Arrow batch)",
    "partitions": "an integer >= 0 (0: Spark's default parallelism)",
    "on_duplicate": f"one of {', '.join(DUPLICATE_POLICIES)}",
    "on_null_note_id": f"one of {', '.join(NULL_ID_POLICIES)}",
    "staging": f"one of {', '.join(STAGING_MODES)}",
    "name_columns": "a list of column names, each optionally 'column:LABEL'",
    "max_quarantine_rate": "a number from 0 to 1 (share of tagged notes a stage may quarantine before the run fails)",
}
# Test-only hooks, honoured only when the test suite sets $DEID_TEST_HOOKS=1 (never in production):
# see deid_core.app.batch.make_deidentifier.
TEST_HOOKS_ENV = "DEID_TEST_HOOKS"
TESTING_KEYS = {"fault_note_marker": "a non-empty string; notes whose id contains it raise in the tag stage"}


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs besides the data: effective config, name columns, key source, bundle."""

    config: dict[str, Any]
    name_columns: dict[str, str] = field(default_factory=dict)
    key_file: str | None = None
    demo_key: bool = False
    bundle: str | None = None

    @property
    def job(self) -> dict[str, Any]:
        """The [job] table of the effective config."""
        return self.config["job"]

    @property
    def mode(self) -> str:
        """The replacement mode."""
        return self.config["pipeline"]["mode"]


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options common to `jobs/deidentify.py` and `deid tag` (DESIGN.md §4)."""
    parser.add_argument("--config", metavar="FILE", help="TOML merged over conf/deidentify.toml")
    parser.add_argument("--name-columns", metavar="A,B:LABEL",
                        help="known-PHI metadata columns (never copied to outputs); "
                             "'col:LABEL' sets their label, default PATIENT")
    parser.add_argument("--mode", help="replacement mode (mask, surrogate, redact, hash: see [registry.modes])")
    parser.add_argument("--key-file", metavar="FILE", help="secret key file (else $DEID_KEY)")
    parser.add_argument("--demo-key", action="store_true",
                        help="use the public demo key (demo and tests only, never real data)")
    parser.add_argument("--bundle", metavar="DIR", help="model bundle folder (default: models/default)")
    parser.add_argument("--stages", metavar="S1,S2", help="pipeline stages, e.g. rules,crf")
    parser.add_argument("--batch-size", type=int, metavar="N", help="notes per Arrow batch")
    parser.add_argument("--on-duplicate", choices=DUPLICATE_POLICIES, help="what to do with duplicate note_id")


def parse_name_columns(spec: str | list[str] | None) -> dict[str, str]:
    """'a,b:DOCTOR' (or a list of such items) -> {column: label}; the label must be in the taxonomy."""
    items = spec.split(",") if isinstance(spec, str) else list(spec or [])
    out: dict[str, str] = {}
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        col, _, label = item.partition(":")
        col, label = col.strip(), (label.strip().upper() or "PATIENT")
        if not col:
            raise ConfigError(f"--name-columns: empty column name in {item!r}")
        if label not in taxonomy.labels():
            raise ConfigError(f"--name-columns: unknown label {label!r} for column {col!r}; "
                              f"accepted: {', '.join(taxonomy.labels())}")
        out[col] = label
    return out


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config tables that command-line flags override (only flags that were given)."""
    pipeline: dict[str, Any] = {}
    job: dict[str, Any] = {}
    if getattr(args, "mode", None):
        pipeline["mode"] = args.mode
    if getattr(args, "stages", None) is not None:
        pipeline["stages"] = [s.strip() for s in args.stages.split(",") if s.strip()]
    for name in ("batch_size", "partitions", "on_duplicate", "staging"):
        value = getattr(args, name, None)
        if value is not None:
            job[name] = value
    if getattr(args, "name_columns", None) is not None:
        job["name_columns"] = [c.strip() for c in args.name_columns.split(",") if c.strip()]
    return {k: v for k, v in (("pipeline", pipeline), ("job", job)) if v}


def effective_config(config_file: str | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """conf/deidentify.toml, then --config FILE, then CLI overrides; checked."""
    config = conf_file("deidentify.toml")  # never a same-named file in the working directory
    if config_file:
        if not Path(config_file).is_file():
            raise ConfigError(f"--config {config_file}: no such file")
        config = deep_merge(config, load_toml(Path(config_file).resolve()))
    config = deep_merge(config, overrides or {})
    check_config(config)
    return config


def _check_value(key: str, value: Any) -> bool:
    if key == "batch_size":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1
    if key == "partitions":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if key == "on_duplicate":
        return value in DUPLICATE_POLICIES
    if key == "on_null_note_id":
        return value in NULL_ID_POLICIES
    if key == "staging":
        return value in STAGING_MODES
    if key == "name_columns":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if key == "max_quarantine_rate":
        return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
    return False


def check_config(config: dict[str, Any]) -> None:
    """Raise ConfigError naming the first bad option and what it accepts."""
    job = config.setdefault("job", {})
    for key, value in job.items():
        if key not in JOB_KEYS:
            raise ConfigError(f"[job] unknown option {key!r}; accepted: {', '.join(JOB_KEYS)}")
        if not _check_value(key, value):
            raise ConfigError(f"[job] {key} = {value!r} is not accepted; expected {JOB_KEYS[key]}")
    if config.get("testing") and os.environ.get(TEST_HOOKS_ENV) != "1":
        raise ConfigError(f"[testing] holds test-suite hooks ({', '.join(config['testing'])}); they are refused "
                          f"unless ${TEST_HOOKS_ENV}=1 (set by the test suite only)")
    for key, value in config.get("testing", {}).items():
        if key not in TESTING_KEYS or not (isinstance(value, str) and value):
            raise ConfigError(f"[testing] {key} = {value!r} is not accepted; accepted: {TESTING_KEYS}")
    pipe = config.setdefault("pipeline", {})
    registry = config.get("registry", {})
    stages = pipe.get("stages", [])
    if not isinstance(stages, list):
        raise ConfigError(f"[pipeline] stages must be a list; accepted names: {sorted(registry.get('stages', {}))}")
    unknown = [s for s in stages if s not in registry.get("stages", {})]
    if unknown:
        raise ConfigError(f"unknown pipeline stage(s) {unknown}; accepted: {sorted(registry.get('stages', {}))}")
    for key, table in (("mode", "modes"), ("merge", "merge")):
        value = pipe.get(key)
        if value not in registry.get(table, {}):
            raise ConfigError(f"unknown {key} {value!r}; accepted: {sorted(registry.get(table, {}))}")
    parse_name_columns(job.get("name_columns", []))


def run_options(args: argparse.Namespace) -> RunOptions:
    """RunOptions from parsed arguments (config file + flags); raises ConfigError on bad options."""
    config = effective_config(getattr(args, "config", None), cli_overrides(args))
    return RunOptions(
        config=config,
        name_columns=parse_name_columns(config["job"].get("name_columns", [])),
        key_file=getattr(args, "key_file", None),
        demo_key=bool(getattr(args, "demo_key", False)),
        bundle=getattr(args, "bundle", None),
    )
