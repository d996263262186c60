"""End-to-end throughput of the Spark job in local mode vs `deid tag` (Spark-free) on the same notes.

    python -m benchmarks job [--notes 100000] [--cores 2] [--mode mask]

Notes come from samples/make_samples.py (fictional, templated, ~450 characters each), written
once to build/bench-job/. The job runs as `python jobs/deidentify.py` with master local[CORES]
(JVM start-up included: that is what a user pays); `deid tag` runs in this process on one core.
Prints notes/s, notes/s per core and the Spark overhead in core-seconds per note.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME_COLUMNS = "patient_first_name,patient_last_name,attending_name:DOCTOR"


def make_input(n: int, work: Path) -> Path:
    """The benchmark notes (cached by size)."""
    path = work / f"notes-{n}.parquet"
    if path.is_file():
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "samples" / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    work.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(mod.make_rows(n, seed=11), schema=mod.SCHEMA), path, row_group_size=20_000)
    return path


def run_tag(inp: Path, out: Path, extra: list[str]) -> tuple[float, dict]:
    """`deid tag` in this process: (wall seconds, manifest)."""
    from deid_core.app.cli import main as deid_main

    t = time.perf_counter()
    rc = deid_main(["tag", "--input", str(inp), "--output", str(out), "--name-columns", NAME_COLUMNS,
                    "--demo-key", *extra])
    wall = time.perf_counter() - t
    if rc:
        raise SystemExit(f"deid tag failed ({rc})")
    return wall, json.loads((out / "_manifest.json").read_text())


def run_job(inp: Path, out: Path, cores: int, extra: list[str]) -> tuple[float, dict]:
    """The Spark job in local[cores] as a user runs it: (wall seconds, manifest)."""
    env = dict(os.environ, DEID_SPARK_MASTER=f"local[{cores}]",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    t = time.perf_counter()
    res = subprocess.run([sys.executable, str(ROOT / "jobs" / "deidentify.py"), "--input", str(inp),
                          "--output", str(out), "--name-columns", NAME_COLUMNS, "--demo-key",
                          "--partitions", str(cores * 4), *extra],
                         env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if res.returncode:
        raise SystemExit(f"job failed ({res.returncode}): {res.stderr[-2000:]}")
    return wall, json.loads((out / "_manifest.json").read_text())


def main(argv: list[str]) -> int:
    """Run both, print the comparison."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks job", description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--mode", default=None, help="replacement mode (default: the config's)")
    ap.add_argument("--skip-tag", action="store_true", help="only the Spark job")
    a = ap.parse_args(argv)
    extra = ["--mode", a.mode] if a.mode else []
    work = ROOT / "build" / "bench-job"
    inp = make_input(a.notes, work)
    import pyarrow.parquet as pq

    chars = sum(len(t or "") for t in pq.read_table(inp, columns=["text"])["text"].to_pylist())
    print(f"input: {a.notes} notes, {chars / 1e6:.1f} M characters ({inp.relative_to(ROOT)}); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    job_wall, jm = run_job(inp, work / "out-job", a.cores, extra)
    tag_s = jm["timings_s"]["tag_s"]
    print(f"spark job  local[{a.cores}]: {job_wall:7.1f} s wall (JVM start-up included) -> "
          f"{a.notes / job_wall:7.0f} notes/s, {a.notes / job_wall / a.cores:7.0f} notes/s per core; "
          f"tagging stage {tag_s:.1f} s -> {a.notes / tag_s / a.cores:.0f} notes/s per core; "
          f"{jm['counts']['spans']} spans, stages {','.join(jm['stages'])}, mode {jm['mode']}")
    if not a.skip_tag:
        tag_wall, tm = run_tag(inp, work / "out-tag", extra)
        print(f"deid tag   1 core  : {tag_wall:7.1f} s wall -> {a.notes / tag_wall:7.0f} notes/s per core; "
              f"{tm['counts']['spans']} spans")
        per_note_job = job_wall * a.cores / a.notes
        per_note_tag = tag_wall / a.notes
        print(f"spark overhead: {per_note_job * 1e3:.2f} vs {per_note_tag * 1e3:.2f} core-ms per note "
              f"(x{per_note_job / per_note_tag:.2f}); same spans: {jm['counts']['spans'] == tm['counts']['spans']}")
    shutil.rmtree(work / "out-job", ignore_errors=True)
    shutil.rmtree(work / "out-tag", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
