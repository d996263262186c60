"""Spark Connect end to end: a real Connect server from pip's pyspark on 127.0.0.1, the job and the API through it.

The server is `$SPARK_HOME/sbin/start-connect-server.sh --wait` (foreground, its own process group,
stopped by that id). The clients are separate processes (a process holds either a classic or a
Connect session); they have no SparkContext, JVM, accumulator or broadcast. The key reaches the
server's workers only as a Connect artifact found by SparkFiles (the driver's path is not offered
there); the manifest is written on the server's file system through copyFromLocalToFs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES, check_outputs, read_rows
from tests.test_api import COUNTS, SORT, tag_run
from tests.test_cluster import free_port, wait_port

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """sc://127.0.0.1:PORT of a Connect server (local[2]) whose Python workers run this interpreter."""
    import pyspark

    spark_home = Path(pyspark.__file__).resolve().parent
    logs = tmp_path_factory.mktemp("connect")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    env.update(SPARK_HOME=str(spark_home), SPARK_LOG_DIR=str(logs), SPARK_PID_DIR=str(logs),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cmd = [str(spark_home / "sbin" / "start-connect-server.sh"), "--wait", "--master", "local[2]",
           "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
           "--conf", f"spark.connect.grpc.binding.port={port}",
           "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4",
           "--conf", "spark.sql.session.timeZone=UTC", "--conf", "spark.driver.memory=1g",
           "--conf", "spark.sql.artifact.copyFromLocalToFs.allowDestLocal=true"]
    log = logs / "server.log"
    proc = subprocess.Popen(cmd, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_port(port, proc, log, timeout=180)
        yield f"sc://127.0.0.1:{port}", log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the group start_new_session made: the script and its JVM
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def client(args: list[str], cwd: Path, remote: str | None = None) -> subprocess.CompletedProcess:
    """A client process (no classic session in it); $SPARK_REMOTE set when `remote` is given."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "PYSPARK_GATEWAY_PORT")}
    if remote:
        env["SPARK_REMOTE"] = remote
    res = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    return res


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """`deid tag` on the sample notes with the literal test config: the rows every runner must give."""
    base = tmp_path_factory.mktemp("connect-ref")
    return base / "tag", tag_run(SAMPLES, base / "tag")


def test_job_through_connect_server(connect_server, reference, tmp_path):
    url, server_log = connect_server
    ref_dir, ref_manifest = reference
    out = tmp_path / "out"
    config = tmp_path / "conf.toml"  # the literal test config, with a progress line every 0.2 s
    config.write_text(LITERAL_CONF.read_text() + "progress_interval_s = 0.2\n")
    res = client(["-m", "deid_spark.jobs.deidentify", "--remote", url, "--input", str(SAMPLES), "--output", str(out),
                  "--config", str(config), "--name-columns", NAME_COLUMNS, "--demo-key",
                  "--spark-log-level", "WARN", "--partitions", "3"], cwd=tmp_path)
    assert "ignored: under Spark Connect" in res.stderr
    assert "tagging: ~" in res.stderr and "of 48 notes" in res.stderr  # progress from Connect's handler
    for part, keys in SORT.items():
        assert read_rows(out / part, keys) == read_rows(ref_dir / part, keys), part
    check_outputs(SAMPLES, out)
    manifest = json.loads((out / "_manifest.json").read_text())  # on the server's file system (same machine)
    assert manifest["spark_connect"] is True and manifest["staging"] == "persist"
    assert {k: manifest["counts"][k] for k in COUNTS} == {k: ref_manifest["counts"][k] for k in COUNTS}
    assert manifest["counts"]["tagged"] == 48 and manifest["faker_version"]
    assert not list(tmp_path.glob("*.json"))  # nothing landed on the client's side (its cwd)


def test_api_through_connect_server(connect_server, reference, tmp_path):
    url, _ = connect_server
    ref_dir, ref_manifest = reference
    script = textwrap.dedent(f"""
        import json, sys
        from pyspark.sql import SparkSession
        from deid_core import DEMO_KEY, deidentify
        spark = SparkSession.builder.remote({url!r}).getOrCreate()
        key_file = {str(tmp_path / "k.key")!r}
        open(key_file, "wb").write(DEMO_KEY)
        df = spark.read.parquet({str(SAMPLES)!r})
        with deidentify(df, key=key_file, name_columns={NAME_COLUMNS!r}, config={str(LITERAL_CONF)!r},
                        partitions=2) as result:
            rows = {{p: [r.asDict(recursive=True) for r in getattr(result, p).collect()]
                    for p in ("notes", "spans", "quarantine")}}
            print(json.dumps({{"rows": rows, "manifest": result.manifest}}, default=str))
        """)
    res = client(["-c", script], cwd=tmp_path)
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for part, keys in SORT.items():
        rows = sorted(got["rows"][part], key=lambda r: tuple((r[k] is None, r[k]) for k in keys))
        assert rows == json.loads(json.dumps(read_rows(ref_dir / part, keys), default=str)), part
    manifest = got["manifest"]
    assert manifest["spark_connect"] is True
    assert {k: manifest["counts"][k] for k in COUNTS} == {k: ref_manifest["counts"][k] for k in COUNTS}
