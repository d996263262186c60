"""One run: notes in, notes/ spans/ quarantine/ and _manifest.json out, for `deid tag`, the job and the API.

`run()` states the steps once: check paths and output targets, read, check the schema, select
(incremental runs: what no committed run holds), count ids and apply the policies, tag each
note once into a staged result, project and write the three tables (or hand them back as frames:
the library API's in-memory sink), count from the staged result, and commit the manifest last
(a run is committed when its manifest is there). Run ids, layouts and selection are in runs.py,
the output's bookkeeping in store.py (tables: udfs/runs.py). An executor (`Backend`: Arrow in
deid_core/app/runner.py, Spark in udfs/plan.py) does each step on its engine. Nothing here
touches a SparkContext, an accumulator or the JVM, so the run works the same under Spark
Connect; local paths are handled in plain Python, except under Spark Connect, where every path
is the server's (store.Files).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from deid_core.app.batch import shifts_note_date
from deid_core.app.manifest import build_manifest, manifest_json
from deid_core.app.options import RunOptions
from deid_core.app.policies import IdPlan, InputCounts, plan_ids, run_counts
from deid_core.app.runs import (
    RUN_COLUMN,
    RunPlan,
    Selection,
    check_columns,
    check_since_column,
    now_iso,
    plan_run,
    plan_selection,
    run_fields,
    selection_record,
)
from deid_core.app.schema import BatchSpec, validate_input_schema
from deid_core.app.store import (
    TABLES,
    Files,
    FolderStore,
    FramesStore,
    RemoteFiles,
    is_local,
    join,
    local_path,
)
from deid_core.app.store import local_files as plain_local_files
from deid_core.bundle import Bundle
from deid_core.config import Config, ConfigError
from deid_core.io.tables import check_parquet_input

log = logging.getLogger("deid.run")
__all__ = ["TABLES", "is_local", "local_path"]  # re-exported: the executors import them from here
STAGING_PREFIX = "staging-"


@dataclass(frozen=True)
class Source:
    """Where the notes come from: a Parquet file or folder (any Hadoop URI for Spark), a table, or a frame.

    `frame` is an input already in memory (the library API): a Spark DataFrame or an Arrow table.
    """

    path: str | None = None
    table: str | None = None
    frame: Any = field(default=None, repr=False, compare=False)

    @property
    def where(self) -> str:
        """The option that named it, for messages."""
        if self.frame is not None:
            return "the input frame"
        return f"--input {self.path}" if self.path is not None else f"--input-table {self.table}"


@dataclass(frozen=True)
class Sink:
    """Where the outputs go: a folder (notes/, spans/, quarantine/, _manifest.json), a table-name prefix,
    or neither: the three tables are returned as frames (RunResult.tables) and the manifest is not written."""

    path: str | None = None
    table_prefix: str | None = None

    @property
    def in_memory(self) -> bool:
        """Nothing is written: the caller gets the tables as frames."""
        return self.path is None and self.table_prefix is None

    @property
    def where(self) -> str:
        """The option that named it, for messages."""
        if self.in_memory:
            return "the returned frames"
        return f"--output {self.path}" if self.path is not None else f"--output-table-prefix {self.table_prefix}"


@dataclass(frozen=True)
class RunRequest:
    """Everything one run needs: input, output, options, and the key and bundle loaded before any work."""

    source: Source
    sink: Sink
    options: RunOptions
    key: bytes = field(repr=False)
    bundle: Bundle
    staging_dir: str | None = None  # the user's folder for staging Parquet: we only ever touch our subfolders


@dataclass(frozen=True)
class RunResult:
    """What a run produced: its manifest (already written, last, unless the sink is in memory) and the tables.

    `tables` are notes, spans and quarantine as the backend's frames (read back from what was written,
    or, for an in-memory sink, projections of the staged result that `release()` frees).
    """

    manifest: dict[str, Any]
    tables: tuple[Any, Any, Any] | None = field(default=None, repr=False)
    release: Callable[[], None] = field(default=lambda: None, repr=False)

    @property
    def counts(self) -> dict[str, Any]:
        """The manifest's counts."""
        return self.manifest["counts"]


@dataclass(frozen=True)
class TagTask:
    """What the tagging step needs on any executor (plain values; the key never goes in a closure)."""

    spec: BatchSpec
    config: Config = field(repr=False)
    key: bytes = field(repr=False)
    bundle: Bundle
    batch_size: int
    notes: int = 0  # rows to tag (for progress reports)


class Store(Protocol):
    """An output's run bookkeeping: FolderStore (store.py) or the table-prefix store (udfs/runs.py)."""

    def check(self, plan: RunPlan) -> None: ...
    def committed(self) -> list[dict[str, Any]]: ...
    def uncommit(self, plan: RunPlan) -> None: ...
    def sweep(self, keep: set[str]) -> int: ...
    def commit(self, plan: RunPlan, text: str) -> None: ...
    def release(self) -> None: ...


