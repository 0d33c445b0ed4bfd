"""Soundness harness: run one user program eagerly and compiled, side by side, and compare.

A *program* is Python source text, registered with :func:`program`. Each *world* execs the
source into a fresh ``types.ModuleType`` (so module globals, classes, config modules, caches
are per world), then calls the program's hooks:

    NCALLS = 4                      # optional, default 4 (>= 3)
    TOP_COMPILE = True              # optional: False when the program compiles parts itself via COMPILE(...)
    def make(): return target       # required: the function / nn.Module the user compiles
    def inputs(i): return args      # required: a tuple of args, or (args_tuple, kwargs_dict)
    def step(i): ...                # optional: change outside state before call i (i = 0..NCALLS-1)
    def context(i): return cm       # optional: a context manager entered around call i
    def invoke(f, i): return out    # optional: how call i uses the (compiled) callable, default f(*inputs(i))
    def post(out, i): return extra  # optional: after call i (e.g. backward); its result is compared too
    def state(): return snapshot    # optional: extra outside state / identities to compare
    EXPECT = "record"               # optional, default "record": what MagPy should do (see below)

Injected names: ``COMPILE`` (identity in the eager world, the compiler in the compiled one),
``new_module(name, src)`` (a fresh user module, e.g. a config module), ``CLEANUP`` (a list of
callables run at the end of the test), and the usual imports (torch, nn, F, np, enum, ...).

Besides ``state()``, the harness snapshots generically: the output, the args (mutated in
place?), every plain global of the program's namespace (tensors, modules with their
parameters/buffers/grads/attributes, containers, objects), with object identities numbered in
first-seen order across the whole run, so "returns the same list", "self.a is self.b",
"the cache is still the same dict" are compared as well. Torch global state (grad mode,
default dtype, deterministic algorithms, matmul precision, autocast, global module hooks,
``SOUND_*`` environment variables) is kept per world, switched on every turn, and restored
afterwards.

``EXPECT`` declares what MagPy should do with the program, and the suite asserts it, measured
from :func:`magpy.stats` of every callable the program compiled (:func:`observed_outcome`):

* ``"record"``: some call is answered whole by a record (guard + mock, no split);
* ``"split"``: some call is answered by a record whose call splits at a dynamic operation and
  goes on in a compiled continuation;
* ``"dynamic"``: no call is answered by a record (MagPy runs the calls eagerly, or monitors each
  one, having found that what the program does changes from call to call).
"""
from __future__ import annotations

import ast
import collections
import contextlib
import enum
import linecache
import math
import os
import sys
import textwrap
import traceback
import types
import weakref
from dataclasses import dataclass

import numpy as np
import torch

import magpy
from experiments.compare import Tolerance, compare

# ----------------------------------------------------------------------------------------------
# registry
# ----------------------------------------------------------------------------------------------


@dataclass
class Program:
    family: str
    name: str
    src: str

    @property
    def id(self) -> str:
        return f"{self.family}::{self.name}"

    def _constant(self, name: str):
        for node in ast.parse(self.src).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                try:
                    return ast.literal_eval(node.value)
                except ValueError:
                    return repr(ast.unparse(node.value))
        return None

    @property
    def expect(self) -> str:
        """What MagPy should do with the program on this CPython and torch: the module-level
        ``EXPECT_BY_VERSION`` entry for this CPython ("3.12": a known difference, e.g. comprehensions
        inlined by PEP 709), else the ``EXPECT_BY_TORCH`` entry for this torch ("2.14": a known
        difference of torch, see magpy/torch_support.py), else ``EXPECT`` ("record" where absent); a
        split is "dynamic" where frames cannot be resumed (CPython 3.10: the call runs eagerly)."""
        by_version = self._constant("EXPECT_BY_VERSION") or {}
        declared = self._constant("EXPECT") or "record"
        here = "{}.{}".format(*sys.version_info[:2])
        if isinstance(by_version, dict) and here in by_version:
            return by_version[here]
        from magpy.torch_support import parse_version

        by_torch = self._constant("EXPECT_BY_TORCH") or {}
        torch_here = "{}.{}".format(*parse_version(torch.__version__))
        if isinstance(by_torch, dict) and torch_here in by_torch:
            declared = by_torch[torch_here]
        from magpy.bytecode import resume

        if declared == "split" and not resume.supported():
            return "dynamic"
        return declared


