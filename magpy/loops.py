"""Loop bodies compiled once (paper §6.2.2): a Python loop whose trip count changes between calls.

An LSTM over sequences of changing length runs ``for i in range(len(xs)): out, state = cell(xs[i],
state)``. With the length lifted (``magpy.scalars``) the monitor still unrolls the loop into the
graph, so every length was one more record. This module lets one record serve every length: the
monitor watches such a loop while it runs (:class:`LoopWatch`, mixed into the Monitor), and once
the run is over :func:`roll_loops` replaces its unrolled iterations in the graph by one
:class:`RolledLoop` node that runs a body graph, compiled once, as many times as the call asks.

Rolling drops the record's assumption on the trip count, so it is sound only when nothing in the
program depended on it other than the loop itself. What is checked (the README's "Design for loop
bodies compiled once"):

1. *The trip count is exactly a graph value.* ``len()`` of a sequence whose length the run assumed
   (an ``unbind`` over a lifted dimension) is a LiftedInt of that ``len`` node, and so is a lifted
   size; ``range(n)`` of one, iterated at once by a ``for``, is a *counted loop*.
2. *The index is not observed.* The loop hands out a LiftedInt index whose node is
   ``loop_index(k)``: the graph may take it (``x[i]``, ``i + 1``); subscripting the loop's own
   sequence with it is allowed; any other use is an assumption, which keeps the loop unrolled.
   The sequence itself may only be measured by ``len`` and subscripted with the index.
3. *The Python state is a fixed point.* At each iteration start the loop frame's locals are
   abstracted (numbers and text by value, tensors by metadata and aliasing, containers by
   structure, other objects by identity); the abstractions from the second iteration to the exit
   must all be equal, so the loop's path cannot depend on the iteration. A list that only grows by
   ``+= [x]``/``append(x)`` and that nothing else reads (every instruction operand is watched) is an
   *accumulator*; after the loop only ``torch.stack``/``torch.cat`` may take it. Inside the loop no
   instruction may write any object (attributes, items, globals, cells, container methods, an
   iterator advanced), change a tensor in place, replay an effect, draw a number, make an
   assumption, or read something new from outside after the first iteration.
4. *The graph repeats.* The nodes of every iteration are isomorphic: same targets, constants and
   shapes; each input comes from the same iteration, from the previous one (a *carry*, from before
   the loop in the first iteration), from before the loop (an *invariant*) or is the loop
   sequence's element for the iteration.
5. *Nothing else depended on the count.* The sequence's count assumption is dropped only when it
   was made once (by the operator itself), and replaced by ``count >= 1``.

A loop that fails any check stays unrolled, with its count assumed, as before.
"""
from __future__ import annotations

import builtins
import collections
import contextlib
import operator
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from .graph import loop_index, range_len  # (graph node targets: defined with the graph, codegen reads them)
from .scalars import LiftedInt
from .scalars import replace_top as _replace_top


def range_value(k: int, start: int, step: int, count: int, backwards: bool) -> int:
    """The value iteration ``k`` of ``range(start, .., step)`` gives (``reversed``: counted from the end)."""
    return start + ((count - 1 - k) if backwards else k) * step


class LoopCountError(RuntimeError):
    """A rolled loop ran with a trip count its record does not serve (the call is a miss)."""


class RolledLoop:
    """A loop node of a record's graph: runs ``body`` ``count`` times.

    ``body(k, *elements, *carries, *invariants)`` (without ``k`` when it does not take it; an
    element of each sequence the loop walks: one, several for ``zip``, none for a range) returns ``(*next_carries, *collected, *last)``;
    the node returns ``(*last, *collected_lists)``: the last iteration's values the code after the
    loop takes, then the list of each collected value (an accumulator's elements, in order)."""

    magpy_python = False   # (set per node in the graph's meta: compile_regions splits around it)

    def __init__(self, body: fx.GraphModule, n_carry: int, n_coll: int, n_last: int, where: str,
                 checks: list, uses_index: bool = True, backwards: bool = False) -> None:
        self.body = body
        self.run_body: Callable = body.forward
        self.n_carry, self.n_coll, self.n_last = n_carry, n_coll, n_last
        self.checks = checks   # (kind, expected) of each value the body assumes, after its other outputs
        self.uses_index = uses_index
        self.backwards = backwards   # iteration k takes element count - 1 - k (reversed(range(len(xs))))
        self.where = where
        self.__name__ = "rolled_loop"
        self.__qualname__ = "rolled_loop"

    def compile_with(self, compile_fn: Callable, shared: dict) -> None:
        """Compile the body with ``compile_fn`` (a static compile: no guards of its own) on its
        first call, again for each new signature of its tensor inputs; bodies with the same code
        (the layers of a stacked LSTM) share one compiled body."""
        key = self.body.code
        hit = shared.get(key)
        if hit is None:
            hit = shared[key] = CompiledBySignature(self.body, compile_fn)
        self.run_body = hit

    def __call__(self, count: int, seqs: tuple, inits: tuple, invariants: tuple) -> tuple:
        count = int(count)
        if count < 1:
            raise LoopCountError(f"a loop rolled at {self.where} ran {count} times")
        carries = tuple(inits)
        colls: list[list] = [[] for _ in range(self.n_coll)]
        out: Any = ()
        nc, nl = self.n_carry, self.n_coll
        first_check = nc + nl + self.n_last
        body, ui = self.run_body, self.uses_index
        last = count - 1 if self.backwards else 0
        for k in range(count):
            at = last - k if self.backwards else k
            elements = [s[at] for s in seqs]
            out = body(k, *elements, *carries, *invariants) if ui else body(*elements, *carries, *invariants)
            carries = tuple(out[:nc])
            for j in range(nl):
                colls[j].append(out[nc + j])
            for (kind, expected), v in zip(self.checks, out[first_check:]):
                if not _holds(kind, v, expected):
                    raise LoopCheckFailed(f"iteration {k} of the loop rolled at {self.where}: {v!r} is not {expected!r}")
        return (*out[nc + nl:first_check], *colls)


def _holds(kind: str, v: Any, expected: Any) -> bool:
    if kind == "truth":
        return bool(v) is bool(expected)
    if kind == "item":
        v = v.item()
    if isinstance(v, torch.Tensor):
        return False
    return v == expected or (v != v and expected != expected)   # (NaN is NaN, as in codegen's checks)


class LoopCheckFailed(RuntimeError):
    """A value a rolled loop's body assumed differs in some iteration: the record does not hold."""


class CompiledBySignature:
    """A graph (a rolled loop's body, a conditional's arm) compiled for the shapes, strides,
    dtypes and devices of its tensor inputs (a static compile serves only those: a lifted batch
    size gives another signature)."""

    def __init__(self, body: fx.GraphModule, compile_fn: Callable) -> None:
        self.body, self.compile_fn = body, compile_fn
        self.compiled: dict = {}

    def __call__(self, *args):
        sig = tuple((a.shape, a.stride(), a.dtype, a.device, a.requires_grad) if isinstance(a, torch.Tensor) else type(a)
                    for a in args)
        fn = self.compiled.get(sig)
        if fn is None:
            fn = self.compiled[sig] = self.compile_fn(self.body, list(args))
        return fn(*args)


