"""Run one experiment of the paper: ``python -m experiments.run experiment=fig15 [overrides]``.

``./reproduce.sh fig15 model=bert compiler=[eager,magpy-inductor] bs=1 repeat=20`` ends up here.
The run resolves its :class:`~experiments.plan.Plan`, enumerates the runner's cells, runs each one
in its own process (:mod:`experiments.cells`) unless ``results/<experiment>/<run-id>/`` already
holds its row, then writes raw.csv, summary.csv, meta.json and the figure.

Hydra multirun works as usual (``-m model=bert,resnet``, ``hydra/launcher=local`` or ``slurm``): all
jobs of a sweep share one run directory, and each job rewrites the tables from every finished cell.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from experiments.cells import default_mem_limit_bytes, run_cell
from experiments.compilers import missing_requirements
from experiments.plan import Plan, make_plan, override_keys, resolve_device, resolve_size
from experiments.results import RunStore

log = logging.getLogger("experiments.run")


def _concrete_config(cfg: DictConfig) -> DictConfig:
    """``cfg`` with ``device``/``size`` ``auto`` replaced by what this machine calls for.

    The size group holds the per-size knobs (warmup, repeat, ...), so ``size=auto`` cannot be
    settled by editing one key: the config is composed again with the command line's overrides
    plus the concrete ``device=...`` and ``size=...``.
    """
    device = resolve_device(cfg.device.name)
    size = resolve_size(cfg.size.name, device)
    if (cfg.device.name, cfg.size.name) == (device, size):
        return cfg
    overrides = [o for o in HydraConfig.get().overrides.task if not override_keys([o]) & {"device", "size"}]
    overrides += [o for o in HydraConfig.get().overrides.hydra if o.startswith("hydra.searchpath=")]
    return hydra.compose(config_name="config", overrides=[*overrides, f"device={device}", f"size={size}"])


def _mem_limit(cfg: DictConfig, device: str) -> int | None:
    value = cfg.cell.mem_limit_gb
    if value in (None, "none", "off", 0):
        return None
    if value == "auto":
        return default_mem_limit_bytes(device)
    return int(float(value) * 2**30)


def _progress(enabled: bool):
    """A rich progress bar (or a silent stand-in when ``progress=false``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("{task.fields[cell]}"), disable=not enabled)


def execute(plan: Plan, cfg: DictConfig, results_root: Path) -> Path:
    """Run every cell of ``plan`` that has no result yet; write the tables, meta.json and the figure."""
    runner = importlib.import_module(f"experiments.runners.{plan.runner}")
    specs = runner.cells(plan)
    store = RunStore(results_root / plan.experiment / plan.run_id)
    store.write_meta(OmegaConf.to_container(cfg, resolve=True), plan.device)
    todo = [s for s in specs if store.needs_run(s["cell_id"], force=cfg.force, retry_errors=cfg.retry_errors)]
    log.info("%s: %d cells, %d to run, results in %s", plan.experiment, len(specs), len(todo), store.run_dir)
    mem_limit = _mem_limit(cfg, plan.device)
    with _progress(cfg.progress) as progress:
        task = progress.add_task(plan.experiment, total=len(todo), cell="")
        for spec in todo:
            progress.update(task, cell=spec["cell_id"])
            missing = missing_requirements(spec["compiler"] or {})
            if missing:  # no process needed to learn that a package is absent
                row = {"status": "unavailable", "error": f"{', '.join(missing)} not installed"}
            else:
                row = run_cell(spec, store.cell_dir(spec["cell_id"]), timeout_s=plan.timeout_s,
                               mem_limit_bytes=mem_limit)
            labels = {"model_label": spec["model"].get("label", spec["model"]["name"]),
                      "compiler_label": (spec["compiler"] or {}).get("label", spec["key"].get("compiler")),
                      "frontend": (spec["compiler"] or {}).get("frontend")}
            row = {**spec["key"], "cell_id": spec["cell_id"], "size": plan.size, "device": plan.device,
                   "statistic": plan.statistic, "threads": plan.threads, **labels, **row}
            store.save(spec["cell_id"], row)
            store.write_tables(runner.summarize, order=[s["cell_id"] for s in specs])
            if row["status"] != "ok" or row.get("correct") is False:
                progress.console.print(f"  {spec['cell_id']}: {row['status']}"
                                       f"{'' if row.get('correct', True) else ' (wrong output)'} "
                                       f"{row.get('error') or row.get('mismatch') or ''}"[:300],
                                       soft_wrap=True, markup=False, highlight=False)
            progress.advance(task)
    raw, summary = store.write_tables(runner.summarize, order=[s["cell_id"] for s in specs])
    if cfg.plot and not raw.empty:
        from experiments import plot

        for path in plot.plot(plan.experiment, store.run_dir):
            log.info("figure: %s", path)
    log.info("summary:\n%s", summary.to_string(index=False, max_colwidth=60) if not summary.empty else "(empty)")
    return store.run_dir


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> Any:
    """Hydra entry point (see the module docstring)."""
    cfg = _concrete_config(cfg)
    cli_keys = override_keys(HydraConfig.get().overrides.task)
    plan = make_plan(cfg, cli_keys)
    results_root = Path(cfg.results_dir)
    if not results_root.is_absolute():
        results_root = Path(hydra.utils.get_original_cwd()) / results_root
    run_dir = execute(plan, cfg, results_root)
    print(f"results: {run_dir}")
    return str(run_dir)


def overrides_last(argv: list[str]) -> list[str]:
    """``argv`` with every ``key=value`` override moved after the flags, order kept.

    Hydra's argument parser takes the overrides as one positional list, so a flag between them
    (``experiment=fig15 -m model=a,b``, as ``reproduce.sh`` builds it) would be an error.
    """
    overrides = [a for a in argv[1:] if "=" in a and not a.startswith("-")]
    flags = [a for a in argv[1:] if not ("=" in a and not a.startswith("-"))]
    return [argv[0], *flags, *overrides]


if __name__ == "__main__":
    sys.argv = overrides_last(sys.argv)
    main()
