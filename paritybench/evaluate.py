"""Evaluating one test case: the eager reference, then each compiler on a fresh module.

The counting follows the paper (§8.3):

1. **Eager, twice.** The module is built twice from the same seed and each copy is called
   ``calls`` times on the same seeded inputs. A case whose eager run raises is set apart as
   *eager failed*; one whose two eager runs disagree is set apart as *nondeterministic*. The
   first run's outputs, post-call inputs and final ``state_dict`` are the reference.
2. **Each compiler** gets a fresh module built from the same seed (so the same weights),
   compiles it, makes the same ``calls`` calls and must reproduce the reference exactly
   (within ``rtol``/``atol``). See :mod:`paritybench.compilers` for what each one checks.

Every call ``k`` uses its own input seed (same shapes, new values), so a graph that baked in
one call's data is caught; the random generators are reseeded right before each call, so a
program drawing random numbers does the same thing under every compiler.

A stage result is a plain dict (JSON-ready)::

    {"status": "ok" | "error" | "wrong" | "graph_break" | "fallback" | "nondeterministic" | ...,
     "graphs": int | None, "error_class": str, "error": str, "time_s": float, ...}
"""

from __future__ import annotations

import contextlib
import random
import re
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from experiments.compare import difference, snapshot

from .loader import TestCase

__all__ = ["EagerTrace", "RunConfig", "build_module", "call_sequence", "error_fields", "run_eager_stage"]

ALL_COMPILERS = ("magpy", "dynamo", "torchscript")
BACKENDS = ("eager", "inductor")


@dataclass
class RunConfig:
    """What every stage of every case is run with; stored with the results of a run."""

    compilers: tuple[str, ...] = ALL_COMPILERS
    backend: str = "eager"
    calls: int = 3
    seed: int = 0
    no_grad: bool = True
    rtol: float = 1e-4
    atol: float = 1e-4
    #: A training step per call instead of an inference call: train mode (dropout on), autograd on,
    #: backward through a loss on the outputs, an optimizer step; gradients and updated parameters
    #: are compared too (:func:`training_step`).
    train: bool = False

    def __post_init__(self) -> None:
        self.compilers = tuple(self.compilers)
        if self.train and self.no_grad:
            raise ValueError("a training step needs autograd: train=True with no_grad=True")
        unknown = [c for c in self.compilers if c not in ALL_COMPILERS]
        if unknown:
            raise ValueError(f"unknown compiler(s) {unknown}; choose from {list(ALL_COMPILERS)}")
        if not self.compilers:
            raise ValueError("at least one compiler is needed")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose from {list(BACKENDS)}")
        if self.calls < 1:
            raise ValueError(f"calls must be at least 1, got {self.calls}")

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["compilers"] = list(self.compilers)
        return d


def seed_all(seed: int) -> None:
    """Seed every generator a user program may draw from."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    # torch.random's own function: ParityBench's helper replaces ``torch.manual_seed`` with one
    # that ignores its argument, which would give every call the same inputs.
    torch.random.manual_seed(seed)


def build_module(case: TestCase, cfg: RunConfig) -> Any:
    """A fresh instance of the case's class from the seeded init-args factory, in eval mode."""
    seed_all(cfg.seed)
    args, kwargs = _split_args(case.get_init_args(), "init")
    module = case.module_class(*args, **kwargs)
    if isinstance(module, torch.nn.Module):
        module.train(cfg.train)
    return module


def make_inputs(case: TestCase, cfg: RunConfig, call: int) -> tuple[list[Any], dict[str, Any]]:
    """The forward arguments of call number ``call`` (its own seed: same shapes, new values)."""
    seed_all(cfg.seed + 1 + 7919 * call)
    if case.get_call_args is not None:
        return _split_args(case.get_call_args(call), "forward")
    return _split_args(case.get_forward_args(), "forward")


def _split_args(value: Any, what: str) -> tuple[list[Any], dict[str, Any]]:
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[1], dict)):
        raise TypeError(f"the {what}-args factory must return ([args], {{kwargs}}), got {type(value).__name__}")
    return list(value[0]), dict(value[1])


