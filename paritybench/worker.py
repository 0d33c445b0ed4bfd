"""The child process that runs one ParityBench file, stage by stage, writing events as it goes.

The runner (:mod:`paritybench.runner`) starts one worker per file as an isolated
:class:`~experiments.isolation.Worker` (own session, memory cap, the user program's prints in
the file's log). The worker loads the file (stubbing missing libraries), and for every selected
test case runs the eager stage and then one stage per compiler. Before a stage it appends a ``stage_start`` event to the file's event log and
after it a ``stage`` event with the result, flushed at once: if the process hangs or dies
the runner knows which stage did it, records that stage as a timeout or crash, and starts a
new worker for what is left. A stage already recorded in the log (by the current build) is
never run again, which is also what makes a whole run resumable.

Events, one JSON object per line::

    {"event": "load", "ok": true, "cases": [...], "expected": {...}, "stubs": {...}, ...}
    {"event": "stage_start", "case": "Net", "stage": "magpy", "t": 1700000000.0}
    {"event": "stage", "case": "Net", "stage": "magpy", "result": {...}}
    {"event": "end"}
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["EventLog", "case_selected", "file_digest", "read_events", "run_file"]


class EventLog:
    """Appends JSON events to a file, one per line, flushed immediately."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the worker's life

    def write(self, event: dict[str, Any]) -> None:
        self._fh.write(json.dumps(event, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """Every complete event in a log (a line cut short by a crash is ignored)."""
    path = Path(path)
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events


def file_digest(path: str | Path) -> str:
    """SHA-1 of a file's bytes: a rerun redoes a file whose digest changed."""
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()


def case_selected(file_stem: str, case_name: str, name_filter: str | None) -> bool:
    """``--filter`` keeps a case when the text occurs in ``file::class``."""
    return not name_filter or name_filter in f"{file_stem}::{case_name}"


def _stamp(result: dict[str, Any], stage: str, builds: dict[str, str] | None) -> None:
    """Record which build made a stage result (the runner reruns stages of another build)."""
    if builds and stage in builds:
        result["build"] = builds[stage]


def run_file(
    path: str,
    events_path: str,
    config: dict[str, Any],
    done: dict[str, Iterable[str]],
    name_filter: str | None = None,
    builds: dict[str, str] | None = None,
) -> None:
    """Worker entry point: run every selected, not yet recorded stage of one file."""
    import torch

    torch.set_num_threads(1)

    from .compilers import COMPILERS
    from .evaluate import RunConfig, run_eager_stage
    from .loader import load_testfile
    from .stubs import StubImporter

    cfg = RunConfig(**config)
    log = EventLog(events_path)
    done_sets = {case: set(stages) for case, stages in done.items()}
    stem = Path(path).stem
    print(f"[worker] {path} pid={os.getpid()} skipping {sum(map(len, done_sets.values()))} recorded stages", flush=True)

    importer = StubImporter()
    start = time.perf_counter()
    try:
        loaded = load_testfile(path, importer)
    except BaseException as exc:  # noqa: BLE001 - a file that cannot load is a result
        if isinstance(exc, KeyboardInterrupt):
            raise
        from .evaluate import error_fields

        log.write(
            {
                "event": "load",
                "ok": False,
                "sha1": file_digest(path),
                "time_s": time.perf_counter() - start,
                "stubs": importer.usage.as_json(),
                **error_fields(exc),
            }
        )
        log.write({"event": "end"})
        log.close()
        return
    log.write(
        {
            "event": "load",
            "ok": True,
            "sha1": file_digest(path),
            "time_s": loaded.load_time_s,
            "cases": [c.name for c in loaded.cases],
            "expected": {c.name: c.expected for c in loaded.cases if c.expected is not None},
            "helpers": loaded.helpers,
            "helpers_note": loaded.helpers_note,
            "stubs": loaded.stubs.as_json(),
        }
    )

    stages = ["eager", *cfg.compilers]
    for case in loaded.cases:
        if not case_selected(stem, case.name, name_filter):
            continue
        recorded = done_sets.get(case.name, set())
        todo = [s for s in stages if s not in recorded]
        if not todo:
            continue
        before = importer.usage.snapshot()
        log.write({"event": "stage_start", "case": case.name, "stage": "eager", "t": time.time(), "replay": "eager" not in todo})
        eager_result, reference = run_eager_stage(case, cfg)
        used = importer.usage.since(before)
        if used:
            eager_result["stubs_used"] = used
        _stamp(eager_result, "eager", builds)
        if "eager" in todo:
            log.write({"event": "stage", "case": case.name, "stage": "eager", "result": eager_result})
        for name in cfg.compilers:
            if name not in todo:
                continue
            if reference is None:
                result = {"status": "not_run", "error_class": "", "error": "eager reference unavailable"}
            else:
                log.write({"event": "stage_start", "case": case.name, "stage": name, "t": time.time()})
                # Each stage starts from the same memory: what the previous stage left in reference
                # cycles (a compiler's caches, a traceback's frames) would count against this one's cap.
                gc.collect()
                try:
                    result = COMPILERS[name](case, cfg, reference)
                except Exception as exc:  # noqa: BLE001 - a bug in the harness must not hide other results
                    from .evaluate import error_fields

                    result = {"status": "harness_error", **error_fields(exc)}
            used = importer.usage.since(before)
            if used:
                result["stubs_used"] = used
            _stamp(result, name, builds)
            log.write({"event": "stage", "case": case.name, "stage": name, "result": result})
    log.write({"event": "end"})
    log.close()
    sys.stdout.flush()
    sys.stderr.flush()