@dataclass
class Loop:
    """One counted loop of a monitor run."""

    fs: Any                      # the loop's frame state
    count_node: fx.Node          # the graph node of its trip count
    count: int                   # the trip count the run saw
    seq: Any                     # the sequence whose len is the count (None: a size)
    where: str                   # file:line of the loop
    marks: list = field(default_factory=list)       # per iteration start, and the exit: (tail node, snapshot)
    counters: tuple | None = None                    # the monitor's counters at the first iteration
    guards_after_first: tuple = ()
    accs: dict = field(default_factory=dict)         # id -> list of the frame that may accumulate (watched)
    acc_sizes: dict = field(default_factory=dict)    # id -> its length at each iteration start
    acc_reads: dict = field(default_factory=dict)    # id -> the first instruction that read it in the loop
    assumed: list = field(default_factory=list)      # (iteration, kind, node, expected) made inside
    ok: bool = True
    why: str = ""
    done: bool = False
    nested: bool = False
    index: bool = True                               # hands out an index (range), else elements
    values: tuple = (0, 1, False)                    # the range's start, step, and whether reversed
    pairs: bool = False                              # enumerate: hands out (index, element)
    seqs: list = field(default_factory=list)         # (sequence, its len node) of each sequence it walks
    iterator: Any = None

    def fail(self, why: str) -> None:
        if self.ok:
            self.ok, self.why = False, why


# Instructions that write an object: none may run inside a loop that is to be rolled.
# (A yield hands control to a consumer whose state between iterations is not compared.)
WRITES = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE",
                     "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF", "IMPORT_NAME",
                     "YIELD_VALUE"})
# Opcodes that move references only, or load: no operand is used.
_NO_OPERANDS = frozenset({
    "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF",
    "LOAD_CLASSDEREF", "LOAD_GLOBAL", "LOAD_CONST", "LOAD_CLOSURE", "STORE_FAST", "STORE_FAST_LOAD_FAST",
    "STORE_FAST_STORE_FAST", "DELETE_FAST", "KW_NAMES", "NOP", "RESUME", "CACHE", "EXTENDED_ARG",
    "PUSH_NULL", "PRECALL", "COPY", "SWAP", "POP_TOP", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE",
    "JUMP_BACKWARD_NO_INTERRUPT", "COPY_FREE_VARS", "MAKE_CELL", "ROT_TWO", "ROT_THREE", "ROT_FOUR",
    "ROT_N", "DUP_TOP", "DUP_TOP_TWO", "END_FOR", "POP_BLOCK", "SETUP_FINALLY", "NOT_TAKEN"})
# How many values on top of the stack an event takes (others: the top 4, which may over-count:
# a watched value counted as used keeps its loop unrolled, never the reverse).
_OPERANDS = {"BINARY_SUBSCR": 2, "BINARY_SLICE": 3, "STORE_SUBSCR": 3, "STORE_SLICE": 4, "DELETE_SUBSCR": 2,
             "BINARY_OP": 2, "COMPARE_OP": 2, "IS_OP": 2, "CONTAINS_OP": 2, "LOAD_ATTR": 1, "STORE_ATTR": 2,
             "DELETE_ATTR": 1, "TRUTH": 1, "GET_ITER": 1, "GET_YIELD_FROM_ITER": 1, "FOR_ITER": 1,
             "UNPACK_SEQUENCE": 1, "UNPACK_EX": 1, "UNARY_NEGATIVE": 1, "UNARY_POSITIVE": 1, "UNARY_INVERT": 1,
             "FORMAT_VALUE": 1, "LIST_EXTEND": 1, "SET_UPDATE": 1, "DICT_UPDATE": 1, "DICT_MERGE": 1,
             "STORE_GLOBAL": 1, "STORE_DEREF": 1, "YIELD_VALUE": 1}
_OPERANDS_BY_OPCODE = {"RETURN_VALUE": 1, "LIST_APPEND": 1, "SET_ADD": 1, "MAP_ADD": 2, "TO_BOOL": 1,
                       "UNARY_NOT": 1, "GET_LEN": 1, "RAISE_VARARGS": 2, "CALL_INTRINSIC_1": 1}
# Builtin methods that only read their object.
_READING_METHODS = frozenset({
    "get", "keys", "values", "items", "copy", "index", "count", "__getitem__", "__len__", "__contains__",
    "startswith", "endswith", "format", "join", "split", "strip", "lower", "upper", "replace",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__str__",
    "__format__", "is_integer", "bit_length", "conjugate", "union", "intersection", "difference",
    "issubset", "issuperset", "isdisjoint", "__reduce__", "__reduce_ex__", "__sizeof__", "isdigit",
    "isalpha", "rstrip", "lstrip", "partition", "rpartition", "find", "rfind", "encode", "decode"})
_STACKERS = (torch.stack, torch.cat, torch.concat, torch.concatenate)
_WRITING_BUILTINS = (builtins.setattr, builtins.delattr, object.__setattr__, object.__delattr__,
                     builtins.exec, builtins.eval, builtins.globals, builtins.vars, builtins.locals)


