"""From a composed Hydra config to a :class:`Plan`: what one run measures, with every default resolved.

Resolution order for each knob (``bs``, ``warmup``, ``repeat``, ``n_inputs``, ``statistic``, the
model and compiler selections): the command line, then the experiment's plan for the size in use
(``experiment.plan.<size>``), then the size config (``conf/size/*.yaml``). ``device=auto`` becomes
``cuda`` when torch sees a GPU, else ``cpu``; ``size=auto`` becomes ``paper`` on CUDA and ``smoke``
on CPU.

Example::

    >>> from pathlib import Path
    >>> from hydra import compose, initialize_config_dir
    >>> overrides = ["experiment=fig15", "device=cpu", "size=smoke", "bs=[1]"]
    >>> with initialize_config_dir(config_dir=str(Path(__file__).parent / "conf"), version_base="1.3"):
    ...     cfg = compose("config", overrides=overrides)
    >>> plan = make_plan(cfg, cli_keys=override_keys(overrides))
    >>> plan.bs, plan.size, plan.device
    ([1], 'smoke', 'cpu')
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf

RUNNERS = ("inference", "graphs", "breakdown", "dynamic")

#: The keys an experiment config (``conf/experiment/*.yaml``, ``+experiment.<key>=...``) may hold:
#: words on the figure, the runner's options (:attr:`Plan.options`) and the per-size plans.
EXPERIMENT_WORDS = ("name", "runner", "title", "note", "paper", "model_notes")
EXPERIMENT_OPTIONS = ("dynamic", "region", "stream")
#: The keys of ``experiment.plan.<size>``: the selections and the knobs a size plan may set.
PLAN_KEYS = ("bs", "models", "compilers", "warmup", "repeat", "n_inputs", "statistic")
#: The knobs of a size config (``conf/size/*.yaml`` besides its name); ``size.repeat=3`` on the
#: command line sets one as ``repeat=3`` does.
SIZE_KNOBS = ("warmup", "repeat", "n_inputs", "statistic", "timeout_s", "threads")
#: Where each size knob also has a key of its own (``repeat=3``, ``cell.timeout_s=60``).
SIZE_KNOB_KEYS = {"warmup": "warmup", "repeat": "repeat", "n_inputs": "n_inputs", "statistic": "statistic",
                  "timeout_s": "cell.timeout_s", "threads": "cell.threads"}
SIZES = ("paper", "smoke")


class SettingsError(ValueError):
    """A setting the run cannot honour (``bs=abc``, ``repeat=0``, ``device=cuda`` without a GPU...).

    ``python -m experiments.run`` reports it as one line, before any result directory is made.
    """


@dataclass
class Plan:
    """Everything one run needs to enumerate and execute its cells (plain data, JSON-friendly)."""

    experiment: str
    runner: str
    title: str
    device: str
    size: str
    run_id: str
    models: list[dict[str, Any]]
    compilers: list[dict[str, Any]]
    bs: list[int]
    warmup: int
    repeat: int
    n_inputs: int
    seed: int
    timeout_s: float
    threads: int | None
    statistic: str
    tolerance: dict[str, dict[str, float]]
    options: dict[str, Any] = field(default_factory=dict)

    def settings(self) -> dict[str, Any]:
        """Every run-wide setting that changes a cell's numbers (with :meth:`base_spec`'s fields).

        A cell's identity is its key plus these, its model and compiler configs and the
        environment (:func:`experiments.results.environment`): a run directory never mixes cells
        measured with different ones.
        """
        return {**self.base_spec(), "options": self.options}

    def base_spec(self) -> dict[str, Any]:
        """The fields every cell spec of this plan shares."""
        return {
            "experiment": self.experiment, "runner": self.runner, "device": self.device, "size": self.size,
            "warmup": self.warmup, "repeat": self.repeat, "n_inputs": self.n_inputs, "seed": self.seed,
            "threads": self.threads, "statistic": self.statistic, "tolerance": self.tolerance,
        }


#: Files a loaded NVIDIA driver (or ``docker run --gpus``) puts on a machine.
NVIDIA_DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version")


def cuda_expected() -> list[str]:
    """Signs that this machine is meant to run CUDA: the NVIDIA driver's device files
    (:data:`NVIDIA_DEVICE_FILES`), or ``MAGPY_EXPECT_CUDA=1`` (set by the artifact's GPU image,
    docker/Dockerfile)."""
    signs = [path for path in NVIDIA_DEVICE_FILES if os.path.exists(path)]
    if os.environ.get("MAGPY_EXPECT_CUDA", "") not in ("", "0"):
        signs.append(f"MAGPY_EXPECT_CUDA={os.environ['MAGPY_EXPECT_CUDA']}")
    return signs


def cuda_status() -> tuple[bool, str]:
    """Whether torch can use a GPU here, and in words why not (or which GPU).

    ``torch.cuda.is_available()`` returns False, with only a warning, when the driver is too old
    for the CUDA torch was built with: the warning's first line is the reason given."""
    import torch

    if torch.version.cuda is None:
        return False, f"torch {torch.__version__} is a CPU-only build"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        available = torch.cuda.is_available()
    if available:
        return True, torch.cuda.get_device_name(0)
    said = next((str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()), "")
    return False, f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no usable CUDA device" + \
        (f": {said}" if said else "")


