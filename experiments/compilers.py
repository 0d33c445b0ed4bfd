"""The graph-instantiation approaches the experiments compare, one function per frontend.

A compiler config (``experiments/conf/compiler/*.yaml``) names a *frontend* (how the operator graph
is obtained: ``eager``, ``dynamo``, ``magpy``, ``torchscript``, ``torchscript-regions``,
``lazytensor``, ``fullgraph``) and a *backend* (what compiles the graph: ``inductor``, ``eager``,
``torchscript``, ``xla``, ``openxla``). :func:`prepare` turns a model into a :class:`Compiled`:
the callable to time, the device its inputs must live on, and how to wait for that device.

Example::

    >>> model, x = torch.nn.Linear(4, 2), torch.randn(3, 4)
    >>> compiled = prepare({"name": "eager", "frontend": "eager", "backend": None}, model, "cpu")
    >>> torch.equal(compiled.fn(x), model(x)), compiled.device
    (True, device(type='cpu'))

Only this worker-side module imports torch, magpy or torch_xla; a missing package surfaces as an
``ImportError`` that the worker turns into a result row.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.utils._pytree as pytree

FRONTENDS = ("eager", "dynamo", "magpy", "torchscript", "torchscript-regions", "lazytensor", "fullgraph")


class Unavailable(RuntimeError):
    """The compiler cannot run in this environment (e.g. torch_xla is not installed)."""


@dataclass
class Compiled:
    """A compiled program ready to be timed.

    ``fn`` takes the model's ``(*args, **kwargs)`` already moved to ``device``; ``sync`` waits until
    the device finished the work queued so far; ``handle`` is the object the frontend returned
    (a MagPy compiled module, a scripted module, ...) for statistics; ``notes`` record deviations
    from the requested configuration (written to the result row); ``dynamo_graphs`` is the
    :func:`dynamo_graph_counter` a Dynamo frontend compiles through.
    """

    fn: Callable[..., Any]
    device: torch.device
    sync: Callable[[], None]
    handle: Any = None
    notes: list[str] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    dynamo_graphs: Any = None


def dynamo_graph_counter(backend: str | None) -> Any:
    """A TorchDynamo backend that compiles each graph with ``backend`` and counts the graphs.

    The artifact's one way of counting Dynamo's graphs, used by Table 2, the timing experiments'
    ``graph_count``, ParityBench and ``models.timing``: pass it as ``torch.compile(...,
    backend=counter)``. ``counter.frame_count`` counts backend invocations (the graphs compiled),
    ``counter.runs`` the compiled graphs' executions, ``counter.ran`` which graphs ran (by their
    index in ``counter.graphs``: clear it, make one warm call and its size is the number of
    graphs that call runs, which a frame past Dynamo's recompile limit no longer adds to) and
    ``counter.limit_hits`` the
    frames that hit the recompile limit (from then on they run the original Python: the same
    "fell back to eager" as a MagPy break). It counts only the compilations it was given to.

        >>> counter = dynamo_graph_counter("eager")
        >>> torch.compile(torch.sin, backend=counter)(torch.ones(2)).shape, counter.frame_count, counter.runs
        (torch.Size([2]), 1, 1)
    """
    from torch._dynamo.testing import CompileCounterWithBackend

    class GraphCounter(CompileCounterWithBackend):
        def __init__(self, name: str) -> None:
            super().__init__(name)
            self.runs = 0
            self.ran: set[int] = set()
            self.limit_hits: list[str] = []
            _RecompileLimitWatch.attach(self.limit_hits)

        def __call__(self, gm: Any, example_inputs: Any) -> Any:
            compiled = super().__call__(gm, example_inputs)
            index = len(self.graphs) - 1

            def run(*args: Any) -> Any:
                self.runs += 1
                self.ran.add(index)
                return compiled(*args)

            if getattr(compiled, "_boxed_call", False):
                run._boxed_call = True  # type: ignore[attr-defined]
            return run

    return GraphCounter(backend or "eager")


class _RecompileLimitWatch(logging.Handler):
    """Collects Dynamo's "hit config.recompile_limit" warnings into the list of the latest counter
    (the compilation being measured; a cell process measures one)."""

    _instance: _RecompileLimitWatch | None = None

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.sinks: list[list[str]] = []

    @classmethod
    def attach(cls, sink: list[str]) -> None:
        if cls._instance is None:
            cls._instance = cls()
            logging.getLogger("torch._dynamo.convert_frame").addHandler(cls._instance)
        cls._instance.sinks = [sink]

    def emit(self, record: logging.LogRecord) -> None:
        if not str(record.msg).startswith("torch._dynamo hit config.") or len(record.args or ()) < 3:
            return
        limit_type, limit, where = record.args[:3]
        text = f"Dynamo hit {limit_type} ({limit}) in {where}"  # the frame runs eagerly from then on
        for sink in self.sinks:
            if text not in sink:
                sink.append(text)


def missing_requirements(compiler: Mapping[str, Any]) -> list[str]:
    """The modules listed in ``compiler["requires"]`` that cannot be imported here."""
    return [name for name in compiler.get("requires") or [] if importlib.util.find_spec(name) is None]


def device_sync(device: torch.device) -> Callable[[], None]:
    """A function that blocks until ``device`` finished its queued work (a no-op on CPU)."""
    if device.type == "cuda":
        return torch.cuda.synchronize
    if device.type == "xla":
        import torch_xla.core.xla_model as xm

        return xm.wait_device_ops
    return lambda: None


def to_device(tree: Any, device: torch.device) -> Any:
    """``tree`` (nested args/kwargs) with every tensor moved to ``device``."""
    return pytree.tree_map(lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, tree)


def xla_device(requested: torch.device) -> torch.device:
    """The XLA device standing for ``requested`` (raises :class:`Unavailable` when there is none).

    An XLA runtime without a GPU plugin silently runs on the CPU; comparing that with CUDA eager
    would be meaningless, so a CUDA run requires XLA's device type to be a GPU one.
    """
    if importlib.util.find_spec("torch_xla") is None:
        raise Unavailable("torch_xla not installed")
    import torch_xla.core.xla_model as xm
    import torch_xla.runtime as xr

    kind = str(xr.device_type()).upper()
    if requested.type == "cuda" and kind not in ("CUDA", "GPU"):
        raise Unavailable(f"torch_xla has no GPU device here (PJRT device type {kind}); install its CUDA build")
    if requested.type == "cpu" and kind != "CPU":
        raise Unavailable(f"torch_xla runs on {kind} here, not the CPU (set PJRT_DEVICE=CPU)")
    return xm.xla_device()


def prepare(compiler: Mapping[str, Any], model: torch.nn.Module, device: str | torch.device,
            example: tuple[Any, Any] | None = None, *, dynamic: bool = False, profile: bool = False,
            region: str | None = None, fullgraph: bool = False) -> Compiled:
    """Compile ``model`` with ``compiler`` (a compiler config mapping) for ``device``.

    ``example`` is one ``(args, kwargs)`` on ``device``; only frontends that need an example ahead of
    the first call (``fullgraph``, ``torchscript-regions``) use it. ``dynamic`` asks for
    dynamic-shape compilation (Dynamo's ``dynamic=True``, MagPy's lifted shapes from the first
    call; other frontends raise rather than ignore it),
    ``profile`` for MagPy's matched-path timers, and ``region`` (a
    module class name) makes Dynamo compile only the submodules of that class, running the rest
    eagerly (Figure 18's LSTM cells). ``fullgraph`` is Dynamo's ``fullgraph=True`` (a graph break
    is an error: ParityBench's Table 3 compiles that way). Nothing runs the model here except where
    the frontend requires it; the first call of ``Compiled.fn`` triggers lazy compilation.
    """
    missing = missing_requirements(compiler)
    if missing:
        raise Unavailable(f"{', '.join(missing)} not installed")
    frontend = compiler["frontend"]
    if frontend not in FRONTENDS:
        raise ValueError(f"unknown frontend {frontend!r} in compiler {compiler['name']!r}; valid: {FRONTENDS}")
    backend = compiler.get("backend")
    device = torch.device(device)
    if backend in ("xla", "openxla") or frontend == "lazytensor":
        device = xla_device(device)
        model = model.to(device)
        if example is not None:
            example = to_device(example, device)
    if dynamic and frontend not in ("eager", "dynamo", "magpy"):
        # Compiling without the option and adding a note would publish a number for a setting
        # that was never honoured.
        raise NotImplementedError(f"{frontend} has no dynamic-shape option; the cell asked for dynamic=True")
    if fullgraph and frontend != "dynamo":
        raise NotImplementedError(f"{frontend} has no fullgraph option; only the dynamo frontend takes one")
    build = _FRONTENDS[frontend]
    return build(model, backend, device, example, dynamic=dynamic, profile=profile, region=region,
                 fullgraph=fullgraph)


def _eager(model, backend, device, example, **_: Any) -> Compiled:
    return Compiled(model, device, device_sync(device))


def _dynamo(model, backend, device, example, *, dynamic: bool, region: str | None, fullgraph: bool = False,
            **_: Any) -> Compiled:
    torch._dynamo.reset()
    counter = dynamo_graph_counter(backend)
    options: dict[str, Any] = {"backend": counter}
    if dynamic:
        options["dynamic"] = True
    if fullgraph:
        options["fullgraph"] = True
    if region is None:
        return Compiled(torch.compile(model, **options), device, device_sync(device), handle=None,
                        dynamo_graphs=counter)
    regions = []
    for name, module in model.named_modules():
        if type(module).__name__ == region:
            module.compile(**options)  # in place: the parent keeps calling it through its own code
            regions.append(name)
    if not regions:
        raise ValueError(f"region {region!r}: no submodule of {type(model).__name__} has that class")
    return Compiled(model, device, device_sync(device), regions=regions, dynamo_graphs=counter,
                    notes=[f"dynamo compiles {len(regions)} {region} submodule(s); the rest runs eagerly"])


def _magpy(model, backend, device, example, *, profile: bool, dynamic: bool = False, **_: Any) -> Compiled:
    import magpy

    magpy.reset()
    options: dict[str, Any] = {"backend": backend}
    if profile:
        options["profile"] = True
    if dynamic:
        options["dynamic"] = True   # (magpy.compile raises for a backend that cannot serve any size)
    cm = magpy.compile(model, **options)
    return Compiled(cm, device, device_sync(device), handle=cm)


def _torchscript(model, backend, device, example, **_: Any) -> Compiled:
    # Scripting only: torch.jit.trace may silently specialise control flow (paper §8.1), so a model
    # torch.jit.script rejects is an error row, never a traced fallback.
    scripted = torch.jit.script(model)
    return Compiled(scripted, device, device_sync(device), handle=scripted, regions=[""])


def _torchscript_regions(model, backend, device, example, **_: Any) -> Compiled:
    if example is None:
        raise ValueError("the torchscript-regions frontend needs an example input")
    regions, failure = script_largest_regions(model, example)
    if not regions:
        raise RuntimeError(f"torch.jit.script accepts no submodule of {type(model).__name__}: {failure}")
    if regions == [""]:
        return Compiled(torch.jit.script(model), device, device_sync(device), handle=model, regions=regions)
    return Compiled(model, device, device_sync(device), handle=model, regions=regions,
                    notes=[f"{len(regions)} scripted region(s); the rest runs eagerly"])


def script_largest_regions(model: torch.nn.Module, example: tuple[Any, Any]) -> tuple[list[str], str]:
    """Replace, in place, the largest submodules that TorchScript runs correctly by their scripts.

    An automatic stand-in for the paper's hand annotation (§8.1). One eager call on ``example``
    records each submodule's first inputs; then the module tree is walked top-down: a submodule is
    a region when ``torch.jit.script`` accepts it *and* its script, run on the recorded inputs,
    returns what the submodule returns (scripting succeeds for code that then fails or differs at
    run time); a region's children are not visited, a rejected module's children are tried.
    Submodules the call never reaches are left alone. Returns the region paths (``[""]`` when the
    whole model passes; the model is then left untouched for the caller to script) and the first
    failure met.
    """
    from experiments.compare import Tolerance, compare

    failures: list[str] = []
    seen: dict[str, tuple[Any, Any]] = {}
    names = {module: name for name, module in model.named_modules()}
    hooks = [module.register_forward_pre_hook(
        lambda module, args, kwargs: seen.setdefault(names[module], (args, kwargs)) and None, with_kwargs=True)
        for module in names]
    try:
        model(*example[0], **example[1])
    finally:
        for hook in hooks:
            hook.remove()
    tolerance = Tolerance.from_config({"float64": {"rtol": 1e-6, "atol": 1e-6}, "float32": {"rtol": 1e-4, "atol": 1e-4},
                                       "float16": {"rtol": 1e-2, "atol": 1e-2}, "bfloat16": {"rtol": 3e-2, "atol": 3e-2}})

    def try_script(module: torch.nn.Module, path: str) -> Any:
        try:
            scripted = torch.jit.script(module)
            args, kwargs = seen[path]
            found = compare(module(*args, **kwargs), scripted(*args, **kwargs), tolerance)
            if not found:
                raise RuntimeError(f"scripted {path or 'model'} differs from eager: {found.mismatch}")
            return scripted
        except Exception as err:  # TorchScript raises many error types for unsupported Python
            failures.append(f"{path or 'model'}: {type(err).__name__}: {(str(err).strip().splitlines() or [''])[0]}")
            return None

    def visit(module: torch.nn.Module, path: str) -> list[str]:
        found = []
        for name, child in list(module.named_children()):
            child_path = f"{path}.{name}" if path else name
            if child_path not in seen:
                continue
            scripted = try_script(child, child_path)
            if scripted is not None:
                setattr(module, name, scripted)
                found.append(child_path)
            else:
                found += visit(child, child_path)
        return found

    if try_script(model, "") is not None:
        return [""], ""
    return visit(model, ""), failures[0]


def _lazytensor(model, backend, device, example, **_: Any) -> Compiled:
    import torch_xla.core.xla_model as xm

    def run(*args: Any, **kwargs: Any) -> Any:
        out = model(*args, **kwargs)
        xm.mark_step()  # LazyTensor: cut the traced graph here, compile it (cached) and run it
        return out

    return Compiled(run, device, device_sync(device), handle=model)


def _fullgraph(model, backend, device, example, **_: Any) -> Compiled:
    """Figure 1's upper bound: one graph for the whole model, taken once and called without guards."""
    if example is None:
        raise ValueError("the fullgraph frontend needs an example input")
    from torch.export._tree_utils import reorder_kwargs

    args, kwargs = example
    gm = torch.export.export(model, tuple(args), dict(kwargs)).module()
    in_spec, out_spec = gm.graph._codegen.pytree_info.in_spec, gm.graph._codegen.pytree_info.out_spec
    for node in list(gm.graph.nodes):  # export's input-shape checks: the guards this bound goes without
        if node.op == "call_module" and node.target == "_guards_fn":
            gm.graph.erase_node(node)
    gm.graph._codegen = torch.fx.graph.CodeGen()  # plain positional inputs: `run` flattens them
    gm.recompile()

    def flatten(args: Any, kwargs: Any) -> list[Any]:
        return pytree.tree_leaves((tuple(args), reorder_kwargs(dict(kwargs), in_spec)))

    if backend == "inductor":
        from torch._inductor.compile_fx import compile_fx

        graph_fn = compile_fx(gm, flatten(args, kwargs))
    elif backend == "xla":
        from torch_xla._dynamo.dynamo_bridge import extract_compiled_graph

        graph_fn = extract_compiled_graph(gm, flatten(args, kwargs))
    else:
        raise ValueError(f"fullgraph frontend: unsupported backend {backend!r} (inductor or xla)")

    def run(*args: Any, **kwargs: Any) -> Any:
        out = graph_fn(*flatten(args, kwargs))
        return pytree.tree_unflatten(list(out) if isinstance(out, (list, tuple)) else [out], out_spec)

    return Compiled(run, device, device_sync(device), handle=gm)


_FRONTENDS: dict[str, Callable[..., Compiled]] = {
    "eager": _eager,
    "dynamo": _dynamo,
    "magpy": _magpy,
    "torchscript": _torchscript,
    "torchscript-regions": _torchscript_regions,
    "lazytensor": _lazytensor,
    "fullgraph": _fullgraph,
}
