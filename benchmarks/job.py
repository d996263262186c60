"""End-to-end throughput of the Spark job in local mode vs `deid tag` (Spark-free) on the same notes.

    python -m benchmarks job [--notes 100000] [--cores 2] [--mode mask] [--partitions N] [--batch-size N]
    python -m benchmarks job --notes 100000,1000000 --skip-tag    # scale: per-note CPU time and worker RSS
    python -m benchmarks job --notes 100000 --corpus ../shared/data/physionet-deid   # real nursing notes

Notes come from samples/make_samples.py (fictional, templated, ~310 characters each, ~8.8 PHI spans),
written once to build/bench-job/; or, with --corpus DIR, from a PhysioNet-format folder (id.text,
patients.tsv: real nursing notes, ~840 characters, ~0.8 PHI each) cycled to the size asked, each copy
with its own note and patient ids and the patient's names as columns, written at run time OUTSIDE the
repository (CORPUS_WORK, under the temporary directory; the job's output there too). The job runs as `python jobs/deidentify.py` with master local[CORES]
(JVM start-up included: that is what a user pays); `deid tag` runs in this process on one core.
Prints notes/s, notes/s per core, the CPU time of the job's whole process tree (driver, JVM,
Python workers: sampled from /proc, with peak RSS per kind) and the Spark overhead in CPU ms per note.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME_COLUMNS = "patient_first_name,patient_last_name,attending_name:DOCTOR"
CHUNK = 200_000  # notes generated at a time for the larger inputs
# Inputs and outputs built from a --corpus folder (real notes): outside the repository, never committed.
CORPUS_WORK = Path(tempfile.gettempdir()) / f"deid-bench-job-{os.getuid()}"


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
    if n <= CHUNK:
        pq.write_table(pa.Table.from_pylist(mod.make_rows(n, seed=11), schema=mod.SCHEMA), path, row_group_size=20_000)
        return path
    # larger inputs in chunks of CHUNK notes (bounded memory): own seeds, note and patient ids prefixed per chunk
    tmp = path.with_suffix(".part")
    with pq.ParquetWriter(tmp, mod.SCHEMA) as writer:
        for k, a in enumerate(range(0, n, CHUNK)):
            rows = mod.make_rows(min(CHUNK, n - a), seed=11 + k)
            for r in rows:
                r["note_id"], r["patient_id"] = f"c{k}-{r['note_id']}", f"c{k}-{r['patient_id']}"
            writer.write_table(pa.Table.from_pylist(rows, schema=mod.SCHEMA), row_group_size=20_000)
    tmp.rename(path)
    return path


def _samples_schema():
    spec = importlib.util.spec_from_file_location("make_samples", ROOT / "samples" / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SCHEMA


def corpus_input(n: int, corpus: Path, work: Path = CORPUS_WORK) -> Path:
    """n notes of a PhysioNet-format folder cycled (copy k: note id "k<k>-<id>", patient id "k<k>-<patient>",
    the patient's first and last name from patients.tsv as columns), written privately (0700 folder, 0600
    file) for this run only: drop_corpus_input removes it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deid_core.io.physionet import read_patients, read_physionet

    corpus = Path(corpus)
    path = work / f"corpus-{n}-{os.getpid()}.parquet"  # this run's: removed after it
    notes = read_physionet(corpus, with_metadata=False).notes
    if not notes:
        raise SystemExit(f"--corpus {corpus}: no notes")
    names = {pid: [v for v, _ in pairs] for pid, pairs in read_patients(corpus / "patients.tsv").items()}
    schema = _samples_schema()
    work.mkdir(parents=True, exist_ok=True)
    work.chmod(0o700)  # real notes: readable by this user only
    tmp = path.with_suffix(".part")
    with pq.ParquetWriter(tmp, schema) as writer:
        for a in range(0, n, CHUNK):
            rows = []
            for i in range(a, min(a + CHUNK, n)):
                k, j = divmod(i, len(notes))
                note = notes[j]
                pid = str(note.patient_id)
                first, last = (names.get(pid, []) + [None, None])[:2]
                rows.append({"note_id": f"k{k}-{note.note_id}", "patient_id": f"k{k}-{pid}", "note_date": None,
                             "text": note.text, "patient_first_name": first, "patient_last_name": last,
                             "attending_name": None, "encounter_type": "nursing"})
            writer.write_table(pa.Table.from_pylist(rows, schema=schema), row_group_size=20_000)
    tmp.chmod(0o600)
    tmp.rename(path)
    return path