class Backend(RemoteFiles, Protocol):
    """An executor of the run's steps (Arrow tables or Spark DataFrames)."""

    runner: str  # the manifest's "runner"
    stages_to_files: bool  # the tagging result is kept as Parquet under a staging folder
    local_files: bool  # paths without a scheme are on this machine (not so under Spark Connect)

    def check_sink(self, sink: Sink) -> None: ...

    def read(self, source: Source) -> Any: ...
    def schema(self, frame: Any) -> pa.Schema: ...
    def select(self, frame: Any, selection: Selection, sink: Sink) -> tuple[Any, dict[str, int] | None, Any]: ...
    def count_ids(self, frame: Any) -> InputCounts: ...
    def apply_ids(self, frame: Any, plan: IdPlan) -> Any: ...
    def stage(self, frame: Any, task: TagTask, staging_path: str | None) -> Any: ...
    def project(self, staged: Any, spec: BatchSpec) -> tuple[Any, Any, Any]: ...
    def write_table(self, frame: Any, name: str, sink: Sink, run_id: str | None) -> None: ...
    def result_tables(self, tables: tuple[Any, Any, Any], sink: Sink, run_id: str | None) -> tuple[Any, Any, Any]: ...
    def staged_counts(self, staged: Any) -> tuple[list[tuple[str | None, str | None, int]], dict[str, int]]: ...
    def release(self, staged: Any) -> None: ...
    def describe(self) -> dict[str, Any]: ...
    def table_store(self, sink: Sink, source: Source) -> Store: ...


def backend_files(backend: Backend) -> Files:
    """File operations where the backend's paths live (all of them the server's under Spark Connect)."""
    return Files(backend, backend.local_files)


def _norm(path: str) -> str:
    """A comparable form: resolved local paths; URIs without a trailing slash."""
    return str(local_path(path).resolve()) if is_local(path) else path.rstrip("/")


def _overlap(a: str, b: str) -> bool:
    x, y = _norm(a), _norm(b)
    return x == y or x.startswith(y.rstrip("/") + "/") or y.startswith(x.rstrip("/") + "/")


def check_request(request: RunRequest, stages_to_files: bool = False, local_files: bool = True) -> None:
    """Refuse, before any work, an input that cannot be read and outputs that would touch the input.

    local_files=False (Spark Connect): paths belong to the server, so none is looked at here.
    """
    src, sink = request.source, request.sink
    if stages_to_files and _staging_root(request) is None:
        what = "returning frames" if sink.in_memory else "--output-table-prefix"
        raise ConfigError(f"--staging parquet with {what} needs --staging-dir DIR (or use --staging persist)")
    if src.path is not None and is_local(src.path) and local_files:
        schema = check_parquet_input(local_path(src.path), src.where)
        options = request.options
        validate_input_schema(schema, options.name_columns, src.where,
                              shifts_note_date(options.config))  # again on the engine's schema in run()
    if src.path is not None and sink.path is not None and _overlap(src.path, sink.path):
        raise ConfigError(f"{sink.where} and {src.where} overlap (one is, or is inside, the other): the run "
                          "would overwrite its own input; choose an output folder outside the input")
    if src.path is not None and request.staging_dir is not None and _overlap(src.path, request.staging_dir):
        raise ConfigError(f"--staging-dir {request.staging_dir} and {src.where} overlap: staging files would "
                          "be written into the input; choose a staging folder outside it")
    for where, path in ((sink.where, sink.path), (f"--staging-dir {request.staging_dir}", request.staging_dir)):
        if path is not None and is_local(path) and local_files:
            _check_writable(local_path(path), where)
    plan = plan_run(request.options, dt.datetime.now(dt.UTC))  # a bad --run-id stops here
    if sink.in_memory:
        FramesStore().check(plan)
    if sink.path is not None and is_local(sink.path) and local_files:
        FolderStore(sink.path, plain_local_files(), sink.where).check_layout(plan)


def _check_writable(path: Any, where: str) -> None:
    """A folder that exists is writable, or the nearest existing parent is a writable folder."""
    if path.is_file():
        raise ConfigError(f"{where} is a file; give a folder")
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"{where}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: {probe} is not writable by this user")


def _staging_root(request: RunRequest) -> str | None:
    return request.staging_dir or request.sink.path


def staging_prefix(sink: Sink) -> str:
    """Staging folders of runs into this sink: `staging-<sink tag>-`, so a shared --staging-dir is safe."""
    if sink.in_memory:  # live until the caller releases the result: never swept by another run
        return f"{STAGING_PREFIX}frames-"
    name = _norm(sink.path) if sink.path is not None else f"table:{sink.table_prefix}"
    tag = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{STAGING_PREFIX}{tag}-"


