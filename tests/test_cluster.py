"""The packaged job on a real Spark standalone cluster (master + worker on 127.0.0.1).

Executors run ./environment/bin/python from the packed environment (--archives): the worker is
started without PYTHONPATH, so deid_core can only come from that environment.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, ROOT, SAMPLES, check_outputs

pytestmark = pytest.mark.cluster


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early; see {log}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"port {port} not open after {timeout}s; see {log}")


@pytest.fixture(scope="session")
def packaged() -> Path:
    """dist built by scripts/package.py (cached under build/package-cache by source hash)."""
    out = ROOT / "build" / "cluster-dist"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, str(ROOT / "scripts" / "package.py"), "--out", str(out)],
                   check=True, env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL)
    assert (out / "deid-env.tar.gz").is_file()
    return out


@pytest.fixture
def standalone(tmp_path):
    """A master and one worker; both stopped by PID at teardown, also when the test fails."""
    import pyspark

    spark_home = Path(pyspark.__file__).resolve().parent
    spark_class = str(spark_home / "bin" / "spark-class")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update(SPARK_HOME=str(spark_home), SPARK_LOG_DIR=str(tmp_path), SPARK_WORKER_DIR=str(tmp_path / "work"))
    mport, wport = free_port(), free_port()
    procs: list[subprocess.Popen] = []
    try:
        mlog = tmp_path / "master.log"
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(mport),
             "--webui-port", str(free_port())], env=env, stdout=open(mlog, "wb"), stderr=subprocess.STDOUT))
        wait_port(mport, procs[0], mlog)
        wlog = tmp_path / "worker.log"
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{mport}", "--host", "127.0.0.1",
             "--port", str(wport), "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g",
             "--work-dir", str(tmp_path / "work")], env=env, stdout=open(wlog, "wb"), stderr=subprocess.STDOUT))
        wait_port(wport, procs[1], wlog)
        yield f"spark://127.0.0.1:{mport}", spark_home, env
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def test_packaged_job_on_standalone_cluster(packaged, standalone, tmp_path):
    master, spark_home, env = standalone
    out = tmp_path / "out"
    driver_env = dict(env, PYTHONPATH=str(ROOT))  # the driver (client mode) runs this checkout
    cmd = [str(spark_home / "bin" / "spark-submit"), "--master", master,
           "--archives", f"{packaged / 'deid-env.tar.gz'}#environment",
           "--conf", "spark.pyspark.python=./environment/bin/python",
           "--conf", f"spark.pyspark.driver.python={sys.executable}",
           "--conf", "spark.executor.memory=768m", "--conf", "spark.ui.enabled=false",
           str(packaged / "deidentify.py"),
           "--input", str(SAMPLES), "--output", str(out), "--config", str(LITERAL_CONF),
           "--name-columns", NAME_COLUMNS, "--demo-key", "--partitions", "3"]
    log = tmp_path / "submit.log"
    with open(log, "wb") as fh:
        res = subprocess.run(cmd, env=driver_env, stdout=fh, stderr=subprocess.STDOUT, timeout=400)
    assert res.returncode == 0, log.read_text()[-4000:]
    check_outputs(SAMPLES, out)
    m = json.loads((out / "_manifest.json").read_text())
    assert m["counts"]["notes"] == 48 and m["counts"]["tagged"] == 48 and m["counts"]["spans"] > 0
    # executors really ran the packed interpreter
    stderr_logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "work").rglob("stderr"))
    assert "environment" in stderr_logs or list((tmp_path / "work").rglob("environment"))