def drop_corpus_input(path: Path) -> None:
    """Remove a --corpus copy of real notes (corpus_input's file); the template notes' input is kept."""
    if path.name.startswith("corpus-") and path.suffix == ".parquet":
        path.unlink(missing_ok=True)


def bench_input(n: int, corpus: str | None) -> tuple[Path, Path, str]:
    """(input Parquet, work folder for the outputs, what the input is) for n notes: the template notes, or
    --corpus cycled (then both outside the repository)."""
    if corpus:
        return corpus_input(n, Path(corpus)), CORPUS_WORK, f"real notes of {corpus} cycled"
    return make_input(n, ROOT / "build" / "bench-job"), ROOT / "build" / "bench-job", "template notes"


def run_tag(inp: Path, out: Path, extra: list[str]) -> tuple[float, float, dict]:
    """`deid tag` in this process: (wall seconds, CPU seconds, manifest)."""
    from deid_core.app.cli import main as deid_main

    t, c = time.perf_counter(), time.process_time()
    rc = deid_main(["tag", "--input", str(inp), "--output", str(out), "--name-columns", NAME_COLUMNS,
                    "--demo-key", *extra])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    if rc:
        raise SystemExit(f"deid tag failed ({rc})")
    return wall, cpu, json.loads((out / "_manifest.json").read_text())


