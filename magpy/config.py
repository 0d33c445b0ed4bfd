"""Limits and switches of a compiled callable, and what its backend can do, decided once.

    >>> from magpy.config import backend_caps
    >>> caps = backend_caps("eager")
    >>> caps.lifting, caps.eager
    (True, True)

:func:`magpy.compile` reads its options (and ``MAGPY_CHECK`` from the environment) here, once;
the monitor run (:mod:`magpy.pipeline`) and the records it builds follow the
:class:`BackendCaps` of the compiled callable instead of asking :mod:`magpy.backends` again
per run.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from . import capture
from .backends import compile_lifted, compile_whole, python_nodes, resolve, supports_lifting
from .bytecode import SUPPORTED_BYTECODE

#: Defaults of ``magpy.compile``'s ``cache_limit`` (records kept) and ``recompile_limit``
#: (monitor runs before calls no record matches run eagerly).
CACHE_LIMIT = 64
RECOMPILE_LIMIT = 16
#: Speculative records (magpy.monitor.scalars) tried per call whose graph ran but whose assumptions failed,
#: once the recompile limit is reached (before it, every record is tried: a monitor run costs more
#: than the graph runs): each such try costs a whole graph run, and then the call runs eagerly.
MAX_UNHELD = 2
#: Continuations of continuations (a dynamic operation in a `while` loop splits each iteration):
#: past this depth a dynamic operation sends the rest of the call to eager, as before splits.
MAX_SPLIT_DEPTH = 8


def check_python() -> None:
    """Raise :class:`magpy.capture.UnsupportedPython` where MagPy's monitor cannot run."""
    import sys

    if sys.version_info[:2] not in SUPPORTED_BYTECODE:
        raise capture.UnsupportedPython(
            f"MagPy's monitor decodes CPython {', '.join(f'{a}.{b}' for a, b in SUPPORTED_BYTECODE)} bytecode; "
            f"this is Python {sys.version.split()[0]}")
    capture.check_supported()


def check_mode(check: Any, environ: dict | None = None) -> str | None:
    """``None`` (off), ``"warn"`` or ``"raise"``, from the ``check`` option (None: ``MAGPY_CHECK`` in
    ``environ``, the process environment by default)."""
    if check is None:
        environ = os.environ if environ is None else environ
        env = environ.get("MAGPY_CHECK", "").strip().lower()
        if env in ("", "0", "false", "no", "off"):
            return None
        return "raise" if env == "raise" else "warn"
    if check is False:
        return None
    if check is True or check == "warn":
        return "warn"
    if check == "raise":
        return "raise"
    raise TypeError(f"magpy.compile: check must be None, True, False, 'warn' or 'raise', got {check!r}")


#: Options of ``magpy.compile`` besides the backend.
OPTIONS = ("profile", "cache_limit", "recompile_limit", "dynamic", "check", "adaptive")


def check_options(options: dict) -> None:
    """Raise the user's TypeError for an option ``magpy.compile`` does not know, or a bad ``adaptive``."""
    bad = set(options) - set(OPTIONS)
    if bad:
        raise TypeError(f"magpy.compile: unknown options {sorted(bad)}; known: {sorted(OPTIONS)}")
    if options.get("adaptive", True) not in (True, False):
        raise TypeError(f"magpy.compile: adaptive must be True or False, got {options['adaptive']!r}")


def check_dynamic(dynamic: Any, backend: Any) -> None:
    """Raise the user's TypeError for a ``dynamic`` option that is not one or this backend cannot honour."""
    if dynamic not in (None, True, False):
        raise TypeError(f"magpy.compile: dynamic must be None, True or False, got {dynamic!r}")
    if dynamic and not supports_lifting(backend):
        raise TypeError(f"magpy.compile: dynamic=True needs a backend that compiles for any input size "
                        f"(\"eager\" or \"inductor\"), not {backend!r}")


@dataclass(frozen=True)
class BackendCaps:
    """What the compiled callable's backend can do, decided once when compiling.

    ``compile_graph(gm, example_inputs)`` compiles a graph for the example sizes;
    ``compile_lifted`` one whose sizes vary between calls (lifted shapes, magpy.monitor.scalars).
    ``lifting``: the backend compiles for any input size, so sizes may be lifted and draws
    re-drawn as graph inputs (magpy.redraw). ``eager``: the fx graph runs as it is, so Python
    nodes, float inputs and operators that may raise stay inside it. ``compile_cond``: compiles
    a graph whose conditional nodes became ``torch.cond`` (magpy.dynamic.cond) whole, or raises;
    None when the backend does not lower ``torch.cond``."""

    name: str
    compile_graph: Callable
    compile_lifted: Callable | None
    lifting: bool
    eager: bool
    compile_cond: Callable | None = None

    def regions(self, gm: torch.fx.GraphModule) -> bool:
        """Whether ``gm`` is compiled as regions between its Python (numpy) nodes: only the
        eager backend runs them inside its graph."""
        return not self.eager and bool(python_nodes(gm))


def backend_caps(backend: Any) -> BackendCaps:
    """The capabilities of ``backend`` (a name or a callable); raises BackendError for an unknown one."""
    lifting = supports_lifting(backend)
    return BackendCaps(name=backend if isinstance(backend, str) else getattr(backend, "__name__", "callable"),
                       compile_graph=resolve(backend),
                       compile_lifted=functools.partial(compile_lifted, backend) if lifting else None,
                       lifting=lifting, eager=isinstance(backend, str) and backend == "eager",
                       compile_cond=compile_whole if isinstance(backend, str) and backend == "inductor" else None)
