"""What a stretch of the monitor run wrote: the one place the dynamic watchers decide it.

A loop is rolled (:mod:`magpy.dynamic.loops`) and a branch's arm is kept
(:mod:`magpy.dynamic.branches`) only if nothing inside it writes an object. Two kinds of
evidence are combined:

* :func:`write_counters`: the writes the RefGraph recorded as versions (attribute, item, global
  and cell writes, container methods, in-place changes) and the run's effects, draws, ...
  Those are the writes to objects from outside the call: the ones the record's mock replays.
* :func:`instruction_writes` and :func:`call_writes`: the instruction or call itself, by name.
  They catch the writes the monitor does not record because nothing outside sees them (an
  attribute of an object made in the call, an item of a list the loop built, a cell of a closure
  made in the call, a ``yield`` to a consumer), whose state between iterations or between the
  sides of a branch is not compared.

The second kind is the opcode-name logic the issue asks to replace by the RefGraph's record of
writes; that needs every write, to objects made in the call too, to give the written object's
ShadowNode a new version (today only objects from outside get one), after which "did anything
write" is "did the total version count change" (see the report of issue #26).
"""
from __future__ import annotations

import builtins
import types
from typing import Any

import torch

#: Instructions that write an object: none may run inside a loop that is to be rolled.
#: (A yield hands control to a consumer whose state between iterations is not compared.)
WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE",
                    "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF", "IMPORT_NAME",
                    "YIELD_VALUE"})
#: ... nor inside a clean arm of a branch, nor the appends of comprehensions there
#: (conservatively: a container the arm builds is not compared).
ARM_WRITES = WRITES | frozenset({"LIST_APPEND", "SET_ADD", "MAP_ADD"})
#: Types an augmented assignment (``x += y``) makes a new value of, inside a loop ...
LOOP_IMMUTABLE = (int, float, complex, str, bytes, tuple, torch.Tensor)
#: ... and inside an arm.
ARM_IMMUTABLE = (int, float, complex, str, bytes, tuple, frozenset, type(None), bool, torch.Tensor)

# Builtin methods that only read their object.
_READING_METHODS = frozenset({
    "get", "keys", "values", "items", "copy", "index", "count", "__getitem__", "__len__", "__contains__",
    "startswith", "endswith", "format", "join", "split", "strip", "lower", "upper", "replace",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__str__",
    "__format__", "is_integer", "bit_length", "conjugate", "union", "intersection", "difference",
    "issubset", "issuperset", "isdisjoint", "__reduce__", "__reduce_ex__", "__sizeof__", "isdigit",
    "isalpha", "rstrip", "lstrip", "partition", "rpartition", "find", "rfind", "encode", "decode"})
_WRITING_BUILTINS = (builtins.setattr, builtins.delattr, object.__setattr__, object.__delattr__,
                     builtins.exec, builtins.eval, builtins.globals, builtins.vars, builtins.locals)


def write_counters(mon: Any) -> tuple:
    """The monitor's recorded writes so far, as counters: equal before and after a stretch of
    the run when it recorded none (no write, in-place change, effect, draw, speculative
    operation or context variable set)."""
    return (mon.rg.outside_changes,   # (every attribute, item, global and cell write and container call is a version)
            len(mon.mutated), len(mon.effects), len(mon.draws), mon.graph_mutates,
            len(mon.speculative_ops), mon.mutates_outside, len(mon.contextvars))


def instruction_writes(ins: Any, stack: list, opcodes: frozenset = WRITES, immutable: tuple = LOOP_IMMUTABLE,
                       accumulates: Any = None) -> str | None:
    """What the instruction about to run writes, in words (``"STORE_ATTR"``, ``"`+=` changes a
    list"``), or None. ``opcodes``: the instructions that count as writes; ``immutable``: the
    types an augmented assignment makes a new value of; ``accumulates(obj)``: whether ``obj +=
    [x]`` is a watched accumulator's growth (not a write)."""
    if ins.opname in opcodes or ins.real in opcodes:
        return ins.real
    if ins.opname == "BINARY_OP" and ins.argrepr.endswith("=") and ins.argrepr not in ("==", "!=", "<=", ">=") \
            and len(stack) >= 2 and not isinstance(stack[-2], immutable) \
            and not (accumulates is not None and ins.argrepr == "+=" and accumulates(stack[-2])):
        return f"`{ins.argrepr}` changes a {type(stack[-2]).__name__}"
    return None


def call_writes(fn: Any, args: list, watched: dict) -> str | None:
    """What a call may write, in words (a builtin that changes its object's state, a native
    given an object it may change), or None for calls that write nothing by themselves.
    (Python functions are followed instruction by instruction instead.) A loop accumulator's
    ``append`` is not a write here (``watched``: the loop watcher's table, which watches it)."""
    bad = None
    if fn in _WRITING_BUILTINS:
        bad = f"calls `{fn.__name__}`"
    elif isinstance(fn, types.BuiltinFunctionType) and getattr(fn, "__self__", None) is not builtins \
            and not isinstance(getattr(fn, "__self__", None), (type, torch.Tensor)) \
            and not (getattr(fn, "__module__", None) or "").startswith(("torch", "math")) \
            and any(not isinstance(a, (torch.Tensor, int, float, complex, str, bytes, tuple, frozenset,
                                       type(None), type, types.ModuleType)) for a in args):
        # a function of a native module given an object it may change (heapq.heappush,
        # operator.setitem, bisect.insort)
        bad = f"passes an object to `{getattr(fn, '__qualname__', fn)}`"
    elif isinstance(fn, (types.BuiltinMethodType, types.MethodDescriptorType, types.WrapperDescriptorType,
                         types.MethodWrapperType)):
        owner = getattr(fn, "__self__", None)
        if owner is None or isinstance(owner, type):
            owner = args[0] if args else None
        name = getattr(fn, "__name__", "")
        if not isinstance(owner, (torch.Tensor, int, float, str, bytes, tuple, frozenset, type(None),
                                  types.ModuleType, torch.nn.Module)) and name not in _READING_METHODS \
                and not (name == "append" and id(owner) in watched and watched[id(owner)][1] == "acc"):
            bad = f"calls `{type(owner).__name__}.{name}`"
    return bad
