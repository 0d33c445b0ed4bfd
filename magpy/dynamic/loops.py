"""Loop bodies compiled once (paper §6.2.2): a Python loop whose trip count changes between calls.

An LSTM over sequences of changing length runs ``for i in range(len(xs)): out, state = cell(xs[i],
state)``. With the length lifted (``magpy.monitor.scalars``) the monitor still unrolls the loop into the
graph, so every length was one more record. This module lets one record serve every length: the
monitor watches such a loop while it runs (:class:`LoopWatcher`), and once
the run is over :func:`~magpy.dynamic.rolling.roll_loops` replaces its unrolled iterations in the graph by one
:class:`RolledLoop` node that runs a body graph, compiled once, as many times as the call asks.

Rolling drops the record's assumption on the trip count, so it is sound only when nothing in the
program depended on it other than the loop itself. What is checked (docs/design.md, "Loop
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

A ``while`` loop on a counter (``t = 0; while t < xs.size(0): ...; t += 1``) is a counted loop
too: :mod:`magpy.dynamic.while_loops` finds it and marks its iterations.
"""
from __future__ import annotations

import builtins
import collections
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from .. import capture
from ..graph import loop_index, range_len
from ..lifted import LiftedInt
from ..monitor import Watcher, loop_write, write_counters, write_mark
from ..redraw import as_draw
from ..torch_support import last_node
from .nodes import range_value
from .while_loops import WhileLoops


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
    writes_seen: int = 0                             # the RefGraph's writes checked so far (a write mark)
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
_STACKERS = (torch.stack, torch.cat, torch.concat, torch.concatenate)


