"""Control flow of one code object: where a conditional jump's two sides meet, which locals are live.

A branch on a tensor value (``if action.sum() == 0: x = residual; continue``) becomes a
conditional node of the graph (:mod:`magpy.dynamic.branches`) only if the code after the two sides is
the same code, run with the same live locals. That is a static property of the function:

* the *merge point* of a conditional jump J is J's immediate post-dominator in the instruction
  control-flow graph (every path from J to the function's exit passes through it, and it is
  the first such instruction): the two *arms* are what runs from J until the frame reaches it;
* a local is *live* before an instruction when some path from there reads it before writing it;
  only live locals can carry an arm's results to the code after the merge point.

Jump targets come from :mod:`dis` (``argval`` is the target offset on 3.10-3.13); exception
handlers from the 3.11+ exception table (edges for liveness; a branch whose arm an exception
handler covers is not merged, see :mod:`magpy.dynamic.branches`). 3.10 code with ``SETUP_*`` blocks is
not analysed. What differs per version is listed here and nowhere else.

    >>> def f(t, x, y):
    ...     if t:
    ...         x = y
    ...     return x
    >>> shape = flow_of(f.__code__)
    >>> j = next(o for o, name in shape.opnames.items() if name.startswith("POP_JUMP"))
    >>> m = shape.merge_point(j)
    >>> sorted(shape.live_before(m))
    ['x']
"""
from __future__ import annotations

import dis
import sys
import types
from functools import lru_cache

from . import catching_ranges, with_ranges

# Jumps that always jump (on every version that has them).
_ALWAYS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT",
                     "JUMP", "JUMP_NO_INTERRUPT"})
# Instructions after which the frame is left.
_EXITS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
# Conditional jumps that pop their condition (3.10, 3.12, 3.13: POP_JUMP_IF_*; 3.11 adds the
# direction: POP_JUMP_FORWARD_IF_*, POP_JUMP_BACKWARD_IF_*).
_POP_JUMP_PREFIXES = ("POP_JUMP_IF_", "POP_JUMP_FORWARD_IF_", "POP_JUMP_BACKWARD_IF_")
# What may stand between the instruction that reads a condition's truth and its jump
# (3.13: ``COMPARE_OP`` with its bool conversion, then ``TO_BOOL``-free ``POP_JUMP_IF_*``).
_BEFORE_JUMP = frozenset({"TO_BOOL", "COMPARE_OP", "CONTAINS_OP", "IS_OP"})
# 3.10's block set-ups: their handlers are not in a table; such code is not analysed.
_BLOCKS_310 = frozenset({"SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH"})
# Loads and stores of fast locals (3.13's pairs carry two names in ``argval``).
_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST"})
_STORES = frozenset({"STORE_FAST", "DELETE_FAST", "STORE_FAST_STORE_FAST"})
# Instructions that may not report an event of their own (so the frame cannot be seen reaching them).
_SILENT = frozenset({"NOP", "CACHE", "EXTENDED_ARG", "RESUME", "END_FOR", "NOT_TAKEN", "END_SEND"})

#: The merge point of a jump whose sides meet only at the function's exit.
EXIT = -1
# Instructions that return normally.
RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST"})

try:
    _JUMPS = frozenset(dis.hasjump)   # type: ignore[attr-defined]   (3.13)
except AttributeError:
    _JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