def resolve_device(name: str) -> str:
    """``auto`` -> ``cuda`` if torch sees a GPU, else ``cpu``; other names pass through checked.

    ``device=auto`` never falls back to the CPU on a machine meant for CUDA (:func:`cuda_expected`:
    a driver whose CUDA torch cannot run, a GPU image started without ``--gpus``): that would
    measure the CPU at smoke size where the paper's GPU numbers were asked for. It raises
    :class:`SettingsError` instead, naming the sign and torch's reason.
    """
    if name not in ("auto", "cpu", "cuda"):
        raise SettingsError(f"unknown device {name!r}; valid: auto, cpu, cuda")
    if name == "cpu":
        return name
    available, why = cuda_status()
    if available:
        return "cuda"
    if name == "cuda":
        import torch

        detail = "" if why.startswith(f"torch {torch.__version__} is a CPU-only") else f" ({why})"
        raise SettingsError(f"device=cuda, but torch {torch.__version__} sees no CUDA device here{detail}; "
                            "use device=cpu or device=auto")
    signs = cuda_expected()
    if signs:
        raise SettingsError(f"device=auto on a machine meant for CUDA ({', '.join(signs)}), but {why}; "
                            "fix the driver (or docker run --gpus all), or pass device=cpu to measure the CPU")
    return "cpu"


def describe_device(device: str) -> str:
    """What ``device=auto`` picked, in words: ``cpu (torch 2.13.0+cpu is a CPU-only build)``."""
    return f"{device} ({cuda_status()[1]})"


def resolve_size(name: str, device: str) -> str:
    """``auto`` -> ``paper`` on CUDA, ``smoke`` elsewhere; other names pass through checked."""
    if name == "auto":
        return "paper" if device == "cuda" else "smoke"
    if name not in ("paper", "smoke"):
        raise SettingsError(f"unknown size {name!r}; valid: auto, paper, smoke")
    return name


def override_keys(overrides: Iterable[str]) -> set[str]:
    """The keys a list of Hydra command-line overrides sets: each top-level key (``+bs=1`` -> ``bs``)
    and, for a dotted key, its full path too (``size.repeat=3`` -> ``size`` and ``size.repeat``)."""
    keys = set()
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        keys.add(key.split("/", 1)[0].split(".", 1)[0])
        if "." in key and "/" not in key:
            keys.add(key)
    return keys


def _select(selected: Mapping[str, Any], wanted: list[str] | None, what: str) -> list[dict[str, Any]]:
    """The configs of ``selected`` (a config group's multi-selection), restricted to ``wanted``."""
    configs = [dict(OmegaConf.to_container(value, resolve=True)) for value in selected.values()]
    if wanted is None:
        return configs
    by_name = {c["name"]: c for c in configs}
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        raise SettingsError(f"experiment plan names {what} {unknown} that are not selected ({list(by_name)})")
    return [by_name[name] for name in wanted]


def _int_list(value: Any, what: str) -> list[int]:
    values = list(value) if isinstance(value, (list, tuple)) or OmegaConf.is_list(value) else [value]
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        shown = list(value) if OmegaConf.is_list(value) else value
        raise SettingsError(f"{what} must be a positive int or a non-empty list of them, got {shown!r}")
    return values


