"""The job's local SparkSession: JVM defaults of conf/spark/local.toml, the user's JVM options winning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deid_core.config import conf_dir, load_toml
from deid_spark.udfs.session import JAVA_OPTIONS, driver_java_options, local_java_defaults

ROOT = conf_dir().parent
TABLE = {"jvm": [{"option": "-XX:TieredStopAtLevel=1", "unless": ["-XX:TieredStopAtLevel", "-Xint"]},
                 {"option": "-XX:+UseSerialGC", "unless": ["-XX:+UseSerialGC", "-XX:+UseG1GC"]}]}


def test_defaults_only_where_the_user_sets_nothing_of_their_kind():
    assert local_java_defaults("", TABLE) == ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    assert local_java_defaults("-Xmx2g -XX:+UseG1GC", TABLE) == ["-XX:TieredStopAtLevel=1"]
    assert local_java_defaults("'-XX:TieredStopAtLevel=4' -Xint", TABLE) == ["-XX:+UseSerialGC"]
    assert local_java_defaults("--driver-java-options \"-XX:+UseG1GC\" pyspark-shell", TABLE) == [
        "-XX:TieredStopAtLevel=1"]
    assert local_java_defaults("-XX:TieredStopAtLevel=1 -XX:+UseSerialGC", {"jvm": []}) == []


def test_driver_options_local_only_user_last(monkeypatch):
    for env in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR",
                "SPARK_HOME"):
        monkeypatch.delenv(env, raising=False)
    configured = [item["option"] for item in load_toml(conf_dir() / "spark" / "local.toml").get("jvm", [])]
    local = driver_java_options("local[2]").split()
    assert local[0].startswith("-Dlog4j2.configurationFile=") and local[1:] == configured
    assert driver_java_options("yarn").split() == local[:1]  # a cluster master: no local defaults
    mine = driver_java_options("local[*]", "-XX:+UseG1GC -Dx=1").split()
    assert mine[-2:] == ["-XX:+UseG1GC", "-Dx=1"] and "-XX:+UseSerialGC" not in mine
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=4")
    assert "-XX:TieredStopAtLevel=1" not in driver_java_options("local[2]")


def test_spark_defaults_file_is_carried_over(monkeypatch, tmp_path):
    (tmp_path / "spark-defaults.conf").write_text(f"# admin\n{JAVA_OPTIONS}  -XX:+UseG1GC -Da=b\nspark.x=1\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    opts = driver_java_options("local[2]")
    assert opts.endswith("-XX:+UseG1GC -Da=b") and "-XX:+UseSerialGC" not in opts


SCRIPT = """
import json, sys
from deid_spark.udfs.session import get_spark, spark_confs
spark, _ = get_spark("deid-jvm-options-test", confs=spark_confs(sys.argv[1:]))
bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(json.dumps(list(bean.getInputArguments())))
spark.stop()
"""


@pytest.mark.spark
def test_the_options_reach_the_local_jvm_and_the_users_win(tmp_path):
    # the JVM's own input arguments: the configured JIT default is there, the user's GC replaces the default one
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "PYSPARK_SUBMIT_ARGS",
                        "SPARK_CONF_DIR", "SPARK_HOME")}
    env.update(PYTHONPATH=str(ROOT), DEID_SPARK_MASTER="local[1]", PYSPARK_PYTHON=sys.executable)
    res = subprocess.run([sys.executable, "-c", SCRIPT, f"{JAVA_OPTIONS}=-XX:+UseParallelGC -Ddeid.test=1"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    args = json.loads(res.stdout.strip().splitlines()[-1])
    configured = [item["option"] for item in load_toml(conf_dir() / "spark" / "local.toml").get("jvm", [])]
    for option in configured:
        if "GC" in option:
            assert option not in args, args
        else:
            assert option in args, args
    assert "-XX:+UseParallelGC" in args and "-Ddeid.test=1" in args
    assert any(a.startswith("-Dlog4j2.configurationFile=") for a in args)


def test_launcher_sources_of_driver_options_count_as_the_users(monkeypatch, tmp_path):
    # Spark's launcher also puts $SPARK_SUBMIT_OPTS and spark.driver.defaultJavaOptions on the driver's command
    # line: a GC there plus the GC default is "Conflicting collector combinations" and the JVM does not start.
    for env in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "PYSPARK_SUBMIT_ARGS", "SPARK_HOME"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-XX:+UseG1GC")
    assert "-XX:+UseSerialGC" not in driver_java_options("local[2]")
    monkeypatch.delenv("SPARK_SUBMIT_OPTS")
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.defaultJavaOptions -XX:+UseParallelGC\n")
    assert "-XX:+UseSerialGC" not in driver_java_options("local[2]")
    (tmp_path / "spark-defaults.conf").unlink()
    assert "-XX:+UseSerialGC" not in driver_java_options("local[2]", default="-XX:+UseZGC")


def test_users_extra_options_replace_the_files_as_in_spark(monkeypatch, tmp_path):
    # --conf spark.driver.extraJavaOptions replaces spark-defaults.conf's (Spark's own rule): both on one command
    # line, the file's G1 and the user's Parallel GC would stop the JVM ("Conflicting collector combinations").
    for env in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "PYSPARK_SUBMIT_ARGS", "SPARK_SUBMIT_OPTS",
                "SPARK_HOME"):
        monkeypatch.delenv(env, raising=False)
    (tmp_path / "spark-defaults.conf").write_text(f"{JAVA_OPTIONS}=-XX:+UseG1GC -Dadmin=1\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    opts = driver_java_options("local[2]", "-XX:+UseParallelGC").split()
    assert opts[-1] == "-XX:+UseParallelGC" and "-XX:+UseG1GC" not in opts and "-XX:+UseSerialGC" not in opts
    assert driver_java_options("local[2]").split()[-2:] == ["-XX:+UseG1GC", "-Dadmin=1"]  # no user's: carried over


def test_options_inside_a_submit_args_conf_count():
    # PYSPARK_SUBMIT_ARGS='--conf "spark.driver.defaultJavaOptions=-Xss4m -XX:+UseG1GC"': the launcher adds these
    # to our extraJavaOptions (a GC default beside them stops the JVM), so the options inside the value count.
    given = '--conf "spark.driver.defaultJavaOptions=-Xss4m -XX:+UseG1GC" --driver-java-options=-Xint pyspark-shell'
    assert local_java_defaults(given, TABLE) == []
    assert local_java_defaults("--conf spark.executor.extraJavaOptions=-XX:+UseG1GC", TABLE) == [
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]  # another JVM's options: not the driver's


def test_spark_defaults_folder_without_spark_home_is_pysparks(monkeypatch):
    # pip's pyspark: spark-submit finds SPARK_HOME itself (the pyspark package) and reads its conf/ folder
    from pyspark.find_spark_home import _find_spark_home

    from deid_spark.udfs.session import spark_conf_folder

    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    assert spark_conf_folder() == Path(_find_spark_home()) / "conf"
    monkeypatch.setenv("SPARK_HOME", "/opt/spark")
    assert spark_conf_folder() == Path("/opt/spark/conf")
