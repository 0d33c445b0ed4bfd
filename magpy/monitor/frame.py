"""The small contract objects of a monitor run: which frames it watches and what it keeps per frame.

:class:`FrameState` is what the update rules (:mod:`magpy.monitor.rules`), the call rules
(:mod:`magpy.monitor.calls`) and the split (:mod:`magpy.splits`) see of a frame; modules that need only
it import this module, not the monitor. :func:`skip_codes` and :data:`MAGPY_RUNTIME_FILES` name
the frames that run between user frames and are never monitored.
"""
from __future__ import annotations

import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..breaks import SUBSCRIPT_EVENTS
from ..bytecode import CodeTable
from ..objmodel import PROTOCOL_EVENTS

if TYPE_CHECKING:
    from ..guards import Guard
    from ..refgraph import ShadowNode


@dataclass
class FrameState:
    """What the run keeps per monitored frame: its decoded instructions, the update waiting for
    the next event (``pending``: a post rule and its data), the keyword names of the next call,
    the top frame's parameters not yet written (they still hold their arguments' sources)."""

    frame: Any
    code: Any
    instrs: dict
    is_top: bool
    pending: Any = None
    kw_names: tuple = ()
    unwritten_params: set = field(default_factory=set)
    fn_node: ShadowNode | None = None
    last_call: Any = None   # (instruction, stack, keyword names, assumptions so far) of its latest call event (magpy.splits)
    managers: dict = field(default_factory=dict)   # offset of a `with` entered -> its context manager
    #: the pending operation's operands carry no followed number (True), or only inside sequence
    #: iterators, whose StopIteration follows a length ("exhaustion") (Monitor.exception)
    blind_operands: bool | str = False
    last_offset: int = -1   # the offset of its latest instruction event (did it leave at a yield?)
    quiet: Any = None       # its code's quiet instructions, as the capture takes them (quiet_map)
    #: its latest instruction event answered ``quiet``: the capture skips its quiet instructions
    #: until its next delivered event (a ``pend`` on it from elsewhere wakes it: Monitor.pend)
    quieted: bool = False
    #: its code's ``try`` ranges with an ``except`` (bytecode.catching_ranges), read on first need
    catching: tuple | None = None


