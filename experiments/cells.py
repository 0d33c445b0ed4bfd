"""Cell isolation: every measurement runs in its own process with a time limit and a memory cap.

A *cell* is one point of a sweep (model x compiler x batch size ...). The parent writes the cell's
spec to a JSON file and starts ``python -m experiments.worker spec.json result.json`` in a new
session; the worker's first act is to cap its own address space (``RLIMIT_AS``, inherited by any
process it starts) to ``spec["mem_limit_bytes"]``. Whatever happens in the child (an
exception, a segfault, running out of memory, a hang) the parent gets back one result row: the
worker's own row when it wrote one, else a ``crash``/``timeout`` row carrying the exit status and
the tail of the cell's log. The sweep goes on.

Example::

    >>> row = run_cell({"runner": "inference", ...}, workdir, timeout_s=600, mem_limit_bytes=None)
    >>> row["status"]
    'ok'
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from experiments.isolation import describe_exit

#: Row statuses. ok: measured; error: the worker caught an exception (a compiler that fails on a
#: model); unavailable: a required package is missing; timeout/crash: the process was killed or died.
STATUSES = ("ok", "error", "unavailable", "timeout", "crash")

_LOG_TAIL_CHARS = 2000
_REPO_ROOT = Path(__file__).resolve().parent.parent


def _tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return text[-_LOG_TAIL_CHARS:]


def run_cell(spec: Mapping[str, Any], workdir: Path, *, timeout_s: float, mem_limit_bytes: int | None,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run one cell in a fresh process and return its result row (never raises for cell failures).

    ``workdir`` receives ``spec.json``, ``result.json`` and ``log.txt`` (the child's stdout and
    stderr). The child runs in its own session so that a timeout kills it together with any
    process it started (e.g. compile workers).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "mem_limit_bytes": mem_limit_bytes}
    spec_path, result_path, log_path = workdir / "spec.json", workdir / "result.json", workdir / "log.txt"
    result_path.unlink(missing_ok=True)
    spec_path.write_text(json.dumps(spec, indent=1, default=str))
    command = [sys.executable, "-m", "experiments.worker", str(spec_path), str(result_path)]
    if env is None:  # the worker imports experiments and models from this checkout
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH")) if p)
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=dict(env))
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_session(proc)
            returncode = None
        except BaseException:  # Ctrl-C: the child has its own session and would not get the signal
            _kill_session(proc)
            raise
    elapsed = time.monotonic() - start
    row: dict[str, Any]
    if returncode is None:
        row = {"status": "timeout", "error": f"cell exceeded its {timeout_s:g} s limit and was killed"}
    elif result_path.exists():
        row = json.loads(result_path.read_text())
        result_path.unlink()
    else:
        row = {"status": "crash", "error": f"worker exited with {describe_exit(returncode)} before writing "
                                           f"a result; log tail: {_tail(log_path)[-600:]}"}
    row["cell_wall_s"] = round(elapsed, 3)
    return row


def _kill_session(proc: subprocess.Popen) -> None:
    """Kill the child's whole session (it is its own process group leader), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def default_mem_limit_bytes(device: str) -> int | None:
    """90% of physical memory on CPU; no address-space cap on CUDA (its driver reserves far more
    virtual memory than it uses, so RLIMIT_AS would break every GPU cell)."""
    if device == "cuda":
        return None
    pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    return int(pages * page_size * 0.9)