class LoopWatch:
    """The counted loops of a monitor run (mixed into :class:`~magpy.monitor.Monitor`).

    The host provides ``graph``, ``scalar_nodes``, ``assumptions``, ``guards``, ``where`` and the
    other counters :meth:`_counters` reads."""

    def init_loops(self) -> None:
        self.loops: list[Loop] = []
        self.active_loops: list[Loop] = []
        self.loop_ranges: dict[int, tuple] = {}     # id(range) -> (range, count node, count, seq)
        self.loop_iters: dict[int, Loop] = {}       # id(range iterator) -> its loop
        self.loop_indexes: dict[int, tuple] = {}    # id(index LiftedInt) -> (index, loop)
        self.counted: dict[int, list] = {}          # id(seq) -> [seq, len node, why observed or None]
        self.watched: dict[int, tuple] = {}         # id -> (object, "seq" | "acc", loop or record)
        self.assume_calls: dict = {}                # fx node -> how many times it was assumed
        self.rows_count = None                      # len node of the rows bind_rows just bound, if lifted
        self.enumerations: set = set()              # ids of enumerate objects over counted sequences
        self.zips: dict = {}                        # id of a zip of counted sequences -> [(seq, len node)]

    # -- the producers ---------------------------------------------------------------------------------
    def count_assumed(self, seq: Any, len_node: fx.Node) -> None:
        """``seq`` (a tuple or list an operator returned) holds as many tensors as ``len_node``
        computes, and the run assumed that count: watch every use of ``seq``."""
        if type(seq) in (tuple, list):
            entry = [seq, len_node, None]
            self.counted[id(seq)] = entry
            self.watched[id(seq)] = (seq, "seq", entry)

    def note_assumed(self, node: Any) -> bool:
        """An assumption on ``node`` is being made: count it, and tell whether it holds by
        construction (a number computed from loop indexes alone: the record is unrolled, and the
        loops it involves cannot be rolled)."""
        if not isinstance(node, fx.Node):
            return False
        self.assume_calls[node] = self.assume_calls.get(node, 0) + 1
        if not self.loops:
            return False   # (no loop index exists yet)
        loops = self._index_only(node)
        if loops is None:
            return False   # (inside a loop: checked in every iteration if it rolls, see loop_assumed)
        for loop in loops:
            loop.fail(f"the loop index is used by Python ({self.where()})")
        return True

    def _index_only(self, node: fx.Node) -> list | None:
        """The loops whose indexes alone (and constants) compute ``node``, or None."""
        seen, todo, loops = set(), [node], []
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if len(seen) > 64 or n.op != "call_function":
                return None
            if n.target is loop_index:
                loops.append(n.meta.get("magpy_loop"))
                continue
            todo.extend(n.all_input_nodes)
        return [lp for lp in loops if lp is not None] if loops else None

    # -- calls: len(seq), range(n) -------------------------------------------------------------------
    def loop_call(self, fs: Any, fn: Any, args: list, kwargs: dict) -> bool:
        """``len(seq)`` of a counted sequence: a LiftedInt of its len node. ``range(n)`` of a
        tracked count, iterated at once: a counted loop. True if handled."""
        if fn is builtins.len and len(args) == 1 and not kwargs and id(args[0]) in self.counted \
                and self.counted[id(args[0])][0] is args[0]:
            self._pend(fs, self._post_count, self.counted[id(args[0])][1], opaque=True)
            return True
        if fn is builtins.range and 1 <= len(args) <= 3 and not kwargs \
                and all(type(a) in (int, LiftedInt) for a in args) and any(type(a) is LiftedInt for a in args) \
                and all(self.scalar_node(a) is not None for a in args if type(a) is LiftedInt) \
                and not any(id(a) in self.loop_indexes for a in args):
            full = (0, *args, 1) if len(args) == 1 else (*args, 1) if len(args) == 2 else tuple(args)
            start, stop, step = (self._scalar_arg(a) for a in full)
            if int(full[2]) == 0:
                return False   # (range raises)
            if len(args) == 1:
                node = stop
            else:
                node = self.graph.call("function", range_len, (start, stop, step), {})
            self._pend(fs, self._post_range, (node, len(range(*(int(a) for a in full))), start, step), opaque=True)
            return True
        if fn is builtins.enumerate and len(args) == 1 and not kwargs and id(args[0]) in self.counted \
                and self.counted[id(args[0])][0] is args[0]:
            entry = self.counted[id(args[0])]
            self._pend(fs, self._post_enumerate, (entry[1], len(args[0]), args[0]), opaque=True)
            return True
        if fn is builtins.zip and len(args) >= 2 and not kwargs \
                and all(id(a) in self.counted and self.counted[id(a)][0] is a for a in args):
            seqs = [(a, self.counted[id(a)][1]) for a in args]
            self._pend(fs, self._post_zip, seqs, opaque=True)
            return True
        if fn is builtins.reversed and len(args) == 1 and not kwargs and id(args[0]) in self.loop_ranges \
                and self.loop_ranges[id(args[0])][0] is args[0]:
            hit = self.loop_ranges.pop(id(args[0]))
            self.watched[id(args[0])] = (args[0], "rangeheld", hit)
            self._pend(fs, self._post_reversed, hit, opaque=True)
            return True
        return False

    def _post_enumerate(self, fs, stack, data):
        """``enumerate(xs)`` of a counted sequence: watched like a range; a ``for`` over it is a
        counted loop that hands out ``(index, element)``."""
        node, count, seq = data
        entry = (stack[-1], node, count, seq, 0, 1, False)
        self.loop_ranges[id(stack[-1])] = entry
        self.watched[id(stack[-1])] = (stack[-1], "range", entry)
        self.enumerations.add(id(stack[-1]))

    def _post_zip(self, fs, stack, seqs):
        """``zip(xs, ms)`` of counted sequences: watched like a range; a ``for`` over it is a
        counted loop over the shortest, handing out a tuple of elements."""
        nodes = list(dict.fromkeys(node for _, node in seqs))
        node = nodes[0] if len(nodes) == 1 else self.graph.call("function", builtins.min, tuple(nodes), {})
        entry = (stack[-1], node, min(len(q) for q, _ in seqs), None, 0, 1, False)
        self.loop_ranges[id(stack[-1])] = entry
        self.watched[id(stack[-1])] = (stack[-1], "range", entry)
        self.zips[id(stack[-1])] = seqs

    def _post_reversed(self, fs, stack, hit):
        """``reversed(range(..))``: a range iterator counting down, iterated by a ``for``."""
        r, node, count, seq, start, step, backwards = hit
        entry = (stack[-1], node, count, seq, start, step, not backwards)
        self.loop_ranges[id(stack[-1])] = entry
        self.watched[id(stack[-1])] = (stack[-1], "range", entry)

    def is_loop_element(self, container: Any, key: Any) -> bool:
        """Is ``container[key]`` a counted loop's sequence subscripted with its index?"""
        hit = self.loop_indexes.get(id(key))
        return hit is not None and hit[0] is key and hit[1].seq is container

    def _post_count(self, fs, stack, node):
        """``len(xs)`` of a counted sequence: followed (a LiftedInt of the len node) where it goes
        to ``range()``, into a local or into arithmetic (``total / len(xs)``); anywhere else (text,
        a key, a native) it stays a plain int, and no loop over ``xs`` may then drop the count
        assumption that int relies on."""
        ins = fs.instrs.get(self._at[1])
        to_range = False
        if ins is not None and (ins.opname == "CALL" or ins.real == "PRECALL"):   # (3.11: PRECALL, then CALL)
            from .bytecode import DECODER

            try:
                fn, args, _ = DECODER.call_operands(ins, stack, fs.kw_names)
                to_range = fn is builtins.range and len(args) >= 1 and any(a is stack[-1] for a in args)
            except Exception:
                to_range = False
        arithmetic = ins is not None and ins.opname == "BINARY_OP" and len(stack) >= 2 \
            and not isinstance(stack[-2], str) and ins.argrepr not in ("%", "%=")
        if to_range or arithmetic or (ins is not None and ins.opname == "STORE_FAST"):
            self.track_scalar(fs, stack, node)
            return
        entry = next((e for e in self.counted.values() if e[1] is node), None)
        if entry is not None and entry[2] is None:
            entry[2] = f"its len() is used as a plain number ({self.where()})"

    def _post_range(self, fs, stack, data):
        """A range of a tracked count: watched; a ``for`` over it (or over ``reversed`` of it)
        is a counted loop, any other use assumes its count."""
        node, count, start, step = data
        seq = None
        if start == 0 and step == 1 and node.op == "call_function" and node.target is builtins.len and node.args:
            seq = next((e[0] for e in self.counted.values() if e[1] is node), None)
        entry = (stack[-1], node, count, seq, start, step, False)
        self.loop_ranges[id(stack[-1])] = entry
        self.watched[id(stack[-1])] = (stack[-1], "range", entry)

    def loop_get_iter(self, fs: Any, v: Any) -> bool:
        hit = self.loop_ranges.pop(id(v), None)
        if hit is None or hit[0] is not v:
            return False
        # (any later use of the range, `len(r)`, reads its count: the loop then stays unrolled)
        self.watched[id(v)] = (v, "rangeheld", hit)
        self._pend(fs, self._post_loop_iter, hit, opaque=True)
        return True

    def _post_loop_iter(self, fs, stack, hit):
        obj, node, count, seq, start, step, backwards = hit
        self._start_loop(fs, node, count, seq, stack[-1], index=True)
        loop = self.loops[-1]
        loop.values = (start, step, backwards)
        loop.pairs = id(obj) in self.enumerations
        if id(obj) in self.zips:
            loop.index, loop.seqs = False, self.zips[id(obj)]
        if stack[-1] is obj:
            # its own iterator (enumerate, reversed(range)): only the `for` may advance it
            self.watched[id(obj)] = (obj, "loopiter", loop)

    def loop_over_sequence(self, fs: Any, seq: Any) -> bool:
        """``for e in seq`` (``GET_ITER`` of a counted sequence): a counted loop whose iterations
        take the sequence's elements. True if handled."""
        entry = self.counted.get(id(seq))
        if entry is None or entry[0] is not seq:
            return False
        self._pend(fs, self._post_seq_iter, (seq, entry[1], len(seq)), opaque=True)
        return True

    def _post_seq_iter(self, fs, stack, data):
        seq, node, count = data
        self._start_loop(fs, node, count, seq, stack[-1], index=False)

    def loop_over_rows(self, fs: Any, count_node: Any, count: int, iterator: Any) -> None:
        """``for row in t`` over a tensor whose first size is lifted: the rows are an ``unbind``
        the program cannot reach but through the iterator."""
        self._start_loop(fs, count_node, count, _HIDDEN, iterator, index=False)

    def _start_loop(self, fs, node, count, seq, iterator, index: bool) -> None:
        loop = Loop(fs, node, count, seq, self.where())
        loop.index = index
        loop.seqs = [(seq, node)] if seq is not None else []
        if self.active_loops:
            loop.nested = True
            loop.fail("a counted loop inside another")
            for outer in self.active_loops:
                outer.fail("holds a counted loop")
        self.loops.append(loop)
        self.loop_iters[id(iterator)] = loop
        loop.iterator = iterator

    def loop_for_iter(self, fs: Any, it: Any) -> bool:
        """A ``FOR_ITER`` (before it runs). True if it is a counted loop's (handled here)."""
        loop = self.loop_iters.get(id(it))
        if loop is None or getattr(loop, "iterator", None) is not it:
            return False
        if fs is not loop.fs:
            # a comprehension's own frame (3.10, 3.11): the list it builds is no local of the
            # frame whose state is compared
            loop.fail("iterated in another frame (a comprehension)")
        k = len(loop.marks)   # (the iterations so far: the iterator is only the `for`'s)
        left = loop.count - k
        hint = getattr(it, "__length_hint__", None)
        if left < 0 or (hint is not None and hint() != left):
            loop.fail("its iterator was advanced by something else")
            left = max(hint() if hint is not None else 0, 0)
        tail = next(reversed(self.graph.graph.nodes), None)
        if k == 0:
            loop.counters = self._counters()
            self.active_loops.append(loop)
            self._watch_locals(loop, fs)
        elif k == 1:
            loop.guards_after_first = (len(self.guards), len(self.lifted_value_nodes))
        loop.marks.append((tail, self._snapshot(loop)))
        for key, acc in loop.accs.items():
            loop.acc_sizes.setdefault(key, []).append(len(acc))
        if left == 0:
            self._end_loop(loop)
            self._pend(fs, self._post_new, 1)
            return True
        if loop.index:
            self._pend(fs, self._post_index, (loop, k), opaque=True)
        else:
            self._pend(fs, self._post_new, 1)   # (an element: a tensor the graph already has)
        return True

    def _post_index(self, fs, stack, data):
        loop, k = data
        node = self.graph.call("function", loop_index, (k,), {})
        node.meta["magpy_loop"] = loop
        start, step, backwards = loop.values
        if start != 0 or step != 1 or backwards:
            node = self.graph.call("function", range_value, (node, start, step, loop.count_node, backwards), {})
        if loop.pairs:
            # enumerate's (k, element): the same pair with a tracked k
            index = LiftedInt(stack[-1][0])
            self.scalar_nodes[id(index)] = (index, node)
            _replace_top(fs, stack, (index, stack[-1][1]))
            self.loop_indexes[id(index)] = (index, loop)
            return
        self.track_scalar(fs, stack, node)
        self.loop_indexes[id(stack[-1])] = (stack[-1], loop)

    def _end_loop(self, loop: Loop) -> None:
        loop.done = True
        if loop in self.active_loops:
            self.active_loops.remove(loop)
        if loop.count < 3:
            loop.fail("ran fewer than 3 iterations (no steady state to compare)")
        if self._counters() != loop.counters:
            loop.fail("wrote, drew, replayed or assumed something inside the loop")
        if loop.count >= 2 and (len(self.guards), len(self.lifted_value_nodes)) != loop.guards_after_first:
            loop.fail("read something new from outside after the first iteration")
        snaps = [s for _, s in loop.marks[1:]]
        if any(s is None for s in snaps) or any(s != snaps[0] for s in snaps[1:]):
            loop.fail("its Python state changes between iterations")
        for key in list(loop.accs):
            sizes = loop.acc_sizes.get(key, [])
            if sizes and sizes[-1] == sizes[0]:
                # it did not grow: a list the loop only read (its contents cannot have changed:
                # nothing in the loop writes); from now on it is a list like any other
                del loop.accs[key]
                self.watched.pop(key, None)
            elif sizes != list(range(sizes[0], sizes[0] + len(sizes))):
                loop.fail("a list grows by other than one element per iteration")
            elif key in loop.acc_reads:
                loop.fail(f"its accumulator list is read by {loop.acc_reads[key]}")

    def loop_assumed(self, kind: str, node: Any, expected: Any) -> None:
        """An assumption made inside active loops: a rolled body checks it in every iteration."""
        for loop in self.active_loops:
            if kind not in ("scalar", "truth", "item") or not (expected is None or type(expected) in (bool, int, float, str)):
                loop.fail(f"assumes a value of kind {kind} inside the loop ({self.where()})")
            loop.assumed.append((len(loop.marks) - 1, kind, node, expected))

    def loop_frame_left(self, fs: Any) -> None:
        for loop in list(self.active_loops):
            if loop.fs is fs:
                loop.fail("left before its iterator was exhausted (break, return or an exception)")
                self.active_loops.remove(loop)

    def _counters(self) -> tuple:
        return (sum(len(v) for v in self.attr_writes.values()),
                len(self.mutated), sum(len(v) for v in self.appends.values()), len(self.global_writes),
                len(self.cell_writes), len(self.effects), len(self.draws), self.graph_mutates,
                len(self.speculative_ops), self.mutates_outside, len(self.contextvars))

    # -- the Python state --------------------------------------------------------------------------------
    def _watch_locals(self, loop: Loop, fs: Any) -> None:
        """At the first iteration: lists made in the call that the loop frame holds may be
        accumulators; iterators it holds (also on its stack: enclosing loops') must not be
        advanced inside the loop (their state is not part of the snapshot)."""
        try:
            local = dict(loop.fs.frame.f_locals)
        except Exception:
            loop.fail("its frame's locals cannot be read")
            return
        from . import capture

        todo = [(v, 0) for v in local.values()]
        try:
            held = [v for v in capture.read_stack(fs.frame) if v is not loop.iterator]
        except Exception:
            held = []
            loop.fail("its frame's stack cannot be read")
        if any(isinstance(v, (list, dict, set, bytearray, collections.deque)) for v in held):
            # an inlined comprehension (3.12+) builds its result on the stack, out of the snapshot
            loop.fail("builds a container on the stack (a comprehension)")
        todo += [(v, 1) for v in held]
        seen: set = set()
        while todo:
            v, depth = todo.pop()
            if id(v) in seen or depth > 3:
                continue
            seen.add(id(v))
            if type(v) is list and depth == 0 and id(v) not in self.watched \
                    and (self.node(v) is None or self.node(v).source is None):
                loop.accs[id(v)] = v
                self.watched[id(v)] = (v, "acc", loop)
            elif hasattr(type(v), "__next__") and not isinstance(v, torch.Tensor) and id(v) not in self.watched:
                self.watched[id(v)] = (v, "iter", loop)
            if type(v) in (list, tuple, dict) and len(v) <= 64:
                todo += [(e, depth + 1) for e in (v.values() if type(v) is dict else v)]

    def _snapshot(self, loop: Loop) -> Any:
        try:
            local = dict(loop.fs.frame.f_locals)
        except Exception:
            return None
        refs: dict[int, int] = {}
        try:
            return tuple((name, self._abstract(v, loop, refs, 0)) for name, v in sorted(local.items()))
        except _TooDeep:
            return None

    def _abstract(self, v: Any, loop: Loop, refs: dict, depth: int) -> Any:
        if depth > 4 or len(refs) > 256:
            raise _TooDeep
        t = type(v)
        if t is LiftedInt or (t is float and self.scalar_node(v) is not None):
            return ("number", t.__name__)   # (a tracked number: any Python use of its value is an assumption)
        if v is None or t in (bool, int, float, str, bytes, complex) or isinstance(v, (torch.dtype, torch.device)):
            return ("value", t, v)
        ref = refs.setdefault(id(v), len(refs))
        if id(v) in loop.accs:
            return ("accumulator", ref)
        w = self.watched.get(id(v))
        if w is not None and w[0] is v and w[1] == "seq":
            return ("sequence", ref)
        if isinstance(v, torch.Tensor):
            return ("tensor", t, tuple(v.shape), v.dtype, v.device, v.requires_grad, v.layout,
                    v.stride() if v.layout == torch.strided else None, ref)
        if t in (tuple, list) or (isinstance(v, tuple) and hasattr(t, "_fields")):
            if len(v) > 64:
                raise _TooDeep
            return (t, ref, tuple(self._abstract(e, loop, refs, depth + 1) for e in v))
        if t is dict:
            if len(v) > 64:
                raise _TooDeep
            return (t, ref, tuple((self._abstract(k, loop, refs, depth + 1), self._abstract(e, loop, refs, depth + 1))
                                  for k, e in v.items()))
        return ("object", id(v), ref)

    # -- every instruction while loops are watched ---------------------------------------------------------
    def loop_event(self, fs: Any, ins: Any, stack: list) -> None:
        if self.active_loops:
            name = ins.real
            if ins.opname in WRITES or name in WRITES:
                for loop in self.active_loops:
                    loop.fail(f"{name} inside the loop ({self.where()})")
            elif ins.opname == "BINARY_OP" and ins.argrepr.endswith("=") and ins.argrepr not in ("==", "!=", "<=", ">=") \
                    and len(stack) >= 2 and not isinstance(stack[-2], (int, float, complex, str, bytes, tuple, torch.Tensor)) \
                    and not (ins.argrepr == "+=" and id(stack[-2]) in self.watched
                             and self.watched[id(stack[-2])][1] == "acc"):
                for loop in self.active_loops:
                    loop.fail(f"`{ins.argrepr}` changes a {type(stack[-2]).__name__} inside the loop ({self.where()})")
        if not self.watched:
            return
        operands, fn, args = self._operands(fs, ins, stack)
        for v in operands:
            w = self.watched.get(id(v))
            if w is not None and w[0] is v:
                self._watched_use(w, ins, stack, fn, args)

    def loop_call_event(self, fn: Any, args: list) -> None:
        """A call inside an active loop: one that writes an object is a write."""
        if not self.active_loops:
            return
        bad = self.call_writes(fn, args)
        if bad is not None:
            for loop in self.active_loops:
                loop.fail(f"{bad} inside the loop ({self.where()})")

    def call_writes(self, fn: Any, args: list) -> str | None:
        """What a call may write, in words (a builtin that changes its object's state, a native
        given an object it may change), or None for calls that write nothing by themselves.
        (Python functions are followed instruction by instruction instead.) A loop accumulator's
        ``append`` is not a write here (magpy.loops watches it)."""
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
                    and not (name == "append" and id(owner) in self.watched and self.watched[id(owner)][1] == "acc"):
                bad = f"calls `{type(owner).__name__}.{name}`"
        return bad

    def _operands(self, fs, ins, stack) -> tuple[list, Any, list]:
        if ins.opname == "CALL":
            from .bytecode import DECODER

            fn, args, _ = DECODER.call_operands(ins, stack, fs.kw_names)
            return [fn, getattr(fn, "__self__", None), *args], fn, list(args)
        if ins.real in _NO_OPERANDS or ins.opname in ("LOAD_FAST", "STORE_FAST", "LOAD_DEREF", "LOAD_GLOBAL",
                                                      "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST",
                                                      "STORE_FAST_STORE_FAST", "DELETE_FAST", "KW_NAMES"):
            return [], None, []
        n = _OPERANDS.get(ins.opname) if ins.real not in _OPERANDS_BY_OPCODE else _OPERANDS_BY_OPCODE[ins.real]
        if n is not None:
            if ins.opname == "FORMAT_VALUE" and isinstance(ins.arg, int) and ins.arg & 4:
                n = 2
            return (stack[len(stack) - n:] if n else []), None, []
        if ins.real.startswith("BUILD_") and isinstance(ins.arg, int):
            n = 2 * ins.arg if ins.real == "BUILD_MAP" else ins.arg + 1 if ins.real == "BUILD_CONST_KEY_MAP" else ins.arg
            return (stack[len(stack) - n:] if n else []), None, []
        return stack[-4:], None, []

    def _watched_use(self, w: tuple, ins, stack, fn, args) -> None:
        obj, kind, ref = w
        if kind == "loopiter":
            if not (ins.opname == "FOR_ITER" and stack and stack[-1] is obj):
                ref.fail(f"its iterator is used by {ins.real} ({self.where()})")
            return
        if kind == "rangeheld":
            self.watched.pop(id(obj), None)
            self.assume("scalar", ref[1], ref[2])   # (the count is then assumed twice: not rolled)
            return
        if kind == "range":
            if (ins.opname == "GET_ITER" and stack and stack[-1] is obj) or (
                    ins.opname == "CALL" and fn is builtins.reversed and len(args) == 1):
                return   # (a `for` over it, or over reversed(it): a counted loop)
            # a range of a tracked count used otherwise: its count is a number the program goes on with
            self.watched.pop(id(obj), None)
            if self.loop_ranges.pop(id(obj), None) is not None:
                self.assume("scalar", ref[1], ref[2])
            return
        if kind == "iter":
            if not ref.done:
                ref.fail(f"uses an iterator made before the loop ({ins.real}, {self.where()})")
            return
        if kind == "seq":
            if ins.opname == "CALL" and (fn in (builtins.len, builtins.enumerate) and len(args) == 1 or fn is builtins.zip):
                return   # (enumerate, zip: the object is watched in its turn)
            if ins.opname == "GET_ITER" and stack and stack[-1] is obj:
                return   # (a `for` over it: a counted loop, rolled or keeping the count assumed)
            if ins.opname == "BINARY_SUBSCR" and len(stack) >= 2 and stack[-2] is obj:
                hit = self.loop_indexes.get(id(stack[-1]))
                if hit is not None and hit[0] is stack[-1] and hit[1].seq is obj:
                    return
            if ref[2] is None:
                ref[2] = f"{ins.real} ({self.where()})"
            return
        loop = ref
        if not loop.done:
            if id(obj) not in loop.acc_reads and not self._accumulates(ins, stack, fn, args, obj):
                # (a read: fails the loop at its end if the list grew, see _end_loop)
                loop.acc_reads[id(obj)] = f"{ins.real} ({self.where()})"
            return
        if ins.opname == "CALL" and fn in _STACKERS and args and args[0] is obj \
                and not any(a is obj for a in args[1:]):
            return
        if ins.opname == "BINARY_SUBSCR" and len(stack) >= 2 and stack[-2] is obj and type(stack[-1]) is int \
                and stack[-1] == -1 and loop.accs.get(id(obj)) is obj:
            return   # (`outputs[-1]`: the last iteration's value, whatever the count)
        loop.fail(f"its accumulator list is read by {ins.real} ({self.where()})")

    def _accumulates(self, ins, stack, fn, args, obj) -> bool:
        """Is this instruction ``acc += [x]``, ``acc.append`` or ``acc.append(x)``?"""
        if ins.opname == "BINARY_OP" and ins.argrepr == "+=" and len(stack) >= 2 and stack[-2] is obj \
                and type(stack[-1]) is list and stack[-1] is not obj and len(stack[-1]) == 1:
            return True
        if ins.opname == "LOAD_ATTR" and ins.argval == "append" and stack[-1] is obj:
            return True
        if ins.opname == "CALL" and len(args) == 2 and args[0] is obj and args[1] is not obj \
                and (fn is list.append or getattr(fn, "__self__", None) is obj and getattr(fn, "__name__", "") == "append"):
            return True
        if ins.opname == "CALL" and len(args) == 1 and getattr(fn, "__self__", None) is obj \
                and getattr(fn, "__name__", "") == "append":
            return True
        return False

    # -- once the run is over ---------------------------------------------------------------------------------
    def finish_loops(self) -> list:
        """Loops that cannot be rolled keep their count assumed (as any other tracked number a
        `range` consumed); returns the loops that may be rolled."""
        rollable = []
        for loop in self.loops:
            if loop.ok and not loop.done:
                loop.fail("did not finish")
            for seq, len_node in loop.seqs if loop.ok else ():
                entry = self.counted.get(id(seq)) if seq is not _HIDDEN else None
                if seq is not _HIDDEN and (entry is None or entry[2] is not None):
                    loop.fail(f"its sequence is used otherwise: {entry[2] if entry else '?'}")
                elif self.assume_calls.get(len_node, 0) != 1:
                    # (a sequence's count is assumed once by the operator that made it; any other
                    # assumption on it is a use by Python the rolled loop would not repeat)
                    loop.fail("its count is used otherwise")
            if loop.ok and loop.count_node not in [n for _, n in loop.seqs] \
                    and self.assume_calls.get(loop.count_node, 0) != 0:
                loop.fail("its count is used otherwise")
            if loop.ok:
                rollable.append(loop)
        for _, node, count, *_ in self.loop_ranges.values():
            self.assume("scalar", node, count)   # (a range that no `for` iterated)
        self.loop_ranges.clear()
        return rollable


