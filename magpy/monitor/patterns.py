"""``match`` statements (PEP 634): the instructions a pattern compiles to, as what they read.

A ``match`` compiles to instructions that test the subject in C: ``MATCH_SEQUENCE`` and
``MATCH_MAPPING`` (its type's flags), ``GET_LEN`` (``len(subject)``), ``MATCH_KEYS`` (``get`` of
each key of a mapping pattern) and ``MATCH_CLASS`` (``isinstance``, then attributes). Each is
decided here as the equivalent Python would be: a type test reads only the subject's type (which
every object from outside has a guard on) and, for a class of the program, the ABC registries a
``register`` may change; ``len`` is the ``len`` call; a mapping pattern reads the dict whole. A
class pattern that extracts attributes by name (``case Point(x=0)``) reads them in C, past the
rules of attribute reads: not supported (the call runs eagerly).
"""
from __future__ import annotations

import abc

from ..breaks import BreakCompile
from ..bytecode import DECODER

#: Classes whose single positional sub-pattern matches the subject itself (``case int(n)``).
_MATCH_SELF = frozenset({bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple})
_HEAPTYPE = 1 << 9   # (Py_TPFLAGS_HEAPTYPE: a class statement's, which ABC.register can mark)
#: How many values a pattern test pushes: 3.10 adds a bool beside the tuple (or None).
_PUSHED = 2 if DECODER.version < (3, 11) else 1


class PatternRules:
    """The update rules of a ``match`` statement's instructions: a rule object of the run, whose
    ``op_<EVENT>`` the Monitor's dispatch calls. It uses the run's reads (``read_abc_registries``,
    ``from_outside``, ``full_read``), its call rule (``decide_call``), its numbers read from tensors
    (``holds_scalar``, ``scalar_escape``) and its pending updates (``pend``, ``post_new``), and
    keeps nothing of its own."""

    #: what its rules call of the run (bound by :func:`~magpy.monitor.rulebook.make_rules`)
    USES = ("read_abc_registries", "from_outside", "full_read", "decide_call", "holds_scalar", "scalar_escape",
            "pend", "post_new")

    def __init__(self, run) -> None:
        self.run = run

    def op_MATCH_TYPE(self, fs, ins, stack):
        """``MATCH_SEQUENCE``/``MATCH_MAPPING``: the subject's type flags, which
        ``collections.abc.Sequence.register`` sets on a class of the program."""
        if type(stack[-1]).__flags__ & _HEAPTYPE:
            self.read_abc_registries(abc, abc.get_cache_token())

    def op_GET_LEN(self, fs, ins, stack):
        self.decide_call(fs, len, [stack[-1]], {})   # (the result is pushed above the subject)

    def op_MATCH_KEYS(self, fs, ins, stack):
        """``case {"kind": k}``: C calls the subject's ``get`` for each key; a dict (or a subclass
        keeping dict's ``get``) from outside is read whole (its keys and values are guarded)."""
        subject, keys = stack[-2], stack[-1]
        if not isinstance(subject, dict) or type(subject).get is not dict.get:
            raise BreakCompile(f"a mapping pattern on a `{type(subject).__name__}` (its `get` runs in C)")
        if self.holds_scalar(keys) or self.holds_scalar(list(subject)):
            self.scalar_escape("looks up a key of a mapping pattern", keys)
        if self.from_outside(subject):
            self.full_read(subject)
        self.pend(fs, self.post_new, _PUSHED)

    def op_COPY_DICT_WITHOUT_KEYS(self, fs, ins, stack):
        """3.10's ``**rest`` of a mapping pattern: a new dict of the subject's other items."""
        if self.from_outside(stack[-2]):
            self.full_read(stack[-2])
        self.pend(fs, self.post_new, 1)

    def op_MATCH_CLASS(self, fs, ins, stack):
        """``case C()``: ``isinstance(subject, C)`` (C guarded where it was loaded; an ABC's
        answer follows its registries); ``case int(n)`` of a builtin class: the subject itself.
        Attributes by name are read only from a subject that is an instance."""
        subject, cls, names = stack[-3], stack[-2], stack[-1]
        if not isinstance(cls, type):
            return   # (CPython raises TypeError: the run follows the exception)
        if isinstance(cls, abc.ABCMeta):
            self.read_abc_registries(abc, abc.get_cache_token())
        elif type(cls).__instancecheck__ is not type.__instancecheck__:
            raise BreakCompile(f"a class pattern on `{cls.__qualname__}`, whose metaclass decides "
                               "`isinstance` in Python")
        if (names or not (ins.arg == 0 or (ins.arg == 1 and cls in _MATCH_SELF))) and isinstance(subject, cls):
            raise BreakCompile("a class pattern extracts attributes (`case C(x=...)`), which C reads "
                               "past MagPy's attribute rules")
        self.pend(fs, self.post_new, _PUSHED)