def grad_mode(cfg: RunConfig) -> contextlib.AbstractContextManager[Any]:
    return torch.no_grad() if cfg.no_grad else contextlib.nullcontext()


@dataclass
class EagerTrace:
    """What a sequence of calls produced: per call the output and the inputs after the call."""

    calls: list[dict[str, Any]]
    state: dict[str, torch.Tensor] | None
    initial: dict[str, torch.Tensor] | None = None   # the state before the first call

    def difference(self, other: EagerTrace, rtol: float, atol: float) -> str | None:
        """Where ``other`` first departs from this trace, or None."""
        for k, (mine, theirs) in enumerate(zip(self.calls, other.calls)):
            for part in ("output", "inputs", "grads"):
                if part not in mine:
                    continue
                found = difference(mine[part], theirs.get(part), rtol, atol, where=f"call {k + 1} {part}")
                if found:
                    return found
        if self.state is not None and other.state is not None:
            mine, theirs = self._comparable(other, rtol, atol)
            return difference(mine, theirs, rtol, atol, where="state_dict after the calls")
        return None

    def _comparable(self, other: EagerTrace, rtol: float, atol: float) -> tuple[dict, dict]:
        """Final states to compare. A buffer that started out different in the two copies
        (``torch.FloatTensor(n)`` is uninitialised memory) and that the reference calls left
        as it was is compared as "left as it was", not by its arbitrary values."""
        mine, theirs = dict(self.state), dict(other.state)
        if self.initial is None or other.initial is None:
            return mine, theirs
        for k in list(mine):
            a0, b0 = self.initial.get(k), other.initial.get(k)
            if a0 is None or b0 is None or k not in theirs:
                continue
            if difference(a0, b0, 0.0, 0.0, where=k) and not difference(a0, mine[k], 0.0, 0.0, where=k):
                mine[k], theirs[k] = b0, theirs[k]   # the reference did not touch it: neither may the compiler
        return mine, theirs


def call_sequence(
    fn: Callable[..., Any],
    case: TestCase,
    cfg: RunConfig,
    state_owner: Callable[[], Any] | None = None,
    before_call: Callable[[int], None] | None = None,
) -> EagerTrace:
    """Call ``fn`` ``cfg.calls`` times on the seeded inputs and record what happened."""
    calls = []
    owner = state_owner() if state_owner is not None else None
    initial = _state(owner)
    optimizer = _optimizer(owner) if cfg.train else None
    for k in range(cfg.calls):
        args, kwargs = make_inputs(case, cfg, k)
        if before_call is not None:
            before_call(k)
        seed_all(cfg.seed + 100_003 + k)
        with grad_mode(cfg):
            out = fn(*args, **kwargs)
        call = {"output": snapshot(out), "inputs": snapshot((args, kwargs))}
        if optimizer is not None:
            call["grads"] = training_step(out, owner, optimizer)
        calls.append(call)
    owner = state_owner() if state_owner is not None else None
    return EagerTrace(calls, _state(owner), initial)


def _optimizer(owner: Any) -> torch.optim.Optimizer:
    if not isinstance(owner, torch.nn.Module):
        raise TypeError("a training step needs the module whose parameters it updates")
    params = [p for p in owner.parameters() if p.requires_grad]
    if not params:
        raise ValueError("a training step needs trainable parameters; the module has none")
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


