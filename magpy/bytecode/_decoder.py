"""What every bytecode decoder shares: the event vocabulary, :class:`Instr`, :class:`Decoder`.

A decoder turns the instructions of a code object into *events*: the operations the monitor
has one update rule for (``Monitor.op_<EVENT>``), whatever the opcode is called on the running
CPython. The version modules (``_py310`` ... ``_py313``) say which opcode is which event and
where an event's operands sit on the value stack; this module holds what is the same on all.

Events (the monitor's update rules; argument encodings normalised to 3.11's):

=====================  =================================================================
``PASS``               moves references only, no value to track (``POP_TOP``, ``SWAP``, jumps)
``NEW``                leaves one new object on top (``BUILD_LIST``, ``MAKE_FUNCTION``...)
``UNSUPPORTED``        not handled on this version: the call breaks, naming the opcode
``LOAD_FAST`` ...      loads/stores of locals, cells, globals (``LOAD_FAST_LOAD_FAST`` and
                       ``STORE_FAST_*_FAST`` are 3.13's pairs; ``argval`` is the name pair)
``LOAD_ATTR``          ``method`` says a method load (``LOAD_METHOD``, 3.12's ``arg & 1``)
``LOAD_SUPER_ATTR``    3.12+'s ``super().name`` without a ``super`` object
``BINARY_OP``          ``argrepr`` is the operator (``"+"``, ``"+="``), 3.10's ``BINARY_ADD`` too
``BINARY_SUBSCR``      ``c[k]``; ``BINARY_SLICE``/``STORE_SLICE`` are 3.12+'s ``c[a:b]``
``COMPARE_OP``         ``argval`` is the operator (``"<"``); ``to_bool``: used as a condition
``TRUTH``              reads the truth of the top value (conditional jumps, ``TO_BOOL``, ``not``)
``CALL``               any call with positional and keyword arguments (the decoder finds them)
``FORMAT_VALUE``       ``arg & 4``: a format spec sits above the value
=====================  =================================================================

Example::

    >>> from magpy.bytecode import DECODER
    >>> DECODER.event("POP_TOP"), DECODER.event("BUILD_LIST"), DECODER.event("GET_AWAITABLE")
    ('PASS', 'NEW', 'UNSUPPORTED')
"""
from __future__ import annotations

import builtins
import dis
import types
from typing import Any

# Opcodes that mean the same on every version that has them, with the event they are.
# A version module adds its own; an opcode in neither is UNSUPPORTED there.
SHARED_EVENTS: dict[str, str] = {
    **{op: op for op in (
        "LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_GLOBAL",
        "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "BINARY_SUBSCR",
        "STORE_SUBSCR", "DELETE_SUBSCR", "BINARY_OP", "IS_OP", "COMPARE_OP", "CONTAINS_OP",
        "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "GET_ITER", "GET_YIELD_FROM_ITER",
        "UNPACK_SEQUENCE", "UNPACK_EX", "FOR_ITER", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
        "DICT_MERGE", "FORMAT_VALUE", "BUILD_STRING", "CALL_FUNCTION_EX", "YIELD_VALUE",
        "IMPORT_NAME", "IMPORT_FROM", "RAISE_VARARGS")},
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "LIST_APPEND": "CONTAINER_ADD",
    "SET_ADD": "CONTAINER_ADD",
    "MAP_ADD": "CONTAINER_ADD",
    "LOAD_CLASSDEREF": "LOAD_DEREF",
    "UNARY_NOT": "TRUTH",
    # a `match` statement's tests (magpy.monitor.patterns)
    "MATCH_SEQUENCE": "MATCH_TYPE", "MATCH_MAPPING": "MATCH_TYPE", "GET_LEN": "GET_LEN",
    "MATCH_KEYS": "MATCH_KEYS", "MATCH_CLASS": "MATCH_CLASS",
    **{op: "PASS" for op in (
        "NOP", "RESUME", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL", "PUSH_NULL", "POP_TOP",
        "COPY", "SWAP", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "RETURN_VALUE",
        "LOAD_CONST", "LOAD_CLOSURE", "POP_EXCEPT", "PUSH_EXC_INFO", "RERAISE", "CHECK_EXC_MATCH",
        "LOAD_ASSERTION_ERROR", "RETURN_GENERATOR", "SEND", "INTERPRETER_EXIT",
        "POP_BLOCK", "SETUP_FINALLY", "BEFORE_WITH", "WITH_EXCEPT_START",
        "STORE_NAME", "DELETE_NAME", "SETUP_ANNOTATIONS")},
    # A new object on top whose inputs are only referenced (containers, functions) or that
    # reads a class body's namespace.
    **{op: "NEW" for op in (
        "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_SLICE",
        "LIST_TO_TUPLE", "LOAD_NAME", "MAKE_FUNCTION", "LOAD_BUILD_CLASS")},
}

