"""Crafted hostile notes through the whole Deidentifier: CPU seconds at 1k / 10k / 30k / 100k characters.

`python -m benchmarks linear [--sizes 1000,10000,30000,100000] [--cap 120] [--kinds a,b]`. One
subprocess per kind (tests/adversarial.py) runs the sizes in ascending order and reports the CPU
time (time.process_time) of `Deidentifier.process_many([note])` with the default bundle and
configuration; a cell that uses more than --cap seconds of CPU time is killed and reported as
"> cap" (so is every larger size of that kind). Prints the machine load (uptime) before and after.
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cell_worker(kind: str, sizes: list[int]) -> int:
    """Child process: build the default Deidentifier once, then time each size of one kind."""
    from deid_core.bundle_choice import resolve_bundle
    from deid_core.config import load_config
    from deid_core.engine.pipeline import build_deidentifier
    from deid_core.notes import Note
    from tests.adversarial import KNOWN_PHI, crafted

    config = load_config()
    deid = build_deidentifier(config, resolve_bundle(config), b"linear-benchmark-key-0123456789ab")
    deid.process_many([Note("warm", crafted(kind, 1000), "p", None, KNOWN_PHI)])
    for n in sizes:
        note = Note("x", crafted(kind, n), "p", None, KNOWN_PHI)
        t0 = time.process_time()
        res = deid.process_many([note])[0]
        dt = time.process_time() - t0
        status = "ok" if res.ok else f"{res.error_stage}/{res.error_class}"
        print(f"{n} {dt:.3f} {status}", flush=True)
    return 0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _row(kind: str, sizes: list[int], cap: float) -> list[str]:
    """One kind's cells, from a child process killed when a cell overruns `cap`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.linear", "--cell", kind,
                             "--sizes", ",".join(map(str, sizes))],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    cells: list[str] = []
    spent = 0.0  # CPU seconds the child had used when its previous cell ended
    while len(cells) < len(sizes):
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            if _cpu_seconds(proc.pid) - spent > cap + (30 if not cells else 0):  # first cell: + loading
                proc.kill()
                cells += [f"> {cap:g}"] * (len(sizes) - len(cells))
                break
            continue
        if line is None:
            cells += ["error"] * (len(sizes) - len(cells))
            break
        _, secs, status = line.split()
        cells.append(secs if status == "ok" else f"{secs} ({status})")
        spent = _cpu_seconds(proc.pid)
    proc.wait()
    return cells


def main(argv: list[str]) -> int:
    """Print the table of CPU seconds per crafted kind and size."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks linear", description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,30000,100000")
    ap.add_argument("--cap", type=float, default=120.0, help="CPU seconds a cell may use before it is killed")
    ap.add_argument("--kinds", default="", help="comma-separated kinds (default: all of tests/adversarial.py)")
    ap.add_argument("--cell", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.cell:
        return _cell_worker(args.cell, sizes)
    sys.path.insert(0, str(ROOT))
    from tests.adversarial import KINDS

    kinds = [k for k in args.kinds.split(",") if k] or list(KINDS)
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"CPU seconds of Deidentifier.process_many([note]), default bundle and config; cap {args.cap:g} CPU s")
    print("| input | " + " | ".join(f"{n // 1000}k" for n in sizes) + " |")
    print("| --- |" + " --- |" * len(sizes))
    for kind in kinds:
        print(f"| {kind} | " + " | ".join(_row(kind, sizes, args.cap)) + " |", flush=True)
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
