"""CPython 3.12 bytecode: what changed from 3.11 (:mod:`._py311`).

* No ``PRECALL``: ``CALL`` itself unpacks a bound method, so the monitor sees
  ``[NULL, bound method, args...]`` (unpacked here, as 3.11's ``PRECALL`` did) as well as
  ``[method, self, args...]`` (a ``with`` exit: ``[exit, None, None, None]``, called as is).
* ``LOAD_METHOD`` is gone: ``LOAD_ATTR`` with ``arg & 1`` is the method load (``dis`` already
  gives the name as ``argval``); ``LOAD_GLOBAL``'s ``arg & 1`` still pushes NULL below.
* ``LOAD_SUPER_ATTR`` (``super().name`` without a ``super`` object): ``[super, class, self]``
  -> the value (``arg & 1``: a method load, left as ``[NULL, bound]`` or ``[method, self]``).
* ``BINARY_SLICE``/``STORE_SLICE`` (``c[a:b]`` without a slice object); ``RETURN_CONST``;
  ``END_FOR``; ``POP_JUMP_IF_*`` replace the forward/backward forms; ``JUMP_IF_*_OR_POP``
  are gone.
* ``CALL_INTRINSIC_1``/``_2`` replace a few opcodes (``+x`` is ``INTRINSIC_UNARY_POSITIVE``,
  ``LIST_TO_TUPLE`` is ``INTRINSIC_LIST_TO_TUPLE``); told apart by ``argrepr``.
* Comprehensions are inlined (PEP 709): ``LOAD_FAST_AND_CLEAR`` saves a local, a ``STORE_FAST``
  puts it back afterwards.
* ``COMPARE_OP``'s argument is ``op << 4``; ``dis`` gives the operator as ``argval``.
"""
from __future__ import annotations

from typing import Any

from ..capture import NULL
from ._decoder import Decoder, Instr
from ._py311 import Py311

# CALL_INTRINSIC_1 / _2 by argrepr: the ones a forward can contain.
INTRINSICS = {
    "INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
    "INTRINSIC_LIST_TO_TUPLE": "NEW",
    "INTRINSIC_STOPITERATION_ERROR": "PASS",
    "INTRINSIC_ASYNC_GEN_WRAP": "PASS",
    "INTRINSIC_PREP_RERAISE_STAR": "UNSUPPORTED",
}


class Py312(Py311):
    """The 3.12 decoder; 3.13's starts from it."""

    version = (3, 12)
    HIDDEN_AFTER_EXTENDED_ARG = False   # sys.monitoring reports it like any other
    decode = Decoder.decode   # (3.11's own reading of co_code is for 3.11's dis)
    EVENTS = {
        "KW_NAMES": "KW_NAMES",
        "CALL": "CALL",
        "LOAD_SUPER_ATTR": "LOAD_SUPER_ATTR",
        "BINARY_SLICE": "BINARY_SLICE",
        "STORE_SLICE": "STORE_SLICE",
        "POP_JUMP_IF_TRUE": "TRUTH",
        "POP_JUMP_IF_FALSE": "TRUTH",
        "LOAD_FROM_DICT_OR_DEREF": "NEW",       # class bodies, like LOAD_NAME
        "LOAD_FROM_DICT_OR_GLOBALS": "NEW",
        "LOAD_LOCALS": "NEW",
        "STORE_FAST_MAYBE_NULL": "STORE_FAST",
        **{op: "PASS" for op in (
            "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "RETURN_CONST", "END_FOR", "END_SEND",
            "CLEANUP_THROW", "LOAD_FAST_AND_CLEAR", "JUMP", "JUMP_NO_INTERRUPT", "SETUP_CLEANUP",
            "SETUP_WITH")},
    }

    def normalise(self, ins, out: Instr) -> Instr:
        if ins.opname in ("LOAD_ATTR", "LOAD_SUPER_ATTR"):
            out.method = bool(ins.arg & 1)
        elif ins.opname in ("CALL_INTRINSIC_1", "CALL_INTRINSIC_2"):
            out.opname = INTRINSICS.get(ins.argrepr, "UNSUPPORTED")
            out.handler = "op_" + out.opname
        return out

    def call_operands(self, ins: Instr, stack: list, kw_names: tuple) -> tuple[Any, list, tuple]:
        argc = ins.arg
        n = len(stack)
        if stack[n - argc - 2] is NULL:
            fn, args = self.unbind(stack[n - argc - 1], stack[n - argc:])
            return fn, args, kw_names
        return stack[n - argc - 2], stack[n - argc - 1:], kw_names


DECODER = Py312()