class FlowShape:
    """The instruction control-flow graph of one code object, with post-dominators and liveness.

    ``analysable`` is False (and every query answers None or all locals) for code this module
    does not model: generators and coroutines, 3.10 ``SETUP_*`` blocks."""

    def __init__(self, code: types.CodeType) -> None:
        self.code = code
        ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        self.offsets = [i.offset for i in ins]
        self.opnames = {i.offset: i.opname for i in ins}
        self._index = {i.offset: k for k, i in enumerate(ins)}
        self.names = tuple(code.co_varnames) + tuple(code.co_cellvars) + tuple(code.co_freevars)
        self._has_blocks = any(i.opname in _BLOCKS_310 for i in ins)
        self.analysable = not (code.co_flags & (0x20 | 0x80 | 0x100 | 0x200)) and not self._has_blocks
        self.handlers: list[tuple[int, int, int]] = []    # (start, end, target) of exception-table ranges
        if self.analysable and sys.version_info >= (3, 11):
            from ..capture._stackdepth import exception_table

            self.handlers = [(e.start, e.end, e.target) for e in exception_table(code)]
        n = len(ins)
        self.exit = n   # a virtual node after every exit
        succ: list[list[int]] = []
        for k, i in enumerate(ins):
            out: list[int] = []
            if i.opname in _EXITS:
                out.append(n)
            elif i.opcode in _JUMPS and isinstance(i.argval, int) and i.argval in self._index:
                out.append(self._index[i.argval])
                if i.opname not in _ALWAYS:
                    out.append(k + 1 if k + 1 < n else n)
            else:
                out.append(k + 1 if k + 1 < n else n)
            succ.append(out)
        self.succ = succ
        self._ins = ins
        self._pdom: list[int] | None = None
        self._live: list[int] | None = None
        self._live_strict: list[int] | None = None
        self._depths: dict[int, int] | None = None
        self._saved: dict[int, frozenset] | None = None

    # -- post-dominators ----------------------------------------------------------------------------
    def _postdominators(self) -> list[int]:
        if self._pdom is None:
            n = len(self._ins)
            full = (1 << (n + 1)) - 1
            pdom = [full] * n + [1 << n]
            changed = True
            while changed:
                changed = False
                for k in range(n - 1, -1, -1):
                    acc = full
                    for s in self.succ[k]:
                        acc &= pdom[s]
                    new = acc | (1 << k)
                    if new != pdom[k]:
                        pdom[k], changed = new, True
            self._pdom = pdom
        return self._pdom

    def merge_point(self, jump: int) -> int | None:
        """The offset where the two sides of the conditional jump at ``jump`` meet (its immediate
        post-dominator); :data:`EXIT` when only the function's exit post-dominates it (every path
        returns or raises); None for an instruction that reports no event, or code this module
        does not model."""
        k = self._index.get(jump)
        if not self.analysable or k is None:
            return None
        pdom = self._postdominators()
        strict = pdom[k] & ~(1 << k)
        best, best_size = None, -1
        for j in range(len(self._ins)):
            if strict >> j & 1:
                size = bin(pdom[j]).count("1")
                if size > best_size:
                    best, best_size = j, size
        if best is None:
            # only the exit: both sides return (3.10 and 3.12+ copy a short `return x` into each
            # side of an `if`/`else`); the sides meet in the caller, at the returned value
            return EXIT if strict >> len(self._ins) & 1 else None
        if self._ins[best].opname in _SILENT:
            return None
        return self._ins[best].offset

    def conditional_jump(self, offset: int) -> int | None:
        """The offset of the conditional jump (one that pops its condition) that takes the truth
        read at ``offset``: that instruction itself, or the next when ``offset`` converts the
        condition first (3.13's ``TO_BOOL``, a comparison); None otherwise."""
        k = self._index.get(offset)
        if k is None:
            return None
        for j in (k, k + 1):
            if j < len(self._ins) and self._ins[j].opname.startswith(_POP_JUMP_PREFIXES) \
                    and "NONE" not in self._ins[j].opname:
                return self._ins[j].offset
            if self._ins[k].opname not in _BEFORE_JUMP:
                return None
        return None

    # -- liveness ----------------------------------------------------------------------------------------
    def _liveness(self, clears: bool = True) -> list[int]:
        if not clears:
            if self._live_strict is None:
                self._live_strict = self._compute_liveness(False)
            return self._live_strict
        if self._live is None:
            self._live = self._compute_liveness(True)
        return self._live

    def _compute_liveness(self, clears: bool) -> list[int]:
        ins, n = self._ins, len(self._ins)
        bit = {name: 1 << k for k, name in enumerate(self.names)}
        always = 0
        for name in tuple(self.code.co_cellvars) + tuple(self.code.co_freevars):
            always |= bit[name]   # (read by closures at any time)
        use, kill = [0] * n, [0] * n
        for k, i in enumerate(ins):
            if i.opname == "LOAD_FAST_AND_CLEAR" and not clears:
                continue   # (3.12+ comprehensions save a local, bound or not, and put it back)
            if i.opname in _LOADS or i.opname == "STORE_FAST_LOAD_FAST":
                names = i.argval if isinstance(i.argval, tuple) else (i.argval,)
                if i.opname == "STORE_FAST_LOAD_FAST":
                    kill[k] |= bit.get(names[0], 0)
                    names = names[1:]
                for name in names:
                    use[k] |= bit.get(name, 0)
            elif i.opname in _STORES:
                names = i.argval if isinstance(i.argval, tuple) else (i.argval,)
                for name in names:
                    kill[k] |= bit.get(name, 0)
        succ = [list(s) for s in self.succ]
        for start, end, target in self.handlers:
            t = self._index.get(target)
            if t is None:
                continue
            for k, i in enumerate(ins):
                if start <= i.offset < end:
                    succ[k].append(t)
        live = [0] * (n + 1)
        changed = True
        while changed:
            changed = False
            for k in range(n - 1, -1, -1):
                out = 0
                for s in succ[k]:
                    out |= live[s]
                new = use[k] | (out & ~kill[k]) | always
                if new != live[k]:
                    live[k], changed = new, True
        return live

    def live_before(self, offset: int, clears: bool = True) -> frozenset:
        """Names of the locals (fast locals, cells, free variables) live before ``offset``: read
        on some path from there before being written. Every local when unknown. ``clears=False``:
        a 3.12+ comprehension's ``LOAD_FAST_AND_CLEAR`` (which saves the local, bound or not,
        and restores it afterwards) does not count as a read."""
        k = self._index.get(offset)
        if not self.analysable or k is None:
            return frozenset(self.names)
        bits = self._liveness(clears)[k]
        return frozenset(name for j, name in enumerate(self.names) if bits >> j & 1)

    def live_after_jump(self, jump: int) -> frozenset:
        """Locals live on either side of the jump at ``jump``."""
        k = self._index.get(jump)
        if not self.analysable or k is None:
            return frozenset(self.names)
        live = self._liveness()
        bits = 0
        for s in self.succ[k]:
            bits |= live[s]
        return frozenset(name for j, name in enumerate(self.names) if bits >> j & 1)

    def depth_before(self, offset: int) -> int | None:
        """The value-stack depth before ``offset`` from :func:`dis.stack_effect` along the
        control flow (for 3.10 code without blocks; 3.11+ has ``capture._stackdepth``), or None."""
        if not self.analysable or self.handlers:
            return None
        if self._depths is None:
            depths: dict[int, int] = {}
            todo = [(0, 0)]
            while todo:
                k, d = todo.pop()
                if k >= len(self._ins) or k in depths:
                    continue
                depths[k] = d
                i = self._ins[k]
                if i.opname in _EXITS:
                    continue
                arg = i.arg if i.opcode >= dis.HAVE_ARGUMENT else None
                try:
                    if i.opcode in _JUMPS and isinstance(i.argval, int) and i.argval in self._index:
                        todo.append((self._index[i.argval], d + dis.stack_effect(i.opcode, arg, jump=True)))
                        if i.opname in _ALWAYS:
                            continue
                        todo.append((k + 1, d + dis.stack_effect(i.opcode, arg, jump=False)))
                    else:
                        todo.append((k + 1, d + dis.stack_effect(i.opcode, arg)))
                except ValueError:
                    depths = {}
                    break
            self._depths = depths
        k = self._index.get(offset)
        return None if k is None else self._depths.get(k)

    def next_offset(self, offset: int) -> int | None:
        """The offset of the instruction after the one at ``offset`` (caches skipped), or None."""
        k = self._index.get(offset)
        return None if k is None or k + 1 >= len(self.offsets) else self.offsets[k + 1]

    def covered(self, offset: int) -> bool:
        """Is ``offset`` inside a range an exception handler covers?"""
        return any(start <= offset < end for start, end, _ in self.handlers)

    def maybe_covered(self, offset: int) -> bool:
        """:meth:`covered`, and True for 3.10 code with ``try``/``with`` blocks anywhere (their
        ranges are not analysed)."""
        return self.covered(offset) or (sys.version_info < (3, 11) and self._has_blocks)

    def enters_handler_range(self, offset: int) -> bool:
        """Does the instruction at ``offset`` enter a range an exception handler covers (3.11+:
        the next instruction is covered and this one is not; 3.10: it is a block set-up)?"""
        if sys.version_info < (3, 11):
            return self.opnames.get(offset) in _BLOCKS_310
        after = self.next_offset(offset)
        return after is not None and self.covered(after) and not self.covered(offset)

    def handling(self, offset: int) -> bool:
        """Is the frame handling an exception at ``offset``: in an ``except`` body, a ``finally``
        run for an exception, a ``with``'s exit on one, where ``sys.exc_info()`` gives the
        exception this frame caught (between the ``PUSH_EXC_INFO`` that saved the one before on
        the stack and the ``POP_EXCEPT`` that puts it back)? True for code not analysed."""
        if not self.analysable or sys.version_info < (3, 11):
            return True
        if self._saved is None:
            self._saved = self._saved_exc_slots()
        k = self._index.get(offset)
        return k is None or bool(self._saved.get(k, frozenset()))

    def _saved_exc_slots(self) -> dict[int, frozenset]:
        """Per instruction index, the value-stack positions that hold an exception state saved by
        ``PUSH_EXC_INFO`` (a forward dataflow along jumps and exception edges)."""
        from ..capture._stackdepth import exception_table, stack_depths

        depths = stack_depths(self.code)
        table = exception_table(self.code)
        ins, n = self._ins, len(self._ins)
        state: dict[int, frozenset] = {}
        todo = [(0, frozenset())] + [(self._index[e.target], frozenset()) for e in table if e.target in self._index]
        while todo:
            k, slots = todo.pop()
            old = state.get(k)
            if old is not None and slots <= old:
                continue
            slots = state[k] = slots | (old or frozenset())
            i = ins[k]
            d = depths.get(i.offset)
            if d is None:
                continue
            for e in table:   # (an exception unwinds the stack to the handler's depth)
                if e.start <= i.offset < e.end and e.target in self._index:
                    todo.append((self._index[e.target], frozenset(p for p in slots if p < e.depth)))
            out = set(slots)
            if i.opname == "PUSH_EXC_INFO":
                out.add(d - 1)            # (the state before, under the exception now handled)
            elif i.opname == "POP_EXCEPT":
                out.discard(d - 1)
            elif i.opname == "SWAP":
                a, b = d - 1, d - i.arg
                out = {b if p == a else a if p == b else p for p in out}
            for s in self.succ[k]:
                if s < n and (after := depths.get(ins[s].offset)) is not None:
                    todo.append((s, frozenset(p for p in out if p < after)))
        return state


