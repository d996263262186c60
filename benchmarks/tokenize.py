"""Tokenizer throughput on one core over the PhysioNet dev split text: MB/s and tokens/s."""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from deid_core.io.physionet import read_physionet
from deid_core.text.tokenize import _unicode_token_offsets, token_offsets

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "physionet-deid"


def machine() -> str:
    """nproc, CPU model and Python version: the context every number needs."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"nproc={os.cpu_count()} cpu={model!r} python={platform.python_version()}"


def main(argv: list[str]) -> int:
    """Tokenize every note `--repeat` times in this one process; print the best pass's rates."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks tokenize", description=__doc__)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="PhysioNet folder (id.text)")
    ap.add_argument("--repeat", type=int, default=20, help="passes over the corpus (best is reported)")
    args = ap.parse_args(argv)
    texts = [n.text for n in read_physionet(args.corpus, with_metadata=False).notes]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"tokenize: {len(texts)} notes, {mb:.2f} MB, {sum(not t.isascii() for t in texts)} non-ASCII; "
          f"best of {args.repeat} passes, process CPU time, one core")
    for name, fn in (("token_offsets", token_offsets), ("unicode path", _unicode_token_offsets)):
        best, n_tokens = float("inf"), 0
        for _ in range(args.repeat):
            # CPU time of this process: on a shared machine, time spent descheduled is not ours
            t0 = time.process_time()
            n_tokens = sum(len(fn(t)[0]) for t in texts)
            best = min(best, time.process_time() - t0)
        print(f"  {name:14s} {n_tokens} tokens in {best:.3f} s -> {mb / best:.2f} MB/s, "
              f"{n_tokens / best / 1e6:.2f} M tokens/s")
    print(f"machine: {machine()}")
    return 0
