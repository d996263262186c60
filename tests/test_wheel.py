"""The built wheel in a fresh virtualenv, outside the repository: `deid tag` and the README's API examples.

pip installs the wheel with its dependencies (PyPI, normally served from pip's cache). Nothing
of the checkout is importable there: no PYTHONPATH, the working folder is a temporary one
holding only a copy of the (synthetic) sample notes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import venv
import zipfile
from pathlib import Path

import pytest

from deid_core import __version__
from tests.helpers_job import NAME_COLUMNS, ROOT, SAMPLES
from tests.test_api import readme_block

pytestmark = pytest.mark.cluster


def build_wheel(dest: Path) -> Path:
    """scripts/package.py's wheel (it checks that conf/, the default bundle and deid_spark are inside)."""
    spec = importlib.util.spec_from_file_location("deid_package_script", ROOT / "scripts" / "package.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_wheel(dest)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, deid, work folder): a fresh venv with the wheel installed, and a folder outside the checkout."""
    base = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(base / "dist")
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True, symlinks=True).create(env_dir)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME", "VIRTUAL_ENV")}
    subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    str(wheel)], check=True, cwd=base, env=clean, timeout=900)
    work = base / "work"
    (work / "samples").mkdir(parents=True)
    shutil.copy2(SAMPLES, work / "samples" / "notes.parquet")
    return wheel, env_dir / "bin", work, clean


def test_wheel_contents_and_metadata(installed):
    wheel = installed[0]
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if "/" in n and ".dist-info/" not in n}
    assert tops == {"deid_core", "deid_spark"}, tops  # no top-level udfs/ or jobs/
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0 AND GPL-2.0-only" in meta
    assert {n.rsplit("/", 1)[-1] for n in names if "/licenses/" in n} >= {"LICENSE", "GPL-2.0-only.txt"}


def test_deid_tag_and_api_from_the_installed_wheel(installed):
    _, bin_dir, work, env = installed
    version = subprocess.run([str(bin_dir / "deid"), "--version"], capture_output=True, text=True, env=env, cwd=work)
    # a wheel carries no compiled build: the engine says it runs as pure Python
    assert version.stdout.strip() == f"deid-spark {__version__} (compiled modules: none, pure Python (no build))"
    subprocess.run([str(bin_dir / "deid"), "tag", "--input", "samples/notes.parquet", "--output", "tagged",
                    "--name-columns", NAME_COLUMNS, "--demo-key"], check=True, env=env, cwd=work, timeout=600,
                   capture_output=True)
    tagged = json.loads((work / "tagged" / "_manifest.json").read_text())
    assert tagged["counts"]["tagged"] == 48 and tagged["counts"]["spans"] > 0 and tagged["faker_version"]

    script = "\n".join([
        "import sys, deid_core, deid_spark.udfs",
        "assert 'site-packages' in deid_core.__file__ and 'site-packages' in deid_spark.udfs.__path__[0]",
        "from pyspark.sql import SparkSession",
        "spark = SparkSession.builder.master('local[2]').config('spark.ui.enabled', 'false').getOrCreate()",
        readme_block("api example"),
        "assert result.counts['tagged'] == 48, result.counts",
        readme_block("table example"),
        "assert out.counts['tagged'] == 48",
        "print('SPANS', result.counts['spans'], out.counts['spans'])",
    ])
    py = str(bin_dir / "python")
    res = subprocess.run([py, "-c", script], capture_output=True, text=True, timeout=600,
                         env=dict(env, PYSPARK_PYTHON=py, PYSPARK_DRIVER_PYTHON=py), cwd=work)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    spark_spans, table_spans = map(int, res.stdout.strip().splitlines()[-1].split()[1:])
    assert spark_spans == table_spans == tagged["counts"]["spans"]