@lru_cache(maxsize=512)
def _yield_handlers(code: types.CodeType) -> tuple:
    """The (start, end) ranges of ``code``'s own exception handlers (``try``, ``with``): 3.12+'s
    implicit generator-wide entry (its target turns StopIteration into RuntimeError) left out."""
    if sys.version_info < (3, 11):
        # 3.10: handlers are set up by SETUP_* instructions, not a table: any of them counts
        if any(i.opname in _BLOCKS_310 for i in dis.get_instructions(code)):
            return ((0, len(code.co_code)),)
        return ()
    from ..capture._stackdepth import exception_table

    ins = {i.offset: i for i in dis.get_instructions(code)}
    # (left out too: 3.12+'s CLEANUP_THROW of `yield from`, which hands the close to the inner
    # generator, a frame of its own)
    return tuple((e.start, e.end) for e in exception_table(code)
                 if ins[e.target].argrepr != "INTRINSIC_STOPITERATION_ERROR" and ins[e.target].opname != "CLEANUP_THROW")


@lru_cache(maxsize=512)
def _yields(code: types.CodeType) -> dict:
    """Offset of each ``YIELD_VALUE``, by that offset and by the next instruction's (3.13's
    ``f_lasti`` of a frame suspended at a yield is the ``RESUME`` after it)."""
    ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    out = {}
    for k, i in enumerate(ins):
        if i.opname == "YIELD_VALUE":
            out[i.offset] = i.offset
            if k + 1 < len(ins):
                out.setdefault(ins[k + 1].offset, i.offset)
    return out


