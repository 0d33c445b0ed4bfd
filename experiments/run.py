"""Run one experiment of the paper: ``python -m experiments.run experiment=fig15 [overrides]``.

``./reproduce.sh fig15 model=bert compiler=[eager,magpy-inductor] bs=1 repeat=20`` ends up here.
The run resolves its :class:`~experiments.plan.Plan`, enumerates the runner's cells, runs each one
in its own process (:mod:`experiments.cells`) unless ``results/<experiment>/<run-id>/`` already
holds its row, then writes raw.csv, summary.csv, meta.json and the figure.

Hydra multirun works as usual (``-m model=bert,resnet``, ``hydra/launcher=local`` or ``slurm``): all
jobs of a sweep share one run directory, and each job rewrites the tables and meta.json from every
finished cell.

A bad setting (``bs=abc``, ``repeat=0``, ``device=cuda`` without a GPU, an unknown key such as
``reapeat=5``, ``+reapeat=5`` or ``+experiment.reapeat=5``, a run directory measured
with other settings) ends the run with one ``error:`` line and exit status 2, before anything is
written; Ctrl-C ends it with one line (exit status 130) and keeps the finished cells.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from experiments.cells import cell_python, default_mem_limit_bytes, interpreter, missing_in, run_cell
from experiments.isolation import interrupt_on_sigterm
from experiments.plan import (
    SIZE_KNOBS,
    Plan,
    SettingsError,
    describe_device,
    make_plan,
    override_keys,
    resolve_device,
    resolve_size,
)
from experiments.results import RunStore, cell_settings, environment, git_dirty

log = logging.getLogger("experiments.run")


def _concrete_config(cfg: DictConfig) -> DictConfig:
    """``cfg`` with ``device``/``size`` ``auto`` replaced by what this machine calls for.

    The size group holds the per-size knobs (warmup, repeat, ...), so ``size=auto`` cannot be
    settled by editing one key: the config is composed again with the command line's overrides
    plus the concrete ``device=...`` and ``size=...``.
    """
    device = resolve_device(cfg.device.name)
    size = resolve_size(cfg.size.name, device)
    picked = [f"device=auto: {describe_device(device)}"] if cfg.device.name == "auto" else []
    picked += [f"size=auto: {size}"] if cfg.size.name == "auto" else []
    if picked:  # said before anything runs: a CPU fallback is never silent
        print("; ".join(picked), file=sys.stderr, flush=True)
    if (cfg.device.name, cfg.size.name) == (device, size):
        return cfg
    # Only the group choices are replaced: ``size.repeat=3`` and the like stay (they set a knob of the size).
    overrides = [o for o in HydraConfig.get().overrides.task if _override_key(o) not in ("device", "size")]
    overrides += [o for o in HydraConfig.get().overrides.hydra if o.startswith("hydra.searchpath=")]
    return hydra.compose(config_name="config", overrides=[*overrides, f"device={device}", f"size={size}"])


def _override_key(override: str) -> str:
    """The key an override sets: ``+size.repeat=3`` -> ``size.repeat``, ``size=paper`` -> ``size``."""
    return override.split("=", 1)[0].lstrip("+~")


def _mem_limit(cfg: DictConfig, device: str) -> int | None:
    value = cfg.cell.mem_limit_gb
    if value in (None, "none", "off", 0):
        return None
    if value == "auto":
        return default_mem_limit_bytes(device)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise SettingsError(f"cell.mem_limit_gb must be a number of GiB, auto or none, got {value!r}")
    return int(float(value) * 2**30)


def _seconds(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def describe_row(row: dict[str, Any]) -> str:
    """A cell's outcome in a few words: ``ok, median 1.23 ms, 1 graph`` or ``error: RuntimeError: ...``."""
    if row["status"] != "ok":
        return f"{row['status']}: {row.get('error') or ''}"[:300]
    parts = ["ok"]
    statistic = row.get("statistic") or "mean"
    if row.get(f"{statistic}_s") is not None:
        parts.append(f"{statistic} {row[f'{statistic}_s'] * 1e3:.3g} ms")
    if row.get("graph_count") is not None:
        parts.append(f"{row['graph_count']} graph{'s' if row['graph_count'] != 1 else ''}")
    if row.get("fallbacks"):
        parts.append(f"fell back to eager ({row['fallbacks']} calls)")
    if row.get("eager_after_warmup"):
        parts.append(f"{row['eager_after_warmup']} calls served eagerly after the first pass")
    if row.get("limit_hits"):
        parts.append(f"fell back to eager (recompile limit hit in {row['limit_hits']} "
                     f"frame{'s' if row['limit_hits'] != 1 else ''})")
    if row.get("correct") is False:
        parts.append(f"WRONG OUTPUT: {row.get('mismatch') or ''}"[:200])
    return ", ".join(parts)


