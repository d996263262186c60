"""Shared fixtures: paths, the PhysioNet dev split, and the one session-scoped local SparkSession."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The [testing] hooks (fault injection) are honoured only under this flag; subprocesses inherit it.
os.environ["DEID_TEST_HOOKS"] = "1"
PHYSIONET = ROOT.parent / "shared" / "data" / "physionet-deid"


@pytest.fixture(scope="session")
def physionet_dir() -> Path:
    """The PhysioNet deid dev split (read in place, never copied); skips if absent."""
    if not (PHYSIONET / "id.text").is_file():
        pytest.skip(f"PhysioNet dev split not found at {PHYSIONET}")
    return PHYSIONET


@pytest.fixture(scope="session")
def physionet(physionet_dir):
    """The parsed PhysioNet dev corpus (notes with patients.tsv metadata, gold spans)."""
    from deid_core.io.physionet import read_physionet

    return read_physionet(physionet_dir)


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for every Spark test; workers run this interpreter."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("deid-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def default_collector():
    """CPython's collector defaults for a test of the collector settings (deid_core/app/heap.py), restored after."""
    import gc

    gc.unfreeze()
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.unfreeze()
    gc.set_threshold(*before)
