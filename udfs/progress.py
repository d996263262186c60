"""Progress of the tagging job on the driver: notes done of total, rate and ETA, every few seconds.

Spark reports tasks, not rows, so notes done are estimated from the tagging stage's tasks:
total x completed tasks / tasks of that stage, the latest stage with one task per partition of
the grouping by patient (it runs mapInArrow and the staging write, or the `noop` write that
fills the cache; adaptive execution runs the shuffle before it as a job of its own). Classic Spark: a job group polled through the
status tracker from a thread. Spark Connect: the session's progress handler (no SparkContext).
Ids and counts only.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterable
from typing import Any

from deid_spark.udfs.session import is_connect

log = logging.getLogger("deid.job")
POLL_S = 1.0  # the classic poller's shortest wait; it reads the tracker when a line is due, not more often


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600} h {s % 3600 // 60:02d} min" if s >= 3600 else f"{s // 60} min {s % 60:02d} s"


class TagProgress:
    """Context manager around the tagging action that logs progress every `interval` seconds (0: never)."""

    def __init__(self, spark: Any, total: int, partitions: int, interval: float) -> None:
        self.spark = spark
        self.total = total
        self.partitions = partitions
        self.interval = interval
        self.started = time.monotonic()
        self._last_log = self.started
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved: dict[str, str | None] = {}
        self._group = f"deid-tag-{secrets.token_hex(4)}"
        self.polls = 0  # status-tracker reads of the classic poller

    def update(self, stages: Iterable[tuple[int, int, int]], now: float | None = None) -> str | None:
        """Log a line from (stage id, tasks, completed tasks) if the interval has passed; the line."""
        now = time.monotonic() if now is None else now
        if not self.interval or now - self._last_log < self.interval:
            return None
        tagging = sorted(s for s in stages if s[1] == self.partitions)
        if not tagging:
            return None
        _, tasks, done = tagging[-1]
        self._last_log = now
        elapsed = now - self.started
        notes = int(self.total * done / tasks) if tasks else 0
        rate = notes / elapsed if elapsed > 0 else 0.0
        eta = f", ETA {_duration((self.total - notes) / rate)}" if rate > 0 and notes < self.total else ""
        line = (f"tagging: ~{notes:,} of {self.total:,} notes ({done}/{tasks} tasks), {rate:,.0f} notes/s, "
                f"{_duration(elapsed)} elapsed{eta}")
        log.info("%s", line)
        return line

    def __enter__(self) -> TagProgress:
        if not self.interval:
            return self
        if is_connect(self.spark):
            self.spark.registerProgressHandler(self._on_connect_progress)
        else:
            sc = self.spark.sparkContext
            self._saved = {k: sc.getLocalProperty(k) for k in ("spark.jobGroup.id", "spark.job.description",
                                                                "spark.job.interruptOnCancel")}
            sc.setJobGroup(self._group, "deid: tagging notes")
            self._thread = threading.Thread(target=self._poll, args=(sc.statusTracker(),), daemon=True,
                                            name="deid-progress")
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.interval:
            return
        if is_connect(self.spark):
            self.spark.removeProgressHandler(self._on_connect_progress)
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        sc = self.spark.sparkContext
        for k, v in self._saved.items():
            sc.setLocalProperty(k, v)

    def _on_connect_progress(self, stages: Any, inflight_tasks: int, operation_id: Any, done: bool) -> None:
        """Spark Connect's progress handler: the stages of the running operation."""
        self.update((s.stage_id, s.num_tasks, s.num_completed_tasks) for s in (stages or ()))

    def _wait_s(self) -> float:
        """Seconds until the next line is due (at least POLL_S): the tracker is read over py4j only then."""
        return max(POLL_S, self.interval - (time.monotonic() - self._last_log))

    def _poll(self, tracker: Any) -> None:
        """Classic Spark: read the job group's stages from the status tracker until stopped."""
        while not self._stop.wait(self._wait_s()):
            self.polls += 1
            try:
                stages = []
                for job in tracker.getJobIdsForGroup(self._group):
                    info = tracker.getJobInfo(job)
                    for sid in (info.stageIds if info else ()):
                        st = tracker.getStageInfo(sid)
                        if st is not None:
                            stages.append((st.stageId, st.numTasks, st.numCompletedTasks))
                self.update(stages)
            except Exception:  # noqa: BLE001 - progress must never fail the run
                log.debug("progress poll failed", exc_info=True)
