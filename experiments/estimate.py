"""How long each experiment would take at paper size on a GPU, from cells measured there:
``python -m experiments.estimate [results/gpu/<card>]`` prints the table the READMEs quote.

Only ``gpu-quick`` has run on a GPU so far (fig15 and Table 2 for a few models, batch size 1, fewer
calls than the paper's), so each cell of an experiment's paper-size plan is estimated from those:

* **a cell's fixed cost** (process start, model build, compile, checks): the mean ``cell_wall_s``
  of the measured cells with the same compiler (over the models measured; the others are assumed
  alike). A compiler never measured there takes the mean of the measured cells with its backend
  (``inductor``), else of the measured cells without a compiling backend (Dynamo/MagPy with
  ``backend=eager``): TorchScript's scripting is not a minutes-long compile.
* **the calls the paper size adds** (its ``warmup + repeat`` minus the measured run's): each at the
  compiler's measured mean call time at batch size 1; a range, since a batch of ``bs`` costs between
  one and ``bs`` batch-1 calls.
* **a dynamic cell** (fig17/fig18) compiles once per distinct input shape in the worst case (MagPy
  has no dynamic shapes: a monitor run and a backend compile per new shape; a frontend compiled with
  ``dynamic=True`` twice at most): each compile past the first adds the compiler's measured
  ``first_call_s``; the low end counts none; its stream of ``n_inputs`` inputs runs twice
  more (the two checked passes).
* **cells needing a package the image lacks** (``torch_xla``: no CUDA wheel on PyPI) cost nothing:
  they become ``unavailable`` rows without starting a process.

The figures are estimates until a GPU run of the experiment replaces them.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ("fig1", "fig15", "table2", "fig16", "fig17", "fig18")
DEFAULT_MEASURED = ROOT / "results" / "gpu" / "nvidia-h100-80gb-hbm3"


def measured_cells(folder: Path) -> pd.DataFrame:
    """Every ok cell of the ``*-raw.csv`` files in ``folder`` (a gpu-quick summary)."""
    frames = [pd.read_csv(path) for path in sorted(folder.glob("*-raw.csv"))]
    if not frames:
        raise SystemExit(f"error: no *-raw.csv in {folder}")
    raw = pd.concat(frames, ignore_index=True)
    return raw[(raw["status"] == "ok") & raw["cell_wall_s"].notna()]


def _mean(values: Any) -> float | None:
    values = [float(v) for v in values if pd.notna(v)]
    return statistics.fmean(values) if values else None


def cell_cost(spec: dict[str, Any], raw: pd.DataFrame, plan: Any) -> tuple[float, float]:
    """(low, high) seconds for one cell spec of ``plan``, from the measured ``raw`` rows."""
    compiler = spec["compiler"] or {}
    if any(req not in ("magpy",) for req in compiler.get("requires") or []):
        return 0.0, 0.0  # torch_xla: an `unavailable` row, no process
    same = raw[raw["compiler"] == compiler.get("name")]
    if same.empty:
        backend = compiler.get("backend")
        kind = [c for c in raw["compiler"].unique() if c.endswith(f"-{backend}")] if backend == "inductor" else \
            ["dynamo-eager", "magpy-eager"]
        same = raw[raw["compiler"].isin(kind)]
    fixed = _mean(same["cell_wall_s"]) or 0.0
    per_call = _mean(same["mean_s"]) or 0.0
    measured_calls = _mean(same["warmup"] + same["repeat"]) or 0.0
    calls = max(0.0, plan.warmup + plan.repeat - measured_calls)
    bs = int(spec["key"].get("bs", 1))
    extra_low, extra_high = calls * per_call, calls * per_call * bs
    if spec["key"].get("kind"):  # a dynamic cell: two checked passes, one compile per new shape
        shapes = distinct_shapes(spec)
        passes = 2 * plan.n_inputs * per_call
        if compiler.get("frontend") in (plan.options.get("dynamic") or []):
            shapes = min(shapes, 2)  # dynamic=True: the first shape, then one symbolic graph
        compiles = 0.0 if compiler.get("frontend") == "eager" else (shapes - 1) * (_mean(same["first_call_s"]) or 0.0)
        extra_low += passes
        extra_high += passes + compiles
    return fixed + extra_low, fixed + extra_high


def distinct_shapes(spec: dict[str, Any]) -> int:
    """How many distinct input shapes a dynamic cell's stream holds (the inputs are built, not run)."""
    from experiments.runners._common import dynamic_inputs

    shapes = set()
    for args, kwargs in dynamic_inputs(spec):
        shapes.add(tuple(tuple(getattr(a, "shape", ())) for a in [*args, *kwargs.values()]))
    return len(shapes)


def estimate(experiment: str, raw: pd.DataFrame) -> dict[str, Any]:
    """The estimate of one experiment at paper size: cells, processes and (low, high) seconds."""
    from hydra import compose, initialize_config_dir

    from experiments.plan import make_plan

    with initialize_config_dir(config_dir=str(ROOT / "experiments" / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={experiment}", "device=cpu", "size=paper"])
    plan = make_plan(cfg, cli_keys=set())
    specs = importlib.import_module(f"experiments.runners.{plan.runner}").cells(plan)
    costs = [cell_cost(spec, raw, plan) for spec in specs]
    return {"experiment": experiment, "cells": len(specs), "processes": sum(1 for c in costs if c[1] > 0),
            "low_s": sum(c[0] for c in costs), "high_s": sum(c[1] for c in costs)}


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.estimate", description=__doc__.split("\n\n")[0])
    parser.add_argument("measured", nargs="?", type=Path, default=DEFAULT_MEASURED,
                        help="a gpu-quick summary folder holding *-raw.csv (default: the H100 run)")
    parser.add_argument("experiments", nargs="*", default=list(EXPERIMENTS))
    args = parser.parse_args(argv)
    raw = measured_cells(args.measured)
    where = args.measured.resolve()
    where = where.relative_to(ROOT) if where.is_relative_to(ROOT) else where
    print(f"paper size, from {len(raw)} cells measured in {where}")
    print("| experiment | cells (processes) | estimate |\n| --- | --- | --- |")
    for name in args.experiments:
        est = estimate(name, raw)
        span = _minutes(est["low_s"]) if _minutes(est["low_s"]) == _minutes(est["high_s"]) else \
            f"{_minutes(est['low_s'])} to {_minutes(est['high_s'])}"
        print(f"| {name} | {est['cells']} ({est['processes']}) | {span} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
