"""Compiling the operator graph with a graph-level compiler (any torch.compile backend).

``resolve(backend)`` turns the user's choice into a function ``(gm, example_inputs) ->
callable``: ``"eager"`` runs the fx graph as is, ``"inductor"`` is TorchInductor,
``"torchscript"`` scripts the graph, ``"xla"`` uses torch_xla's dynamo backend, any other
name is looked up in torch.compile's backend registry, and a callable is used as is.
"""
from __future__ import annotations

import functools
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

    _for_inductor(gm)
    try:
        return _cached_compile_fx(compile_fx, gm, example_inputs)
    except (DynamicOutputShapeException, DataDependentOutputException):
        # A boolean mask or nonzero in the graph (its output shape depends on values), or a value
        # read into a Python number (`item`, magpy.monitor.scalars): compile_fx's static tracing cannot
        # express them. TorchDynamo in front of Inductor can (unbacked sizes and numbers), at
        # the price of its own guards on each call.
        return _inductor_with_value_shapes(gm)


def compile_whole(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """TorchInductor on the whole of ``gm`` now, raising if it cannot (no fallback: the caller has
    another plan, e.g. a graph with ``torch.cond`` for its conditional nodes, magpy.dynamic.cond).

    Without Inductor's layout optimization: it gives a conv-heavy graph's buffers channels-last
    strides, but compiles each ``torch.cond`` arm for the strides of its traced inputs, and the
    arm's own check of them raised on every call (BlockDrop: ``expected ... stride 1==1024``)."""
    from torch._inductor import config as inductor_config
    from torch._inductor.compile_fx import compile_fx

    with inductor_config.patch(layout_optimization=False):
        return _cached_compile_fx(compile_fx, gm, example_inputs)


def _cached_compile_fx(compile_fx: Callable, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """``compile_fx(gm, example_inputs)`` inside a tracing context whose fake mode has a shape
    environment, as TorchDynamo calls it: without one, Inductor's FX graph cache and AOTAutograd's
    cache are bypassed ("No shape env") and every process compiles every graph from scratch
    (a ResNet record took 6.9 s with a warm cache, Dynamo 3.5 s)."""
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    fake_mode = FakeTensorMode(shape_env=ShapeEnv())
    # (static fakes, as Dynamo hands a backend for a static graph: real inputs would be given
    # symbolic sizes by the shape environment, and Inductor would emit kernels for any size)
    fakes = [fake_mode.from_tensor(t, static_shapes=True) if isinstance(t, torch.Tensor) else t for t in example_inputs]
    try:
        with tracing(TracingContext(fake_mode)):
            return compile_fx(gm, fakes)
    except Exception:   # noqa: BLE001 - e.g. a number read from a tensor (`item`) compared in the graph:
        # the shape environment makes it an unbacked symbol Inductor cannot guard on. Compiled as
        # before, without the caches (which then raises what the callers handle, or compiles).
        return compile_fx(gm, example_inputs)


def _inductor_with_value_shapes(gm: torch.fx.GraphModule, dynamic: bool | None = None) -> Callable:
    import torch._dynamo
    from torch._dynamo.exc import TorchDynamoException

    _for_inductor(gm)

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
        # tensor values into Python numbers (magpy.monitor.scalars): a trace would keep the numbers
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
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

    try:
        return lookup_backend("openxla")(gm, example_inputs)
    except (DynamicOutputShapeException, DataDependentOutputException):
        # A value read into a Python number (`item`, magpy.monitor.scalars) or a value-dependent shape: the
        # openxla backend traces the graph with fake tensors and cannot express them. On XLA tensors
        # the graph itself runs as LazyTensor: XLA compiles (and caches) the parts between the reads.
        # (TorchDynamo in front of openxla breaks its graph at every read and took minutes here.)
        _log.info("magpy: backend 'xla' runs a graph that reads tensor values lazily (LazyTensor)")
        return gm.forward


def _for_inductor(gm: torch.fx.GraphModule) -> None:
    """Rewrite the operators of ``gm`` that Inductor compiles into code far slower than eager's
    (ALIGN's pooler: a 2560x2560 average-pooling window over a 2x2 map runs 1.7 s instead of 6 us,
    see docs/design.md, "ALIGN under Inductor") into forms it compiles well, in place."""
    changed = False
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is torch._C._nn.avg_pool2d:
            n.target = avg_pool2d
            changed = True
    if changed:
        gm.recompile()


def avg_pool2d(x: torch.Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> torch.Tensor:
    """``torch.nn.functional.avg_pool2d``, computed as a mean where its one window covers the whole
    input (``nn.AvgPool2d(hidden_dim, ceil_mode=True)`` over a small map, as transformers' ALIGN and
    EfficientNet poolers do). Inductor lowers average pooling whose stride equals its kernel to a
    sum over the whole kernel window with a bounds check per element: kernel_h * kernel_w loads per
    output, however small the input. The sizes are read when the graph is traced, so a compiled
    graph specialised to them, or guarded on them by TorchDynamo, stays exact."""
    k = _pair(kernel_size)
    s = _pair(stride) if stride else k
    h, w = x.shape[-2], x.shape[-1]
    if _pair(padding) == (0, 0) and k[0] >= h and k[1] >= w and \
            _pooled_size(h, k[0], s[0], ceil_mode) == 1 and _pooled_size(w, k[1], s[1], ceil_mode) == 1:
        # (one window [0, k) over [0, h): its divisor is h * w with or without count_include_pad)
        if divisor_override:
            return x.sum((-2, -1), keepdim=True) / divisor_override
        return x.mean((-2, -1), keepdim=True)
    return torch._C._nn.avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _pair(v: Any) -> tuple:
    if isinstance(v, (tuple, list)):
        return (v[0], v[0]) if len(v) == 1 else tuple(v)
    return (v, v)


def _pooled_size(size: int, k: int, s: int, ceil_mode: bool) -> int:
    """The output size of pooling (no padding, no dilation) as torch computes it."""
    out = -(-(size - k) // s) + 1 if ceil_mode else (size - k) // s + 1
    if ceil_mode and (out - 1) * s >= size:
        out -= 1   # (the last window must start inside the input)
    return out


#: Backends whose compiled graph serves any input size (lifted shapes, magpy.monitor.scalars): the eager graph
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


def python_nodes(gm: torch.fx.GraphModule) -> set:
    """Nodes of ``gm`` that run Python rather than tensor operators: numpy computations on values
    read from tensors and text made from them (``meta["magpy_python"]``, see ``ScalarFlow.numpy_op``),
    calls of TorchScript code (their target's ``magpy_python``) and the operators
    that take their results (``torch.from_numpy(a)``, ``y.clamp(max=float(p))``)."""
    marked = set()
    for n in gm.graph.nodes:
        if n.meta.get("magpy_python") or getattr(n.target, "magpy_python", False):
            n.meta["magpy_python"] = True   # (calls of TorchScript code: magpy.monitor.calls._script_call)
    for n in gm.graph.nodes:
        if n.meta.get("magpy_python") or any(i.meta.get("magpy_python") for i in n.all_input_nodes):
            marked.add(n)
    return marked


class _CompiledOnFirstCall(torch.nn.Module):
    """A region of a split graph, compiled by ``compile_fn`` with the inputs of its first call
    (they exist only once the Python region before it ran). If compiling fails, the region runs
    uncompiled from then on, with a warning."""

    def __init__(self, region: torch.fx.GraphModule, compile_fn: Callable) -> None:
        super().__init__()
        # A region with one output returns it bare (split_module); backends return their outputs
        # as a sequence (Inductor gives `[value]` for a bare number): every backend gets a region
        # that returns a tuple, and the bare value is taken out of it here.
        out = next(n for n in reversed(region.graph.nodes) if n.op == "output")
        self._bare = not isinstance(out.args[0], (tuple, list))
        if self._bare:
            out.args = ((out.args[0],),)
            region.recompile()
        self.region = region
        self._compile_fn = compile_fn
        self._fn: Callable | None = None

    def forward(self, *args):
        if self._fn is None:
            try:
                self._fn = self._compile_fn(self.region, list(args))
            except Exception as e:   # noqa: BLE001 - the backend's failure: the region runs as it is
                _log.warning("magpy: the backend failed on a region of a split graph (%s: %s); it runs "
                             "uncompiled", type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
                self._fn = self.region.forward
        out = self._fn(*args)
        return out[0] if self._bare else out


class CompiledGraphs:
    """The graphs one compiled function had compiled, by what decides the result: the compile
    function, the graph's code, the tensors it holds (by identity) and the signature of its
    inputs. A region between conditional nodes, or an arm, that several records (or several
    blocks of one record) share is compiled once. Holds what it compiled (and so those tensors)
    until the compiled function is reset or dropped."""

    def __init__(self) -> None:
        self._fns: dict = {}

    def __len__(self) -> int:
        return len(self._fns)

    def clear(self) -> None:
        self._fns.clear()

    def wrap(self, compile_fn: Callable) -> Callable:
        """``compile_fn`` with a lookup in front."""
        if isinstance(compile_fn, functools.partial):
            how = (compile_fn.func, compile_fn.args, tuple(sorted(compile_fn.keywords.items())))
        else:
            how = compile_fn

        def cached(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
            held = tuple(sorted((name, id(v)) for name, v in [*gm.named_parameters(), *gm.named_buffers(),
                                                             *((k, v) for k, v in vars(gm).items()
                                                               if isinstance(v, torch.Tensor))]))
            sig = tuple((tuple(a.shape), a.stride(), a.dtype, a.device, a.requires_grad)
                        if isinstance(a, torch.Tensor) else (type(a), a if isinstance(a, (int, float, bool)) else None)
                        for a in example_inputs)
            key = (how, gm.code, held, sig)
            hit = self._fns.get(key)
            if hit is None:
                hit = self._fns[key] = (compile_fn(gm, example_inputs), gm)
            return hit[0]

        return cached


def compile_regions(gm: torch.fx.GraphModule, example_inputs: list, compile_fn: Callable,
                    body_compile_fn: Callable | None = None,
                    cache: CompiledGraphs | None = None) -> tuple[Callable, int]:
    """Compile ``gm`` with ``compile_fn``, split at the Python nodes (:func:`python_nodes`) when it
    has some (the paper's split at a dynamic operation): the runs of tensor operators between them
    are compiled, the Python nodes run as they are, in program order. A rolled loop's body
    (magpy.dynamic.loops) is compiled with ``body_compile_fn`` (a static compile) and counts as one more
    region. ``cache``: the compiled function's :class:`CompiledGraphs` (regions and bodies that
    other records or blocks share are compiled once). Returns the callable and how many compiled
    regions it has."""
    marked = python_nodes(gm)
    if not marked:
        return compile_fn(gm, example_inputs), 1
    if cache is not None:
        compile_fn = cache.wrap(compile_fn)
        body_compile_fn = cache.wrap(body_compile_fn) if body_compile_fn is not None else None
    from torch.fx.passes.split_module import split_module

    part: dict = {}
    tensor_parts: set = set()
    k, prev = 0, None
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "get_attr", "output"):
            continue
        python = n in marked
        if python != prev:
            k, prev = k + 1, python
            if not python:
                tensor_parts.add(k)
        part[n] = k
    shared: dict = {}
    for n in marked:
        if n.op == "call_function" and hasattr(n.target, "compile_with"):
            # a rolled loop's body (magpy.dynamic.loops), compiled once (per signature of its inputs)
            n.target.compile_with(body_compile_fn or compile_fn, shared)
    split = split_module(gm, gm, lambda n: part[n], keep_original_order=True)
    for name, region in list(split.named_children()):
        if name.startswith("submod_") and int(name[len("submod_"):]) in tensor_parts:
            setattr(split, name, _CompiledOnFirstCall(region, compile_fn))
    return split.forward, len(tensor_parts) + len(shared)
