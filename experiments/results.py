"""The results directory of one run: ``results/<experiment>/<run-id>/``.

Layout::

    cells/<cell-id>/row.json   the cell's result row (its presence marks the cell done)
    cells/<cell-id>/log.txt    everything the cell process printed
    raw.csv                    one row per cell: key columns, status, error, correct, repetition stats
    summary.csv                the experiment's table (speedups, graph counts, fractions)
    meta.json                  git sha, versions, device, the resolved config
    <experiment>.png / .pdf    the figure, drawn from the CSVs only (experiments.plot)

Several processes may write the same run directory (a Hydra multirun): each cell writes only its
own folder, and the tables and meta.json are rewritten from all cell folders by atomic
replacement, so they always describe the whole directory.

A row keeps the settings it was measured with (``row["settings"]``: the run's settings, the
model and compiler configs, the environment, see :func:`cell_settings`). :meth:`RunStore.stale`
finds rows measured with other settings than the ones requested; the runner refuses to mix them
(the resume rule of :mod:`experiments.units`, with ``on_change="refuse"``).
Files are written with the mode the umask gives (a host user can read what a container wrote).

Example::

    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = RunStore(Path(tmp.name) / "fig15" / "smoke-cpu")
    >>> cid = cell_id({"model": "bert", "compiler": "eager", "bs": 1})
    >>> cid, store.row(cid), store.reuse(cid, {"repeat": 5}).action
    ('model=bert,compiler=eager,bs=1', None, 'run')
    >>> store.save(cid, {"status": "ok", "settings": {"repeat": 5}})
    >>> store.reuse(cid, {"repeat": 5}).action, store.reuse(cid, {"repeat": 20})
    ('skip', Reuse(action='refuse', changes=('repeat: 5 recorded, 20 requested',)))
    >>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.units import MEASURED_SOURCES as MEASURED
from experiments.units import NOT_MEASURED, Reuse, identity_changes, reuse, source_digest

#: Columns that lead raw.csv, in this order, when present.
LEADING = ["experiment", "model", "kind", "compiler", "bs", "status", "correct", "error", "mean_s", "std_s",
           "min_s", "median_s", "max_s", "n"]


def cell_id(key: Mapping[str, Any]) -> str:
    """A file-name-safe id for a cell key, e.g. ``model=bert,compiler=eager,bs=1``."""
    text = ",".join(f"{k}={v}" for k, v in key.items() if v is not None)
    return re.sub(r"[^A-Za-z0-9=,._+-]", "_", text)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; results are for everyone the umask allows
    os.replace(tmp, path)


#: Keys of a cell spec that name the cell rather than describe how it is measured.
_NOT_SETTINGS = ("key", "cell_id", "mem_limit_bytes")
#: Parts of a cell's settings that differ between cells of one run (the rest is the run's).
_PER_CELL = ("model", "compiler", "kind", "dynamic", "region")


#: The project's code a cell runs: MagPy, the benchmark models and the harness (its figure drawing
#: aside: rewording a caption does not change a measured number).
# (the names the cells' environment reads: experiments.units says what they hold, for ParityBench too)
MEASURED_SOURCES, _NOT_MEASURED = MEASURED, NOT_MEASURED


def environment(device: str) -> dict[str, Any]:
    """What besides the configuration changes the numbers: code (the commit and a digest of the
    sources the cells run, so that an uncommitted edit counts), library versions, the machine."""
    return {"git_sha": _git(["rev-parse", "HEAD"]), "source": source_digest(MEASURED_SOURCES, _NOT_MEASURED),
            "python": sys.version.split()[0],
            **{name: _version(name) for name in ("torch", "transformers", "torch_xla")},
            "device_name": device_name(device)}


#: Packages whose version is part of the identity only of the cells whose compiler ``requires`` them
#: (an eager or Inductor cell never imports torch_xla: installing it changes none of their numbers).
OPTIONAL_PACKAGES = ("torch_xla",)


def cell_environment(env: Mapping[str, Any], compiler: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of ``env`` (:func:`environment`) a cell of ``compiler`` depends on: all of it but the
    versions of :data:`OPTIONAL_PACKAGES` the compiler does not require.

        >>> env = {"torch": "2.13.0", "torch_xla": "2.9.0"}
        >>> cell_environment(env, {"requires": []}), cell_environment(env, {"requires": ["torch_xla"]})
        ({'torch': '2.13.0'}, {'torch': '2.13.0', 'torch_xla': '2.9.0'})
    """
    requires = set(compiler.get("requires") or []) if isinstance(compiler, Mapping) else set()
    return {k: v for k, v in env.items() if k not in OPTIONAL_PACKAGES or k in requires}