def suspended_at_yield(code: types.CodeType, lasti: int) -> bool:
    """Was a generator frame left with ``f_lasti`` at one of its yields (suspended, not ended)?"""
    return lasti in _yields(code)


def suspended_in_handler(code: types.CodeType, lasti: int) -> bool:
    """A generator frame left with ``f_lasti`` at a yield inside its own ``try``/``with``: closing it
    unfinished (when it is dropped) runs that handler (``finally``, ``__exit__``)."""
    at = _yields(code).get(lasti)
    return at is not None and any(start <= at < end for start, end in _yield_handlers(code))


#: What a handler may run on a GeneratorExit it does not catch: entering the handler, loading the
#: names of the ``except`` clauses, testing the match, jumping past a clause, and leaving.
_CLAUSE_TESTS = frozenset({"PUSH_EXC_INFO", "CHECK_EXC_MATCH", "BUILD_TUPLE", "COPY", "POP_EXCEPT", "NOP",
                           "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_IF_FALSE", "JUMP_FORWARD", "RERAISE"})
_CLAUSE_JUMPS = frozenset({"POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_IF_FALSE", "JUMP_FORWARD"})


@lru_cache(maxsize=512)
def close_tests_only(code: types.CodeType, lasti: int) -> tuple | None:
    """Closing a generator suspended at ``lasti`` throws GeneratorExit at its yield. When every
    handler it meets is an ``except`` whose clauses name global exception classes (``except
    IndexError: return`` in ``Sequence.__iter__``), the close only tests those clauses and
    leaves: the names (to be read and checked: none may catch GeneratorExit). None when the
    close may run code of the program (``finally``, a ``with``'s ``__exit__``, an ``except``
    of another form), or on 3.10 (block instructions, not a table)."""
    at = _yields(code).get(lasti)
    if at is None or sys.version_info < (3, 11):
        return None
    from ..capture._stackdepth import exception_table

    table = exception_table(code)
    ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    index = {i.offset: k for k, i in enumerate(ins)}
    names: list = []

    def handler_at(offset: int) -> int | None:
        # (the table is flat: one entry per offset; 3.12+'s generator-wide entry, which turns a
        # StopIteration into a RuntimeError, lets a GeneratorExit through: as if none)
        for e in table:
            if e.start <= offset < e.end:
                target = ins[index[e.target]]
                return None if target.argrepr == "INTRINSIC_STOPITERATION_ERROR" else index[e.target]
        return None

    k = handler_at(at)
    for _ in range(200):
        if k is None:
            return tuple(names)   # the exception leaves the frame: the close is over
        i = ins[k]
        if i.opname == "LOAD_GLOBAL":
            names.append(i.argval)
        elif i.opname not in _CLAUSE_TESTS:
            return None
        if i.opname == "RERAISE":
            k = handler_at(i.offset)
        elif i.opname in _CLAUSE_JUMPS:
            k = index.get(i.argval)   # (the clause did not match: the next one, or the re-raise)
        else:
            k += 1
    return None