#: Instructions that only move references within the frame (locals, constants, the NULL of a
#: call, jumps): in a frame other than the top one (whose locals may still hold the call's
#: arguments, see ``FrameState.unwritten_params``) their rules do nothing, and no watcher takes
#: them for a use of a value. While nothing waits for the frame's next event, the capture need
#: not deliver them (:meth:`Monitor.instruction` says when). ...
QUIET_OPNAMES = frozenset({
    "LOAD_FAST", "LOAD_FAST_CHECK", "STORE_FAST", "DELETE_FAST", "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST",
    "STORE_FAST_STORE_FAST", "LOAD_CONST", "PRECALL", "PUSH_NULL", "POP_TOP", "NOP", "COPY", "SWAP",
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
#: ... and these, which test a value (``is None``), where no loop watches the uses of values
QUIET_TESTS = frozenset({"POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE",
                         "POP_JUMP_BACKWARD_IF_NOT_NONE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})
#: the rules they have (an instruction another rule decodes to is never quiet)
QUIET_HANDLERS = frozenset({"op_PASS", "op_LOAD_FAST", "op_LOAD_FAST_CHECK", "op_STORE_FAST", "op_DELETE_FAST",
                            "op_LOAD_FAST_LOAD_FAST", "op_STORE_FAST_LOAD_FAST", "op_STORE_FAST_STORE_FAST"})
#: how quiet the run may be (:meth:`Monitor.instruction`): every event; all but the moves; all but
#: the moves and the tests
ALL_EVENTS, NO_MOVES, NO_MOVES_OR_TESTS = 0, 1, 2
_quiet_maps = CodeTable()
_UNSEEN = object()


def quiet_map(code: Any, instrs: dict) -> Any:
    """The capture's form of ``code``'s quiet instructions (per byte offset: ``NO_MOVES`` for a
    move, ``NO_MOVES_OR_TESTS`` for a test, 0 for any other), or None where the capture delivers
    every event (cached per code object, by identity)."""
    hit = _quiet_maps.find(code, _UNSEEN)
    if hit is not _UNSEEN:
        return hit
    flags = bytearray(len(code.co_code))
    for offset, ins in instrs.items():
        if ins.handler in QUIET_HANDLERS:
            flags[offset] = NO_MOVES if ins.real in QUIET_OPNAMES else NO_MOVES_OR_TESTS if ins.real in QUIET_TESTS else 0
    from .. import capture  # (this module needs no capture backend otherwise)

    return _quiet_maps.keep(code, capture.quiet_map(bytes(flags)))


_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_ATTRIBUTE_GETTERS = frozenset({"__getattribute__", "getattr", "hasattr"})


def attribute_lookup(ins: Any, stack: list) -> bool:
    """Is the instruction an attribute lookup by name: ``obj.name``, or a call of ``getattr``,
    ``hasattr`` or a ``__getattribute__`` (``super().__getattribute__(key)``) with a text name?
    Its AttributeError follows which attributes the object has, never a number it holds (a
    Python ``__getattr__`` or property that raises is monitored as its own frame)."""
    if ins.real in _ATTRIBUTE_LOADS:
        return True
    if ins.opname != "CALL" or not isinstance(ins.arg, int) or not stack or type(stack[-1]) is not str:
        return False
    for fn in stack[-ins.arg - 2:-1]:
        if isinstance(fn, (types.BuiltinFunctionType, types.MethodWrapperType, types.WrapperDescriptorType)) \
                and getattr(fn, "__name__", None) in _ATTRIBUTE_GETTERS \
                and getattr(fn, "__module__", "builtins") in ("builtins", None):
            return True
    return False


class GuardSink(Protocol):
    """What guarding for the run from outside it needs of the monitor (the compiled callable's
    entry, :func:`~magpy.monitor.entry.guard_entry`): add a guard; guard a class attribute."""

    def add_guard(self, guard: Guard) -> None: ...

    def guard_class_attr(self, cls: type, name: str, after: type | None = None) -> None: ...


_FRAMEWORK: set | None = None
_DYNAMO_SEEN = False


def skip_codes() -> set:
    """Framework frames that run between user frames and are not monitored themselves (one set,
    grown in place: TorchDynamo's frames join it once something imported Dynamo)."""
    global _FRAMEWORK, _DYNAMO_SEEN
    if _FRAMEWORK is None:
        _FRAMEWORK = _framework_codes()
    if not _DYNAMO_SEEN and "torch._dynamo.utils" in sys.modules:
        _DYNAMO_SEEN = True
        _FRAMEWORK.update(_dynamo_codes())
    return _FRAMEWORK


def _framework_codes() -> set:
    codes = set()
    M = torch.nn.Module
    for name in ("_wrapped_call_impl", "_call_impl", "__setattr__"):
        fn = getattr(M, name, None)
        if fn is not None:
            codes.add(fn.__code__)
            # and the helpers they define per call (`inner`, which runs the hooks): their
            # closure cells are per-call objects, never outside state
            codes.update(c for c in fn.__code__.co_consts if isinstance(c, types.CodeType))
    # weakref.finalize callbacks run wherever their object dies, in the middle of user code: not
    # part of the program.
    codes.add(weakref.finalize.__call__.__code__)
    apply = getattr(torch.autograd.Function, "apply", None)
    if apply is not None and hasattr(apply, "__func__"):
        codes.add(apply.__func__.__code__)
    return codes


def _call_impl_codes() -> frozenset:
    codes = set()
    for name in ("_wrapped_call_impl", "_call_impl"):
        fn = getattr(torch.nn.Module, name, None)
        if fn is not None:
            codes.add(fn.__code__)
            codes.update(c for c in fn.__code__.co_consts if isinstance(c, types.CodeType))
    return frozenset(codes)


#: ``Module.__call__``'s frames: what they hand a hook as its ``args`` tuple and ``kwargs`` dict
#: (the call's own ``*args``/``**kwargs``) is built per call, never outside state.
CALL_IMPL_CODES = _call_impl_codes()


def _dynamo_codes() -> set:
    """TorchDynamo's bookkeeping that it patches into Module.__init__ once imported: a weak
    registry of modules made inside forward, read only by Dynamo's own recompile decisions.
    (Looked up only once Dynamo is loaded: importing it costs about a second.)"""
    codes = set()
    try:
        from torch._dynamo.mutation_guard import GenerationTracker
        from torch._dynamo.utils import ExactWeakKeyDictionary

        codes.add(GenerationTracker.tag.__func__.__code__)
        codes.update(f.__code__ for f in vars(ExactWeakKeyDictionary).values() if isinstance(f, types.FunctionType))
    except (ImportError, AttributeError):   # pragma: no cover - another torch
        pass
    return codes


# MagPy's own call path (a compiled callable used inside a monitored program; compiled_module.py:
# the nn.Module stand-in, where api.py's is split off).
_PACKAGE_DIR = __file__.rsplit("/", 2)[0]   # (magpy/, above this package)
MAGPY_RUNTIME_FILES = frozenset({_PACKAGE_DIR + f for f in ("/api.py", "/compiled_module.py", "/refgraph.py",
                                                            "/graph.py")}
                                | {"<magpy guard>", "<magpy mock>"})


# -- what an instruction is for the checks every event makes ------------------------------------
CALL_EVENTS = frozenset({"CALL", "CALL_FUNCTION_EX"})
WITH_ENTRIES = frozenset({"BEFORE_WITH", "SETUP_WITH"})
#: Events whose native code takes elements out of an array (iteration, unpacking, membership,
#: ``f(*a)``, formatting): a numpy value read from tensors among their operands is assumed.
NUMPY_OPAQUE_EVENTS = frozenset({"GET_ITER", "GET_YIELD_FROM_ITER", "FOR_ITER", "UNPACK_SEQUENCE", "UNPACK_EX",
                                 "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "CALL_FUNCTION_EX",
                                 "CONTAINS_OP", "FORMAT_VALUE", "DELETE_SUBSCR"})
#: ... and those that hand out the characters of text (made from tensor values: assumed)
TEXT_OPAQUE_EVENTS = frozenset({"GET_ITER", "GET_YIELD_FROM_ITER", "UNPACK_SEQUENCE", "UNPACK_EX", "LIST_EXTEND",
                                "SET_UPDATE", "CALL_FUNCTION_EX"})
#: The bits of :func:`event_flags`: a protocol event, a ``with`` entry, a call, a split point that
#: is not a call, an event opaque to arrays or to text read from tensors.
E_PROTOCOL, E_WITH, E_CALL, E_SPLIT_AT, E_NUMPY_OPAQUE, E_TEXT_OPAQUE = 1, 2, 4, 8, 16, 32


def event_flags(ins: Any) -> int:
    """What the decoded instruction ``ins`` is for the checks the monitor makes at every event
    (kept as ``ins.events``: worked out once per instruction instead of set lookups per event)."""
    f = 0
    if ins.opname in PROTOCOL_EVENTS or ins.real in PROTOCOL_EVENTS:
        f |= E_PROTOCOL
    if ins.real in WITH_ENTRIES:
        f |= E_WITH
    if ins.opname in CALL_EVENTS:
        f |= E_CALL
    elif ins.real in SUBSCRIPT_EVENTS or ins.real == "FOR_ITER":
        f |= E_SPLIT_AT
    if ins.opname in NUMPY_OPAQUE_EVENTS:
        f |= E_NUMPY_OPAQUE
    if ins.opname in TEXT_OPAQUE_EVENTS:
        f |= E_TEXT_OPAQUE
    return f
