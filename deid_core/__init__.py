"""deid_core: the Spark-free de-identification engine, and the project's public API.

    from deid_core import deidentify, deidentify_table, DEMO_KEY

`deidentify_table` (Arrow or pandas, no Spark) lives in deid_core.app.api. The Spark-facing
names (`deidentify`, `Result`, `DeidTransformer`, `DeidBundleEstimator`) live in the Spark glue
(deid_spark.udfs) and are imported on first use, so `import deid_core` never imports pyspark.
"""

from __future__ import annotations

import importlib
from typing import Any

from deid_core import compiled as _compiled

__version__ = "0.1.0"

# Engine modules built by `./build.sh setup` (scripts/compile_modules.py) load compiled while their
# sources are unchanged; without a build (or DEID_COMPILED=0) everything runs as Python.
_compiled.install()

# public name -> module that defines it (imported lazily by __getattr__)
_EXPORTS = {
    "deidentify_table": "deid_core.app.api",
    "TableResult": "deid_core.app.api",
    "DEMO_KEY": "deid_core.keys",
    "ConfigError": "deid_core.config",
    "QuarantineRateError": "deid_core.app.manifest",
    "deidentify": "deid_spark.udfs.api",
    "Result": "deid_spark.udfs.api",
    "DeidTransformer": "deid_spark.udfs.ml",
    "DeidBundleEstimator": "deid_spark.udfs.ml",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (the Spark ones need pyspark)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deid_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