@lru_cache(maxsize=512)
def flow_of(code: types.CodeType) -> FlowShape:
    """The :class:`FlowShape` of ``code`` (cached per code object)."""
    return FlowShape(code)


@lru_cache(maxsize=1024)
def returns_only_falsy_constants(code: types.CodeType) -> bool:
    """Does every ``return`` of ``code`` return the constant None or False (a context manager's
    ``__exit__`` that can never swallow an exception)? An ``__exit__`` that returns anything it
    computed may, for some exception (``contextlib.suppress``)."""
    prev = None
    for ins in dis.get_instructions(code):
        if ins.opname == "RETURN_CONST" and ins.argval not in (None, False):
            return False
        if ins.opname == "RETURN_VALUE" and not (prev is not None and prev.opname == "LOAD_CONST"
                                                 and prev.argval in (None, False)):
            return False
        prev = ins
    return True


#: What a lookup hook may do and still only read: locals, constants, the ``__class__`` cell, tests,
#: jumps, a raise, building a string or tuple (3.10-3.13 names; caches and prefixes included).
_READING_OPS = frozenset("""
    RESUME NOP CACHE EXTENDED_ARG COPY_FREE_VARS MAKE_CELL LOAD_CLOSURE LOAD_DEREF LOAD_CONST RETURN_CONST
    LOAD_FAST LOAD_FAST_CHECK LOAD_FAST_AND_CLEAR LOAD_FAST_LOAD_FAST STORE_FAST STORE_FAST_LOAD_FAST
    STORE_FAST_STORE_FAST STORE_FAST_MAYBE_NULL DELETE_FAST PUSH_NULL PRECALL KW_NAMES COMPARE_OP
    CONTAINS_OP IS_OP BINARY_SUBSCR BINARY_OP BINARY_ADD UNARY_NOT TO_BOOL POP_TOP RETURN_VALUE COPY SWAP
    ROT_TWO ROT_THREE DUP_TOP BUILD_TUPLE BUILD_STRING FORMAT_VALUE FORMAT_SIMPLE FORMAT_WITH_SPEC
    CONVERT_VALUE RAISE_VARARGS RERAISE PUSH_EXC_INFO POP_EXCEPT CHECK_EXC_MATCH JUMP_IF_NOT_EXC_MATCH
    POP_BLOCK SETUP_FINALLY LOAD_ASSERTION_ERROR JUMP_FORWARD JUMP_BACKWARD JUMP_BACKWARD_NO_INTERRUPT
    JUMP_ABSOLUTE JUMP_IF_TRUE_OR_POP JUMP_IF_FALSE_OR_POP POP_JUMP_IF_TRUE POP_JUMP_IF_FALSE
    POP_JUMP_IF_NONE POP_JUMP_IF_NOT_NONE POP_JUMP_FORWARD_IF_TRUE POP_JUMP_FORWARD_IF_FALSE
    POP_JUMP_FORWARD_IF_NONE POP_JUMP_FORWARD_IF_NOT_NONE POP_JUMP_BACKWARD_IF_TRUE
    POP_JUMP_BACKWARD_IF_FALSE POP_JUMP_BACKWARD_IF_NONE POP_JUMP_BACKWARD_IF_NOT_NONE NOT_TAKEN POP_ITER
""".split())
_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD"})
#: the globals such a hook may read (``super()``, ``type(self)``, ``object.__getattribute__``, a type
#: test, an error to catch), and those whose load counts as a callee's: only ones that are called
#: wherever they appear (``str`` may be the argument of a type test, an error the class an
#: ``except`` tests: counted, they would stand for a call of something else)
_READING_GLOBALS = frozenset({"super", "object", "type", "isinstance", "len", "str", "AttributeError", "KeyError"})
_CALLED_GLOBALS = frozenset({"super", "type", "isinstance"})
#: the methods it may call: ``super().__getattribute__(key)``, ``object.__getattribute__(self, key)``,
#: ``self.attribute_map.get(key, key)``
_READING_METHODS = frozenset({"__getattribute__", "get"})


