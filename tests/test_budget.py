"""The per-note CPU-time budget (issue 13.1): a note that overruns it is quarantined with the stage
that overran and error_class "Timeout"; the other notes proceed, in `deid tag` and in the Spark job."""

from __future__ import annotations

import signal
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.config import ConfigError, load_config
from deid_core.engine import budget
from deid_core.engine.contract import PerNoteStage
from deid_core.engine.pipeline import Deidentifier, LongestMerge, NoteLimits
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_job import NAME_COLUMNS, ROOT, SAMPLES, read_rows

BUDGET_CONF = ROOT / "tests" / "data" / "budget.toml"
# about a minute in the catastrophic test rule without a budget; the closing "aa" line is a real match, so the
# one-pass screen (engine/rules/screen.py), which proves "a"*38 + "b" alone holds none, lets the rule run
BACKTRACK = "a" * 38 + "b\naa"


class SlowStage(PerNoteStage):
    """A stage that burns CPU on notes holding 'SLOW' (stands in for any step that overruns)."""

    name = "slow"
    needs: dict[str, str] = {}
    provides: frozenset[str] = frozenset()

    def run(self, doc, state) -> list[Span]:
        if "SLOW" in doc.text:
            end = time.thread_time() + 1.2
            while time.thread_time() < end:
                sum(range(1000))
        return [Span(0, 4, "PATIENT", "slow")] if doc.text.startswith("Anna") else []


class Mask:
    """The mask replacer: [**LABEL**] for each span."""

    def __call__(self, doc, spans):
        return [f"[**{s.label}**]" for s in spans]

    def shift_note_date(self, note):
        return None


def slow_deid(limits: NoteLimits) -> Deidentifier:
    return Deidentifier([SlowStage()], key=b"k" * 32, merge=LongestMerge(), replacer=Mask(), limits=limits)


def test_a_slow_stage_quarantines_its_note_only():
    deid = slow_deid(NoteLimits(cpu_s=0.3))
    res = deid.process_many([Note("a", "Anna was seen."), Note("b", "SLOW note"), Note("c", "Anna again")])
    assert [r.ok for r in res] == [True, False, True]
    assert (res[1].error_stage, res[1].error_class, res[1].text) == ("slow", "Timeout", None)
    assert res[0].text == "[**PATIENT**] was seen."


def test_no_budget_means_no_limit():
    deid = slow_deid(NoteLimits(cpu_s=None))
    assert deid.process(Note("b", "SLOW note")).ok


def test_budget_is_checked_between_windows_of_a_long_note():
    deid = slow_deid(NoteLimits(cpu_s=1.0, window_chars=1000, window_overlap_chars=100))
    text = ("SLOW line of a long note\n" * 40) * 10  # 10 windows, each 1.2 s of CPU
    t0 = time.thread_time()
    res = deid.process(Note("long", text))
    assert (res.error_stage, res.error_class) == ("slow", "Timeout")
    assert time.thread_time() - t0 < 4.0  # stopped after the window that overran, not after all ten


@pytest.mark.parametrize("value", [-1, "30", True, [1]])
def test_bad_budget_values_are_refused(value):
    for key in ("note_cpu_budget_s", "note_cpu_budget_s_per_mb"):
        with pytest.raises(ConfigError, match=rf"\[pipeline\] {key}|pipeline\.{key}"):
            load_config({"pipeline": {key: value}})
    assert budget.budget_seconds(0) is None and budget.budget_seconds(2) == 2.0


def test_a_misspelt_budget_key_is_refused():
    with pytest.raises(ConfigError, match="note_cpu_budget"):
        load_config({"pipeline": {"note_cpu_budget": 30}})


def budget_input(tmp_path):
    """The sample notes plus one note that makes the test rule backtrack catastrophically."""
    table = pq.read_table(SAMPLES)
    row = dict(table.slice(0, 1).to_pylist()[0], note_id="T-backtrack", text=f"Seen.\n{BACKTRACK}\n")
    path = tmp_path / "in.parquet"
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist([row], schema=table.schema)]), path)
    return path


def assert_only_the_hostile_note_quarantined(out) -> None:
    quarantine = read_rows(out / "quarantine")
    assert [(q["note_id"], q["stage"], q["error_class"]) for q in quarantine] == [("T-backtrack", "rules", "Timeout")]
    assert len(read_rows(out / "notes")) == 48


def test_deid_tag_quarantines_a_note_whose_regex_overruns(tmp_path):
    from deid_core.app.cli import main as deid_main

    t0 = time.process_time()
    rc = deid_main(["tag", "--input", str(budget_input(tmp_path)), "--output", str(tmp_path / "out"),
                    "--config", str(BUDGET_CONF), "--name-columns", NAME_COLUMNS, "--demo-key"])
    assert rc == 0
    assert_only_the_hostile_note_quarantined(tmp_path / "out")
    assert time.process_time() - t0 < 30


@pytest.mark.spark
def test_the_spark_job_quarantines_a_note_whose_regex_overruns(spark, tmp_path):
    from deid_core.app.options import run_options
    from deid_core.app.runner import load_key_and_bundle
    from deid_spark.jobs.deidentify import build_parser, run_job

    args = build_parser().parse_args(["--input", str(budget_input(tmp_path)), "--output", str(tmp_path / "out"),
                                      "--config", str(BUDGET_CONF), "--name-columns", NAME_COLUMNS, "--demo-key"])
    options = run_options(args)
    key, bundle = load_key_and_bundle(options)
    manifest = run_job(spark, args, options, key, bundle)
    assert manifest["counts"]["quarantined_by_error_class"] == {"Timeout": 1}
    assert_only_the_hostile_note_quarantined(tmp_path / "out")


def hostile_deid() -> Deidentifier:
    """The rule tagger with the catastrophic test rule, under budget.toml's 1.5 s note budget."""
    from deid_core.engine.pipeline import build_deidentifier

    return build_deidentifier(load_config(config_file=BUDGET_CONF), None, b"k" * 32)


def _tag_hostile(deid: Deidentifier, out: dict) -> None:
    t0 = time.thread_time()
    with budget.note_budget(60.0):
        with budget.regex_limit() as timeout:
            out["timeout"] = timeout  # None: the CPU timer bounds the regex calls; seconds: `timeout=` per call
    out["results"] = deid.process_many([Note("ok", "Seen on 3/4/2020."), Note("bad", f"Seen.\n{BACKTRACK}\n")])
    out["cpu"] = time.thread_time() - t0
    out["timer"] = signal.getitimer(signal.ITIMER_VIRTUAL)


def assert_hostile_note_stopped(out: dict) -> None:
    ok, bad = out["results"]
    assert ok.ok and (bad.error_stage, bad.error_class, bad.text) == ("rules", "Timeout", None)
    assert out["cpu"] < 6.0  # stopped inside the regex call after ~1.5 s, not after a minute
    assert out["timer"] == (0.0, 0.0)  # nothing left armed after the note


def test_a_cpu_timer_stops_a_regex_in_the_main_thread():
    out: dict = {}
    _tag_hostile(hostile_deid(), out)
    assert out["timeout"] is None
    assert_hostile_note_stopped(out)


def test_regex_timeout_stops_a_regex_in_another_thread():
    import threading

    deid, out = hostile_deid(), {}
    worker = threading.Thread(target=_tag_hostile, args=(deid, out))
    worker.start()
    worker.join(120)
    assert isinstance(out["timeout"], float) and 59.0 < out["timeout"] <= 60.0
    assert_hostile_note_stopped(out)
