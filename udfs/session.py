"""The job's SparkSession: the active one, a Spark Connect client (sc://), or a quiet local one.

Under Spark Connect there is no SparkContext, JVM gateway, accumulator or broadcast on the
client: `is_connect` tells the executor (udfs/plan.py) and the job which path to take.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from deid_core.config import ConfigError, conf_dir

log = logging.getLogger("deid.job")
REMOTE_ENV = "SPARK_REMOTE"
MASTER_ENV = "DEID_SPARK_MASTER"


def is_connect(spark: Any) -> bool:
    """A Spark Connect session: no SparkContext, JVM, accumulators or broadcasts on this side."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def remote_url(remote: str | None = None) -> str | None:
    """The Spark Connect URL to use: --remote, else $SPARK_REMOTE, else None (classic Spark)."""
    return remote or os.environ.get(REMOTE_ENV) or None


def spark_confs(pairs: list[str]) -> dict[str, str]:
    """--conf KEY=VALUE items as a dict (ConfigError naming the bad item)."""
    out = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf {item!r}: expected KEY=VALUE, e.g. spark.sql.catalogImplementation=hive")
        out[key.strip()] = value
    return out


def get_spark(app_name: str, remote: str | None = None, confs: dict[str, str] | None = None) -> tuple[Any, bool]:
    """(session, created): a Spark Connect session for sc:// URLs, else the active session, else a
    local one (master local[*] or $DEID_SPARK_MASTER; Spark logs warnings only) unless spark-submit
    started this process. `confs` (--conf) go to the new session, or to the active one where they may."""
    from pyspark.sql import SparkSession

    url = remote_url(remote)
    if url:
        builder = SparkSession.builder.remote(url)
        for key, value in (confs or {}).items():
            builder = builder.config(key, value)
        return builder.getOrCreate(), True
    active = SparkSession.getActiveSession()
    if active is not None:
        _set_confs(active, confs or {})
        return active, False
    builder = SparkSession.builder.appName(app_name)
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit: local mode, this interpreter
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        log4j = conf_dir() / "spark" / "log4j2-local.properties"
        builder = (builder.master(os.environ.get(MASTER_ENV, "local[*]"))
                   .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j.as_uri()}")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC"))
    for key, value in (confs or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate(), True


def _set_confs(active: Any, confs: dict[str, str]) -> None:
    """--conf settings on a running session: runtime ones set, static ones (catalog, warehouse) reported."""
    for key, value in confs.items():
        if value in (current := active.conf.get(key, None), (current or "").removeprefix("file:")):
            continue  # Spark keeps local paths as file: URIs
        if active.conf.isModifiable(key):
            active.conf.set(key, value)
        else:
            log.warning("--conf %s: not changed, the running session has it fixed (spark-submit --conf sets it)", key)


def set_spark_log_level(spark: Any, level: str) -> None:
    """Spark's (log4j) level for this run; under Spark Connect the server's configuration decides."""
    if is_connect(spark):
        log.warning("--spark-log-level %s ignored: under Spark Connect the server's log configuration decides",
                    level)
        return
    spark.sparkContext.setLogLevel(level)
