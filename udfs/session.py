"""The job's SparkSession: the active one, a Spark Connect client (sc://), or a quiet local one.

Under Spark Connect there is no SparkContext, JVM gateway, accumulator or broadcast on the
client: `is_connect` tells the executor (udfs/plan.py) and the job which path to take.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from deid_core.config import ConfigError, conf_dir, load_toml

log = logging.getLogger("deid.job")
REMOTE_ENV = "SPARK_REMOTE"
MASTER_ENV = "DEID_SPARK_MASTER"
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
DEFAULT_JAVA_OPTIONS = "spark.driver.defaultJavaOptions"  # Spark's launcher puts these before extraJavaOptions
# Where else a user gives the driver JVM options (their options win over the local defaults). SPARK_SUBMIT_OPTS:
# the launcher adds it to the driver's command line too.
USER_JAVA_ENVS = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "PYSPARK_SUBMIT_ARGS", "SPARK_SUBMIT_OPTS")
_DRIVER_OPTION_KEYS = (JAVA_OPTIONS, DEFAULT_JAVA_OPTIONS, "--driver-java-options")  # KEY=VALUE giving them
_PROPERTY = re.compile(r"([^\s=:]+)\s*[\s=:]\s*(.*)")  # a spark-defaults.conf line: key, then whitespace, = or :


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
    confs = dict(confs or {})
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit: local mode, this interpreter
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        master = os.environ.get(MASTER_ENV, "local[*]")
        builder = (builder.master(master)
                   .config(JAVA_OPTIONS, driver_java_options(master, confs.pop(JAVA_OPTIONS, ""),
                                                             default=confs.get(DEFAULT_JAVA_OPTIONS, "")))
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.session.timeZone", "UTC"))
    for key, value in confs.items():
        builder = builder.config(key, value)
    return builder.getOrCreate(), True


def driver_java_options(master: str, user: str = "", *, default: str = "") -> str:
    """spark.driver.extraJavaOptions for a session this script starts: the quiet log4j configuration, in local
    mode the JVM defaults of conf/spark/local.toml the user's JVM options leave unset, then spark-defaults.conf's
    (only when the user gives none: theirs replace the file's, as in Spark) or the user's own (`--conf
    spark.driver.extraJavaOptions=...`, last: they win). `default`: the user's --conf
    spark.driver.defaultJavaOptions (the launcher passes it itself; it only counts as given)."""
    log4j = conf_dir() / "spark" / "log4j2-local.properties"
    conf_file = spark_defaults()
    admin = "" if user.strip() else conf_file.get(JAVA_OPTIONS, "")  # the user's replace the file's (as in Spark)
    given = " ".join([user, admin, default, conf_file.get(DEFAULT_JAVA_OPTIONS, ""),
                      *(os.environ.get(v, "") for v in USER_JAVA_ENVS)])
    local = local_java_defaults(given) if master.startswith("local") else []
    return " ".join(x for x in (f"-Dlog4j2.configurationFile={log4j.as_uri()}", *local, admin, user) if x)


def local_java_defaults(given: str, table: dict[str, Any] | None = None) -> list[str]:
    """The [[jvm]] options of conf/spark/local.toml (or `table`) none of whose `unless` prefixes starts one
    of the JVM options in `given` (the user's)."""
    table = load_toml(conf_dir() / "spark" / "local.toml") if table is None else table
    tokens = local_java_tokens(given)
    return [item["option"] for item in table.get("jvm", [])
            if not any(t.startswith(tuple(item.get("unless", ()))) for t in tokens)]


def local_java_tokens(given: str) -> list[str]:
    """The options of a JVM option string (shell quoting undone; unbalanced quotes: split on whitespace), and
    those inside a `KEY=VALUE` whose KEY gives the driver's JVM options (a --conf in $PYSPARK_SUBMIT_ARGS)."""
    try:
        tokens = shlex.split(given)
    except ValueError:  # unbalanced quotes: whitespace-separated is enough to find an option's prefix
        tokens = given.split()
    tokens = [t.strip("'\"") for t in tokens]
    for t in list(tokens):
        key, sep, value = t.partition("=")
        if sep and key in _DRIVER_OPTION_KEYS:
            tokens += local_java_tokens(value)
    return tokens


def spark_conf_folder() -> Path:
    """Where spark-submit reads spark-defaults.conf: $SPARK_CONF_DIR, else $SPARK_HOME/conf, else (pip's pyspark:
    spark-submit finds its home itself) the pyspark package's conf/."""
    if os.environ.get("SPARK_CONF_DIR"):
        return Path(os.environ["SPARK_CONF_DIR"])
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"]) / "conf"
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()) / "conf"


def spark_defaults() -> dict[str, str]:
    """spark-defaults.conf of spark_conf_folder() ({} when there is none): the builder's
    spark.driver.extraJavaOptions replaces the file's, so driver_java_options carries the file's over."""
    path = spark_conf_folder() / "spark-defaults.conf"
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _PROPERTY.match(line.strip())
        if m and not line.lstrip().startswith(("#", "!")):
            out[m.group(1)] = m.group(2).strip()
    return out


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
