"""Run options shared by the Spark job and `deid tag`: CLI arguments, effective config, checks."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deid_core import taxonomy
from deid_core.config import Config, ConfigError, Job, load_config
from deid_core.config.convert import choices

DUPLICATE_POLICIES = choices(Job, "on_duplicate")
NULL_ID_POLICIES = choices(Job, "on_null_note_id")
STAGING_MODES = choices(Job, "staging")
# Test-only hooks ([testing]), honoured only when the test suite sets $DEID_TEST_HOOKS=1 (never in
# production): see deid_core.app.batch.make_deidentifier.
TEST_HOOKS_ENV = "DEID_TEST_HOOKS"


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs besides the data: effective config, name columns, key source, bundle."""

    config: Config
    name_columns: dict[str, str] = field(default_factory=dict)
    key_file: str | None = None
    demo_key: bool = False
    bundle: str | None = None
    run_id: str | None = None  # scheduled runs (deid_core/app/runs.py): rows partitioned by run id
    incremental: bool = False  # select only notes no committed run of the output holds
    since_column: str | None = None  # select rows past the committed runs' high-water mark of this column

    @property
    def job(self) -> Job:
        """The [job] table of the effective config."""
        return self.config.job

    @property
    def mode(self) -> str:
        """The replacement mode."""
        return self.config.pipeline.mode


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
    parser.add_argument("--bundle", metavar="DIR", help="model bundle folder (default: the config's [model] bundle, models/default; "
                             "a profile may name its own)")
    parser.add_argument("--stages", metavar="S1,S2", help="pipeline stages, e.g. rules,crf")
    parser.add_argument("--batch-size", type=int, metavar="N", help="notes per Arrow batch")
    parser.add_argument("--on-duplicate", choices=DUPLICATE_POLICIES, help="what to do with duplicate note_id")
    parser.add_argument("--run-id", metavar="ID",
                        help="scheduled run: rows go under this run id and commit with its manifest; the same id "
                             "again replaces that run (default with --incremental: the UTC start time)")
    parser.add_argument("--incremental", action="store_true",
                        help="process only notes whose note_id no committed run of the output holds")
    parser.add_argument("--since-column", metavar="COL",
                        help="incremental by a load/update column: only rows with COL past the committed runs' "
                             "high-water mark (implies --incremental)")


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
    given = {k: v for k, v in vars(args).items() if v is not None}
    pipeline: dict[str, Any] = {}
    job: dict[str, Any] = {k: given[k] for k in ("batch_size", "partitions", "on_duplicate", "staging") if k in given}
    if given.get("mode"):
        pipeline["mode"] = given["mode"]
    if "stages" in given:
        pipeline["stages"] = [s.strip() for s in given["stages"].split(",") if s.strip()]
    if "name_columns" in given:
        job["name_columns"] = [c.strip() for c in given["name_columns"].split(",") if c.strip()]
    return {k: v for k, v in (("pipeline", pipeline), ("job", job)) if v}


def effective_config(config_file: str | Mapping[str, Any] | None = None,
                     overrides: dict[str, Any] | None = None) -> Config:
    """conf/ files, then --config FILE, then CLI overrides; checked (ConfigError names the file and key)."""
    config = load_config(overrides, config_file)
    check_config(config)
    return config


def check_config(config: Config) -> None:
    """The run-level checks beyond the schema: test hooks only under the test suite, name-column labels."""
    hooks = config.testing.hooks()
    if hooks and os.environ.get(TEST_HOOKS_ENV) != "1":
        raise ConfigError(f"[testing] holds test-suite hooks ({', '.join(hooks)}); they are refused "
                          f"unless ${TEST_HOOKS_ENV}=1 (set by the test suite only)")
    parse_name_columns(list(config.job.name_columns))


def run_options(args: argparse.Namespace) -> RunOptions:
    """RunOptions from parsed arguments (config file + flags); raises ConfigError on bad options."""
    given = vars(args)
    config = effective_config(given.get("config"), cli_overrides(args))
    return RunOptions(
        config=config,
        name_columns=parse_name_columns(list(config.job.name_columns)),
        key_file=given.get("key_file"),
        demo_key=bool(given.get("demo_key")),
        bundle=given.get("bundle"),
        run_id=given.get("run_id"),
        incremental=bool(given.get("incremental") or given.get("since_column")),
        since_column=given.get("since_column"),
    )