def training_loss(out: Any) -> torch.Tensor:
    """The loss of a training step: the mean square of every floating output that carries a
    gradient (a model's hidden states, logits, pooled outputs), summed."""
    terms = [t.float().square().mean() for t in _tensors(out) if t.requires_grad and t.is_floating_point()]
    if not terms:
        raise ValueError("a training step needs an output that carries a gradient; the module returned none")
    return torch.stack(terms).sum()


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def training_step(out: Any, owner: Any, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Backward through :func:`training_loss` and one optimizer step; returns the gradients (by
    parameter name, ``None`` where none arrived) that the step applied."""
    loss = training_loss(out)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grads = {name: (None if p.grad is None else p.grad.detach().clone()) for name, p in owner.named_parameters()}
    optimizer.step()
    return {"loss": loss.detach().clone(), "grads": grads}


def build_like(case: TestCase, cfg: RunConfig, reference: EagerTrace | None) -> Any:
    """A fresh module for a compiler, starting from exactly the reference's initial state.

    Built from the same seed, a module usually has the reference's weights already; but a
    constructor that leaves memory uninitialised (``nn.Parameter(torch.FloatTensor(n, d))``)
    gives each build different garbage, which would read as the compiler's wrong result. So
    the reference's state before its first call is copied in (same names and shapes only).
    """
    module = build_module(case, cfg)
    initial = reference.initial if reference is not None else None
    if initial and isinstance(module, torch.nn.Module):
        try:
            with torch.no_grad():
                for k, v in module.state_dict(keep_vars=True).items():
                    src = initial.get(k)
                    if isinstance(v, torch.Tensor) and src is not None and src.shape == v.shape \
                            and src.dtype == v.dtype:
                        v.copy_(src)
        except Exception:  # noqa: BLE001 - a module whose state cannot be set keeps its own
            pass
    return module


def _state(owner: Any) -> dict[str, torch.Tensor] | None:
    if not isinstance(owner, torch.nn.Module):
        return None
    try:
        return {k: v.detach().clone() for k, v in owner.state_dict().items() if isinstance(v, torch.Tensor)}
    except Exception:  # noqa: BLE001 - a module whose state_dict raises has no comparable state
        return None


def eager_trace(case: TestCase, cfg: RunConfig) -> EagerTrace:
    module = build_module(case, cfg)
    return call_sequence(module, case, cfg, state_owner=lambda: module)


def run_eager_stage(case: TestCase, cfg: RunConfig) -> tuple[dict[str, Any], EagerTrace | None]:
    """Eager twice from the same seed. Returns the stage result and the reference (None when unusable)."""
    start = time.perf_counter()
    try:
        first = eager_trace(case, cfg)
        second = eager_trace(case, cfg)
    except Exception as exc:  # noqa: BLE001 - any failure of the user program is a result
        return {"status": "error", "time_s": time.perf_counter() - start, **error_fields(exc)}, None
    gap = first.difference(second, cfg.rtol, cfg.atol)
    elapsed = time.perf_counter() - start
    if gap is not None:
        return {"status": "nondeterministic", "time_s": elapsed, "error_class": "Nondeterministic", "error": gap}, None
    return {"status": "ok", "time_s": elapsed}, first


def error_fields(exc: BaseException) -> dict[str, str]:
    """The class and a one-line message of an exception, plus where in user code it arose."""
    message = str(exc).strip()
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    head = lines[0] if lines else ""
    if len(head) < 24 and len(lines) > 1:
        head = f"{head} {lines[1]}"
    # TorchDynamo puts the specific cause on an "Explanation:" line below a generic first line.
    explanation = next((line[len("Explanation:") :].strip() for line in lines if line.startswith("Explanation:")), "")
    if explanation:
        head = f"{head}: {explanation}"
    return {
        "error_class": type(exc).__name__,
        "error": head[:400],
        "where": _user_frame(exc, message),
    }


def _is_library_file(name: str) -> bool:
    name = name.replace("\\", "/")
    return "/torch/" in name or "/magpy/" in name or ("/paritybench/" in name and "/corpus/" not in name)


def _user_frame(exc: BaseException, message: str) -> str:
    """The innermost frame outside torch, MagPy and the runner: usually the user's line.

    TorchDynamo and TorchScript report the user's frames in their messages, not in the
    traceback, so those are read first.
    """
    if "from user code:" in message:  # TorchDynamo: outermost first, the innermost user frame wins
        tail = message.split("from user code:", 1)[1]
        candidates = list(reversed(re.findall(r'File "([^"]+)", line (\d+)', tail)))
    else:  # TorchScript: the failing line first, then the frames that called it
        candidates = re.findall(r'File "([^"]+)", line (\d+)', message)
    for path, line in candidates:
        if not _is_library_file(path):
            return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not _is_library_file(frame.filename):
            return f"{frame.filename.replace(chr(92), '/').rsplit('/', 1)[-1]}:{frame.lineno}"
    return ""


@contextlib.contextmanager
def timed() -> Iterator[dict[str, float]]:
    box = {"time_s": 0.0}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["time_s"] = time.perf_counter() - start