_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
_ALWAYS_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE"})


@lru_cache(maxsize=256)
def only_reads(code: types.CodeType) -> bool:
    """Does ``code`` (a class's Python ``__getattribute__``) only read: no store outside its own
    locals, no global but builtins that read, no call but ``super().__getattribute__``,
    ``object.__getattribute__``, a dict's ``get``, ``type`` and type tests? Such a hook (a config
    that remaps names, ``type(self).attribute_map[key]``) may run any number of times with no
    effect eager would not have; any other (a counter, a log of the names read, a warning, a
    proxy loading its target) is an effect per lookup, which a record's guard and mock cannot run
    as eager does. Conservative: an instruction not known to only read answers False, and so
    does a path through the code with more calls than loads of those callees (each call must
    have a load of its own: ``f = self.log; f(key)`` calls what a plain attribute load gave)."""
    instrs = list(dis.get_instructions(code))
    for ins in instrs:
        op = ins.opname
        if op in ("LOAD_GLOBAL", "LOAD_NAME"):
            if ins.argval not in _READING_GLOBALS:
                return False
        elif op in ("LOAD_METHOD", "LOAD_SUPER_ATTR") or (op == "LOAD_ATTR" and _method_load(ins)):
            if ins.argval not in _READING_METHODS:
                return False
        elif op != "LOAD_ATTR" and op not in _CALLS and op not in _READING_OPS:
            return False
    return _calls_have_callees(instrs, code)