# Python's own compiler spells these the same everywhere; the handler scan below needs them.
_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_FAST", "LOAD_FAST_CHECK",
                         "LOAD_FAST_LOAD_FAST"})
_ATTR_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


class CodeTable:
    """Values kept per code object, found by the object's identity: a code object hashes its
    name, bytecode and constants on every dict lookup (half a microsecond for a long function),
    and the monitor asks per event. Each entry holds its code object, so an id stays that code's."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict = {}

    def find(self, code: types.CodeType, default: Any = None) -> Any:
        """The value kept for ``code``, or ``default``."""
        hit = self._by_id.get(id(code))
        return hit[1] if hit is not None and hit[0] is code else default

    def keep(self, code: types.CodeType, value: Any) -> Any:
        """Keep ``value`` for ``code``; returns it."""
        self._by_id[id(code)] = (code, value)
        return value


class Instr:
    """One instruction as the monitor sees it: the event it is, its normalised argument, its line.

    ``opname`` is the event (the monitor runs ``Monitor.op_<opname>``); ``real`` is the CPython
    opcode name, which break reasons quote. ``method`` marks loads that leave a method and
    ``self`` (or NULL) beside the value; the decoder of the running version knows where. On a
    CALL, ``method`` marks a callable that sits where a method would (3.10's ``with`` exit call).
    ``to_bool`` marks a comparison whose result the instruction itself turns into a bool
    (3.13's ``COMPARE_OP`` in a condition): a truth test of the result.
    """

    __slots__ = ("opname", "real", "offset", "arg", "argval", "argrepr", "line", "method", "to_bool",
                 "handler", "events")

    def __init__(self, opname: str, real: str, offset: int, arg: int | None, argval: Any,
                 argrepr: str, line: int | None, method: bool = False) -> None:
        self.opname, self.real, self.offset = opname, real, offset
        self.arg, self.argval, self.argrepr = arg, argval, argrepr
        self.line, self.method = line, method
        self.to_bool = False
        self.handler = "op_" + opname
        self.events = None   # which of the monitor's per-instruction checks apply (it works them out once)

    def __repr__(self) -> str:
        real = "" if self.real == self.opname else f" [{self.real}]"
        return f"<{self.offset} {self.opname}{real} {self.argrepr}>"


_TENSOR_ERRORS = (RuntimeError, IndexError, ValueError)
_MISSING = object()


#: the event of an opcode MagPy has no rule for (its handler breaks with the opcode's name)
UNSUPPORTED = "UNSUPPORTED"


class Decoder:
    """The bytecode of one CPython version, as events and stack layouts.

    A version module subclasses this (the newer ones subclass the one before) and fills in:

    ``EVENTS``
        opcode name -> event, for what differs from :data:`SHARED_EVENTS`;
    :meth:`normalise`
        rewrite an instruction's argument into the shared encoding;
    :meth:`call_operands`, :meth:`call_ex_operands`, :meth:`pushed`, :meth:`method_result`
        where the callable, the arguments and a load's result sit on the value stack;
    :meth:`try_blocks`
        the ``try`` ranges and the first instruction of their handlers.
    """

    version: tuple[int, int] = (0, 0)
    EVENTS: dict[str, str] = {}
    #: The instruction after an ``EXTENDED_ARG`` gets no event of its own (3.10/3.11 ``settrace``
    #: dispatches straight into it): its rule runs at the ``EXTENDED_ARG``'s event, with the same
    #: stack. Without this a long jump's truth test, or a load with a large argument, went unseen.
    HIDDEN_AFTER_EXTENDED_ARG: bool = False
    MATCH_OPS: frozenset = frozenset({"CHECK_EXC_MATCH"})        # tests the exception's type
    HANDLER_END_OPS: frozenset = frozenset({"RERAISE", "WITH_EXCEPT_START", "RETURN_VALUE", "RETURN_CONST"})

    def __init__(self) -> None:
        self._events = dict(SHARED_EVENTS)
        for klass in reversed(type(self).__mro__):   # a version's table extends the one before
            self._events.update(klass.__dict__.get("EVENTS", {}))
        self._instr_cache = CodeTable()
        self._catching_cache = CodeTable()
        self._with_cache = CodeTable()

    # -- decoding ---------------------------------------------------------------------------
    def event(self, opname: str) -> str:
        """The event an opcode is on this version (``UNSUPPORTED`` when MagPy has no rule)."""
        return self._events.get(opname, UNSUPPORTED)

    @property
    def events(self) -> dict[str, str]:
        """The event of each opcode name that has a rule (the table :meth:`event` reads, itself)."""
        return self._events

    def instructions(self, code: types.CodeType) -> dict[int, Instr]:
        """The instructions of ``code`` by byte offset, as events (cached per code object)."""
        table = self._instr_cache.find(code)
        if table is None:
            table = self.decode(code)
            self.finish(table)
            if self.HIDDEN_AFTER_EXTENDED_ARG and any(ins.real == "EXTENDED_ARG" for ins in table.values()):
                self._fold_extended_args(table)
            self._instr_cache.keep(code, table)
        return table

    def decode(self, code: types.CodeType) -> dict[int, Instr]:
        """The instructions of ``code`` by byte offset as events, as ``dis`` reads them
        (:meth:`finish` and the ``EXTENDED_ARG`` folding come after)."""
        table = {}
        line = None
        for ins in dis.get_instructions(code):
            line = self.line_of(ins, line)
            table[ins.offset] = self.normalise(ins, Instr(
                self.event(ins.opname), ins.opname, ins.offset, ins.arg, ins.argval, ins.argrepr, line))
        return table

    @staticmethod
    def _fold_extended_args(table: dict[int, Instr]) -> None:
        """Each ``EXTENDED_ARG`` (and a chain of them) stands for the instruction it prefixes."""
        offsets = sorted(table)
        for i in range(len(offsets) - 1, -1, -1):
            ins = table[offsets[i]]
            if ins.real == "EXTENDED_ARG" and i + 1 < len(offsets):
                table[offsets[i]] = table[offsets[i + 1]]   # already folded when it is one too

    def finish(self, table: dict[int, Instr]) -> None:
        """Annotate instructions by their neighbours, once per code object; the default does nothing."""

    def line_of(self, ins: dis.Instruction, previous: int | None) -> int | None:
        """The source line of ``ins`` (3.11+: its position; the 3.10 decoder carries lines forward)."""
        pos = ins.positions
        return pos.lineno if pos is not None and pos.lineno is not None else previous

    def normalise(self, ins: dis.Instruction, out: Instr) -> Instr:
        """Rewrite ``out`` (made from ``ins``) into the shared encoding; the default keeps it."""
        return out

    # -- stack layouts (overridden per version) ---------------------------------------------
    def call_operands(self, ins: Instr, stack: list, kw_names: tuple) -> tuple[Any, list, tuple]:
        """``(callable, arguments, keyword names)`` of a CALL event; the keyword arguments are the
        last ``len(keyword names)`` arguments. ``kw_names`` is what a preceding ``KW_NAMES`` set.

        A bound method called as a plain callable comes as its function with ``self`` first
        (:meth:`unbind`), as 3.11's ``PRECALL`` hands it to ``CALL``: the call rules see one form."""
        raise NotImplementedError

    @staticmethod
    def unbind(fn: Any, args: list) -> tuple[Any, list]:
        """``(function, [self, *args])`` for a bound method object, else ``(fn, args)``."""
        if type(fn) is types.MethodType:
            return fn.__func__, [fn.__self__, *args]
        return fn, args

    def call_ex_operands(self, ins: Instr, stack: list) -> tuple[Any, Any, Any]:
        """``(callable, positional tuple, keyword dict or {})`` of ``CALL_FUNCTION_EX``."""
        raise NotImplementedError

    def pushed(self, ins: Instr, stack: list) -> Any:
        """The value a ``LOAD_GLOBAL`` left, read at the next instruction (a NULL may sit beside it)."""
        return stack[-1]

    def method_result(self, stack: list) -> tuple[Any, bool]:
        """After a method load (``LOAD_ATTR`` with ``method``, ``LOAD_SUPER_ATTR``): ``(value,
        unbound)``; ``unbound`` when the value is the class's function with ``self`` beside it."""
        raise NotImplementedError

    # -- exception handlers -------------------------------------------------------------------
    def try_blocks(self, code: types.CodeType) -> list[tuple[int, int, int]]:
        """``(start, end, first)``: instructions in [start, end) are protected by a handler whose
        first instruction after the version's entry bookkeeping is at ``first``."""
        raise NotImplementedError

    def with_ranges(self, code: types.CodeType) -> tuple:
        """``(start, end, entered)`` for each range of ``code`` protected by a ``with`` block's
        handler (the one that calls ``__exit__`` with the exception), innermost first;
        ``entered`` is the offset of the instruction that entered that ``with``
        (BEFORE_WITH, SETUP_WITH on 3.10), where the monitor saw its context manager."""
        hit = self._with_cache.find(code)
        if hit is not None:
            return hit
        instrs = self.instructions(code)
        offsets = sorted(instrs)
        entries = [o for o in offsets if instrs[o].real in ("BEFORE_WITH", "SETUP_WITH")]
        first_start: dict[int, int] = {}
        blocks = []
        for start, end, first in self.try_blocks(code):
            ins = instrs.get(first)
            if ins is None or ins.real != "WITH_EXCEPT_START":
                continue
            handler = first
            first_start[handler] = min(first_start.get(handler, start), start)
            blocks.append((start, end, handler))
        ranges = []
        for start, end, handler in blocks:
            before = [o for o in entries if o < first_start[handler]]
            if before:
                ranges.append((start, end, before[-1]))
        ranges.sort(key=lambda r: r[1] - r[0])   # (innermost first)
        return self._with_cache.keep(code, tuple(ranges))

    def catching_ranges(self, code: types.CodeType) -> tuple:
        """``(start, end, caught)`` for each ``try`` range of ``code`` whose handler is an
        ``except`` (not ``with``/``finally``); ``caught`` lists the dotted names the handler
        tests, or None for a bare ``except:``.

        A handler that tests the exception (:attr:`MATCH_OPS`) or ends it (``POP_EXCEPT``)
        before re-raising catches it.
        """
        hit = self._catching_cache.find(code)
        if hit is not None:
            return hit
        instrs = self.instructions(code)
        offsets = sorted(instrs)
        ranges = []
        for start, end, first in self.try_blocks(code):
            if first not in instrs:
                continue
            names: list[list[str]] = []
            for off in offsets[offsets.index(first):]:
                ins = instrs[off]
                op = ins.real
                if op in _NAME_LOADS:
                    for name in (ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)):
                        names.append([name])
                elif op in _ATTR_LOADS and names:
                    names[-1].append(ins.argval)
                elif op in self.MATCH_OPS:
                    ranges.append((start, end, tuple(tuple(n) for n in names)))
                    break
                elif op == "POP_EXCEPT":
                    ranges.append((start, end, None))
                    break
                elif op in self.HANDLER_END_OPS:
                    break
        return self._catching_cache.keep(code, tuple(ranges))


def with_block_manager_at(ranges: tuple, at: int) -> int | None:
    """The offset of the ``with`` (its BEFORE_WITH/SETUP_WITH) whose block covers instruction
    ``at``, innermost first, from :meth:`Decoder.with_ranges`; None outside every ``with``."""
    for start, end, entered in ranges:
        if start <= at < end:
            return entered
    return None


def catches_tensor_errors(caught: tuple | None, frame: Any, errors: tuple | None = None) -> bool:
    """Could an ``except`` testing ``caught`` (dotted names seen from ``frame``) catch an
    error a tensor operation raises on some values (RuntimeError, IndexError, ValueError), or
    one of ``errors`` (arithmetic on numbers: ZeroDivisionError, a math domain error...)?"""
    from ..capture import frame_locals  # (the capture package reads bytecode: imported here)

    errors = errors or _TENSOR_ERRORS
    if caught is None:
        return True
    for chain in caught:
        obj = frame_locals(frame).get(chain[0], _MISSING) if chain[0] in frame.f_code.co_varnames else _MISSING
        if obj is _MISSING:
            obj = frame.f_globals.get(chain[0], _MISSING)
        if obj is _MISSING:
            obj = getattr(builtins, chain[0], _MISSING)
        for attr in chain[1:]:
            obj = getattr(obj, attr, _MISSING)
        classes = obj if isinstance(obj, tuple) else (obj,)
        for cls in classes:
            if not isinstance(cls, type):
                return True   # not understood: assume it catches
            if issubclass(cls, errors) or any(issubclass(e, cls) for e in errors):
                return True
    return False
