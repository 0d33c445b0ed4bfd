"""Global torch state a record depends on, checked by one guard.

Operators read process-wide switches that are not arguments: grad mode, inference
mode, autocast (enabled, dtype and cache, per device), the default dtype,
deterministic algorithms, float32 matmul precision, the intra-op thread count, the
active ``TorchFunctionMode``/``TorchDispatchMode`` stacks and global module hooks. A
record is only valid under the state it was monitored in, so the state at the start
of the monitor run is captured once and compared on every call::

    >>> snap = GlobalState.capture()
    >>> snap.check()
    True
    >>> with torch.no_grad():
    ...     snap.check()
    False

torch ships a C++ check of most of these switches (``GlobalStateGuard``, the one
TorchDynamo uses, about 0.3 us); the mode stacks and global hooks are added here.
Where that helper is missing, a Python tuple of the same switches is compared.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

_module_mod = torch.nn.modules.module


def global_hooks_present() -> bool:
    """Hooks registered with ``register_module_forward_hook`` and friends run on every module call."""
    m = _module_mod
    return bool(m._global_forward_hooks or m._global_forward_pre_hooks or m._global_backward_hooks
                or getattr(m, "_global_backward_pre_hooks", None)
                or getattr(m, "_global_forward_hooks_always_called", None))


def active_mode() -> str | None:
    """The class name of a TorchFunctionMode or TorchDispatchMode active now (a user's op logger, a
    ``with torch.device(...)`` block), or None. Every torch call runs through such a mode, MagPy's
    own reads of tensor metadata in a monitor run included, and a compiled graph does not run
    the operators the mode would see: calls under one run eagerly."""
    tf, dispatch = _mode_depths()
    if not tf and not dispatch:
        return None
    from torch.overrides import _get_current_function_mode_stack

    stack = list(_get_current_function_mode_stack()) if tf else []
    if not stack and dispatch:
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

        stack = list(_get_current_dispatch_mode_stack())
    return type(stack[-1]).__name__ if stack else "a mode"


def torch_mode_entered(manager: Any) -> str | None:
    """Why entering ``manager`` with ``with`` inside the call cannot be part of a record (None
    where it can): a ``TorchFunctionMode`` or ``TorchDispatchMode`` (and ``torch.device``, whose
    ``with`` pushes a function mode) makes every torch call in its block run the mode's Python
    ``__torch_function__``/``__torch_dispatch__``, which a compiled graph would not run, and
    MagPy's own reads of tensors in the run would go through it too. The call runs eagerly."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    if isinstance(manager, torch.device):
        return (f"enters `with torch.device({str(manager)!r})` inside the call: a torch function mode, "
                "whose block MagPy does not trace (the call runs eagerly)")
    if isinstance(manager, (TorchFunctionMode, TorchDispatchMode)):
        hook = "__torch_function__" if isinstance(manager, TorchFunctionMode) else "__torch_dispatch__"
        return (f"enters the torch mode `{type(manager).__qualname__}` inside the call: every torch call "
                f"in its block runs the mode's `{hook}`, which MagPy does not trace (the call runs eagerly)")
    return None


def saved_tensor_hooks_active() -> bool:
    """Are ``torch.autograd.graph.saved_tensors_hooks`` (activation offloading or compression) in
    force while autograd records? Each operator that saves a tensor for backward then calls the
    user's pack hook: a graph run speculatively, whose check then fails, would have called it for
    a path eager never took."""
    return torch.is_grad_enabled() and torch._C._autograd._top_saved_tensors_default_hooks(False) is not None


def _mode_depths() -> tuple[int, int]:
    tf = torch._C._len_torch_function_stack()
    dispatch = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)()
    return tf, dispatch


def _python_switches() -> tuple:
    devices = ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)
    return (
        torch.is_grad_enabled(), torch.is_inference_mode_enabled(), torch.get_default_dtype(),
        torch.are_deterministic_algorithms_enabled(), torch.get_float32_matmul_precision(),
        torch.get_num_threads(), torch.is_autocast_cache_enabled(),
        tuple((torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in devices),
    )


_GLOBAL_HOOK_NAMES = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                      "_global_backward_pre_hooks", "_global_forward_hooks_always_called")