def _identity(settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Recorded or requested settings with the environment cut to what the cell's compiler depends on
    (a row that recorded ``torch_xla: None`` for an eager cell keeps its identity)."""
    if settings is None or not isinstance(settings.get("environment"), Mapping):
        return None if settings is None else dict(settings)
    return {**settings, "environment": cell_environment(settings["environment"], settings.get("compiler"))}


def git_dirty() -> bool | None:
    """Whether the checkout has uncommitted changes to tracked files (None outside a git checkout)."""
    status = _git(["status", "--porcelain", "--untracked-files=no"])
    return None if status is None else bool(status)


def cell_settings(spec: Mapping[str, Any], run_settings: Mapping[str, Any],
                  env: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of a cell's numbers besides its key: the run's settings (``Plan.settings``),
    what the spec adds (model and compiler configs, input kind, dynamic, region) and the part of
    ``env`` the cell's compiler depends on (:func:`cell_environment`)."""
    extra = {k: v for k, v in spec.items() if k not in _NOT_SETTINGS and k not in run_settings}
    env = cell_environment(env, spec.get("compiler"))
    return json.loads(json.dumps({**run_settings, **extra, "environment": env}, default=str))


def settings_diff(recorded: Mapping[str, Any], requested: Mapping[str, Any],
                  per_cell: bool = True) -> list[str]:
    """``["repeat: 20 recorded, 5 requested", ...]``; with ``per_cell=False`` only the run-wide part
    (:func:`experiments.units.identity_changes`, the comparison ParityBench's resume makes too)."""
    return identity_changes(recorded, requested, ignore=() if per_cell else _PER_CELL)


def _run_wide(settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if settings is None else {k: v for k, v in settings.items() if k not in _PER_CELL}


class RunStore:
    """Reads and writes one run directory (see the module docstring for its layout)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.cells_dir = self.run_dir / "cells"
        self.cells_dir.mkdir(parents=True, exist_ok=True)

    def cell_dir(self, cid: str) -> Path:
        """The folder of cell ``cid`` (its log, spec and row)."""
        return self.cells_dir / cid

    def row(self, cid: str) -> dict[str, Any] | None:
        """The saved row of cell ``cid``, or None when the cell has not finished."""
        path = self.cell_dir(cid) / "row.json"
        return json.loads(path.read_text()) if path.exists() else None

    def reuse(self, cid: str, wanted: Mapping[str, Any], *, force: bool = False,
              retry_errors: bool = False) -> Reuse:
        """What to do with cell ``cid`` for a run that wants the settings ``wanted``
        (:func:`cell_settings`): ``run`` (no saved row), ``rerun`` (``force``, or ``retry_errors``
        and not ok, or an ``unavailable`` row, which holds no measurement, saved with other settings:
        the package it missed may be there now), ``refuse`` (a measured row saved with other settings)
        or ``skip`` (:func:`experiments.units.reuse`)."""
        row = self.row(cid)
        verdict = reuse(row, None if row is None else _identity(row.get("settings")), _identity(wanted),
                        on_change="refuse", force=force, retry_failed=retry_errors)
        if verdict.action == "refuse" and row is not None and row.get("status") == "unavailable":
            return Reuse("rerun", verdict.changes)
        return verdict

    def stale(self, requested: Mapping[str, Mapping[str, Any]],
              run_settings: Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]
              ) -> dict[str, list[str]]:
        """Saved rows measured with other settings, as ``{cell id: differences}``.

        ``requested`` maps the cell ids of this run to their :func:`cell_settings`; a row of another
        cell (an earlier command on the same run directory) is compared on the run-wide part, of
        ``run_settings`` or, when it is a function, of what it returns for the row's recorded settings
        (the environment of a torch_xla cell is the XLA venv's).
        A row without recorded settings (an older harness) is stale; an ``unavailable`` row never is
        (it holds no number: a requested one is measured again, :meth:`reuse`).
        """
        stale = {}
        for row in self.rows():
            cid = row["cell_id"]
            if cid in requested:
                verdict = self.reuse(cid, requested[cid])
            else:  # a cell of another command on this directory: the run-wide part must agree
                recorded = _identity(row.get("settings"))
                wanted = run_settings(recorded or {}) if callable(run_settings) else run_settings
                if recorded is not None and isinstance(wanted.get("environment"), Mapping):
                    wanted = {**wanted, "environment": cell_environment(wanted["environment"],
                                                                        recorded.get("compiler"))}
                verdict = reuse(row, _run_wide(recorded), _run_wide(wanted), on_change="refuse")
                if row.get("status") == "unavailable":  # no number to mix: kept until its cell runs again
                    continue
            if verdict.action == "refuse":
                stale[cid] = list(verdict.changes)
        return stale

    def set_aside(self, cid: str) -> None:
        """Keep cell ``cid``'s row as ``row.superseded.json``, out of the tables."""
        path = self.cell_dir(cid) / "row.json"
        if path.exists():
            os.replace(path, path.with_name("row.superseded.json"))

    def save(self, cid: str, row: Mapping[str, Any]) -> None:
        """Save the finished row of cell ``cid``."""
        self.cell_dir(cid).mkdir(parents=True, exist_ok=True)
        _atomic_write(self.cell_dir(cid) / "row.json", json.dumps(row, indent=1, default=str))

    def rows(self) -> list[dict[str, Any]]:
        """All saved rows of this run directory."""
        return [json.loads(p.read_text()) for p in sorted(self.cells_dir.glob("*/row.json"))]

    def write_tables(self, summarize: Callable[[pd.DataFrame], pd.DataFrame],
                     order: Iterable[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Rewrite raw.csv from every saved row and summary.csv with ``summarize(raw)``.

        ``order`` lists cell ids in sweep order; rows follow it, then any others (e.g. from a
        concurrent job of the same multirun).
        """
        rows = {r["cell_id"]: {k: v for k, v in r.items() if k != "settings"} for r in self.rows()}
        ordered = [rows.pop(cid) for cid in order if cid in rows] + list(rows.values())
        raw = pd.DataFrame(ordered)
        if not raw.empty:
            lead = [c for c in LEADING if c in raw.columns]
            raw = raw[lead + [c for c in raw.columns if c not in lead]]
        summary = summarize(raw) if not raw.empty else pd.DataFrame()
        _atomic_write(self.run_dir / "raw.csv", raw.to_csv(index=False))
        _atomic_write(self.run_dir / "summary.csv", summary.to_csv(index=False))
        return raw, summary

    def write_meta(self, config: Mapping[str, Any], device: str) -> None:
        """Write meta.json: provenance of the numbers in this directory, describing all its cells.

        ``config`` is this process's resolved config; its ``model``, ``compiler`` and ``bs`` are
        replaced by those of every saved row (other jobs of a multirun included), and ``cells``
        counts the rows by status.
        """
        rows = self.rows()
        config = dict(config)
        if rows:
            models = {r["model"]: r.get("settings", {}).get("model") for r in rows if r.get("model")}
            compilers = {r["compiler"]: r.get("settings", {}).get("compiler") for r in rows if r.get("compiler")}
            config["model"] = {**{k: v for k, v in (config.get("model") or {}).items() if k in models},
                               **{k: v for k, v in models.items() if v is not None}}
            config["compiler"] = {**{k: v for k, v in (config.get("compiler") or {}).items() if k in compilers},
                                  **{k: v for k, v in compilers.items() if v is not None}}
            batch_sizes = sorted({int(r["bs"]) for r in rows if r.get("bs") is not None})
            if batch_sizes:
                config["bs"] = batch_sizes
        statuses: dict[str, int] = {}
        for r in rows:
            statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
        meta = {
            "git_sha": _git(["rev-parse", "HEAD"]),
            # the cells' own record (the tree they were measured on), not the tree of this write
            "git_dirty": any(r.get("git_dirty") for r in rows) if any("git_dirty" in r for r in rows)
            else git_dirty(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "versions": {name: _version(name) for name in ("torch", "transformers", "torch_xla", "magpy",
                                                           "hydra-core", "numpy")},
            "device": device,
            "device_name": device_name(device),
            "cpu": _cpu_name(),
            "cells": {"total": len(rows), **statuses},
            "models": sorted(config.get("model") or {}),
            "compilers": sorted(config.get("compiler") or {}),
            "config": config,
        }
        _atomic_write(self.run_dir / "meta.json", json.dumps(meta, indent=1, default=str))


def device_name(device: str) -> str:
    """A human-readable name of ``device`` (the GPU's name on CUDA, the CPU model otherwise)."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    return _cpu_name()


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} x{os.cpu_count()}"
    except OSError:
        pass
    return f"{platform.processor() or 'unknown CPU'} x{os.cpu_count()}"


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _git(args: list[str]) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None
