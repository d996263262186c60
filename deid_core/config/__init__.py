"""Configuration: the conf/ files (files.py), their typed schema (tables, crf, surrogates) and the
effective, checked Config every factory receives (effective.py), training recipes (recipe.py)."""

from deid_core.config.convert import SchemaError, fields_of
from deid_core.config.crf import CrfSettings
from deid_core.config.effective import (
    Config,
    conf_table,
    crf_from_tables,
    crf_settings,
    file_table,
    load_config,
)
from deid_core.config.files import (
    ConfigError,
    conf_dir,
    conf_file,
    conf_path,
    deep_merge,
    digest,
    load_toml,
)
from deid_core.config.recipe import Recipe, recipe_settings
from deid_core.config.surrogates import Surrogates
from deid_core.config.tables import (
    Job,
    Merge,
    ModelChoice,
    NameNet,
    Pipeline,
    Registry,
    Rules,
    Testing,
)

__all__ = [
    "Config", "ConfigError", "CrfSettings", "Job", "Merge", "ModelChoice", "NameNet", "Pipeline", "Recipe", "Registry", "Rules",
    "SchemaError", "Surrogates", "Testing", "conf_dir", "conf_file", "conf_path", "conf_table", "crf_from_tables",
    "crf_settings", "deep_merge", "digest", "fields_of", "file_table", "load_config", "load_toml",
    "recipe_settings",
]
