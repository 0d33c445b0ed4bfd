"""``paritybench.utils``: the names ParityBench's own ``_paritybench_helpers.py`` imports.

ParityBench's helper module (in the root of its ``generated/`` directory) starts with
``from paritybench.utils import ...``, which, in this repository, finds *our* package of the
same name. So that the directory's own helper loads (and users get its exact ``_mock_layer``,
``_mock_config``, ``patch_functional``), this module offers those names:

* when the directory is ``generated/`` inside a ParityBench checkout, the checkout's own
  ``paritybench/utils.py`` is used instead (:func:`upstream_utils` loads it under a private
  name and :func:`paritybench.loader.install_helpers` registers it as ``paritybench.utils``);
* otherwise the definitions here, written for this project after what ParityBench documents:
  a fixed seed (1337) for every generator, ``torch.manual_seed`` made to always use it (so
  models that seed themselves build the same weights everywhere), argument wrappers that
  move tensors to a device, and an fp64 reference for accuracy checks.

Only ParityBench's unittest harness calls the wrappers and the fp64 reference; our runner
(:mod:`paritybench.evaluate`) seeds through ``torch.random.manual_seed``, which the patch
leaves alone, so each call of a case still gets inputs of its own.
"""

from __future__ import annotations

import copy
import importlib.util
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

INDUCTOR_TOL = 1e-3
SEED = 1337


def reset_rng_state() -> None:
    """Seed Python's, NumPy's and torch's generators with the fixed seed."""
    random.seed(SEED)
    torch.random.manual_seed(SEED)
    try:
        import numpy as np

        np.random.seed(SEED)
    except ImportError:  # pragma: no cover - numpy is a torch dependency in practice
        pass


def patch_torch_manual_seed() -> None:
    """Make ``torch.manual_seed(anything)`` seed with the fixed seed (idempotent)."""
    if getattr(torch.manual_seed, "_paritybench_fixed", False):
        return

    def fixed_manual_seed(*args: Any, **kwargs: Any) -> torch.Generator:
        if torch.cuda.is_available() and not torch.cuda._is_in_bad_fork():
            torch.cuda.manual_seed_all(SEED)
        return torch.random.default_generator.manual_seed(SEED)

    fixed_manual_seed._paritybench_fixed = True  # type: ignore[attr-defined]
    torch.manual_seed = fixed_manual_seed


def _to(value: Any, device: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def wrap_args(args: Any, device: Any = "cuda") -> list:
    """A copy of the positional arguments with every tensor on ``device`` (when it exists)."""
    device = _usable(device)
    return [_to(copy.deepcopy(a), device) for a in args]


def wrap_kwargs(kwargs: dict, device: Any = "cuda") -> dict:
    """A copy of the keyword arguments with every tensor on ``device`` (when it exists)."""
    device = _usable(device)
    return {k: _to(copy.deepcopy(v), device) for k, v in kwargs.items()}


def _usable(device: Any) -> torch.device:
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return torch.device("cpu")
    return device


def get_cosine_and_fp64_outputs(model: Any, example_inputs: Any) -> tuple[bool, Any]:
    """(use cosine similarity?, the model's outputs computed in float64, or None).

    The fp64 run is a reference for comparing a compiled low-precision result; a model that
    cannot run in float64 gets None (compare directly then).
    """
    try:
        model64 = copy.deepcopy(model).to(torch.float64)
        inputs64 = [_to_double(copy.deepcopy(x)) for x in example_inputs]
        reset_rng_state()
        out = model64(*inputs64)
    except Exception:  # noqa: BLE001 - any failure: no fp64 reference
        return False, None
    return False, out


def _to_double(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(torch.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_double(v) for v in value)
    return value


def upstream_utils(directory: Path) -> ModuleType | None:
    """The ``paritybench/utils.py`` of the ParityBench checkout that holds ``directory``, loaded
    under a private name; None when ``directory`` is not inside a checkout."""
    for root in (directory.parent, directory):
        source = root / "paritybench" / "utils.py"
        if source.is_file() and source.resolve() != Path(__file__).resolve():
            spec = importlib.util.spec_from_file_location("_paritybench_upstream_utils", source)
            if spec is None or spec.loader is None:
                return None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None