class Interrupted(Exception):
    """Ctrl-C during a sweep: finished cells are kept, a rerun resumes."""

    def __init__(self, done: int, total: int, run_dir: Path) -> None:
        super().__init__(f"interrupted after {done} of {total} cells; the finished ones are kept in {run_dir} "
                         "and the same command resumes")


class Progress:
    """One report per finished cell, with an ETA from the cells measured so far.

    In a terminal: a rich progress bar counting the ETA down (failures printed above it).
    Otherwise (a Slurm log, ``docker run`` without ``-t``, ``| tee``): one plain, flushed line per
    cell::

        [2/6] model=bert,compiler=eager,bs=1: ok, median 1.23 ms (4.1 s; ETA 0:16)

    ``progress=false`` silences both.
    """

    def __init__(self, name: str, total: int, *, enabled: bool, terminal: bool | None = None,
                 processes: int | None = None) -> None:
        self.name, self.total, self.enabled, self.done = name, total, enabled, 0
        self.processes = total if processes is None else processes  # cells that will run a process
        self.terminal = sys.stdout.isatty() if terminal is None else terminal
        self.measured_s = 0.0
        self.measured = 0
        self._eta_at: tuple[float, float] | None = None  # (ETA, when it was estimated), for the bar
        self._bar = None
        if enabled and self.terminal:
            import rich.progress as rp

            self._bar = rp.Progress(rp.TextColumn("[bold]{task.description}"), rp.BarColumn(),
                                    rp.MofNCompleteColumn(), rp.TimeElapsedColumn(), _countdown(self),
                                    rp.TextColumn("{task.fields[cell]}"))
            self._task = self._bar.add_task(name, total=total, cell="")

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def start(self, cid: str) -> None:
        """Cell ``cid`` starts (shown on the bar)."""
        if self._bar is not None:
            self._bar.update(self._task, cell=cid)

    def eta_s(self) -> float | None:
        """Seconds left: the mean time of the cells that ran a process so far, times those still to run
        (a cell whose package is missing takes no time)."""
        if not self.measured:
            return None
        return self.measured_s / self.measured * max(0, self.processes - self.measured)

    def seconds_left(self) -> float | None:
        """:meth:`eta_s` as of the last finished cell, counted down since (what the bar shows)."""
        if self._eta_at is None:
            return None
        eta, at = self._eta_at
        return max(0.0, eta - (time.monotonic() - at))

    def finish(self, cid: str, row: dict[str, Any], seconds: float) -> None:
        """Cell ``cid`` finished with ``row`` after ``seconds``."""
        self.done += 1
        if row.get("cell_wall_s") is not None:
            self.measured_s += seconds
            self.measured += 1
        eta = self.eta_s()
        self._eta_at = None if eta is None else (eta, time.monotonic())
        if not self.enabled:
            return
        if self._bar is not None:
            if row["status"] != "ok" or row.get("correct") is False:
                self._bar.console.print(f"  {cid}: {describe_row(row)}", soft_wrap=True, markup=False,
                                        highlight=False)
            self._bar.advance(self._task)
            return
        cid = cid.split(",", 1)[1] if cid.startswith("experiment=") and "," in cid else cid
        eta = self.eta_s()
        when = f"{seconds:.1f} s" + (f"; ETA {_seconds(eta)}" if eta is not None and self.done < self.total else "")
        print(f"[{self.done}/{self.total}] {cid}: {describe_row(row)} ({when})", flush=True)


