"""conf/deidentify.toml [job.gc]: the collector's settings every tagging entry point reads (deid_core/app/heap.py)."""

from __future__ import annotations

import gc

import pytest

from deid_core.app import heap
from deid_core.app.heap import GcMeter, settle_heap, settled_heap
from deid_core.config import ConfigError, load_config


def _gc(**table):
    return load_config({"job": {"gc": table}}).job.gc


def test_defaults_come_from_conf():
    settings = load_config().job.gc
    assert settings.settle and settings.freeze and settings.young_threshold == 10_000


def test_the_off_switch_leaves_the_collector_as_it_is(default_collector):
    off = _gc(settle=False)
    assert settle_heap(off) is False
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)
    with settled_heap(off):
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_the_configured_threshold_is_applied_and_freeze_can_be_left_out(default_collector):
    with settled_heap(_gc(young_threshold=50_000, freeze=False)):
        assert gc.get_threshold() == (50_000, 10, 10) and gc.get_freeze_count() == 0
    assert gc.get_threshold() == (700, 10, 10)
    with settled_heap(_gc(young_threshold=50_000)):
        assert gc.get_threshold() == (50_000, 10, 10) and gc.get_freeze_count() > 0
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0


def test_a_higher_threshold_the_process_set_is_kept(default_collector):
    gc.set_threshold(200_000, 10, 10)
    with settled_heap(_gc(young_threshold=10_000)):
        assert gc.get_threshold()[0] == 200_000  # settling never makes collections more frequent


@pytest.mark.parametrize("table", [{"young_threshold": 0}, {"young_threshold": -5}, {"young_threshold": "10000"},
                                   {"settle": "yes"}, {"freeze": 1}, {"threshold": 10_000},
                                   {"young_threshold": 2**31}, {"young_threshold": 3_000_000_000}])
def test_bad_values_are_refused_when_the_configuration_loads(table):
    with pytest.raises(ConfigError):
        _gc(**table)


def test_deid_tag_settles_with_the_configured_values(default_collector, tmp_path, monkeypatch):
    from deid_core.app.cli import main as deid_main
    from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES

    conf = tmp_path / "gc.toml"
    conf.write_text(LITERAL_CONF.read_text() + "\n[job.gc]\nyoung_threshold = 33333\n")
    seen = []
    real = heap.settle_heap
    monkeypatch.setattr(heap, "settle_heap", lambda s: (real(s), seen.append(gc.get_threshold()[0]))[0])
    assert deid_main(["tag", "--input", str(SAMPLES), "--output", str(tmp_path / "out"), "--config", str(conf),
                      "--name-columns", NAME_COLUMNS, "--demo-key"]) == 0
    assert seen == [33333]
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_the_meter_counts_collections_per_generation_while_installed():
    meter = GcMeter()
    gc.collect()  # no automatic young collection comes due while the meter is installed
    with meter.installed():
        gc.collect()
        gc.collect(0)
    gc.collect()  # not counted: the callback is gone
    assert meter.count == [1, 0, 1] and all(s >= 0 for s in meter.seconds)
    assert meter._on_gc not in gc.callbacks
    assert "collections per 1,000 notes (gen 0 / 1 / 2) 500.0 / 0.0 / 500.0" in meter.summary(2)


def test_a_threshold_over_a_c_int_stops_deid_tag_before_any_work(default_collector, tmp_path, capsys):
    """Review18: gc.set_threshold takes a C int; 3,000,000,000 passed the table, then `deid tag` died with an
    OverflowError traceback after reading its input and building (and a worker's task would fail the same way)."""
    from deid_core.app.cli import main as deid_main
    from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES

    conf = tmp_path / "gc.toml"
    conf.write_text(LITERAL_CONF.read_text() + "\n[job.gc]\nyoung_threshold = 3000000000\n")
    out = tmp_path / "out"
    assert deid_main(["tag", "--input", str(SAMPLES), "--output", str(out), "--config", str(conf),
                      "--name-columns", NAME_COLUMNS, "--demo-key"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "young_threshold = 3000000000" in err[0] and "from 1 to 2147483647" in err[0]
    assert not out.exists()
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_settings_the_collector_refuses_change_nothing(default_collector):
    """Review18: settings built in code skip the table's check; set_threshold's refusal then comes before the freeze,
    so a library caller's process is not left with its whole heap frozen."""
    from deid_core.config.tables import GcSettings

    with pytest.raises(OverflowError), settled_heap(GcSettings(settle=True, freeze=True, young_threshold=2**40)):
        pass
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)