class _TooDeep(Exception):
    pass


#: The sequence of a loop over a tensor's rows, which the program cannot reach.
_HIDDEN = object()


class NotRolled(Exception):
    """The graph of a loop does not repeat (condition 4) or is used after the loop in a way a
    rolled loop cannot give (not the last iteration, not a whole accumulator)."""


def _leaves(a: Any):
    if isinstance(a, (tuple, list)):
        for e in a:
            yield from _leaves(e)
    elif isinstance(a, dict):
        for e in a.values():
            yield from _leaves(e)
    elif isinstance(a, slice):
        yield from _leaves((a.start, a.stop, a.step))
    else:
        yield a


def loop_nodes(mon: Any, loop: Loop) -> set:
    """The graph nodes of ``loop``'s iterations (from its marks)."""
    g = mon.graph.graph
    first, last = loop.marks[0][0], loop.marks[-1][0]
    nodes, inside = set(), first is None
    for n in g.nodes:
        if inside:
            nodes.add(n)
        if n is first:
            inside = True
        if n is last:
            break
    return nodes


def roll(mon: Any, loop: Loop, other_loops: frozenset = frozenset()) -> fx.Node:
    """Replace ``loop``'s unrolled iterations in ``mon.graph`` by a :class:`RolledLoop` node;
    NotRolled (and the graph unchanged) if its iterations do not repeat. ``other_loops``: nodes
    of other loops over the same sequence, which may take its elements too (rolled in their turn,
    or unrolled with the count assumed); elements no node takes any more are erased at the end."""
    g = mon.graph.graph
    T = loop.count
    order = {n: i for i, n in enumerate(g.nodes)}
    bounds = [order[m[0]] if m[0] is not None else -1 for m in loop.marks]   # T + 1 marks
    if len(bounds) != T + 1:
        raise NotRolled("its iterations were not all seen")
    all_nodes = list(g.nodes)
    iters = []
    for k in range(T):
        iters.append([n for n in all_nodes[bounds[k] + 1:bounds[k + 1] + 1] if n.op not in ("placeholder", "get_attr")])
    m = len(iters[0])
    if m == 0 or any(len(it) != m for it in iters):
        raise NotRolled("its iterations have different numbers of operators")
    where = {}
    for k, it in enumerate(iters):
        for p, n in enumerate(it):
            where[n] = (k, p)
    seq_nodes = [len_node.args[0] for _, len_node in loop.seqs]
    backwards = loop.values[2]

    def at(k):   # (the element iteration k takes: reversed(range(len(xs))) counts down)
        return T - 1 - k if backwards else k

    def element_of(leaf, k):
        """Which sequence's element for iteration ``k`` ``leaf`` is, or None."""
        if leaf.op != "call_function" or leaf.target is not operator.getitem or leaf.args[1] != at(k):
            return None
        return next((j for j, sn in enumerate(seq_nodes) if leaf.args[0] is sn), None)

    def classify(leaf, k):
        if not isinstance(leaf, fx.Node):
            if isinstance(leaf, (int, float, bool, str, complex, type(None), torch.dtype, torch.device,
                                 torch.layout, torch.memory_format)):
                return ("const", type(leaf), leaf)
            return ("object", id(leaf))   # (a tensor or other object baked in: the very same one)
        hit = where.get(leaf)
        if hit is not None:
            j, q = hit
            if j == k:
                return ("local", q)
            if j == k - 1:
                return ("carry", q)
            raise NotRolled("an iteration takes a value from two iterations back")
        if order[leaf] > bounds[-1]:
            raise NotRolled("internal: an iteration takes a value computed after the loop")
        j = element_of(leaf, k)
        if j is not None:
            return ("element", j)
        return ("invariant", leaf)

    def signature(n, k):
        if n.target is loop_index:
            return ("index",)
        return (n.op, n.target, len(n.args), tuple(n.kwargs), n.meta.get("example_value_shape"),
                tuple(classify(leaf, k) for leaf in _leaves((n.args, n.kwargs))))

    sigs = [[signature(n, k) for n in it] for k, it in enumerate(iters)]
    for k in range(2, T):
        if sigs[k] != sigs[1]:
            raise NotRolled(f"iteration {k} computes other operators than iteration 1")
    inits: dict[int, fx.Node] = {}
    for p in range(m):
        a, b = sigs[0][p], sigs[1][p]
        if a[:5] != b[:5] or len(a) != len(b):
            raise NotRolled("the first iteration computes other operators")
        if a == ("index",):
            continue
        for x, y in zip(a[5], b[5]):
            if y[0] == "carry":
                if x[0] != "invariant":
                    raise NotRolled("a carried value does not start from before the loop")
                if inits.setdefault(y[1], x[1]) is not x[1]:
                    raise NotRolled("a carried value starts from two values")
            elif x != y:
                raise NotRolled("the first iteration takes other inputs")

    # -- assumptions made inside: the same in every iteration, checked by the rolled loop -------------
    per_iter: list[list] = [[] for _ in range(T)]
    for k, kind, node, expected in loop.assumed:
        hit = where.get(node)
        if hit is None or hit[0] != k:
            raise NotRolled("an assumption inside the loop is on a value computed elsewhere")
        per_iter[k].append((kind, hit[1], type(expected), expected))
    if any(a != per_iter[0] for a in per_iter[1:]):
        raise NotRolled("iterations assume different values")
    checks = per_iter[0]

    # -- what the code after the loop takes -----------------------------------------------------------
    last_pos: dict[int, int] = {}    # position in an iteration -> index among the loop node's last values
    coll_pos: dict[int, int] = {}    # position -> index among its collected lists
    after = [n for n in all_nodes[bounds[-1] + 1:] if n.op not in ("placeholder", "get_attr")]

    def after_arg(a):
        if isinstance(a, (list, tuple)) and a and all(isinstance(e, fx.Node) and e in where for e in a):
            hits = [where[e] for e in a]
            if len(a) == T and [h[0] for h in hits] == list(range(T)) and len({h[1] for h in hits}) == 1:
                coll_pos.setdefault(hits[0][1], len(coll_pos))
                return _Ref("coll", hits[0][1])
        if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
            return type(a)(after_arg(e) for e in a)
        if isinstance(a, dict):
            return {k: after_arg(e) for k, e in a.items()}
        if isinstance(a, fx.Node) and a in where:
            k, p = where[a]
            if k != T - 1:
                raise NotRolled("the code after the loop takes a value of an earlier iteration")
            last_pos.setdefault(p, len(last_pos))
            return _Ref("last", p)
        return a

    rewired = []
    for n in after:
        if any(isinstance(leaf, fx.Node) and leaf in where for leaf in _leaves((n.args, n.kwargs))):
            rewired.append((n, after_arg(n.args), after_arg(n.kwargs)))
    users_after = {n for n, _, _ in rewired}
    # the sequence's elements, each a getitem made when the operator returned: the loop takes them
    # by index now, and no other node may (a count that changes would leave them out of range)
    elements = [u for sn in seq_nodes for u in sn.users if u.op == "call_function" and u.target is operator.getitem]
    for e in elements:
        if any(u not in where and u not in other_loops for u in e.users):
            raise NotRolled("an element of the loop's sequence is used outside the loop")
    for n in where:
        if any(u not in where and u not in users_after for u in n.users):
            raise NotRolled("a value computed in the loop is used in a way a rolled loop cannot give")
    # values bound to tensors and numbers the mock may still need: the last iteration's
    bound_last = {}
    for key, node in list(mon.graph._node_of.items()):
        hit = where.get(node)
        if hit is not None and hit[0] == T - 1:
            last_pos.setdefault(hit[1], len(last_pos))
            bound_last[key] = hit[1]
    for _key, (_value, node) in list(mon.scalar_nodes.items()):
        hit = where.get(node)
        if hit is not None and hit[0] == T - 1:
            last_pos.setdefault(hit[1], len(last_pos))
    check_no_other_references(mon, set(where), {id(a[2]) for a in loop.assumed})

    # -- the body graph ------------------------------------------------------------------------------------
    body = fx.Graph()
    index_ph = body.placeholder("index")
    elem_ph = [body.placeholder(f"element{j}") for j in range(len(seq_nodes))]
    carry_q = sorted(inits)
    carry_ph = {q: body.placeholder(f"carry{j}") for j, q in enumerate(carry_q)}
    invariants: dict[fx.Node, fx.Node] = {}
    env: dict[int, fx.Node] = {}
    template = iters[1]

    def body_arg(leaf):
        hit = where.get(leaf)
        if hit is not None:
            j, q = hit
            return env[q] if j == 1 else carry_ph[q]
        j = element_of(leaf, 1)
        if j is not None:
            return elem_ph[j]
        return invariants[leaf]

    # invariants become placeholders, in order of first use
    for n in template:
        if n.target is loop_index:
            continue
        for leaf in _leaves((n.args, n.kwargs)):
            if isinstance(leaf, fx.Node) and leaf not in where and element_of(leaf, 1) is None:
                invariants.setdefault(leaf, None)
    inv_list = list(invariants)
    for j, leaf in enumerate(inv_list):
        invariants[leaf] = body.placeholder(f"invariant{j}")
    for p, n in enumerate(template):
        if n.target is loop_index:
            env[p] = index_ph
            continue
        env[p] = body.node_copy(n, lambda leaf: body_arg(leaf))
    if any(q not in env for q in carry_q):
        raise NotRolled("internal: a carry is not computed by the body")
    outs = [env[q] for q in carry_q]
    outs += [env[p] for p, _ in sorted(coll_pos.items(), key=lambda kv: kv[1])]
    outs += [env[p] for p, _ in sorted(last_pos.items(), key=lambda kv: kv[1])]
    outs += [env[p] for _, p, _, _ in checks]
    body.output(tuple(outs))
    uses_index = bool(index_ph.users)
    if not uses_index:
        body.erase_node(index_ph)   # (a compiler given a Python int specialises on its value)
    body.lint()
    body_gm = fx.GraphModule(torch.nn.Module(), body)
    runner = RolledLoop(body_gm, len(carry_q), len(coll_pos), len(last_pos), loop.where,
                        [(kind, expected) for kind, _, _, expected in checks], uses_index, backwards)

    # -- splice it in ------------------------------------------------------------------------------------
    anchor = all_nodes[bounds[-1] + 1] if bounds[-1] + 1 < len(all_nodes) else None
    ctx = g.inserting_before(anchor) if anchor is not None else contextlib.nullcontext()   # (else: at the end)
    with ctx:
        lnode = g.call_function(runner, (loop.count_node, tuple(seq_nodes), tuple(inits[q] for q in carry_q),
                                         tuple(inv_list)))
        lnode.meta["magpy_python"] = True
        lnode.meta["magpy_rolled"] = loop.where
        outs_nodes = []
        for j in range(len(last_pos) + len(coll_pos)):
            gi = g.call_function(operator.getitem, (lnode, j))
            gi.meta["magpy_python"] = True
            outs_nodes.append(gi)
    for sn in seq_nodes:
        # (its tuple's length is the count: a compiled region would be specialised to it)
        sn.meta["magpy_python"] = True
    last_node = {p: outs_nodes[j] for p, j in last_pos.items()}
    coll_node = {p: outs_nodes[len(last_pos) + j] for p, j in coll_pos.items()}
    for p, gi in last_node.items():
        shape = iters[T - 1][p].meta.get("example_value_shape")
        if shape is not None:
            gi.meta["example_value_shape"] = shape

    def resolve(a):
        if isinstance(a, _Ref):
            return last_node[a.p] if a.kind == "last" else coll_node[a.p]
        if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
            return type(a)(resolve(e) for e in a)
        if isinstance(a, dict):
            return {k: resolve(e) for k, e in a.items()}
        return a

    for n, a, kw in rewired:
        n.args = resolve(a)
        n.kwargs = resolve(kw)
    for key, p in bound_last.items():
        mon.graph._node_of[key] = last_node[p]
    for key, node in list(mon.graph._node_of.items()):
        if node in where:
            del mon.graph._node_of[key]
    for key, (value, node) in list(mon.scalar_nodes.items()):
        hit = where.get(node)
        if hit is not None:
            if hit[0] == T - 1:
                mon.scalar_nodes[key] = (value, last_node[hit[1]])
            else:
                del mon.scalar_nodes[key]
    for it in reversed(iters):
        for n in reversed(it):
            g.erase_node(n)
    return lnode