def sweep_staging(request: RunRequest, backend: Backend) -> int:
    """Remove staging folders left by killed runs into the same sink (never anything else)."""
    files = backend_files(backend)
    places = []
    if request.sink.path is not None:  # under the output folder every staging-* is a run's of ours
        places.append((request.sink.path, STAGING_PREFIX))
    if request.staging_dir is not None and not request.sink.in_memory:  # in a user's --staging-dir only this sink's
        places.append((request.staging_dir, staging_prefix(request.sink)))
    found = [join(root, n) for root, prefix in places for n in files.names(root) if n.startswith(prefix)]
    for p in found:
        files.remove(p)
    if found:
        log.warning("removed %d staging folder(s) left by an interrupted run", len(found))
    return len(found)


def open_store(request: RunRequest, backend: Backend) -> Store:
    """The output's bookkeeping: a folder's (store.py), a table prefix's (the executor's catalog), or none."""
    sink = request.sink
    if sink.in_memory:
        return FramesStore()
    if sink.path is not None:
        return FolderStore(sink.path, backend_files(backend), sink.where)
    return backend.table_store(sink, request.source)


def _test_pause(config: Config, table: str) -> None:
    """[testing] pause_after_write = TABLE: the kill tests' window between two table writes (test suite only)."""
    if config.testing.pause_after_write == table:
        log.warning("[testing] pause_after_write: paused after writing %s", table)
        time.sleep(600)


def run(request: RunRequest, backend: Backend) -> RunResult:
    """Do one run on `backend`; the manifest is written last. Raises ConfigError subclasses before any work."""
    started = dt.datetime.now(dt.UTC)
    plan = plan_run(request.options, started)
    check_request(request, backend.stages_to_files, backend.local_files)
    backend.check_sink(request.sink)
    store = open_store(request, backend)
    try:
        store.check(plan)  # layouts, database, writer lock: before the input is read
        return _run(request, backend, store, plan, started)
    finally:
        store.release()


def _run(request: RunRequest, backend: Backend, store: Store, plan: RunPlan, started: dt.datetime) -> RunResult:
    t0 = time.perf_counter()
    options, sink = request.options, request.sink
    root = _staging_root(request)
    frame = backend.read(request.source)
    schema = backend.schema(frame)
    spec = validate_input_schema(schema, options.name_columns, request.source.where,
                                 shifts_note_date(options.config))
    since = check_since_column(plan, schema, spec, request.source.where)
    committed = store.committed() if plan.partitioned else []
    check_columns(committed, spec, sink.where)
    selection = plan_selection(plan, committed, since)
    frame, reasons, mark = backend.select(frame, selection, sink)
    inp = backend.count_ids(frame)
    log.info("input: %d rows, %d null note_id, %d duplicate note_id row(s)", inp.rows, inp.null_ids,
             inp.duplicate_rows)
    frame = backend.apply_ids(frame, plan_ids(inp, spec, schema, options.job))
    # Work starts: uncommit this run's previous attempt first, then clear what killed runs left.
    store.uncommit(plan)
    if plan.partitioned:
        store.sweep({str(m[RUN_COLUMN]) for m in committed} - {plan.run_id})
    sweep_staging(request, backend)
    staging = (f"{root.rstrip('/')}/{staging_prefix(request.sink)}{secrets.token_hex(4)}"
               if backend.stages_to_files and root else None)
    t1 = time.perf_counter()
    task = TagTask(spec, options.config, request.key, request.bundle, options.job.batch_size,
                   inp.rows - inp.null_ids)  # rows with a null id were dropped (or the run stopped)
    run_id = plan.run_id if plan.partitioned else None
    staged = None
    kept = False  # an in-memory sink hands the staged result to the caller, who releases it
    try:
        staged = backend.stage(frame, task, staging)
        t2 = time.perf_counter()
        projected = backend.project(staged, spec)
        if not sink.in_memory:
            for name, table in zip(TABLES, projected, strict=True):
                backend.write_table(table, name, sink, run_id)
                _test_pause(options.config, name)
        status_rows, by_label = backend.staged_counts(staged)
        tables = backend.result_tables(projected, sink, run_id)
        kept = sink.in_memory
    finally:
        if not kept:
            _release(staged, staging, backend)
    t3 = time.perf_counter()
    extra = {**backend.describe(), **run_fields(plan, spec)}
    if plan.partitioned:
        read_rows = sum(reasons.values()) if reasons is not None else inp.rows
        extra["selection"] = selection_record(selection, reasons, read_rows, mark)
    manifest = build_manifest(
        runner=backend.runner, counts=run_counts(inp, status_rows), spans_by_label=by_label,
        config=options.config, bundle=request.bundle, key=request.key,
        timings={"read_validate_s": t1 - t0, "tag_s": t2 - t1, "write_s": t3 - t2,
                 "total_s": time.perf_counter() - t0},
        started=started, extra=extra)
    manifest["committed_at"] = now_iso()
    store.commit(plan, manifest_json(manifest))
    release = (lambda: _release(staged, staging, backend)) if kept else (lambda: None)
    return RunResult(manifest, tables, release)


def _release(staged: Any, staging: str | None, backend: Backend) -> None:
    """Free the staged result: the backend's hold on it (None when staging failed), then its folder."""
    try:
        backend.release(staged)
    finally:
        if staging:
            backend_files(backend).remove(staging)
