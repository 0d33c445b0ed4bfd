"""CPython bytecode as the monitor reads it: the one place for version-specific details.

The monitor (:mod:`magpy.monitor`) has one update rule per *event* (``Monitor.op_<EVENT>``:
a call, an attribute load, a binary operator, a truth test...), written once. What an event
is called on each CPython, how its argument is encoded and where its operands sit on the
value stack is the business of one decoder per version:

=========  ==========================================================================
``_py310`` ``CALL_FUNCTION``/``_KW``/``CALL_METHOD``, ``BINARY_ADD``..., ``SETUP_FINALLY`` blocks
``_py311`` ``PRECALL``/``CALL`` + ``KW_NAMES``, ``LOAD_METHOD``, the exception table
``_py312`` ``LOAD_ATTR`` method bit, ``LOAD_SUPER_ATTR``, slices, intrinsics, inlined comprehensions
``_py313`` callable-first ``CALL``/``CALL_KW``, NULL above loads, ``TO_BOOL``, superinstructions
=========  ==========================================================================

An opcode a decoder does not list is the ``UNSUPPORTED`` event: the monitor breaks with the
opcode's name and the call runs eagerly. How the capture layer reaches the value stack on
each version is :mod:`magpy.capture`'s business.

Example::

    >>> from magpy import bytecode
    >>> def f(x):
    ...     return x.relu() + 1
    >>> [i.opname for i in bytecode.instructions(f.__code__).values() if i.opname != "PASS"]
    ['LOAD_FAST', 'LOAD_ATTR', 'CALL', 'BINARY_OP']
"""
from __future__ import annotations

import importlib
import sys

from ._decoder import CodeTable, Decoder, Instr, catches_tensor_errors

SUPPORTED_BYTECODE = ((3, 10), (3, 11), (3, 12), (3, 13))

__all__ = ["SUPPORTED_BYTECODE", "DECODER", "CodeTable", "Decoder", "Instr", "catches_tensor_errors", "catching_ranges",
           "instructions"]

DECODER: Decoder | None = None
if sys.version_info[:2] in SUPPORTED_BYTECODE:
    DECODER = importlib.import_module(f"._py{sys.version_info[0]}{sys.version_info[1]}", __name__).DECODER


def instructions(code) -> dict[int, Instr]:
    """The instructions of ``code`` by byte offset, decoded into events (cached per code object)."""
    return DECODER.instructions(code)


def with_ranges(code) -> tuple:
    """``(start, end, entered)`` per range of ``code`` inside a ``with`` block, innermost first;
    see :meth:`Decoder.with_ranges`."""
    return DECODER.with_ranges(code)


def catching_ranges(code) -> tuple:
    """``(start, end, caught)`` per ``try`` range of ``code`` whose handler is an ``except``;
    see :meth:`Decoder.catching_ranges`."""
    return DECODER.catching_ranges(code)