def _erase_unused_elements(mon: Any, seq_nodes: set) -> None:
    """The getitems of rolled loops' sequences that no node takes any more (a count that changes
    would leave them out of range)."""
    g = mon.graph.graph
    gone = {u for s in seq_nodes for u in list(s.users)
            if u.op == "call_function" and u.target is operator.getitem and not u.users}
    for key, node in list(mon.graph._node_of.items()):
        if node in gone:
            del mon.graph._node_of[key]
    for e in gone:
        g.erase_node(e)


class _Ref:
    """A value the rolled loop node gives the code after the loop: the last iteration's value at
    position ``p``, or the list of the values at ``p`` of every iteration."""

    def __init__(self, kind: str, p: int) -> None:
        self.kind, self.p = kind, p


def check_no_other_references(mon: Any, inside: set, own: set) -> None:
    """No fact of the run other than tensor and number bindings (and the loop's own assumptions,
    ``own``: ids of their nodes) names a node of the loop."""
    for a in mon.assumptions:
        if isinstance(a[1], fx.Node) and a[1] in inside and id(a[1]) not in own:
            raise NotRolled("the run assumes a value computed in the loop")
    for k in ("effects", "draws"):
        for leaf in _leaves(getattr(mon, k, ())):
            if isinstance(leaf, fx.Node) and leaf in inside:
                raise NotRolled(f"the run's {k} name a value computed in the loop")
    for leaf in _leaves(list(getattr(mon, "lifted_value_nodes", {}).values())):
        if isinstance(leaf, fx.Node) and leaf in inside:
            raise NotRolled("a lifted value is computed in the loop")


