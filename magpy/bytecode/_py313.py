"""CPython 3.13 bytecode: what changed from 3.12 (:mod:`._py312`).

* The callable comes first: ``CALL n`` sees ``[callable, self or NULL, args...]``;
  ``KW_NAMES`` is gone, ``CALL_KW n`` has the keyword-name tuple on top of the arguments.
* Loads that make room for ``self`` push the NULL *above* the value: ``LOAD_GLOBAL``
  (``arg & 1``) leaves ``[value, NULL]``; a method load (``LOAD_ATTR``/``LOAD_SUPER_ATTR`` with
  ``arg & 1``) leaves ``[method, self]`` or ``[value, NULL]``.
* ``CALL_FUNCTION_EX``: ``[callable, NULL, args, kwargs?]``.
* ``TO_BOOL`` before each conditional jump (the truth test); ``COMPARE_OP``'s ``arg & 16``
  turns the result into a bool itself (no ``TO_BOOL`` follows; ``dis`` still gives the
  operator as ``argval``).
* ``LOAD_CLOSURE`` is ``LOAD_FAST`` of the cell variable: it loads the cell, not its content.
* Superinstructions ``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``,
  ``STORE_FAST_STORE_FAST`` (``argval`` is the pair of names).
* f-strings: ``FORMAT_SIMPLE`` / ``FORMAT_WITH_SPEC`` / ``CONVERT_VALUE`` replace
  ``FORMAT_VALUE`` (normalised to its ``arg & 4`` = "a spec sits above the value" and
  ``arg & 3`` = the conversion).
* ``SET_FUNCTION_ATTRIBUTE`` finishes ``MAKE_FUNCTION``; ``EXIT_INIT_CHECK`` after ``__init__``.
"""
from __future__ import annotations

from typing import Any

from ..capture import NULL
from ._decoder import Instr
from ._py312 import Py312


class Py313(Py312):
    """The 3.13 decoder."""

    version = (3, 13)
    EVENTS = {
        "CALL_KW": "CALL",
        "TO_BOOL": "TRUTH",
        "LOAD_FAST_LOAD_FAST": "LOAD_FAST_LOAD_FAST",
        "STORE_FAST_LOAD_FAST": "STORE_FAST_LOAD_FAST",
        "STORE_FAST_STORE_FAST": "STORE_FAST_STORE_FAST",
        "FORMAT_SIMPLE": "FORMAT_VALUE",
        "FORMAT_WITH_SPEC": "FORMAT_VALUE",
        "CONVERT_VALUE": "FORMAT_VALUE",
        "SET_FUNCTION_ATTRIBUTE": "PASS",
        "EXIT_INIT_CHECK": "PASS",
    }

    def normalise(self, ins, out: Instr) -> Instr:
        out = super().normalise(ins, out)
        if ins.opname == "FORMAT_WITH_SPEC":
            out.arg = 4
        elif ins.opname == "FORMAT_SIMPLE":
            out.arg = 0
        elif ins.opname == "CONVERT_VALUE":
            out.arg = ins.arg & 3   # (the conversion: 1 str, 2 repr, 3 ascii, as FORMAT_VALUE's low bits)
        elif ins.opname == "COMPARE_OP":
            out.to_bool = bool(ins.arg & 16)
        return out

    def call_operands(self, ins: Instr, stack: list, kw_names: tuple) -> tuple[Any, list, tuple]:
        argc = ins.arg
        n = len(stack)
        if ins.real == "CALL_KW":
            kw_names = stack[-1]
            n -= 1
        fn, self_or_null = stack[n - argc - 2], stack[n - argc - 1]
        if self_or_null is NULL:
            fn, args = self.unbind(fn, stack[n - argc:n])
            return fn, args, kw_names
        return fn, stack[n - argc - 1:n], kw_names

    def call_ex_operands(self, ins: Instr, stack: list) -> tuple[Any, Any, Any]:
        if ins.arg & 1:
            return stack[-4], stack[-2], stack[-1]
        return stack[-3], stack[-1], {}

    def pushed(self, ins: Instr, stack: list) -> Any:
        if ins.arg & 1:
            return stack[-2]   # LOAD_GLOBAL: value, then NULL
        return stack[-1]

    def method_result(self, stack: list) -> tuple[Any, bool]:
        if stack[-1] is NULL:
            return stack[-2], False
        return stack[-2], True


DECODER = Py313()