class LoopWatcher(Watcher):
    """The counted loops of a monitor run (a :class:`~magpy.monitor.watcher.Watcher`).

    Reads from its host (the monitor): ``graph``, ``guards``, ``lifted_value_nodes``,
    ``scalar_nodes``, ``node``, ``scalar_node``, ``track_scalar``, ``assume``, ``where``, and the
    RefGraph's writes (:mod:`magpy.monitor.writes`)."""

    name = "loop_watcher"

    def __init__(self, host: Any, hooks: Any) -> None:
        super().__init__(host, hooks)
        self.loops: list[Loop] = []
        self.active_loops: list[Loop] = []
        self.loop_ranges: dict[int, tuple] = {}     # id(range) -> (range, count node, count, seq)
        self.loop_iters: dict[int, Loop] = {}       # id(range iterator) -> its loop
        self.loop_indexes: dict[int, tuple] = {}    # id(index LiftedInt) -> (index, loop)
        self.counted: dict[int, list] = {}          # id(seq) -> [seq, len node, why observed or None]
        self.watched: dict[int, tuple] = {}         # id -> (object, "seq" | "acc", loop or record)
        self.assume_calls: dict = {}                # fx node -> how many times it was assumed
        self.enumerations: set = set()              # ids of enumerate objects over counted sequences
        self.drawn_ranges: set = set()              # ids of ranges a random draw took (take_range)
        self.zips: dict = {}                        # id of a zip of counted sequences -> [(seq, len node)]
        self.whiles = WhileLoops(self)               # counted `while` loops (magpy.dynamic.while_loops)
        self.pending_whiles = self.whiles.pending   # (frame states whose while loop waits for its counter)

    @property
    def active(self) -> bool:
        return bool(self.watched or self.active_loops or self.pending_whiles)

    # -- the producers ---------------------------------------------------------------------------------
    def count_assumed(self, seq: Any, len_node: fx.Node) -> None:
        """``seq`` (a tuple or list an operator returned) holds as many tensors as ``len_node``
        computes, and the run assumed that count: watch every use of ``seq``."""
        if type(seq) in (tuple, list):
            entry = [seq, len_node, None]
            self.counted[id(seq)] = entry
            self.watched[id(seq)] = (seq, "seq", entry)

    def holds_by_construction(self, node: Any) -> bool:
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
            loop.fail(f"the loop index is used by Python ({self.host.where()})")
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
    def take_call(self, fs: Any, fn: Any, args: list, kwargs: dict) -> bool:
        """``len(seq)`` of a counted sequence: a LiftedInt of its len node. ``range(n)`` of a
        tracked count, iterated at once: a counted loop. True if handled."""
        if fn is builtins.len and len(args) == 1 and not kwargs and id(args[0]) in self.counted \
                and self.counted[id(args[0])][0] is args[0]:
            self.hooks.pend(fs, self._post_count, self.counted[id(args[0])][1], opaque=True)
            return True
        if fn is builtins.range and 1 <= len(args) <= 3 and not kwargs \
                and all(type(a) in (int, LiftedInt) for a in args) and any(type(a) is LiftedInt for a in args) \
                and all(self.host.scalar_node(a) is not None for a in args if type(a) is LiftedInt) \
                and not any(id(a) in self.loop_indexes for a in args):
            full = (0, *args, 1) if len(args) == 1 else (*args, 1) if len(args) == 2 else tuple(args)
            start, stop, step = (self.hooks.scalar_arg(a) for a in full)
            if int(full[2]) == 0:
                return False   # (range raises)
            if len(args) == 1:
                node = stop
            else:
                node = self.host.graph.call("function", range_len, (start, stop, step), {})
            self.hooks.pend(fs, self._post_range, (node, len(range(*(int(a) for a in full))), start, step), opaque=True)
            return True
        if fn is builtins.enumerate and len(args) == 1 and not kwargs and id(args[0]) in self.counted \
                and self.counted[id(args[0])][0] is args[0]:
            entry = self.counted[id(args[0])]
            self.hooks.pend(fs, self._post_enumerate, (entry[1], len(args[0]), args[0]), opaque=True)
            return True
        if fn is builtins.zip and len(args) >= 2 and not kwargs \
                and all(id(a) in self.counted and self.counted[id(a)][0] is a for a in args):
            seqs = [(a, self.counted[id(a)][1]) for a in args]
            self.hooks.pend(fs, self._post_zip, seqs, opaque=True)
            return True
        if fn is builtins.reversed and len(args) == 1 and not kwargs and id(args[0]) in self.loop_ranges \
                and self.loop_ranges[id(args[0])][0] is args[0]:
            hit = self.loop_ranges.pop(id(args[0]))
            self.watched[id(args[0])] = (args[0], "rangeheld", hit)
            self.hooks.pend(fs, self._post_reversed, hit, opaque=True)
            return True
        return False

    def take_range(self, r: Any) -> tuple | None:
        """``(count node, start, step)`` of ``r``, a range of a tracked count that a random draw
        takes whole (the mock builds it again from the call's sizes); None if ``r`` is none. It
        stays watched: any later use is a loop over it or assumes its count."""
        entry = self.loop_ranges.get(id(r))
        if type(r) is not range or entry is None or entry[0] is not r or entry[6] or id(r) in self.enumerations:
            return None
        self.drawn_ranges.add(id(r))
        return entry[1], entry[4], entry[5]

    def range_used(self, values: list) -> None:
        """Ranges of tracked counts in ``values`` are used by a call that is not a draw after all:
        their counts are numbers the program goes on with (assumed)."""
        for v in values:
            entry = self.loop_ranges.get(id(v))
            if entry is not None and entry[0] is v:
                del self.loop_ranges[id(v)]
                self.watched.pop(id(v), None)
                self.host.assume("scalar", entry[1], entry[2])

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
        node = nodes[0] if len(nodes) == 1 else self.host.graph.call("function", builtins.min, tuple(nodes), {})
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
        ins = fs.instrs.get(self.hooks.at()[1])
        to_range = False
        if ins is not None and (ins.opname == "CALL" or ins.real == "PRECALL"):   # (3.11: PRECALL, then CALL)
            from ..bytecode import DECODER

            try:
                fn, args, _ = DECODER.call_operands(ins, stack, fs.kw_names)
                to_range = fn is builtins.range and len(args) >= 1 and any(a is stack[-1] for a in args)
            except Exception:
                to_range = False
        arithmetic = ins is not None and ins.opname == "BINARY_OP" and len(stack) >= 2 \
            and not isinstance(stack[-2], str) and ins.argrepr not in ("%", "%=")
        if to_range or arithmetic or (ins is not None and ins.opname == "STORE_FAST"):
            self.host.track_scalar(fs, stack, node)
            return
        entry = next((e for e in self.counted.values() if e[1] is node), None)
        if entry is not None and entry[2] is None:
            entry[2] = f"its len() is used as a plain number ({self.host.where()})"

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

    def on_get_iter(self, fs: Any, v: Any) -> bool:
        """``iter(v)`` of a watched range (or enumerate, zip, reversed) or of a counted sequence:
        a counted loop starts. True if handled."""
        return bool(self.loop_ranges and self.iter_over_range(fs, v)) or bool(self.counted and self.iter_over_sequence(fs, v))

    def iter_over_range(self, fs: Any, v: Any) -> bool:
        hit = self.loop_ranges.pop(id(v), None)
        if hit is None or hit[0] is not v:
            return False
        # (any later use of the range, `len(r)`, reads its count: the loop then stays unrolled)
        self.watched[id(v)] = (v, "rangeheld", hit)
        self.hooks.pend(fs, self._post_loop_iter, hit, opaque=True)
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

    def iter_over_sequence(self, fs: Any, seq: Any) -> bool:
        """``for e in seq`` (``GET_ITER`` of a counted sequence): a counted loop whose iterations
        take the sequence's elements. True if handled."""
        entry = self.counted.get(id(seq))
        if entry is None or entry[0] is not seq:
            return False
        self.hooks.pend(fs, self._post_seq_iter, (seq, entry[1], len(seq)), opaque=True)
        return True

    def _post_seq_iter(self, fs, stack, data):
        seq, node, count = data
        self._start_loop(fs, node, count, seq, stack[-1], index=False)

    def loop_over_rows(self, fs: Any, count_node: Any, count: int, iterator: Any) -> None:
        """``for row in t`` over a tensor whose first size is lifted: the rows are an ``unbind``
        the program cannot reach but through the iterator."""
        self._start_loop(fs, count_node, count, _HIDDEN, iterator, index=False)

    def _start_loop(self, fs, node, count, seq, iterator, index: bool) -> None:
        loop = Loop(fs, node, count, seq, self.host.where())
        loop.index = index
        loop.seqs = [(seq, node)] if seq is not None else []
        self.add_loop(loop)
        self.loop_iters[id(iterator)] = loop
        loop.iterator = iterator

    def new_loop(self, fs: Any, count_node: fx.Node, where: str, iterator: Any) -> Loop:
        """A counted loop without a sequence or an index (a ``while`` on a counter,
        :mod:`magpy.dynamic.while_loops`): its count is known when it ends."""
        loop = Loop(fs, count_node, 0, None, where)
        loop.index, loop.iterator = False, iterator
        self.add_loop(loop)
        return loop

    def add_loop(self, loop: Loop) -> None:
        """A counted loop starts: one inside another is not rolled, nor is the outer one."""
        if self.active_loops:
            loop.nested = True
            loop.fail("a counted loop inside another")
            for outer in self.active_loops:
                outer.fail("holds a counted loop")
        self.loops.append(loop)

    def on_loop_back(self, fs: Any, it: Any) -> bool:
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
        self.mark_iteration(loop, fs)
        if left == 0:
            self.end_loop(loop)
            self.hooks.pend(fs, self.hooks.post_new, 1)
            return True
        if loop.index:
            self.hooks.pend(fs, self._post_index, (loop, k), opaque=True)
        else:
            self.hooks.pend(fs, self.hooks.post_new, 1)   # (an element: a tensor the graph already has)
        return True

    def mark_iteration(self, loop: Loop, fs: Any) -> None:
        """An iteration of ``loop`` starts (or, after the last, the loop's exit): the graph's tail
        and the Python state there; at the first, what the loop may not change from now on."""
        k = len(loop.marks)
        tail = last_node(self.host.graph.graph)
        if k == 0:
            loop.counters = write_counters(self.host)
            loop.writes_seen = write_mark(self.host)
            self.active_loops.append(loop)
            self._watch_locals(loop, fs)
        else:
            self._check_writes(loop)
        if k == 1:
            loop.guards_after_first = (len(self.host.guards), len(self.host.lifted_value_nodes))
        loop.marks.append((tail, self._snapshot(loop)))
        for key, acc in loop.accs.items():
            loop.acc_sizes.setdefault(key, []).append(len(acc))

    def _post_index(self, fs, stack, data):
        loop, k = data
        node = self.host.graph.call("function", loop_index, (k,), {})
        node.meta["magpy_loop"] = loop
        start, step, backwards = loop.values
        if start != 0 or step != 1 or backwards:
            node = self.host.graph.call("function", range_value, (node, start, step, loop.count_node, backwards), {})
        if loop.pairs:
            # enumerate's (k, element): the same pair with a tracked k
            index = LiftedInt(stack[-1][0])
            self.host.scalar_nodes[id(index)] = (index, node)
            pair = stack[-1] = (index, stack[-1][1])
            capture.replace_top(fs.frame, pair)   # (the program goes on with the pair of the tracked k)
            self.loop_indexes[id(index)] = (index, loop)
            return
        self.host.track_scalar(fs, stack, node)
        self.loop_indexes[id(stack[-1])] = (stack[-1], loop)

    def end_loop(self, loop: Loop) -> None:
        loop.done = True
        if loop in self.active_loops:
            self.active_loops.remove(loop)
        if loop.count < 3:
            loop.fail("ran fewer than 3 iterations (no steady state to compare)")
        self._check_writes(loop)
        if write_counters(self.host) != loop.counters:
            loop.fail("wrote, drew, replayed or assumed something inside the loop")
        if loop.count >= 2 and (len(self.host.guards), len(self.host.lifted_value_nodes)) != loop.guards_after_first:
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

    def _check_writes(self, loop: Loop) -> None:
        """Ask the RefGraph what the loop's iterations wrote since the last check."""
        w = loop_write(self.host, loop.writes_seen, self.watched)
        if w is not None:
            loop.fail(f"{w.describe()} inside the loop ({w.where})")
        loop.writes_seen = write_mark(self.host)

    def on_assume(self, kind: str, node: Any, expected: Any) -> None:
        """An assumption made inside active loops: a rolled body checks it in every iteration."""
        for loop in self.active_loops:
            if kind not in ("scalar", "truth", "item") or not (expected is None or type(expected) in (bool, int, float, str)):
                loop.fail(f"assumes a value of kind {kind} inside the loop ({self.host.where()})")
            loop.assumed.append((len(loop.marks) - 1, kind, node, expected))

    def on_frame_left(self, fs: Any, value: Any = None) -> None:
        self.whiles.frame_left(fs)
        for loop in list(self.active_loops):
            if loop.fs is fs:
                loop.fail("left before its iterator was exhausted (break, return or an exception)")
                self.active_loops.remove(loop)

    # -- the Python state --------------------------------------------------------------------------------
    def _watch_locals(self, loop: Loop, fs: Any) -> None:
        """At the first iteration: lists made in the call that the loop frame holds may be
        accumulators; iterators it holds (also on its stack: enclosing loops') must not be
        advanced inside the loop (their state is not part of the snapshot)."""
        try:
            local = dict(capture.frame_locals(loop.fs.frame))
        except Exception:
            loop.fail("its frame's locals cannot be read")
            return
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
                    and (self.host.node(v) is None or self.host.node(v).source is None):
                loop.accs[id(v)] = v
                self.watched[id(v)] = (v, "acc", loop)
            elif hasattr(type(v), "__next__") and not isinstance(v, torch.Tensor) and id(v) not in self.watched:
                self.watched[id(v)] = (v, "iter", loop)
            if type(v) in (list, tuple, dict) and len(v) <= 64:
                todo += [(e, depth + 1) for e in (v.values() if type(v) is dict else v)]

    def _snapshot(self, loop: Loop) -> Any:
        try:
            local = dict(capture.frame_locals(loop.fs.frame))
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
        if t is LiftedInt or (t is float and self.host.scalar_node(v) is not None):
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
    def on_instruction(self, fs: Any, ins: Any, offset: Any, stack: list) -> None:
        if self.pending_whiles and ins.opname == "STORE_FAST":
            self.whiles.counter_stored(fs, ins, stack)
        if not self.watched:
            return
        operands, fn, args = self._operands(fs, ins, stack)
        for v in operands:
            w = self.watched.get(id(v))
            if w is not None and w[0] is v:
                self._watched_use(w, ins, stack, fn, args)

    def _operands(self, fs, ins, stack) -> tuple[list, Any, list]:
        if ins.opname == "CALL":
            from ..bytecode import DECODER

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
                ref.fail(f"its iterator is used by {ins.real} ({self.host.where()})")
            return
        if kind == "rangeheld":
            self.watched.pop(id(obj), None)
            self.host.assume("scalar", ref[1], ref[2])   # (the count is then assumed twice: not rolled)
            return
        if kind == "range":
            if (ins.opname == "GET_ITER" and stack and stack[-1] is obj) or (
                    ins.opname == "CALL" and fn is builtins.reversed and len(args) == 1):
                return   # (a `for` over it, or over reversed(it): a counted loop)
            if ins.opname == "CALL" and self.host.switches.redraw_ok and as_draw(fn, args) is not None:
                return   # (`random.choice(range(n))`: the draw takes it, or calls range_used)
            # a range of a tracked count used otherwise: its count is a number the program goes on with
            self.watched.pop(id(obj), None)
            if self.loop_ranges.pop(id(obj), None) is not None:
                self.host.assume("scalar", ref[1], ref[2])
            return
        if kind == "iter":
            if not ref.done:
                ref.fail(f"uses an iterator made before the loop ({ins.real}, {self.host.where()})")
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
                ref[2] = f"{ins.real} ({self.host.where()})"
            return
        loop = ref
        if not loop.done:
            if id(obj) not in loop.acc_reads and not self._accumulates(ins, stack, fn, args, obj):
                # (a read: fails the loop at its end if the list grew, see end_loop)
                loop.acc_reads[id(obj)] = f"{ins.real} ({self.host.where()})"
            return
        if ins.opname == "CALL" and fn in _STACKERS and args and args[0] is obj \
                and not any(a is obj for a in args[1:]):
            return
        if ins.opname == "BINARY_SUBSCR" and len(stack) >= 2 and stack[-2] is obj and type(stack[-1]) is int \
                and stack[-1] == -1 and loop.accs.get(id(obj)) is obj:
            return   # (`outputs[-1]`: the last iteration's value, whatever the count)
        loop.fail(f"its accumulator list is read by {ins.real} ({self.host.where()})")

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

    def counts_at_split(self) -> list[tuple]:
        """``(count node, count)`` of every counted loop the run went through so far and of every
        range of a tracked count it made (the ranges taken off the watch): the code before a split
        is recorded at the split with its loops unrolled, so their counts are assumed there (as
        ``roll_loops`` assumes those of the loops it does not roll once a run ends)."""
        counts = [(loop.count_node, loop.count) for loop in self.loops]
        counts += [(node, count) for key, (_, node, count, *_) in self.loop_ranges.items()
                   if key not in self.drawn_ranges]
        for key in [k for k in self.loop_ranges if k not in self.drawn_ranges]:
            del self.loop_ranges[key]
            self.watched.pop(key, None)
        return counts

    # -- once the run is over ---------------------------------------------------------------------------------
    def on_finish(self) -> list:
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
        for key, (_, node, count, *_) in self.loop_ranges.items():
            if key not in self.drawn_ranges:   # (one only a draw took: the mock builds it again)
                self.host.assume("scalar", node, count)   # (a range that no `for` iterated)
        self.loop_ranges.clear()
        return rollable


class _TooDeep(Exception):
    pass


#: The sequence of a loop over a tensor's rows, which the program cannot reach.
_HIDDEN = object()