def _calls_have_callees(instrs: list, code: types.CodeType) -> bool:
    """On every path from the start or from an exception handler, is each call preceded by a load
    of its own callee (an allowed global or method)? Paths, not a count over the code: CPython
    3.10 copies a call into both arms of a conditional expression in its arguments."""
    at = {ins.offset: k for k, ins in enumerate(instrs)}
    starts = [0] + [at[e.target] for e in getattr(dis.Bytecode(code), "exception_entries", ()) if e.target in at]
    seen: set = set()
    todo = [(k, 0) for k in starts]   # (instruction index, callee loads not yet used by a call)
    while todo:
        k, spare = todo.pop()
        while k < len(instrs):
            if (k, spare) in seen:
                break
            seen.add((k, spare))
            ins = instrs[k]
            op = ins.opname
            if op in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in _CALLED_GLOBALS:
                spare += 1
            elif op in ("LOAD_METHOD", "LOAD_SUPER_ATTR") or (op == "LOAD_ATTR" and _method_load(ins)):
                spare += 1 + (op == "LOAD_SUPER_ATTR")   # (`super()` itself: no call instruction of its own)
            elif op in _CALLS:
                if spare == 0:
                    return False
                spare -= 1
            spare = min(spare, 16)   # (a loop that loads without calling: enough to bound the walk)
            if op in _ENDS:
                break
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs or op == "SETUP_FINALLY":
                target = at.get(ins.argval)
                if target is None:
                    return False
                todo.append((target, spare))
                if op in _ALWAYS_JUMPS:
                    break
            k += 1
    return True


def _method_load(ins: dis.Instruction) -> bool:
    """Is a ``LOAD_ATTR`` a method load (3.12+: the low bit of its argument; 3.10/3.11 have
    ``LOAD_METHOD`` for those)?"""
    return sys.version_info >= (3, 12) and bool(ins.arg & 1)


def may_swallow(manager: object) -> bool:
    """Could the ``with`` statement over ``manager`` swallow an exception raised in its block?
    Its class's ``__exit__`` in Python returning something it computed may (``suppress``, a
    user's error counter); a ``@contextmanager`` generator may when it is suspended inside a
    ``try`` with an ``except`` or inside a ``with`` of its own; an ``__exit__`` in C (files,
    locks) never does."""
    exit_ = getattr(type(manager), "__exit__", None)
    gen = getattr(manager, "gen", None)
    if isinstance(gen, types.GeneratorType) and type(manager).__module__ == "contextlib":
        frame = gen.gi_frame
        if frame is None:
            return False
        at = frame.f_lasti
        return any(start <= at < end for start, end, _ in (*catching_ranges(gen.gi_code), *with_ranges(gen.gi_code)))
    if isinstance(exit_, types.FunctionType):
        return not returns_only_falsy_constants(exit_.__code__)
    return False