def roll_loops(mon: Any) -> list[str]:
    """After a monitor run: roll every counted loop that passes the checks (the last first, so
    that the marks of earlier loops stay valid); every other keeps its count assumed. Returns a
    line per loop for ``explain``."""
    rollable = mon.finish_loops()
    said = []
    nodes = {id(loop): loop_nodes(mon, loop) for loop in rollable if loop.seqs}
    rolled_seqs = set()
    for loop in reversed(mon.loops):
        if loop in rollable:
            mine = {n for _, n in loop.seqs}
            others = frozenset().union(*[nodes[id(lp)] for lp in rollable if lp is not loop and lp.seqs
                                         and mine & {n for _, n in lp.seqs}])
            try:
                roll(mon, loop, others)
            except NotRolled as e:
                loop.fail(str(e))
            else:
                # (a loop on the same count that stays unrolled assumes it again below)
                own = {id(a[2]) for a in loop.assumed}
                if own:
                    mon.speculative_ops.append(f"a check inside the loop rolled at {loop.where}")
                counts = {loop.count_node, *(n for _, n in loop.seqs)}
                keep = [a[1] not in counts and id(a[1]) not in own for a in mon.assumptions]
                mon.assumptions[:] = [a for a, k in zip(mon.assumptions, keep) if k]
                mon.assumed_at[:] = [w for w, k in zip(mon.assumed_at, keep) if k]
                said.append(f"rolled: the loop at {loop.where} ({loop.count} iterations in this run) runs a body "
                            "compiled once, for any trip count >= 1")
                rolled_seqs.update(n.args[0] for _, n in loop.seqs)
                continue
        said.append(f"unrolled: the loop at {loop.where} ({loop.count} iterations): {loop.why}")
    _erase_unused_elements(mon, rolled_seqs)
    for line, loop in zip(list(said), list(reversed(mon.loops))):
        if line.startswith("rolled"):
            mon.assume("atleast", loop.count_node, 1)
        else:
            mon.assume("scalar", loop.count_node, loop.count)
    mon.loop_report = list(reversed(said))
    return mon.loop_report