OUTCOMES = ("record", "split", "dynamic")


REGISTRY: list[Program] = []


def program(family: str, name: str, src: str) -> Program:
    p = Program(family, name, textwrap.dedent(src))
    if any(q.id == p.id for q in REGISTRY):
        raise ValueError(f"duplicate program {p.id}")
    REGISTRY.append(p)
    return p


def load_all() -> list[Program]:
    import importlib
    import pathlib
    import sys

    here = pathlib.Path(__file__).parent
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    for f in sorted(here.glob("programs_*.py")):
        importlib.import_module(f.stem)
    return REGISTRY


# ----------------------------------------------------------------------------------------------
# torch global state, kept per world
# ----------------------------------------------------------------------------------------------

_MOD = torch.nn.modules.module
_HOOK_DICTS = ["_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
               "_global_backward_pre_hooks", "_global_forward_hooks_always_called",
               "_global_forward_hooks_with_kwargs"]


def _env_keys():
    return {k: v for k, v in os.environ.items() if k.startswith("SOUND_")}


def get_global_state() -> dict:
    s = {
        "grad": torch.is_grad_enabled(),
        "dtype": torch.get_default_dtype(),
        "det": torch.are_deterministic_algorithms_enabled(),
        "det_warn": torch.is_deterministic_algorithms_warn_only_enabled(),
        "mm": torch.get_float32_matmul_precision(),
        "ac_cpu": torch.is_autocast_enabled("cpu"),
        "ac_cpu_dtype": torch.get_autocast_dtype("cpu"),
        "env": _env_keys(),
        "hooks": {n: collections.OrderedDict(getattr(_MOD, n)) for n in _HOOK_DICTS if hasattr(_MOD, n)},
    }
    return s


def set_global_state(s: dict) -> None:
    torch.set_grad_enabled(s["grad"])
    torch.set_default_dtype(s["dtype"])
    torch.use_deterministic_algorithms(s["det"], warn_only=s["det_warn"])
    torch.set_float32_matmul_precision(s["mm"])
    torch.set_autocast_enabled("cpu", s["ac_cpu"])
    torch.set_autocast_dtype("cpu", s["ac_cpu_dtype"])
    for k in list(_env_keys()):
        if k not in s["env"]:
            del os.environ[k]
    os.environ.update(s["env"])
    for n, d in s["hooks"].items():
        g = getattr(_MOD, n)
        g.clear()
        g.update(d)


# ----------------------------------------------------------------------------------------------
# worlds
# ----------------------------------------------------------------------------------------------

PRELUDE = """
import collections, contextlib, dataclasses, enum, functools, itertools, math, operator, os, sys
import threading, types, weakref
from dataclasses import dataclass, field
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
"""

_PRELUDE_NAMES = None


def _new_module(name: str, src: str = "", registry: list | None = None) -> types.ModuleType:
    """A fresh user module (e.g. a config or util module), registered in sys.modules under a unique name."""
    uniq = f"soundness_usermod_{name}_{len(_USERMODS)}"
    _USERMODS.append(uniq)
    m = types.ModuleType(uniq)
    sys.modules[uniq] = m
    if registry is not None:
        registry.append(uniq)
    exec(compile(PRELUDE + textwrap.dedent(src), f"<soundness-module {uniq}>", "exec"), m.__dict__)
    return m


_USERMODS: list = []