def _countdown(progress: Progress) -> Any:
    """A rich column: ``ETA 0:42``, counting down :meth:`Progress.seconds_left`.

    rich's own TimeRemainingColumn estimates from the last 30 s only: with cells that take
    minutes it would never show one."""
    import rich.progress as rp
    from rich.text import Text

    class Countdown(rp.ProgressColumn):
        def render(self, task: Any) -> Text:
            left = progress.seconds_left()
            return Text(f"ETA {'-:--' if left is None else _seconds(left)}", style="progress.remaining")

    return Countdown()


def effective_config(config: dict[str, Any], plan: Plan) -> dict[str, Any]:
    """``config`` (the composed config, for meta.json) with the values the run used.

    The size group holds the defaults (``size.repeat: 10``) while ``repeat=5`` or the experiment's
    per-size plan decide what the cells ran with; meta.json records only what ran: the size group
    and the top-level knobs both carry the plan's value, and ``bs`` the plan's batch sizes.
    """
    used = {"warmup": plan.warmup, "repeat": plan.repeat, "n_inputs": plan.n_inputs, "statistic": plan.statistic,
            "timeout_s": plan.timeout_s, "threads": plan.threads}
    config = {**config, "size": {**(config.get("size") or {}), **used}, "bs": list(plan.bs)}
    config.update({k: used[k] for k in ("warmup", "repeat", "n_inputs", "statistic")})
    config["cell"] = {**(config.get("cell") or {}), "timeout_s": plan.timeout_s, "threads": plan.threads}
    return config


