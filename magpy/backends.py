"""Compiling the operator graph with a graph-level compiler (any torch.compile backend).

``resolve(backend)`` turns the user's choice into a function ``(gm, example_inputs) ->
callable``: ``"eager"`` runs the fx graph as is, ``"inductor"`` is TorchInductor,
``"torchscript"`` scripts the graph, ``"xla"`` uses torch_xla's dynamo backend, any other
name is looked up in torch.compile's backend registry, and a callable is used as is.
"""
from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from typing import Any

import torch

_log = logging.getLogger("magpy")


class BackendError(ValueError):
    """The requested backend is unknown or cannot be used on this machine."""


def _eager(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    return gm.forward


def _inductor(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    from torch._inductor.compile_fx import compile_fx
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

    try:
        return compile_fx(gm, example_inputs)
    except (DynamicOutputShapeException, DataDependentOutputException):
        # A boolean mask or nonzero in the graph (its output shape depends on values), or a value
        # read into a Python number (`item`, magpy.scalars): compile_fx's static tracing cannot
        # express them. TorchDynamo in front of Inductor can (unbacked sizes and numbers), at
        # the price of its own guards on each call.
        return _inductor_with_value_shapes(gm)


def _inductor_with_value_shapes(gm: torch.fx.GraphModule, dynamic: bool | None = None) -> Callable:
    import torch._dynamo
    from torch._dynamo.exc import TorchDynamoException

    # TorchDynamo compiles on the first call of each shape it has not seen. If it fails (it has
    # bugs with unbacked sizes and numbers under dynamic shapes), it fails while tracing, before
    # any operator ran: the call is retried with Dynamo's automatic dynamic shapes (static until
    # a size changes), and then with the eager graph,
    # which stays for every later call. A user's exception from the operators propagates.
    chain = [torch.compile(gm.forward, backend="inductor", dynamic=dynamic)]
    if dynamic:
        chain.append(torch.compile(gm.forward, backend="inductor"))   # Dynamo's automatic dynamic shapes
    chain.append(gm.forward)

    def run(*args):
        while True:
            try:
                with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True):
                    return chain[0](*args)
            except TorchDynamoException as e:
                if len(chain) == 1:
                    raise
                _log.warning("magpy: TorchDynamo/Inductor failed on a graph (%s: %s); %s", type(e).__name__,
                             str(e).splitlines()[0][:200], "retrying with automatic dynamic shapes" if len(chain) == 3
                             else "the graph runs uncompiled")
                chain.pop(0)

    return run


def _torchscript(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    # The graph is straight-line code, so scripting it is exact; freezing folds constants.
    try:
        scripted = torch.jit.script(gm)
    except Exception:
        # Some fx targets (getattr on tensors, operator.*) do not script; tracing a
        # straight-line graph records exactly the same operations, unless the graph reads
        # tensor values into Python numbers (magpy.scalars): a trace would keep the numbers
        # of the example call as constants.
        if _reads_values(gm):
            raise
        with torch.no_grad():
            scripted = torch.jit.trace(gm, tuple(example_inputs), check_trace=False)
    scripted = scripted.eval()
    try:
        scripted = torch.jit.optimize_for_inference(torch.jit.freeze(scripted))
    except Exception:
        pass
    return scripted


def _reads_values(gm: torch.fx.GraphModule) -> bool:
    return any(n.op == "call_method" and n.target in ("item", "tolist") for n in gm.graph.nodes)


def _xla(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend("openxla")(gm, example_inputs)


#: Backends whose compiled graph serves any input size (lifted shapes, magpy.scalars): the eager graph
#: itself, and Inductor compiled through TorchDynamo with dynamic shapes (it guards and recompiles
#: itself where its code depends on a size). Other backends specialise on the example sizes.
_LIFTING = ("eager", "inductor")


def supports_lifting(backend: Any) -> bool:
    return isinstance(backend, str) and backend in _LIFTING


def compile_lifted(backend: str, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """Compile a graph whose inputs' sizes vary between calls."""
    if backend == "eager":
        return gm.forward
    if backend == "inductor":
        return _inductor_with_value_shapes(gm, dynamic=True)
    raise BackendError(f"backend {backend!r} cannot compile a graph for varying sizes")


_NAMED = {"eager": _eager, "inductor": _inductor, "torchscript": _torchscript, "ts": _torchscript, "xla": _xla}


def resolve(backend: Any) -> Callable:
    """The compile function for ``backend``; raises :class:`BackendError` with a reason."""
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise BackendError(f"backend must be a name or a callable (gm, example_inputs) -> callable, got {backend!r}")
    if backend == "xla" and importlib.util.find_spec("torch_xla") is None:
        raise BackendError("backend 'xla' needs torch_xla, which is not installed")
    if backend in _NAMED:
        return _NAMED[backend]
    try:
        from torch._dynamo.backends.registry import list_backends, lookup_backend

        return lookup_backend(backend)
    except Exception as e:
        try:
            known = sorted(set(_NAMED) | set(list_backends(exclude_tags=())))
        except Exception:
            known = sorted(_NAMED)
        raise BackendError(f"unknown backend {backend!r}; known: {', '.join(known)}") from e