class World:
    """One fresh instance of a program: its namespace, the target and its compiled form."""

    def __init__(self, prog: Program, mode: str):
        self.prog = prog
        self.mode = mode                      # "eager" | "magpy" | "dynamo"
        self.gstate = None
        self.keep: list = []                  # keeps snapshotted objects alive (ids stay unique)
        self.ids: dict[int, int] = {}
        fname = f"<soundness {prog.id} {mode}>"
        src = PRELUDE + prog.src
        linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
        self.modname = f"soundness_{prog.family}_{prog.name}_{mode}"
        self.ns = types.ModuleType(self.modname)
        sys.modules[self.modname] = self.ns       # dataclasses, pickling, inspect look the module up
        self.usermods: list = []
        self.compiled: list = []              # what MagPy compiled in this world (for magpy.stats)
        self.ns.__dict__.update(COMPILE=self.compile_fn, CLEANUP=[],
                                new_module=lambda name, src="": _new_module(name, src, self.usermods))
        torch.manual_seed(0)
        exec(compile(src, fname, "exec"), self.ns.__dict__)
        self.ncalls = self.ns.__dict__.get("NCALLS", 4)

    def compile_fn(self, target):
        if self.mode == "eager":
            return target
        if self.mode == "magpy":
            c = magpy.compile(target, backend="eager")
            self.compiled.append(c)
            return c
        if self.mode == "dynamo_partial":       # graph breaks allowed: what most users run
            return torch.compile(target, backend="eager")
        return torch.compile(target, fullgraph=True, backend="eager")

    def build(self):
        torch.manual_seed(0)
        self.target = self.ns.make()
        if self.ns.__dict__.get("TOP_COMPILE", True):
            self.fn = self.compile_fn(self.target)
        else:
            self.fn = self.target
        self.ns.__dict__["CALLABLE"] = self.fn

    def inputs(self, i):
        torch.manual_seed(1000 + i)
        a = self.ns.inputs(i)
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], tuple) and isinstance(a[1], dict):
            return a
        if not isinstance(a, tuple):
            a = (a,)
        return a, {}

    def turn(self, i):
        """Apply step i, make call i. Returns (outcome, snapshot)."""
        ns = self.ns.__dict__
        if "step" in ns:
            torch.manual_seed(3000 + i)
            ns["step"](i)
        args, kwargs = self.inputs(i)
        ctx = ns["context"](i) if "context" in ns else contextlib.nullcontext()
        torch.manual_seed(2000 + i)
        extra = None
        try:
            with ctx:
                if "invoke" in ns:
                    out = ns["invoke"](self.fn, i)
                else:
                    out = self.fn(*args, **kwargs)
                if "post" in ns:
                    extra = ns["post"](out, i)
            outcome = ("ok",)
        except Exception as e:  # noqa: BLE001
            out = None
            outcome = ("raised", type(e).__name__, "".join(traceback.format_exception_only(e)).strip()[-300:], e)
        snap = {
            "out": self.snap(out),
            "args": self.snap((args, kwargs)),
            "post": self.snap(extra),
            "state": self.snap(ns["state"]()) if "state" in ns else None,
            "globals": self.snap_globals(),
        }
        return outcome, snap

    # -- snapshots ----------------------------------------------------------------------------
    def ident(self, obj) -> int:
        k = id(obj)
        if k not in self.ids:
            self.ids[k] = len(self.ids)
            self.keep.append(obj)
        return self.ids[k]

    def snap_globals(self):
        global _PRELUDE_NAMES
        if _PRELUDE_NAMES is None:
            d: dict = {}
            exec(PRELUDE, d)
            _PRELUDE_NAMES = set(d) | {"COMPILE", "new_module", "CLEANUP", "CALLABLE", "NCALLS", "TOP_COMPILE"}
        out = {}
        for k, v in list(self.ns.__dict__.items()):
            if k.startswith("_") or k in _PRELUDE_NAMES:   # _private globals: compared via state() only
                continue
            v = _unwrap(v)
            if isinstance(v, (types.FunctionType, type, types.ModuleType, types.BuiltinFunctionType)):
                continue
            out[k] = self.snap(v)
        return out

    def snap(self, obj, depth: int = 0, seen=None):
        if seen is None:
            seen = set()
        if depth > 6:
            return ("deep",)
        obj = _unwrap(obj)
        if isinstance(obj, enum.Enum):
            return ("enum", type(obj).__name__, obj.name)
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            if isinstance(obj, float) and math.isnan(obj):
                return ("nan",)
            return obj
        if isinstance(obj, enum.Enum):
            return ("enum", type(obj).__name__, obj.name)
        if isinstance(obj, (np.generic,)):
            return ("np", type(obj).__name__, obj.item() if not (isinstance(obj, np.floating) and np.isnan(obj)) else "nan")
        if isinstance(obj, (torch.dtype, torch.device, torch.Size, torch.memory_format, torch.layout)):
            return ("tmeta", str(obj))
        if isinstance(obj, torch.utils.hooks.RemovableHandle):
            return ("handle",)
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return ("tuple", tuple(self.snap(x, depth + 1, seen) for x in obj))
        ident = self.ident(obj)
        if id(obj) in seen:
            return ("ref", ident)
        seen = seen | {id(obj)}
        if isinstance(obj, torch.Tensor):
            with torch._C.DisableTorchFunctionSubclass():
                t = obj.detach()
                vals = t.clone() if t.layout == torch.strided else t.to_dense().clone()
                vals = vals.as_subclass(torch.Tensor)
                r = ("T", ident, type(obj).__name__, str(obj.dtype), tuple(obj.shape), obj.requires_grad, vals)
                if obj.is_leaf and obj.grad is not None:
                    r = r + (("grad", obj.grad.detach().clone().as_subclass(torch.Tensor)),)
            return r
        if isinstance(obj, torch.nn.Module):
            return ("module", ident, type(obj).__name__, self._module_state(obj, depth, seen))
        if isinstance(obj, dict):
            return ("dict", ident, type(obj).__name__,
                    [(self.snap(k, depth + 1, seen), self.snap(v, depth + 1, seen)) for k, v in obj.items()])
        if isinstance(obj, (list, collections.deque)):
            return ("list", ident, type(obj).__name__, [self.snap(x, depth + 1, seen) for x in obj])
        if isinstance(obj, (set, frozenset)):
            items = [self.snap(x, depth + 1, seen) for x in obj]
            return ("set", ident, len(obj), sorted(repr(x) for x in items if not isinstance(x, tuple)))
        if isinstance(obj, tuple):  # namedtuple
            return ("ntuple", type(obj).__name__, tuple(self.snap(x, depth + 1, seen) for x in obj))
        if isinstance(obj, weakref.ref):
            return ("weakref", ident, self.snap(obj(), depth + 1, seen))
        if isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools_partial)):
            return ("callable", ident, getattr(obj, "__qualname__", type(obj).__name__))
        if isinstance(obj, (types.ModuleType,)):
            return ("pymodule", obj.__name__)
        if isinstance(obj, type):
            return ("class", obj.__qualname__)
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            return ("obj", ident, type(obj).__name__,
                    {k: self.snap(v, depth + 1, seen) for k, v in d.items() if not k.startswith("__")})
        return ("opaque", ident, type(obj).__name__)

    _MOD_INTERNALS = None

    def _module_state(self, m, depth, seen):
        if World._MOD_INTERNALS is None:
            World._MOD_INTERNALS = set(torch.nn.Module().__dict__)
        out = {}
        for name, p in m.named_parameters(recurse=False):
            out["p:" + name] = self.snap(p, depth + 1, seen)
        for name, b in m.named_buffers(recurse=False):
            out["b:" + name] = self.snap(b, depth + 1, seen)
        for name, c in m.named_children():
            out["c:" + name] = self.snap(c, depth + 1, seen)
        for k, v in m.__dict__.items():
            if k in World._MOD_INTERNALS or k in _COMPILER_ATTRS:
                continue
            out["a:" + k] = self.snap(v, depth + 1, seen)
        out["training"] = m.training
        return out

    def cleanup(self):
        sys.modules.pop(self.modname, None)
        for u in self.usermods:
            sys.modules.pop(u, None)
        for f in reversed(self.ns.__dict__.get("CLEANUP", [])):
            try:
                f()
            except Exception:  # noqa: BLE001
                pass


