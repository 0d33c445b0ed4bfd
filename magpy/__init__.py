"""MagPy: compile eager PyTorch programs into complete operator graphs by monitoring
the execution state of the real Python interpreter (Zhang et al., USENIX ATC'24).

    import magpy
    fast = magpy.compile(model, backend="inductor")
    y = fast(x)                       # same result as model(x)
    print(magpy.explain(model)(x))    # graphs, break reasons, guards

The pipeline, one module per stage: ``capture`` (execution state per instruction),
``monitor`` (the monitor run: RefGraph and operator-graph updates, dynamics detection),
``refgraph`` (ShadowNode/ShadowVersion, Algorithm 1), ``annotations`` (operation
properties), ``codegen`` (guard and mock), ``graph`` and ``backends`` (torch.fx graph and
its compilation), ``cache`` (records), ``api`` (this package's functions).
"""
# ruff: noqa: E402  (the torch check comes before every import that may reach into torch internals)
from .torch_support import UnsupportedTorch, check_torch

check_torch()   # one clear message on an unsupported torch, not an AttributeError deep in an import

from ._logging import configure as _configure_logging
from .annotations import Annotation, annotate
from .api import CompiledFunction, CompiledModule, Explanation, Stats, compile, explain, records, reset, stats
from .backends import BackendError
from .cache import Record
from .capture import UnsupportedPython
from .check import CheckError

__all__ = ["compile", "explain", "records", "reset", "stats", "annotate", "Annotation", "CompiledFunction",
           "CompiledModule", "Explanation", "Record", "Stats", "BackendError", "UnsupportedPython",
           "CheckError", "UnsupportedTorch"]
__version__ = "0.1.0"

_configure_logging()