@dataclass(frozen=True)
class GlobalState:
    """The global torch state at the start of a monitor run, with a fast ``check()``.

    Generated guards use the parts directly (:meth:`guard_line`, :attr:`hook_tables`): the C++
    switches and the two mode-stack depths are compared on every call, while "no global module
    hooks" becomes "these tables of ``torch.nn.modules.module`` are empty", which the guard
    checks with the other held tables (again only when a dict's version tag moved).
    """

    check: Callable[[], bool]
    description: str
    cpp: Callable[[], bool] | None = None
    depths: tuple[int, int] = (0, 0)
    hook_tables: tuple | None = None   # ((module __dict__, name), ...), all empty when captured
    grad_enabled: bool = True          # grad mode when captured (what a graph's `with` blocks set back)

    @staticmethod
    def capture() -> GlobalState:
        depths = _mode_depths()
        hooks = global_hooks_present()
        try:
            from torch._C._dynamo.guards import GlobalStateGuard

            cpp = GlobalStateGuard().check
            cpp()
        except Exception:   # pragma: no cover - torch without the C++ helper
            cpp = None
        if cpp is not None:
            def check() -> bool:
                return cpp() and _mode_depths() == depths and global_hooks_present() is hooks
        else:   # pragma: no cover
            switches = _python_switches()

            def check() -> bool:
                return _python_switches() == switches and _mode_depths() == depths \
                    and global_hooks_present() is hooks
        mdict = vars(_module_mod)
        tables = None if hooks else tuple((mdict, n) for n in _GLOBAL_HOOK_NAMES if isinstance(mdict.get(n), dict))
        desc = (f"global torch state as monitored: grad={torch.is_grad_enabled()}, "
                f"inference_mode={torch.is_inference_mode_enabled()}, default_dtype={torch.get_default_dtype()}, "
                f"autocast(cpu)={torch.is_autocast_enabled('cpu')}, "
                f"deterministic={torch.are_deterministic_algorithms_enabled()}, "
                f"matmul_precision={torch.get_float32_matmul_precision()}, threads={torch.get_num_threads()}, "
                f"function/dispatch modes={depths}, global module hooks={hooks}")
        return GlobalState(check, desc, cpp, depths, tables, torch.is_grad_enabled())

    def guard_line(self, ns: dict) -> str:
        """The per-call check for a generated guard (names it uses go into ``ns``). With
        :attr:`hook_tables` set, the caller must also check those tables are empty."""
        if self.cpp is None or self.hook_tables is None:
            ns["_global_state"] = self.check
            return "if not _global_state(): return _MISS"
        ns["_gs_cpp"], ns["_tf_len"] = self.cpp, torch._C._len_torch_function_stack
        ns["_disp_len"] = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)
        tf, disp = self.depths
        return f"if not _gs_cpp() or _tf_len() != {tf} or _disp_len() != {disp}: return _MISS"


#: torch calls that change the global state operators read. Inside a program they are kept
#: in the graph, in order, so the compiled graph switches the state exactly where eager did.
STATE_SETTER_NAMES = frozenset({
    "_set_grad_enabled", "set_grad_enabled", "set_autocast_enabled", "set_autocast_dtype",
    "autocast_increment_nesting", "autocast_decrement_nesting", "set_autocast_cache_enabled",
    "clear_autocast_cache", "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
})

_SETTER_PREFIXES = ("set_", "_set_", "use_", "manual_seed", "seed", "enable_", "disable_", "_enable", "_disable",
                    "_jit_set", "_push", "_pop", "_add_", "_remove_")


def is_state_setter_name(name: str) -> bool:
    """Is a torch function of this name (no tensor in or out, returning None) a setter of global state?"""
    return name.startswith(_SETTER_PREFIXES)


_GETTER_PREFIXES = ("is_", "_is_", "get_", "_get_", "are_", "_are_")


def is_state_getter_name(name: str) -> bool:
    """Is a torch function of this name (no tensor in or out) a getter whose answer may depend
    on process-wide state (``is_anomaly_enabled``, ``_get_mkldnn_enabled``, ``initial_seed``)?
    The record guards its answer. Calls that only report on MagPy's own run are not."""
    return (name.startswith(_GETTER_PREFIXES) or name == "initial_seed") and name not in HARMLESS_NAMES


#: torch calls with no tensor in or out that change nothing an operator reads.
HARMLESS_NAMES = frozenset({"_log_api_usage_once", "_assert", "_check", "_check_value", "_check_index",
                            "_check_type", "_check_with", "_check_is_size", "_is_torch_function_mode_enabled",
                            "_is_compiling", "is_compiling"})