import functools as _functools  # noqa: E402

_COMPILER_ATTRS = {"_is_torch_compile", "_compiled_call_impl"}   # set by torch.compile on modules


def _unwrap(obj):
    """The user's object behind a compiled wrapper (MagPy's or Dynamo's)."""
    if isinstance(obj, magpy.CompiledFunction):
        return obj._target
    orig = getattr(obj, "_orig_mod", None)
    if orig is not None and isinstance(obj, torch.nn.Module):
        return orig
    return obj


functools_partial = _functools.partial

# ----------------------------------------------------------------------------------------------
# comparison
# ----------------------------------------------------------------------------------------------


#: The suite's bar, in the artifact's one comparator (experiments/compare.py): tensor values within
#: 1e-4 (1e-2 in half precision), Python numbers of the same type and equal.
TOLERANCE = Tolerance(per_dtype={
    str(dtype).removeprefix("torch."): {"rtol": 1e-2, "atol": 1e-2} if dtype in (torch.float16, torch.bfloat16)
    else {"rtol": 1e-4, "atol": 1e-4}
    for dtype in vars(torch).values() if isinstance(dtype, torch.dtype) and (dtype.is_floating_point or dtype.is_complex)},
    exact_scalars=True)


def diff(a, b, path="") -> str | None:
    """None if equal, else a short description of the first difference (snapshots are acyclic: every
    level is compared)."""
    return compare(a, b, TOLERANCE, path, max_depth=1 << 16).mismatch


