"""The results directory of one run: ``results/<experiment>/<run-id>/``.

Layout::

    cells/<cell-id>/row.json   the cell's result row (its presence marks the cell done)
    cells/<cell-id>/log.txt    everything the cell process printed
    raw.csv                    one row per cell: key columns, status, error, correct, repetition stats
    summary.csv                the experiment's table (speedups, graph counts, fractions)
    meta.json                  git sha, versions, device, the resolved config
    <experiment>.png / .pdf    the figure, drawn from the CSVs only (experiments.plot)

Several processes may write the same run directory (a Hydra multirun): each cell writes only its
own folder, and the tables are rewritten from all cell folders by atomic replacement.

Example::

    >>> store = RunStore(Path("results/fig15/smoke-cpu"))
    >>> store.has(cell_id)
    False
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

#: Columns that lead raw.csv, in this order, when present.
LEADING = ["experiment", "model", "kind", "compiler", "bs", "status", "correct", "error", "mean_s", "std_s",
           "min_s", "median_s", "max_s", "n"]


def cell_id(key: Mapping[str, Any]) -> str:
    """A file-name-safe id for a cell key, e.g. ``model=bert,compiler=eager,bs=1``."""
    text = ",".join(f"{k}={v}" for k, v in key.items() if v is not None)
    return re.sub(r"[^A-Za-z0-9=,._+-]", "_", text)


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


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

    def needs_run(self, cid: str, *, force: bool, retry_errors: bool) -> bool:
        """Whether cell ``cid`` must run: no saved row, ``force``, or ``retry_errors`` and not ok."""
        row = self.row(cid)
        return force or row is None or (retry_errors and row.get("status") != "ok")

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
        rows = {r["cell_id"]: r for r in self.rows()}
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
        """Write meta.json: provenance of the numbers in this directory."""
        meta = {
            "git_sha": _git(["rev-parse", "HEAD"]),
            "git_dirty": bool(_git(["status", "--porcelain", "--untracked-files=no"])),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "versions": {name: _version(name) for name in ("torch", "transformers", "torch_xla", "magpy",
                                                           "hydra-core", "numpy")},
            "device": device,
            "device_name": device_name(device),
            "cpu": _cpu_name(),
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
