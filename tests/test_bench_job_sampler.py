"""benchmarks/job.py's process-tree sampler: RSS over the run by tenths, so worker growth shows (issue 15)."""

import subprocess
import sys

from benchmarks.job import TreeSampler

GROW = "import time\nheld = []\nfor _ in range(12):\n    held.append(bytearray(20 * 2**20))\n    time.sleep(0.1)\n"


def test_rss_tenths_rise_with_a_process_that_grows():
    proc = subprocess.Popen([sys.executable, "-c", GROW])
    sampler = TreeSampler(proc.pid, every=0.02)
    sampler.start()
    proc.wait(timeout=60)
    sampler.done.set()
    sampler.join()
    tenths = sampler.rss_tenths("other")  # a plain python -c is neither a driver, JVM nor Spark worker
    assert len(tenths) == 10
    assert tenths[-1] - tenths[0] > 150, tenths  # ~240 MB allocated over the run
    assert tenths == sorted(tenths)
    assert sampler.rss_tenths("jvm") == []


def test_rss_tenths_of_a_short_run_repeat_the_samples():
    sampler = TreeSampler(0)
    sampler.timeline = [(0.0, {"jvm": 100.0}), (0.5, {"jvm": 120.0}), (1.0, {"python worker": 50.0})]
    assert sampler.rss_tenths("jvm") == [100.0] * 5 + [120.0] * 5
    assert sampler.rss_tenths("python worker") == [50.0] * 10