def execute(plan: Plan, cfg: DictConfig, results_root: Path) -> Path:
    """Run every cell of ``plan`` that has no result yet; write the tables, meta.json and the figure.

    A run directory holds cells measured with one set of settings: when it already holds rows
    measured otherwise (another ``repeat``, another torch, another MagPy commit...), the run
    stops with :class:`~experiments.plan.SettingsError` naming the differences, unless
    ``force=true``, which measures this run's cells again and sets the other rows aside
    (``row.superseded.json``).
    """
    mem_limit = _mem_limit(cfg, plan.device)
    runner = importlib.import_module(f"experiments.runners.{plan.runner}")
    specs = runner.cells(plan)
    env = environment(plan.device)
    dirty = git_dirty()  # the tree these cells are measured on

    def env_of(compiler: Any) -> dict[str, Any]:
        """The environment a cell of ``compiler`` is measured in (the XLA venv's for torch_xla cells)."""
        python = cell_python(compiler)
        return env if python == sys.executable else interpreter(python, plan.device).get("environment", env)

    run_settings = {**plan.settings(), "environment": env}
    wanted = {s["cell_id"]: cell_settings(s, plan.settings(), env_of(s["compiler"])) for s in specs}
    try:
        store = RunStore(results_root / plan.experiment / plan.run_id)
    except OSError as err:
        raise SettingsError(f"results_dir={results_root}: cannot create {results_root / plan.experiment / plan.run_id} "
                            f"({err.strerror or err})") from None
    stale = store.stale(wanted, lambda recorded: {**run_settings, "environment": env_of(recorded.get("compiler"))})
    if stale and not cfg.force:
        differences = sorted({d for diff in stale.values() for d in diff})
        raise SettingsError(
            f"{store.run_dir} holds {len(stale)} cell(s) measured with other settings "
            f"({'; '.join(differences[:3])}{'; ...' if len(differences) > 3 else ''}); "
            f"force=true measures this run's cells again and sets the others aside, "
            f"run_id=<name> writes a separate directory")
    for cid in stale:
        store.set_aside(cid)
    config = effective_config(OmegaConf.to_container(cfg, resolve=True), plan)
    store.write_meta(config, plan.device)
    todo = [s for s in specs if store.reuse(s["cell_id"], wanted[s["cell_id"]], force=cfg.force,
                                            retry_errors=cfg.retry_errors).action != "skip"]
    log.info("%s: %d cells, %d to run, results in %s", plan.experiment, len(specs), len(todo), store.run_dir)
    order = [s["cell_id"] for s in specs]
    missing_of = {s["cell_id"]: missing_in(cell_python(s["compiler"]), s["compiler"], plan.device) for s in todo}
    processes = sum(1 for missing in missing_of.values() if not missing)
    with Progress(plan.experiment, len(todo), enabled=cfg.progress, processes=processes) as progress:
        for spec in todo:
            progress.start(spec["cell_id"])
            start = time.monotonic()
            missing = missing_of[spec["cell_id"]]
            if missing:  # no process needed to learn that a package is absent
                row = {"status": "unavailable", "error": f"{', '.join(missing)} not installed"}
            else:
                try:
                    row = run_cell(spec, store.cell_dir(spec["cell_id"]), timeout_s=plan.timeout_s,
                                   mem_limit_bytes=mem_limit)
                except KeyboardInterrupt:
                    raise Interrupted(progress.done, len(todo), store.run_dir) from None
            labels = {"model_label": spec["model"].get("label", spec["model"]["name"]),
                      "compiler_label": (spec["compiler"] or {}).get("label", spec["key"].get("compiler")),
                      "frontend": (spec["compiler"] or {}).get("frontend")}
            row = {**spec["key"], "cell_id": spec["cell_id"], "size": plan.size, "device": plan.device,
                   "statistic": plan.statistic, "threads": plan.threads, "warmup": plan.warmup,
                   "repeat": plan.repeat, **labels, **row, "git_dirty": dirty, "settings": wanted[spec["cell_id"]]}
            store.save(spec["cell_id"], row)
            store.write_tables(runner.summarize, order=order)
            store.write_meta(config, plan.device)
            progress.finish(spec["cell_id"], row, time.monotonic() - start)
    raw, summary = store.write_tables(runner.summarize, order=order)
    store.write_meta(config, plan.device)
    if cfg.plot and not raw.empty:
        from experiments import plot

        for path in plot.plot(plan.experiment, store.run_dir):
            log.info("figure: %s", path)
    log.info("summary:\n%s", summary.to_string(index=False, max_colwidth=60) if not summary.empty else "(empty)")
    return store.run_dir


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> Any:
    """Hydra entry point (see the module docstring). Bad settings and Ctrl-C end with one line."""
    try:
        refuse_unknown_keys(HydraConfig.get().overrides.task)
        cfg = _concrete_config(cfg)
        cli_keys = override_keys(HydraConfig.get().overrides.task)
        plan = make_plan(cfg, cli_keys)
        results_root = Path(cfg.results_dir)
        if not results_root.is_absolute():
            results_root = Path(hydra.utils.get_original_cwd()) / results_root
        run_dir = execute(plan, cfg, results_root)
    except SettingsError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as err:
        print(err, file=sys.stderr)
        sys.exit(130)
    print(f"results: {run_dir}")
    return str(run_dir)


#: Config groups a command line selects from (``model=[bert,resnet]``) besides the keys of config.yaml.
_GROUPS = ("experiment", "model", "compiler", "device", "size", "hydra")
_CONF = Path(__file__).resolve().parent / "conf"


def settings_known(key: str = "") -> list[str]:
    """The keys a command line may set: config.yaml's keys and the config groups; for a dotted
    ``key`` (``cell.timout_s``) the keys of its parent (``cell``) when config.yaml has it."""
    root = OmegaConf.load(_CONF / "config.yaml")
    parent = key.rsplit(".", 1)[0] if "." in key else ""
    if parent == "size":  # a size config's knobs (its name is chosen with size=..., not size.name=...)
        return [f"size.{k}" for k in SIZE_KNOBS]
    node = OmegaConf.select(root, parent) if parent else None
    if OmegaConf.is_dict(node):
        return [f"{parent}.{k}" for k in node]
    return sorted({*root.keys(), *_GROUPS} - {"defaults"})