def short(x, n=120):
    s = repr(x)
    return s if len(s) <= n else s[:n] + "..."


# ----------------------------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------------------------


@dataclass
class Result:
    prog: Program
    verdict: str                  # "correct" | "wrong" | "raised"
    detail: str = ""
    calls: int = 0
    compiled_hits: int = 0        # MagPy: calls answered by a record (guard + mock), not eagerly
    outcome: str = ""             # MagPy: "record" | "split" | "dynamic" (see observed_outcome)


def _reset_compilers(mode):
    magpy.reset()
    if mode.startswith("dynamo"):
        torch._dynamo.reset()


def run_program(prog: Program, mode: str = "magpy") -> Result:
    """Run ``prog`` eagerly and under ``mode`` ("magpy" | "dynamo"), interleaved call by call."""
    base = get_global_state()
    _reset_compilers(mode)
    worlds: list[World] = []
    try:
        ref = World(prog, "eager")
        worlds.append(ref)
        test = World(prog, mode)
        worlds.append(test)
        for w in worlds:
            set_global_state(base)
            w.build()
            w.gstate = get_global_state()
        n = ref.ncalls
        for i in range(n):
            res = []
            for w in worlds:
                set_global_state(w.gstate)
                try:
                    res.append(w.turn(i))
                finally:
                    w.gstate = get_global_state()
            (o_ref, s_ref), (o_test, s_test) = res
            if o_ref[0] == "raised":
                if o_test[0] != "raised":
                    return Result(prog, "wrong", f"call {i}: eager raised {o_ref[1]}, {mode} returned", i)
                if not isinstance(o_test[3], type(o_ref[3])):
                    if mode.startswith("dynamo") and _is_dynamo_error(o_test[3]):
                        return Result(prog, "raised", f"call {i}: dynamo raised {o_test[1]}: {o_test[2]}", i)
                    return Result(prog, "wrong", f"call {i}: eager raised {o_ref[1]}, {mode} raised "
                                  f"{o_test[1]}: {o_test[2]}", i)
            elif o_test[0] == "raised":
                return Result(prog, "raised", f"call {i}: {mode} raised {o_test[1]}: {o_test[2]}", i)
            for part in ("out", "post", "args", "state", "globals"):
                d = diff(s_ref[part], s_test[part], part)
                if d:
                    return Result(prog, "wrong", f"call {i}: {d}", i)
            if set_state_differs(ref.gstate, test.gstate):
                return Result(prog, "wrong", f"call {i}: torch global state differs after the call", i)
        if mode != "magpy":
            return Result(prog, "correct", "", n)
        stats = [magpy.stats(c) for c in test.compiled]
        return Result(prog, "correct", "", n, sum(st.guard_hits for st in stats), observed_outcome(stats))
    except Exception as e:  # noqa: BLE001 - building a world failed
        return Result(prog, "raised", f"setup: {type(e).__name__}: {e}")
    finally:
        for w in worlds:
            w.cleanup()
        set_global_state(base)
        _reset_compilers(mode)


def observed_outcome(stats: list) -> str:
    """What MagPy did with a program, from the :class:`magpy.Stats` of each callable it compiled:
    "split" if some call was answered by a record that splits (the stronger claim, also when other
    calls hit whole records), else "record" if some call was answered whole by a record's guard +
    mock, else "dynamic"."""
    if any(st.split_hits for st in stats):
        return "split"
    if any(st.guard_hits - st.split_hits for st in stats):
        return "record"
    return "dynamic"


def _is_dynamo_error(e) -> bool:
    try:
        import torch._dynamo.exc as exc
    except ImportError:
        return False
    return isinstance(e, exc.TorchDynamoException) and not isinstance(e, exc.TorchRuntimeError)


def set_state_differs(a, b) -> bool:
    ka = {k: v for k, v in a.items() if k != "hooks"}
    kb = {k: v for k, v in b.items() if k != "hooks"}
    return ka != kb or {k: len(v) for k, v in a["hooks"].items()} != {k: len(v) for k, v in b["hooks"].items()}
