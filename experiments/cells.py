"""Cell isolation: every measurement runs in its own process with a time limit and a memory cap.

A *cell* is one point of a sweep (model x compiler x batch size ...). The parent writes the cell's
spec to a JSON file and starts ``python -m experiments.worker spec.json result.json`` as an
isolated :class:`~experiments.isolation.Worker` (a fresh interpreter in its own session, under the
cell's memory cap, its output in the cell's log). Whatever happens in the child (an exception, a
segfault, running out of memory, a hang) the parent gets back one result row: the worker's own
row when it wrote one, else a ``crash``/``timeout`` row saying how the worker ended, with the tail
of the cell's log. The sweep goes on.

Example (``spec`` a cell spec as :mod:`experiments.run` writes it)::

    row = run_cell(spec, workdir, timeout_s=600, mem_limit_bytes=None)
    row["status"]   # 'ok', or error/unavailable/timeout/crash with the reason in row["error"]
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from experiments.isolation import Worker

#: Row statuses. ok: measured; error: the worker caught an exception (a compiler that fails on a
#: model); unavailable: a required package is missing; timeout/crash: the process was killed or died.
STATUSES = ("ok", "error", "unavailable", "timeout", "crash")

_REPO_ROOT = Path(__file__).resolve().parent.parent


def run_cell(spec: Mapping[str, Any], workdir: Path, *, timeout_s: float, mem_limit_bytes: int | None,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run one cell in a fresh process and return its result row (never raises for cell failures).

    ``workdir`` receives ``spec.json``, ``result.json`` and ``log.txt`` (the child's stdout and
    stderr; a rerun of the cell appends to it). Ctrl-C kills the cell's process (and any it started) and goes on as KeyboardInterrupt.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "mem_limit_bytes": mem_limit_bytes}
    spec_path, result_path, log_path = workdir / "spec.json", workdir / "result.json", workdir / "log.txt"
    result_path.unlink(missing_ok=True)
    spec_path.write_text(json.dumps(spec, indent=1, default=str))
    if env is None:  # the worker imports experiments and models from this checkout
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH")) if p)
    start = time.monotonic()
    worker = Worker.module("experiments.worker", [spec_path, result_path], log_path=log_path,
                           mem_limit_bytes=mem_limit_bytes, env=dict(env))
    ending = worker.wait(timeout_s)
    row: dict[str, Any]
    if ending.status == "timeout":
        row = {"status": "timeout", "error": str(ending)}
    elif result_path.exists():
        row = json.loads(result_path.read_text())
        result_path.unlink()
    else:
        row = {"status": "crash", "error": f"{ending} before writing a result; log tail: {worker.log_tail(600)}"}
    row["cell_wall_s"] = round(time.monotonic() - start, 3)
    return row


def default_mem_limit_bytes(device: str) -> int | None:
    """90% of physical memory on CPU; no address-space cap on CUDA (its driver reserves far more
    virtual memory than it uses, so RLIMIT_AS would break every GPU cell)."""
    if device == "cuda":
        return None
    pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    return int(pages * page_size * 0.9)
