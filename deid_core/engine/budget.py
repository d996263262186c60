"""A per-note CPU-time budget: a note that overruns it is quarantined (error_class "Timeout").

Every step of the engine is linear in the note's length (tests/test_linear_time.py), so the budget
is a backstop for what tests cannot foresee: a user's own rule with catastrophic backtracking, a
machine far slower than expected. Pure Python cannot stop a thread in the middle of a C call, so
the budget is enforced cooperatively, at two kinds of points:
- between steps: the pipeline checks the note's CPU time after each stage, each window of a long
  note and the merge (`check(stage)`), and raises NoteTimeout naming the stage that overran;
- inside a regular expression: the rule tagger runs its matching under `regex_limit()`. In the
  main thread that arms a CPU-time timer (ITIMER_VIRTUAL) for the note's remaining budget; the
  `regex` matcher checks for signals as it runs, so the timer's handler raises TimeoutError from
  inside the C matcher (re-arming instead when this thread has not yet spent its budget: the
  timer counts the whole process). Elsewhere (another thread, a foreign SIGVTALRM handler, no
  setitimer) it gives the remaining budget as the `regex` module's `timeout=` for each call, as
  before. The timer costs two system calls per note; `timeout=` costs 5-7 us per call (measured:
  the module reads a CPU clock per call), ~0.3 ms per note over the rules' ~100 calls. Either
  way the pipeline turns the TimeoutError into NoteTimeout for the stage that called it.
A stage that is one long C call other than a regex (crfsuite's Viterbi on one window) cannot be
interrupted; windows (engine/windows.py) keep each such call short.

The budget in force is held in a context variable set by the pipeline for the note being tagged
(`note_budget`), so taggers need no extra argument; outside it, checks do nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

TIMEOUT = "Timeout"  # error_class of a quarantined note that overran its budget


class NoteTimeout(Exception):  # noqa: N818 - the quarantine's error_class is "Timeout"
    """The note overran its CPU-time budget in `stage` (no text in the message)."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"note CPU-time budget exceeded in stage {stage!r}")
        self.stage = stage


class Budget:
    """CPU seconds (this thread) a note may use while its budget is active; None = no limit.

    Active from creation unless `active=False`: a batch keeps one paused budget per note and resumes it
    while that note's own work runs (`resumed`), so a note is never charged for its neighbours."""

    def __init__(self, seconds: float | None, *, active: bool = True) -> None:
        self.seconds = seconds
        self.spent = 0.0
        self.start: float | None = time.thread_time() if active else None

    def used(self) -> float:
        """CPU seconds used so far."""
        running = time.thread_time() - self.start if self.start is not None else 0.0
        return self.spent + running

    def pause(self) -> None:
        """Stop counting (the time so far is kept)."""
        if self.start is not None:
            self.spent += time.thread_time() - self.start
            self.start = None

    def resume(self) -> None:
        """Count again."""
        if self.start is None:
            self.start = time.thread_time()

    def check(self, stage: str) -> None:
        """Raise NoteTimeout(stage) once the budget is spent."""
        if self.seconds is not None and self.used() > self.seconds:
            raise NoteTimeout(stage)

    def remaining(self) -> float | None:
        """Seconds left (at least a millisecond), or None without a limit."""
        left = self.remaining_exact()
        return None if left is None else max(left, 0.001)

    def remaining_exact(self) -> float | None:
        """Seconds left (negative once overrun), or None without a limit."""
        return None if self.seconds is None else self.seconds - self.used()


_CURRENT: ContextVar[Budget | None] = ContextVar("deid_note_budget", default=None)


@contextmanager
def note_budget(seconds: float | None) -> Iterator[Budget]:
    """Run a note's tagging under a fresh budget of `seconds` CPU seconds."""
    budget = Budget(seconds)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


@contextmanager
def resumed(budget: Budget) -> Iterator[Budget]:
    """Run under an existing budget (counting while inside; paused again after if it was paused)."""
    was_active = budget.start is not None
    budget.resume()
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)
        if not was_active:
            budget.pause()


def check(stage: str) -> None:
    """Raise NoteTimeout(stage) when the note being tagged has spent its budget (no-op outside one)."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.check(stage)


_ARMED: list[Budget] = []  # the budget the CPU timer is armed for (at most one)
_HAS_TIMER = os.name == "posix"  # setitimer and SIGVTALRM are Unix only


def _on_timer(signum: int, frame: object) -> None:
    """SIGVTALRM: raise TimeoutError once the armed budget is spent (inside a `regex` call too)."""
    if not _ARMED:
        return  # disarmed after the signal was sent
    left = _ARMED[0].remaining_exact()
    if left is not None and left > 0:  # the process's CPU ran ahead of this thread's: wait for the rest
        signal.setitimer(signal.ITIMER_VIRTUAL, max(left, 0.001))
        return
    _ARMED.clear()  # the one-shot timer has fired: nothing stays armed whatever the exception interrupts
    raise TimeoutError("note CPU-time budget exceeded")


def _timer_usable() -> bool:
    """Can a CPU timer interrupt this thread's regex calls? (main thread, SIGVTALRM free or ours)"""
    if not _HAS_TIMER or _ARMED or threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGVTALRM)
    if handler is _on_timer:
        return True
    if handler is not signal.SIG_DFL:
        return False  # somebody else's handler (a profiler's timer): leave it alone
    signal.signal(signal.SIGVTALRM, _on_timer)
    return True


@contextmanager
def regex_limit() -> Iterator[float | None]:
    """Bound the `regex` calls of the block by the note's budget; yields the `timeout=` to give each call
    (None: no limit, or the armed CPU timer interrupts them instead; see the module docstring)."""
    budget = _CURRENT.get()
    if budget is None or budget.seconds is None:
        yield None
        return
    if not _timer_usable():
        yield budget.remaining()
        return
    _ARMED.append(budget)
    signal.setitimer(signal.ITIMER_VIRTUAL, budget.remaining() or 0.001)
    try:
        yield None
    finally:
        _ARMED.clear()  # first: a signal arriving from here on is ignored
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def budget_seconds(value: float) -> float | None:
    """A configured budget ([pipeline], checked >= 0 by the typed configuration): 0 means no limit."""
    return float(value) if value > 0 else None


def note_seconds(base: float | None, per_mb: float | None, chars: int) -> float | None:
    """A note's budget: `base` seconds plus `per_mb` seconds per million characters (None: no limit).

    The engine's cost grows linearly with the note, so the allowance does too: a 10 MB note needs
    minutes of CPU where a page-long one needs milliseconds."""
    if base is None:
        return None
    return base + (per_mb or 0.0) * chars / 1_000_000