def refuse_unknown_keys(overrides: list[str]) -> None:
    """A ``+key=value`` (or ``++key=value``) that adds a key the run does not read is refused.

    Hydra accepts ``+reapeat=5`` (it even suggests it for ``reapeat=5``) and the run would ignore
    it silently. Adding under ``hydra`` and ``experiment`` (extending an experiment's plan) stays
    allowed: those are read; so does ``++repeat=5`` (force-setting a key the run reads).
    ``size.name=...``/``device.name=...`` are refused too: they would relabel the run (its run id,
    its rows) without changing the size's knobs or the device."""
    for override in overrides:
        key = _override_key(override)
        if key in ("size.name", "device.name"):  # would relabel the run, not change what it measures
            group = key.split(".")[0]
            choices = ", ".join(["auto", *sorted(p.stem for p in (_CONF / group).glob("*.yaml") if p.stem != "auto")])
            raise SettingsError(f"{key} cannot be set; choose the {group} with {group}=<name> ({choices})")
        if not override.startswith("+"):
            continue
        if key.split("/", 1)[0].split(".", 1)[0] in ("hydra", "experiment"):
            continue
        if override.startswith("++") and key in settings_known(key):  # force-set of a key the run reads
            continue
        raise SettingsError(f"unknown setting {key!r} (in {override!r}): the run reads no such key; "
                            f"valid: {', '.join(settings_known(key))}")


def overrides_last(argv: list[str]) -> list[str]:
    """``argv`` with every ``key=value`` override moved after the flags, order kept.

    Hydra's argument parser takes the overrides as one positional list, so a flag between them
    (``experiment=fig15 -m model=a,b``, as ``reproduce.sh`` builds it) would be an error.
    """
    overrides = [a for a in argv[1:] if "=" in a and not a.startswith("-")]
    flags = [a for a in argv[1:] if not ("=" in a and not a.startswith("-"))]
    return [argv[0], *flags, *overrides]


def _config_error(err: Exception) -> str:
    """Hydra's multi-line config errors (``model=nosuch``) as one line."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    options = getattr(err, "options", None)
    if options:  # MissingConfigException: the options, not its multi-line listing
        return f"{lines[0]}; available: {', '.join(options)}"
    text = " ".join(lines[:2])
    missing = re.search(r"Could not (?:load|find) '([\w-]+)/([^']+)'", text)
    if missing:  # one of several selected (model=[bert,nosuch]): Hydra gives no options then
        group, name = missing.groups()
        available = sorted(p.stem for p in (_CONF / group).glob("*.yaml"))
        return f"no {group} config {name!r} (experiments/conf/{group}/{name}.yaml); available: {', '.join(available)}"
    typo = re.search(r"Could not override '([^']+)'", text)
    if typo:  # reapeat=5: Hydra suggests +reapeat=5, which the run would then ignore
        return f"unknown setting {typo.group(1)!r}; valid: {', '.join(settings_known(typo.group(1)))}"
    return text or type(err).__name__


if __name__ == "__main__":
    sys.argv = overrides_last(sys.argv)
    interrupt_on_sigterm()  # scancel / docker stop: kill the running cell's session as Ctrl-C does
    # Hydra re-raises config errors instead of printing them over several lines; they become one below.
    os.environ.setdefault("HYDRA_FULL_ERROR", "1")
    try:
        main()
    except KeyboardInterrupt:  # outside a cell (imports, composing the config, plotting)
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except (HydraException, OmegaConfBaseException) as err:
        print(f"error: {_config_error(err)}", file=sys.stderr)
        sys.exit(2)