class TreeSampler(threading.Thread):
    """Polls /proc every `every` s: peak RSS and last CPU seconds of each process under `root`
    (the job's Python driver, its JVM, the Python workers), by kind."""

    def __init__(self, root: int, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.root, self.every = root, every
        self.rss: dict[int, int] = {}  # pid -> peak RSS bytes
        self.cpu: dict[int, float] = {}  # pid -> CPU seconds (user + system) at the last sample
        self.kind: dict[int, str] = {}
        self.timeline: list[tuple[float, dict[str, float]]] = []  # (s since start, kind -> largest RSS MB now)
        self.started = time.monotonic()
        self.done = threading.Event()

    @staticmethod
    def _stat(pid: int) -> tuple[int, float, int] | None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        tick = os.sysconf("SC_CLK_TCK")
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, int(fields[21]) * os.sysconf("SC_PAGE_SIZE")

    def _kind(self, pid: int) -> str:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return "other"
        if "java" in cmd.split(" ", 1)[0]:
            return "jvm"
        if "pyspark.daemon" in cmd or "pyspark.worker" in cmd or "pyspark/daemon" in cmd:
            return "python worker"
        return "python driver" if "deidentify.py" in cmd else "other"

    def sample(self) -> None:
        """One pass over /proc."""
        stats = {}
        for d in os.listdir("/proc"):
            if d.isdigit() and (st := self._stat(int(d))) is not None:
                stats[int(d)] = st
        tree = {self.root}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _, _) in stats.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        now: dict[str, float] = {}
        for pid in tree & stats.keys():
            _, cpu, rss = stats[pid]
            self.cpu[pid] = cpu
            self.rss[pid] = max(self.rss.get(pid, 0), rss)
            if self.kind.get(pid, "other") == "other":  # a launcher script may exec java later
                self.kind[pid] = self._kind(pid)
            kind = self.kind[pid]
            now[kind] = max(now.get(kind, 0.0), rss / 2**20)
        self.timeline.append((time.monotonic() - self.started, now))

    def run(self) -> None:
        while not self.done.wait(self.every):
            self.sample()

    def summary(self) -> dict[str, dict[str, float]]:
        """Per kind: processes seen, CPU seconds, peak RSS of one process (MB)."""
        out: dict[str, dict[str, float]] = {}
        for pid, kind in self.kind.items():
            if kind == "other":
                continue
            k = out.setdefault(kind, {"processes": 0, "cpu_s": 0.0, "peak_rss_mb": 0.0})
            k["processes"] += 1
            k["cpu_s"] += self.cpu.get(pid, 0.0)
            k["peak_rss_mb"] = max(k["peak_rss_mb"], self.rss.get(pid, 0) / 2**20)
        return out

    def rss_tenths(self, kind: str) -> list[float]:
        """The largest RSS (MB) of one process of `kind` in each tenth of the run's samples where it was alive:
        growth over the run shows as a rising list."""
        seen = [now[kind] for _, now in self.timeline if kind in now]
        if not seen:
            return []
        return [round(max(seen[len(seen) * i // 10:max(len(seen) * (i + 1) // 10, len(seen) * i // 10 + 1)]), 1)
                for i in range(10)]


def run_job(inp: Path, out: Path, cores: int, extra: list[str], partitions: int = 0,
            env_extra: dict[str, str] | None = None) -> tuple[float, dict, dict]:
    """The Spark job in local[cores] as a user runs it: (wall seconds, manifest, resources: CPU seconds of
    the whole process tree and, by kind, CPU and peak RSS). The JVM is not waited for by the driver, so
    getrusage cannot see it: CPU is sampled (the last half second of each process is not counted)."""
    env = dict(os.environ, DEID_SPARK_MASTER=f"local[{cores}]",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
               **(env_extra or {}))
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "jobs" / "deidentify.py"), "--input", str(inp),
                             "--output", str(out), "--name-columns", NAME_COLUMNS, "--demo-key",
                             "--partitions", str(partitions or cores * 4), *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    _, stderr = proc.communicate()
    wall = time.perf_counter() - t
    sampler.done.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"job failed ({proc.returncode}): {stderr[-2000:]}")
    by_kind = sampler.summary()
    for kind, k in by_kind.items():
        k["rss_tenths_mb"] = sampler.rss_tenths(kind)
    used = {"cpu_s": sum(k["cpu_s"] for k in by_kind.values()), "by_kind": by_kind}
    return wall, json.loads((out / "_manifest.json").read_text()), used


def main(argv: list[str]) -> int:
    """Run the job (and `deid tag`) at each size, print the comparison and, over sizes, the scale figures."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks job", description=__doc__.splitlines()[0])
    ap.add_argument("--notes", default="100000", help="notes, or sizes separated by commas (100000,1000000)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=0, help="--partitions of the job (default: 4 per core)")
    ap.add_argument("--mode", default=None, help="replacement mode (default: the config's)")
    ap.add_argument("--batch-size", type=int, default=None, help="--batch-size of the job (default: the config's)")
    ap.add_argument("--skip-tag", action="store_true", help="only the Spark job")
    ap.add_argument("--corpus", default=None, metavar="DIR",
                    help="real notes: a PhysioNet-format folder (id.text, patients.tsv) cycled to --notes, new ids "
                         "per copy (built outside the repository); default: the template notes")
    ap.add_argument("--config", default=None, metavar="FILE",
                    help="the job's --config (e.g. tests/data/literal.toml: a cheap Python side, to see the JVM's share)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting passed to the job's --conf (repeatable), e.g. spark.driver.extraJavaOptions=...")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    a = ap.parse_args(argv)
    sizes = [int(x) for x in a.notes.split(",")]
    runs = [one_size(n, a) for n in sizes]
    if len(runs) > 1:
        first, last = runs[0], runs[-1]
        per = [r["job_cpu_s"] / r["notes"] for r in (first, last)]
        rss = [r["job_by_kind"].get("python worker", {}).get("peak_rss_mb", 0.0) for r in (first, last)]
        print(f"scale {first['notes']} -> {last['notes']} notes: CPU ms per note {per[0] * 1e3:.2f} -> "
              f"{per[1] * 1e3:.2f} ({100 * (per[1] / per[0] - 1):+.1f} %); Python worker peak RSS "
              f"{rss[0]:.0f} -> {rss[1]:.0f} MB")
        for kind in ("python worker", "jvm", "python driver"):
            ms = [r["job_by_kind"].get(kind, {}).get("cpu_s", 0.0) * 1e3 / r["notes"] for r in (first, last)]
            if ms[0]:
                print(f"  {kind:14s} CPU ms per note {ms[0]:.3f} -> {ms[1]:.3f} ({100 * (ms[1] / ms[0] - 1):+.1f} %)")
    if a.json:
        Path(a.json).write_text(json.dumps(runs, indent=1))
    return 0


def one_size(n: int, a: argparse.Namespace) -> dict:
    """The job (and `deid tag`) on n notes: prints and returns the figures."""
    extra = (["--mode", a.mode] if a.mode else []) + (["--batch-size", str(a.batch_size)] if a.batch_size else [])
    extra += [x for c in a.conf for x in ("--conf", c)] + (["--config", a.config] if a.config else [])
    inp, work, what = bench_input(n, a.corpus)
    out_job, out_tag = work / f"out-job-{os.getpid()}", work / f"out-tag-{os.getpid()}"  # concurrent runs apart
    try:
        return _one_size(n, a, extra, inp, what, out_job, out_tag)
    finally:  # also when the job fails: no copy of real notes, no output of them, left behind
        shutil.rmtree(out_job, ignore_errors=True)
        shutil.rmtree(out_tag, ignore_errors=True)
        drop_corpus_input(inp)


def _one_size(n: int, a: argparse.Namespace, extra: list[str], inp: Path, what: str, out_job: Path,
              out_tag: Path) -> dict:
    """one_size's measuring part."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(inp).metadata
    chars = sum(len(t or "") for b in pq.ParquetFile(inp).iter_batches(columns=["text"])
                for t in b.column(0).to_pylist())
    print(f"input: {n} {what} ({meta.num_rows} rows), {chars / 1e6:.1f} M characters ({inp}); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    from deid_core import compiled

    print(f"  {compiled.status()} (the job's Python processes see the same build and DEID_COMPILED)")
    job_wall, jm, used = run_job(inp, out_job, a.cores, extra, a.partitions)
    tag_s = jm["timings_s"]["tag_s"]
    cpu = used["cpu_s"]
    print(f"spark job  local[{a.cores}]: {job_wall:7.1f} s wall (JVM start-up included) -> "
          f"{n / job_wall:7.0f} notes/s, {n / job_wall / a.cores:7.0f} notes/s per core; "
          f"tagging stage {tag_s:.1f} s wall; {jm['counts']['spans']} spans, stages {','.join(jm['stages'])}, "
          f"mode {jm['mode']}")
    print(f"  CPU time, whole process tree: {cpu:.1f} s -> {n / cpu:.0f} notes per CPU second "
          f"({cpu * 1e3 / n:.2f} CPU ms per note)")
    for kind, k in sorted(used["by_kind"].items()):
        print(f"  {kind:14s} {int(k['processes']):3d} process(es), {k['cpu_s']:8.1f} CPU s (sampled), "
              f"{k['cpu_s'] * 1e3 / n:.3f} CPU ms per note, peak RSS {k['peak_rss_mb']:7.0f} MB; RSS by tenth of the run "
              f"{' '.join(f'{x:.0f}' for x in k.get('rss_tenths_mb', []))} MB")
    figures = {"notes": n, "input": what, "chars": chars, "conf": a.conf, "config": a.config, "spans": jm["counts"]["spans"], "cores": a.cores, "job_wall_s": job_wall, "job_cpu_s": cpu,
               "job_by_kind": used["by_kind"], "load": os.getloadavg()[0]}
    if not a.skip_tag:
        tag_wall, tag_cpu, tm = run_tag(inp, out_tag, extra)
        print(f"deid tag   1 core  : {tag_wall:7.1f} s wall, {tag_cpu:.1f} CPU s -> {n / tag_cpu:7.0f} notes "
              f"per CPU second; {tm['counts']['spans']} spans")
        print(f"spark overhead: {cpu * 1e3 / n:.2f} vs {tag_cpu * 1e3 / n:.2f} CPU ms per note "
              f"(x{cpu / tag_cpu:.2f}); same spans: {jm['counts']['spans'] == tm['counts']['spans']}")
        figures.update(tag_wall_s=tag_wall, tag_cpu_s=tag_cpu)
    return figures


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