def _int(value: Any, what: str, minimum: int) -> int:
    """``value`` as an int of at least ``minimum`` (Hydra passes ``repeat=abc`` as the string 'abc')."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingsError(f"{what} must be an int >= {minimum}, got {value!r}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SettingsError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def check_experiment_keys(exp: Mapping[str, Any]) -> None:
    """Refuse a key of the experiment config that no code reads (``+experiment.reapeat=5`` would
    otherwise be accepted by Hydra and ignored by the run)."""
    known = (*EXPERIMENT_WORDS, *EXPERIMENT_OPTIONS, "plan")
    for key in exp:
        if key not in known:
            raise SettingsError(f"unknown setting 'experiment.{key}': the run reads no such key; valid: "
                                f"{', '.join(f'experiment.{k}' for k in known)}")
    plans = exp.get("plan") or {}
    for size in plans:
        if size not in SIZES:
            raise SettingsError(f"unknown setting 'experiment.plan.{size}': plans are per size; valid: "
                                f"{', '.join(f'experiment.plan.{s}' for s in SIZES)}")
        for key in plans[size] or {}:
            if key not in PLAN_KEYS:
                raise SettingsError(f"unknown setting 'experiment.plan.{size}.{key}': the run reads no such key; "
                                    f"valid: {', '.join(f'experiment.plan.{size}.{k}' for k in PLAN_KEYS)}")


def make_plan(cfg: DictConfig, cli_keys: set[str]) -> Plan:
    """Resolve ``cfg`` into a :class:`Plan`.

    ``cfg`` must name a concrete size (``run.py`` re-composes the config when it says ``auto``) so
    that ``cfg.size`` holds that size's warmup, repeat, ...; ``cli_keys`` are the keys set on the
    command line (they win over the experiment's per-size plan; ``size.repeat`` counts as ``repeat``),
    as :func:`override_keys` gives them.
    """
    exp = cfg.experiment
    check_experiment_keys(exp)
    if exp.runner not in RUNNERS:
        raise SettingsError(f"experiment {exp.name!r}: unknown runner {exp.runner!r}; valid: {RUNNERS}")
    device = resolve_device(cfg.device.name)
    size = cfg.size.name
    if size not in ("paper", "smoke"):
        raise SettingsError(f"make_plan needs a concrete size (paper or smoke), got {size!r}")
    size_defaults = cfg.size
    plans = exp.get("plan")
    size_plan = plans.get(size) if plans is not None else None
    size_plan = OmegaConf.to_container(size_plan, resolve=True) if size_plan is not None else {}
    if not cfg.get("model"):
        raise SettingsError("no model selected (e.g. model=bert or model=[bert,resnet])")
    if not cfg.get("compiler"):
        raise SettingsError("no compiler selected (e.g. compiler=[eager,magpy-inductor])")
    models = _select(cfg.model, None if "model" in cli_keys else size_plan.get("models"), "models")
    compilers = _select(cfg.compiler, None if "compiler" in cli_keys else size_plan.get("compilers"), "compilers")
    bs = cfg.bs if cfg.bs is not None else size_plan.get("bs", [1])

    for name, key in SIZE_KNOB_KEYS.items():  # repeat=5 and size.repeat=3 together: which one?
        if f"size.{name}" in cli_keys and OmegaConf.select(cfg, key) is not None \
                and OmegaConf.select(cfg, key) != size_defaults[name]:
            raise SettingsError(f"{key}={OmegaConf.select(cfg, key)} and size.{name}={size_defaults[name]} "
                                f"disagree; set one of them")

    def knob(name: str) -> Any:
        """The command line (``repeat=5`` or ``size.repeat=5``), then the experiment's size plan, then
        the size config."""
        value = cfg.get(name)
        if value is None:
            value = size_defaults[name] if f"size.{name}" in cli_keys else size_plan.get(name, size_defaults[name])
        return value

    timeout = cfg.cell.timeout_s if cfg.cell.timeout_s is not None else size_defaults["timeout_s"]
    threads = cfg.cell.threads if cfg.cell.threads is not None else size_defaults.get("threads")
    statistic = knob("statistic")
    if statistic not in ("mean", "median"):
        raise SettingsError(f"statistic must be mean or median, got {statistic!r}")
    if threads is not None:
        threads = _int(threads, "cell.threads", 1)
    options = {k: v for k, v in OmegaConf.to_container(exp, resolve=True).items()
               if k in EXPERIMENT_OPTIONS}  # not the words on the figure nor the plans (settled above)
    return Plan(
        experiment=exp.name, runner=exp.runner, title=exp.get("title", exp.name), device=device, size=size,
        run_id=cfg.run_id or f"{size}-{device}", models=models, compilers=compilers,
        bs=_int_list(bs, "bs"), warmup=_int(knob("warmup"), "warmup", 0), repeat=_int(knob("repeat"), "repeat", 1),
        n_inputs=_int(knob("n_inputs"), "n_inputs", 1), seed=_int(cfg.seed, "seed", 0),
        timeout_s=_number(timeout, "cell.timeout_s"),
        threads=threads, statistic=statistic, tolerance=OmegaConf.to_container(cfg.tolerance, resolve=True), options=options,
    )
