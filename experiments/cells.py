"""Cell isolation: every measurement runs in its own process with a time limit and a memory cap.

A *cell* is one point of a sweep (model x compiler x batch size ...). The parent writes the cell's
spec to a JSON file and starts ``python -m experiments.worker spec.json result.json`` as an
isolated :class:`~experiments.isolation.Worker` (a fresh interpreter in its own session, under the
cell's memory cap, its output in the cell's log). Whatever happens in the child (an exception, a
segfault, running out of memory, a hang) the parent gets back one result row: the worker's own
row when it wrote one, else a ``crash``/``timeout`` row saying how the worker ended, with the tail
of the cell's log (:func:`experiments.units.unfinished`: ParityBench records a stage in the same
words, under the same time-limit rule). The sweep goes on.

A cell runs in this interpreter, except one whose compiler needs torch_xla when this interpreter has
none: torch_xla is built for one torch release (torch-xla 2.9.0 for torch 2.9.0), so it lives in a
venv of its own, ``.venv-xla`` (``./reproduce.sh setup-xla``), and such a cell runs there
(:func:`cell_python`), with ``PJRT_DEVICE`` set for the cell's device. Its row records that
interpreter's versions (:func:`interpreter`).

Example (``spec`` a cell spec as :mod:`experiments.run` writes it)::

    row = run_cell(spec, workdir, timeout_s=600, mem_limit_bytes=None)
    row["status"]   # 'ok', or error/unavailable/timeout/crash with the reason in row["error"]
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from experiments.isolation import Worker
from experiments.units import TimedUnit, unfinished

#: Row statuses. ok: measured; error: the worker caught an exception (a compiler that fails on a
#: model); unavailable: a required package is missing; timeout/crash: the process was killed or died.
STATUSES = ("ok", "error", "unavailable", "timeout", "crash")

_REPO_ROOT = Path(__file__).resolve().parent.parent


def xla_python() -> str | None:
    """The interpreter of the XLA venv (``.venv-xla``, or the venv ``MAGPY_XLA_VENV`` names) when it exists."""
    venv = Path(os.environ.get("MAGPY_XLA_VENV") or _REPO_ROOT / ".venv-xla")
    python = venv / "bin" / "python"
    return str(python) if python.exists() else None


def cell_python(compiler: Mapping[str, Any] | None) -> str:
    """The interpreter a cell of ``compiler`` runs in: this one, or the XLA venv's for a compiler that
    requires torch_xla when this interpreter cannot import it (and the XLA venv exists)."""
    if "torch_xla" in ((compiler or {}).get("requires") or []) and importlib.util.find_spec("torch_xla") is None:
        return xla_python() or sys.executable
    return sys.executable


@functools.cache
def interpreter(python: str, device: str) -> dict[str, Any]:
    """What another interpreter brings to a cell: ``{"environment": results.environment(device) there,
    "found": {module: importable}}`` for the modules compilers may require (torch_xla, magpy).
    An interpreter that cannot tell (a broken venv) gives ``{"error": its last line of output}``."""
    code = ("import importlib.util, json, sys; from experiments.results import environment; "
            "print(json.dumps({'environment': environment(sys.argv[1]), "
            "'found': {m: importlib.util.find_spec(m) is not None for m in ('torch_xla', 'magpy')}}, default=str))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(_REPO_ROOT), os.environ.get("PYTHONPATH")) if p)}
    try:
        out = subprocess.run([python, "-c", code, device], capture_output=True, text=True, timeout=300, env=env,
                             cwd=_REPO_ROOT)
    except (OSError, subprocess.TimeoutExpired) as err:
        return {"error": f"{python}: {err}"}
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        return {"error": f"{python}: {lines[-1] if lines else f'exit status {out.returncode}'}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def missing_in(python: str, compiler: Mapping[str, Any] | None, device: str) -> list[str]:
    """The modules ``compiler`` requires that ``python`` cannot import (or why that interpreter is unusable)."""
    from experiments.compilers import missing_requirements

    if python == sys.executable:
        return missing_requirements(compiler or {})
    info = interpreter(python, device)
    if "error" in info:
        return [f"{', '.join((compiler or {}).get('requires') or [])} (its venv fails: {info['error']})"]
    return [m for m in (compiler or {}).get("requires") or [] if not info["found"].get(m, False)]


def run_cell(spec: Mapping[str, Any], workdir: Path, *, timeout_s: float, mem_limit_bytes: int | None,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run one cell in a fresh process and return its result row (never raises for cell failures).

    ``workdir`` receives ``spec.json``, ``result.json`` and ``log.txt`` (the child's stdout and
    stderr; a rerun of the cell appends to it). Ctrl-C kills the cell's process (and any it started) and goes on as KeyboardInterrupt.
    The process runs :func:`cell_python`'s interpreter for the spec's compiler.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "mem_limit_bytes": mem_limit_bytes}
    spec_path, result_path, log_path = workdir / "spec.json", workdir / "result.json", workdir / "log.txt"
    result_path.unlink(missing_ok=True)
    spec_path.write_text(json.dumps(spec, indent=1, default=str))
    if env is None:  # the worker imports experiments and models from this checkout
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH")) if p)
    python = cell_python(spec.get("compiler"))
    if "torch_xla" in ((spec.get("compiler") or {}).get("requires") or []):
        # torch_xla's runtime picks its device from PJRT_DEVICE: the cell's device, unless set already
        env = {**env, "PJRT_DEVICE": env.get("PJRT_DEVICE") or ("CUDA" if spec.get("device") == "cuda" else "CPU")}
    start = time.monotonic()
    worker = Worker.module("experiments.worker", [spec_path, result_path], log_path=log_path,
                           mem_limit_bytes=mem_limit_bytes, env=dict(env), python=python)
    ending = TimedUnit(worker, timeout_s).wait()
    row: dict[str, Any]
    if ending.status != "timeout" and result_path.exists():
        row = json.loads(result_path.read_text())
        result_path.unlink()
    else:  # recorded as ParityBench records a stage that overran or lost its worker
        row = unfinished(ending, worker.log_tail(600))
    row["cell_wall_s"] = round(time.monotonic() - start, 3)
    return row


def default_mem_limit_bytes(device: str) -> int | None:
    """90% of physical memory on CPU; no address-space cap on CUDA (its driver reserves far more
    virtual memory than it uses, so RLIMIT_AS would break every GPU cell)."""
    if device == "cuda":
        return None
    pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    return int(pages * page_size * 0.9)
